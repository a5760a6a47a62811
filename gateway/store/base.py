"""What the gateway stores per session, and the repository protocol every store implements.

The protocol is synchronous on purpose: the engine is pure and fast, the embedded stores (memory,
SQLite) answer in microseconds, and a sync interface keeps `RadioService` usable from the CLI and
from threads as well as from the event loop. A network store (Redis) implements the same methods
with a blocking client or behind a small local cache; if that ever blocks the loop, the service
is the one place to move calls into a thread.

Stores hand out copies: mutating a `StoredSession` you got does nothing until you `put` it back,
so a decision that fails half-way never leaves a half-updated session behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from engine.models import ReadbackResult, Session


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoredSession(_Model):
    """A session with what only the gateway knows about it."""

    session: Session
    resume_token: str  # secret that lets a client reattach (WebSocket `session.resume`)
    touched_at: float  # last client activity (create, transmission, reset): drives expiry
    # last controller message (seq) the pilot received; later ones are replayed on resume. Stores
    # keep the highest value they were given, so a stale copy put back never un-delivers one.
    delivered_seq: int = 0
    # id of the API key that created the session (gateway/auth.py), None when authentication was
    # off: the key that may reach it besides its session token, and what "sessions per key" counts
    owner: str | None = None


class PilotEntry(_Model):
    """One pilot transmission as the engine judged it."""

    role: Literal["pilot"] = "pilot"
    at: float
    flow: str | None  # where the session stood when the pilot spoke
    state: str | None
    cause: str = "transmit"
    text: str
    transmission_id: str | None = None
    to_flow: str | None = None
    to_state: str | None = None
    recognized: bool = True
    intent: str | None = None
    readback: ReadbackResult | None = None  # None when the state asked for no readback


class AtcEntry(_Model):
    """One controller message, in the session's sequence order."""

    role: Literal["atc"] = "atc"
    at: float
    flow: str | None
    state: str | None
    cause: str  # what made ATC speak: start, transmit, tick, telemetry, tune, reset
    seq: int
    message_id: str
    station: str | None = None
    frequency: str | None = None
    text: str
    speech: str


TranscriptEntry = Annotated[PilotEntry | AtcEntry, Field(discriminator="role")]


@runtime_checkable
class SessionRepository(Protocol):
    """Sessions and their transcripts by session id."""

    def get(self, session_id: str) -> StoredSession | None:
        """A copy of the stored session, or None."""
        ...

    def put(self, record: StoredSession) -> None:
        """Insert or replace (by ``record.session.session_id``)."""
        ...

    def save(self, record: StoredSession, entries: Sequence[PilotEntry | AtcEntry]) -> None:
        """`put` and `append_transcript` as one atomic write: after a crash either the decision
        and its transcript lines are both stored or neither is (a fired timer is then either
        consumed and in the transcript, or still pending: it fires once)."""
        ...

    def set_delivered(self, session_id: str, seq: int) -> None:
        """Record that the pilot received controller message `seq` (kept if higher than the
        stored value; nothing happens for an unknown session)."""
        ...

    def clock_anchor(self, scale: float, now: float) -> tuple[float, float]:
        """``(real, scenario)``: a wall-clock instant and the scenario time at it, for a clock
        running `scale` times faster (gateway/clock.py). A persistent store keeps the anchor, so
        the scenario clock continues across restarts instead of jumping back to wall time (which
        would hold every stored timer back by the time compression of the previous run)."""
        ...

    def delete(self, session_id: str) -> bool:
        """Drop the session and its transcript; False when there was none."""
        ...

    def ids(self) -> list[str]:
        """Every stored session id."""
        ...

    def append_transcript(self, session_id: str, entries: Sequence[PilotEntry | AtcEntry]) -> None:
        """Add entries at the end of the session's transcript (in the order given)."""
        ...

    def transcript(self, session_id: str) -> list[PilotEntry | AtcEntry]:
        """The session's transcript, oldest first (empty when unknown)."""
        ...
