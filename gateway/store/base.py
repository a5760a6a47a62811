"""What the gateway stores per session, and the repository protocol every store implements.

The protocol is synchronous on purpose: the engine is pure and fast, the embedded stores (memory,
SQLite) answer in microseconds, and a sync interface keeps `RadioService` usable from the CLI and
from threads as well as from the event loop. The network store (Redis) implements the same methods
with a blocking client and short timeouts (0.1-0.3 ms a call on loopback, measured in
gateway/store/redis.py); if that ever blocks the loop, the service is the one place to move calls
into a thread.

Stores hand out copies: mutating a `StoredSession` you got does nothing until you `put` it back,
so a decision that fails half-way never leaves a half-updated session behind.

Several writers (gateway nodes sharing one Redis) may decide on the same session at once, so every
store keeps a *version* per session, bumped by each write: `read` returns it, and
``save(..., expect=version)`` refuses with `VersionConflict` when another write came in between.
The service then reads again and decides again (the engine is pure, so that is safe). The embedded
stores serve one process whose service lock already serialises writes; they check the version all
the same, so one contract holds for every store.

The store also keeps the two indexes the service's background clock needs, written in the same
atomic `save` as the session: when each session must be visited next (its earliest timer or
telemetry hold, computed by the engine: `wake_at`) and when a client last touched it (expiry). Any
node can then find the due sessions of every node (`due`), and takes a short *lease* on each
before ticking it, so exactly one node fires a timer; `release` gives the lease back after the
tick, and a node that dies holding one loses it when it runs out.
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


class StoreError(RuntimeError):
    """The store cannot be used (a SQLite file locked by another process or of a newer schema)."""


class StoreUnavailable(StoreError):
    """The store did not answer (Redis down or too slow): the request may be retried later; no
    write was half done (each write is one atomic command)."""


class VersionConflict(Exception):
    """`save(..., expect=v)` found another version: someone wrote the session since it was read."""

    def __init__(self, session_id: str, expected: int) -> None:
        super().__init__(f"session {session_id!r} changed since version {expected}")
        self.session_id = session_id
        self.expected = expected


@runtime_checkable
class SessionRepository(Protocol):
    """Sessions and their transcripts by session id, with the indexes of the session clock."""

    kind: str  # "memory", "sqlite", "redis": what /health reports

    def get(self, session_id: str) -> StoredSession | None:
        """A copy of the stored session, or None."""
        ...

    def read(self, session_id: str) -> tuple[StoredSession, int] | None:
        """A copy of the stored session and its version, for ``save(..., expect=version)``."""
        ...

    def put(self, record: StoredSession) -> None:
        """Insert or replace (by ``record.session.session_id``), whatever the stored version;
        nothing scheduled (``save(record, [])``)."""
        ...

    def save(
        self,
        record: StoredSession,
        entries: Sequence[PilotEntry | AtcEntry],
        *,
        wake_at: float | None = None,
        expect: int | None = None,
    ) -> int:
        """The session, its new transcript lines and its index entries as one atomic write; returns
        the new version. After a crash either the decision and its transcript lines are both
        stored or neither is (a fired timer is then either consumed and in the transcript, or
        still pending: it fires once).

        `wake_at`: when the session clock must visit the session next (scenario time; None:
        nothing scheduled). `expect`: the version `read` gave (0: the session must not exist
        yet); another stored version raises `VersionConflict` and writes nothing. None writes
        whatever is stored (last writer wins)."""
        ...

    def due(self, now: float, holder: str, lease_s: float, limit: int = 100) -> list[str]:
        """Sessions whose wake-up has come (``wake_at <= now``), earliest first, each now leased
        to `holder` for `lease_s` seconds of wall time; sessions leased to another holder are left
        out. The caller ticks them, saves, and `release`s them."""
        ...

    def release(self, session_id: str, holder: str) -> None:
        """Give back `holder`'s lease on the session (nothing if another holder has it now)."""
        ...

    def idle(self, before: float) -> list[str]:
        """Sessions last touched before `before` (scenario time): the expired ones."""
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

    def owned(self, owner: str) -> int:
        """How many stored sessions the API key `owner` created (`StoredSession.owner`)."""
        ...

    def __len__(self) -> int:
        """How many sessions are stored."""
        ...

    def append_transcript(self, session_id: str, entries: Sequence[PilotEntry | AtcEntry]) -> None:
        """Add entries at the end of the session's transcript (in the order given)."""
        ...

    def transcript(self, session_id: str) -> list[PilotEntry | AtcEntry]:
        """The session's transcript, oldest first (empty when unknown)."""
        ...

    def close(self) -> None:
        """Release the file, lock or connections (the app calls it on shutdown)."""
        ...
