"""The scenario clock the router benchmark flies its scripted pilot on.

A compressed clock (`time_scale`) shortens the controller's waits, but it shortens everything
else too: at 1000x a pilot who answers in 30 ms has taken 30 scenario seconds, long enough for a
timer that stands in for a silent pilot ("taxiing": ground calls with traffic after 30 s;
"rolling": tower hands off after 60 s without telemetry) to beat the transmission. On a loaded
machine it sometimes did, and the flight, the transmissions counted and the figures depended
on the machine's speed.

Here scenario time runs at wall speed while it is the pilot's turn, and jumps to the session's
next wake-up when the pilot has nothing to say (the state expects no pilot phrase): the
controller's waits take no time, and no timer can overtake a pilot who answers at once. The
flight is the same on every run.
"""

from __future__ import annotations

import time
from typing import Any

from engine.models import Decision
from gateway.service import RadioService, SessionNotFound
from gateway.settings import Settings


class PilotPacedService(RadioService):
    """A `RadioService` whose clock the scripted pilot's turns pace (module docstring); for a
    gateway that serves one scripted pilot at a time (a jump moves every session's time)."""

    def __init__(self, settings: Settings, **kw: Any) -> None:
        self.skipped_s = 0.0  # scenario time jumped over so far (controller waits)
        super().__init__(settings.model_copy(update={"time_scale": 1.0}), clock=self._now, **kw)

    def _now(self) -> float:
        return time.time() + self.skipped_s

    def tick_all(self) -> list[tuple[str, Decision]]:
        """Skip the controller's waits, then fire what is due (the background clock calls this)."""
        self.skip_waits()
        return super().tick_all()

    def skip_waits(self) -> None:
        """Move the clock to the earliest wake-up of the sessions where the pilot has nothing to
        say; not at all while it is some pilot's turn."""
        wakes: list[float] = []
        for session_id in self.session_ids():
            try:
                session = self.get(session_id)
            except SessionNotFound:  # expired or deleted meanwhile
                continue
            if session.completed:
                continue
            if self.expected_pilot(session):
                return
            wake = self.engine.next_wakeup(session)
            if wake is not None:
                wakes.append(wake)
        if wakes:
            self.skipped_s += max(0.0, min(wakes) - self._now())
