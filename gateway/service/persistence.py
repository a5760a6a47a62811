"""How the session service keeps sessions: load, decide again on a conflict, store, then publish.

`Ledger` is the persistence half of `RadioService` (gateway/service/core.py): the repository
(gateway/store), the lock that serialises a load-decide-store sequence within the process, the
expiry of idle sessions, and the rule that a decision is stored before anyone hears of it.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TypeVar

from engine.hearing import Hearing
from engine.models import Decision
from engine.session import SessionEngine
from gateway.hub import DecisionHub
from gateway.service.errors import SessionBusy, SessionNotFound, TooManySessions
from gateway.settings import Settings
from gateway.store import (
    AtcEntry,
    PilotEntry,
    SessionRepository,
    StoredSession,
    VersionConflict,
)

log = logging.getLogger("gateway.service")

# Load-decide-store attempts when other nodes keep writing the same session in between.
MAX_ATTEMPTS = 10
T = TypeVar("T")


class Ledger:
    def __init__(
        self,
        repository: SessionRepository,
        hub: DecisionHub,
        engine: SessionEngine,
        clock: Callable[[], float],
        settings: Settings,
    ) -> None:
        self.repository = repository
        self.hub = hub
        self.engine = engine
        self.clock = clock
        self.settings = settings
        self.lock = threading.RLock()

    @property
    def ttl_s(self) -> float:
        return self.settings.session_ttl_s

    def load(self, session_id: str) -> tuple[StoredSession, int]:
        """The session and its stored version; SessionNotFound when unknown or expired."""
        found = self.repository.read(session_id)
        if found is None:
            raise SessionNotFound(f"no session {session_id!r}", field="session_id")
        if self.expired(found[0], self.clock()):
            self.repository.delete(session_id)
            raise SessionNotFound(f"session {session_id!r} has expired", field="session_id")
        return found

    def retry(self, work: Callable[[], T]) -> T:
        """Run a load-decide-store sequence again while another writer saved the session between
        its load and its save (`VersionConflict`): the engine decides again on the fresh copy."""
        for _ in range(MAX_ATTEMPTS - 1):
            try:
                return work()
            except VersionConflict as exc:
                log.debug("session %s changed while deciding; deciding again", exc.session_id)
        try:
            return work()
        except VersionConflict as exc:
            raise SessionBusy(
                f"session {exc.session_id!r} kept changing while it was decided; try again", field="session_id"
            ) from exc

    def expired(self, record: StoredSession, now: float) -> bool:
        return now - record.touched_at > self.ttl_s

    def expire(self, now: float) -> None:
        for session_id in self.repository.idle(now - self.ttl_s):
            if self.repository.delete(session_id):  # another node may have dropped it already
                log.info("session %s expired after %.0f s idle", session_id, self.ttl_s)

    def save(self, record: StoredSession, decisions: Iterable[Decision], *, expect: int) -> None:
        """Store first, then tell the listeners: what a client hears has been saved.

        The session (timers consumed, state moved) and its transcript lines go in one atomic
        `save`, and every caller answers only after this returns: a crash at any instant leaves
        a decision either whole in the store (its reply may be lost, never its effect) or absent
        (the pilot never heard it; a due timer is still pending and fires once on restart).
        `expect` is the version the record was loaded at: if another node stored the session
        since, `VersionConflict` leaves here before anyone is told, and `retry` decides again.
        """
        decisions = list(decisions)
        session_id = record.session.session_id
        if self.hub.listeners(session_id) == 0:
            # an HTTP caller gets these messages in its response; timer calls nobody heard stay
            # undelivered until a socket resumes the session (see delivered_seq)
            record.delivered_seq = max(
                [record.delivered_seq, *(m.seq for d in decisions if d.cause != "tick" for m in d.messages)]
            )
        # session, transcript and the clock's indexes: one atomic write, refused if stale
        self.repository.save(
            record, entries(decisions), wake_at=self.engine.next_wakeup(record.session), expect=expect
        )
        for decision in decisions:
            self.hub.publish(session_id, decision)

    def check_capacity(self, owner: str | None) -> None:
        """Refuse a new session past the total or per-key limit (called under the lock). Counted
        in the store, so on Redis the limits hold for all nodes together; two nodes creating at
        the same instant may each pass a limit by one."""
        if len(self.repository) >= self.settings.max_sessions:
            raise TooManySessions(
                f"the gateway holds its limit of {self.settings.max_sessions} sessions; retry later", per_key=False
            )
        if owner is not None:
            if self.repository.owned(owner) >= self.settings.max_sessions_per_key:
                raise TooManySessions(
                    f"this API key holds its limit of {self.settings.max_sessions_per_key} sessions; "
                    "end one (DELETE /api/radio/sessions/{id}) or let it expire",
                    per_key=True,
                )

    def tick(self, session_id: str, now: float) -> list[Decision]:
        """Fire the due timers of one session (under the lock, within `retry`)."""
        found = self.repository.read(session_id)
        if found is None:
            return []
        record, version = found
        try:
            decisions = self.engine.tick(record.session, now)
        except Exception:
            log.exception("tick failed for session %s; its timers are parked until it is used", session_id)
            stored = self.repository.read(session_id)  # the tick changed our copy: store the stored one
            if stored is not None:
                self.repository.save(stored[0], [], wake_at=None, expect=stored[1])
            return []
        self.save(record, decisions, expect=version)
        return decisions


def heard(decision: Decision, hearing: Hearing | None) -> Decision:
    """`decision` with the recognizer's hearing in its trace (step ``hearing``), when it had one."""
    if hearing is not None:
        detail = (
            f"recognizer: {len(hearing.alternatives)} alternative transcript(s)"
            + (", cut off" if hearing.cut_off else "")
            + (f", confidence {hearing.confidence:.2f}" if hearing.confidence is not None else "")
            + (f"; heard again (in the radio's words, then by whisper base where still unsure), first heard {hearing.open_transcript!r}" if hearing.open_transcript is not None else "")
            + (f"; {len(hearing.checks)} issued value(s) checked in the audio" if hearing.checks else "")
            + _written_by(hearing)
        )
        decision.trace.add("hearing", detail, **hearing.model_dump())
    return decision


