"""A controller message's pieces synthesized ahead of its playout, one after another.

The playout used to ask for the next piece only when the one before began to be sent, so a
piece had the playing time of one piece to be synthesized in; under load that was too little
(issue 17: audio gaps mid-message). `SynthesisAhead` synthesizes every piece of the message as
fast as the CPU pool serves it, from before the message starts until its last piece, so the
audio ready ahead of the listener grows wherever synthesis is faster than real time; the
playout guard (gateway/radio/playout_guard.py) decides from what is ready when to start.

Each piece is asked for at `Priority.ON_AIR`, ahead of speculative synthesis and partial
transcripts: before the start in arrival order (a pilot waits), after it with the deadline
when the audio before it will have played out. Every piece's wall time goes to the
`SpeedWindow`, the guard's measure of how fast synthesis is now.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence

from gateway import metrics
from gateway.radio.playout_guard import SpeedWindow
from gateway.speech.cpu import Priority, priority


class SynthesisAhead:
    """The audio of `texts` (a message's pieces), synthesized by one task in order; `close()`
    stops it (pieces done stay in the TTS cache, for a "say again")."""

    def __init__(
        self,
        texts: Sequence[str],
        synthesize: Callable[[str], Awaitable[bytes]],
        seconds: Callable[[bytes], float],
        speed: SpeedWindow,
        clock: Callable[[], float],
    ) -> None:
        self.texts = list(texts)
        self._synthesize = synthesize
        self._seconds = seconds
        self._speed = speed
        self._clock = clock
        self.pieces: list[bytes] = []  # audio of texts[:len(pieces)], in order (may be b"")
        self.started_at: float | None = None  # when playing began (`clock`): pieces get deadlines
        self._audio_s = 0.0  # audio of the pieces synthesized
        self._changed = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="livefreq-synthesis-ahead")

    @property
    def done(self) -> bool:
        """Every piece synthesized (or synthesis failed)."""
        return self._task.done()

    def ready_s(self, played: int = 0) -> float:
        """Seconds of audio synthesized in pieces from `played` on."""
        return sum(self._seconds(pcm) for pcm in self.pieces[played:])

    def pending_chars(self) -> list[int]:
        """Characters of each piece not synthesized yet (the one in progress included)."""
        return [len(text) for text in self.texts[len(self.pieces) :]]

    def wake(self) -> None:
        """Wake the waiter of `wait_for` (to look at its `stop`: the message was cut)."""
        self._changed.set()

    async def wait_for(self, count: int, stop: Callable[[], bool] = lambda: False) -> None:
        """Until `count` pieces are synthesized, synthesis ended (its error is raised here) or
        `stop()` holds when woken."""
        while len(self.pieces) < count and not self._task.done() and not stop():
            self._changed.clear()
            await self._changed.wait()
        if len(self.pieces) < count and self._task.done() and not self._task.cancelled():
            error = self._task.exception()
            if error is not None:
                raise error

    async def piece(self, index: int, stop: Callable[[], bool] = lambda: False) -> bytes | None:
        """The audio of piece `index` once synthesized; None past the last (or if `stop()`)."""
        await self.wait_for(index + 1, stop)
        return self.pieces[index] if index < len(self.pieces) else None

    async def close(self) -> None:
        if not self._task.done():
            self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task  # a failure of a piece nobody wants any more is not logged

    async def _run(self) -> None:
        try:
            for text in self.texts:
                due = None if self.started_at is None else self.started_at + self._audio_s
                asked = self._clock()
                with priority(Priority.ON_AIR, due):
                    pcm = await self._synthesize(text)
                audio_s = self._seconds(pcm)
                self._speed.observe(len(text), audio_s, self._clock() - asked)
                metrics.PLAYOUT_RTF.set(self._speed.worst().real_time_factor)
                self._audio_s += audio_s
                self.pieces.append(pcm)
                self._changed.set()
        finally:
            self._changed.set()  # wake a waiter: done, failed or cancelled
