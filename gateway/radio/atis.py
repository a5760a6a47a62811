"""The ATIS on the air: while the pilot is tuned to an ATIS frequency, the recording plays in a loop.

An `AtisBroadcast` belongs to one connection and feeds that connection's `Playout`, the
same queue controller messages go through, so the ATIS is spoken like any transmission (the
`atc.message` event with ``station: "atis"`` and ``seq: 0`` — it is no numbered message of the
session — its audio, `atc.message.end`) and never over a controller: a controller call that
arrives meanwhile is spoken after the current repetition. Each repetition is composed afresh, so
a new information letter is on the air from the next loop on. Tuning away cuts the current
repetition at once and ends the loop. `tune_atis` is the radio's side of tuning: which ATIS (if
any) a frequency carries for the session (engine/atis_scenario.py), and the loop started or ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.atis_scenario import atis_message, is_broadcast
from engine.models import ControllerMessage
from engine.phraseology import frequencies
from gateway.radio.playout import Playout

if TYPE_CHECKING:
    from gateway.service import RadioService

log = logging.getLogger("livefreq.atis")

GAP_S = 2.0  # silence between two repetitions, as a real ATIS loop has

Compose = Callable[[int], ControllerMessage | None]  # repetition number -> the message (None: stop)


class AtisBroadcast:
    def __init__(self, playout: Playout, *, gap_s: float = GAP_S) -> None:
        self.playout = playout
        self.gap_s = gap_s
        self.tuned: str | None = None  # the ATIS frequency being listened to
        self.repetitions = 0
        self._current: ControllerMessage | None = None
        self._done = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def listening(self) -> bool:
        return self._task is not None and not self._task.done()

    async def play(self, tuned: str, compose: Compose) -> None:
        """Loop the ATIS `compose` makes until `stop` (a new frequency restarts the loop)."""
        if self.listening and self.tuned == tuned:
            return
        await self.stop()
        self.tuned = tuned
        self._task = asyncio.create_task(self._loop(compose), name="livefreq-atis")

    async def stop(self) -> None:
        """The pilot tuned away: cut the repetition on the air, end the loop."""
        task, self._task = self._task, None
        self.tuned = None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        current, self._current = self._current, None
        if current is not None:
            self.playout.withdraw(current.message_id)

    @staticmethod
    def owns(msg: ControllerMessage) -> bool:
        """A broadcast repetition (also one cut after its loop ended), not a controller message."""
        return is_broadcast(msg)

    def sent(self, msg: ControllerMessage) -> None:
        """The frequency finished (or cut) a repetition: the loop goes on after the gap."""
        if self._current is not None and msg.message_id == self._current.message_id:
            self._done.set()

    async def _loop(self, compose: Compose) -> None:
        n = 0
        while True:
            try:
                msg = compose(n)
            except Exception:  # the session store did not answer...: the broadcast ends, the socket stays
                log.exception("composing the ATIS failed; the broadcast ends")
                return
            if msg is None:
                return
            self._done.clear()
            self._current = msg
            self.playout.enqueue([msg])
            await self._done.wait()
            self._current = None
            n += 1
            self.repetitions += 1
            await asyncio.sleep(self.gap_s)  # the broadcast's own pause, on the server clock


async def tune_atis(broadcast: AtisBroadcast, service: RadioService, session_id: str, frequency: str) -> None:
    """COM1 changed: an ATIS frequency starts its broadcast, any other ends one."""
    if service.atis(session_id, frequency) is None:
        await broadcast.stop()
        return

    def compose(n: int) -> ControllerMessage | None:
        """Repetition `n` of the ATIS on `frequency`, as it stands now (its letter may have moved on)."""
        atis = service.atis(session_id, frequency)
        return None if atis is None else atis_message(session_id, atis, frequency, n, service.clock())

    await broadcast.play(frequencies.canonical(frequency) or frequency, compose)