# each hearing as the trace names it (engine/hearing.py `HearingStep`)
_HEARINGS = {
    "first": "the first hearing",
    "second": "the second hearing (the radio's words)",
    "third": "the third hearing (whisper base)",
    "confirming": "the confirming hearing (whisper base)",
}


def _written_by(hearing: Hearing) -> str:
    """Which hearing wrote the transcript and how many alternatives each wrote, where a later
    hearing than the first is among them (else nothing: the first wrote everything)."""
    if hearing.by == "first" and not hearing.heard_by:
        return ""
    counts = Counter(hearing.source(alternative) for alternative in hearing.alternatives)
    wrote = ", ".join(f"{n} by {_HEARINGS[step]}" for step, n in counts.items())
    return f"; transcript by {_HEARINGS[hearing.by]}" + (f", alternatives {wrote}" if wrote else "")


def entries(decisions: Iterable[Decision]) -> list[PilotEntry | AtcEntry]:
    """Transcript lines of decisions, in the order they happened."""
    out: list[PilotEntry | AtcEntry] = []
    for d in decisions:
        if d.cause == "transmit" and d.pilot_text is not None:
            out.append(
                PilotEntry(
                    at=d.at,
                    flow=d.from_flow,
                    state=d.from_state,
                    text=d.pilot_text,
                    transmission_id=d.transmission_id,
                    to_flow=d.to_flow,
                    to_state=d.to_state,
                    recognized=d.recognized,
                    intent=d.intent,
                    readback=d.readback,
                )
            )
        for m in d.messages:
            out.append(
                AtcEntry(
                    at=m.at,
                    flow=m.flow,
                    state=m.state,
                    cause=d.cause,
                    seq=m.seq,
                    message_id=m.message_id,
                    station=m.station,
                    frequency=m.frequency,
                    text=m.text,
                    speech=m.speech,
                )
            )
    return out
