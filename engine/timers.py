"""Server-side timers: records with ids, due times and consumed flags, so each fires exactly once.

Timers live in the session (and so in storage), never only in a client. Leaving a state cancels
its pending timers; `due()` hands out each record at most once and marks it consumed first, so a
replayed or concurrent tick cannot fire it twice.
"""

from __future__ import annotations

from typing import Literal

from engine.models import Session, TimerRecord


def schedule(
    session: Session,
    *,
    kind: Literal["transition", "silence", "telemetry"],
    flow: str,
    state: str,
    due: float,
    transition_index: int | None = None,
) -> TimerRecord:
    session.timer_counter += 1
    rec = TimerRecord(
        id=f"{session.session_id}-t{session.timer_counter}",
        kind=kind,
        flow=flow,
        state=state,
        due=due,
        transition_index=transition_index,
    )
    session.timers.append(rec)
    return rec


def cancel_state(session: Session, flow: str, state: str, kind: str | None = None) -> int:
    """Cancel pending timers of one state (all kinds, or one kind); returns how many."""
    n = 0
    for rec in session.timers:
        if not rec.consumed and not rec.cancelled and rec.flow == flow and rec.state == state:
            if kind is None or rec.kind == kind:
                rec.cancelled = True
                n += 1
    return n


def pending(session: Session) -> list[TimerRecord]:
    return [t for t in session.timers if not t.consumed and not t.cancelled]


def next_due(session: Session) -> float | None:
    """When the next timer is due (the gateway sleeps until then), or None."""
    dues = [t.due for t in pending(session)]
    return min(dues) if dues else None


def take_due(session: Session, now: float) -> TimerRecord | None:
    """The earliest due timer, already marked consumed; None when nothing is due."""
    due = [t for t in pending(session) if t.due <= now]
    if not due:
        return None
    rec = min(due, key=lambda t: (t.due, t.id))
    rec.consumed = True
    return rec


def prune(session: Session, keep: int = 64) -> None:
    """Drop old finished records so a long session's timer list stays bounded."""
    done = [t for t in session.timers if t.consumed or t.cancelled]
    if len(done) > keep:
        drop = {id(t) for t in done[: len(done) - keep]}
        session.timers = [t for t in session.timers if id(t) not in drop]
