"""One receiver's playout: controller transmissions, in order, on air for one connection.

A `Playout` is what one pilot's radio hears; the `Frequency` it is tuned to
(gateway/radio/frequency.py) hands it the transmissions made there. Controller messages queue
here in `seq` order and go out one at a time: the `atc.message` event, the audio synthesized
sentence by sentence (radio effect, resampled to the client's rate) paced at real time with a
small lead, then `atc.message.end`. Pacing makes "the controller is talking" a
fact of the server clock, which is what blocking needs:

- while the pilot is keyed, the controller does not start a new message (it waits);
- if the pilot keys while the controller is talking, the controller stops at once
  (`atc.message.end` with `interrupted: true`) and then answers the pilot's transmission, or says
  "say again" if it was not understood; the cut message stays the last one said, so the pilot can
  ask "say again" to hear it whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from engine.models import ControllerMessage
from gateway.audio.radio import RadioEffect
from gateway.audio.resample import StreamResampler
from gateway.radio.events import Event, atc_message, atc_message_end
from gateway.speech.cpu import Priority, priority
from gateway.speech.tts.base import TtsEngine

log = logging.getLogger("livefreq.playout")

SendEvent = Callable[[Event], Awaitable[None]]
SendBytes = Callable[[bytes], Awaitable[None]]

CHUNK_MS = 100  # audio frame size on the wire
PACE_LEAD_S = 0.3  # how far ahead of real time audio may be sent (client jitter buffer)


async def prefetched(pieces: AsyncIterator[bytes], seconds: Callable[[bytes], float]) -> AsyncIterator[bytes]:
    """`pieces` (a message's audio, sentence by sentence), each next one synthesized while the
    one before is being sent: paced sending returns with only `PACE_LEAD_S` of audio left at the
    client, too little to synthesize the next sentence in under load (an audible gap).

    The first piece is asked for at `Priority.ON_AIR` (the pilot waits for it); the next ones at
    `Priority.AHEAD` with the deadline when the audio before them will have played out
    (`seconds(piece)` is a piece's duration), so the CPU pool serves waiting pilots first and
    then the messages about to run dry. Close it (`contextlib.aclosing`) to drop a piece
    synthesized ahead that is no longer wanted.
    """
    source = aiter(pieces)
    with priority(Priority.ON_AIR):  # the task runs in a copy of this context
        upcoming = asyncio.ensure_future(anext(source))
    due: float | None = None
    try:
        while True:
            try:
                piece = await upcoming
            except StopAsyncIteration:
                return
            due = (time.monotonic() if due is None else due) + seconds(piece)
            with priority(Priority.AHEAD, due, urgent=True):  # before finals once about to run dry
                upcoming = asyncio.ensure_future(anext(source))
            yield piece
    finally:
        if not upcoming.done():
            upcoming.cancel()
            await asyncio.wait({upcoming})
        if not upcoming.cancelled():
            upcoming.exception()  # retrieved: a failure of a piece nobody wants is not logged
        close = getattr(source, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()


class Playout:
    """The controller's side of one connection's radio: a queue spoken one message at a time,
    held while the pilot is keyed (see the module docstring)."""

    def __init__(
        self,
        send_json: SendEvent,
        send_bytes: SendBytes,
        tts: TtsEngine,
        *,
        output_rate: int = 16000,
        radio_level: int = 4,
        radio_effect: bool = True,
        pace: bool = True,
        clock: Callable[[], float] = time.monotonic,
        on_sent: Callable[[ControllerMessage], Awaitable[None]] | None = None,
        on_first_audio: Callable[[ControllerMessage], None] | None = None,
    ) -> None:
        self._send_json = send_json
        self._send_bytes = send_bytes
        self.tts = tts
        self.output_rate = output_rate
        self.radio_level = radio_level
        self.radio_effect = radio_effect
        self.pace = pace
        self.clock = clock
        self.on_sent = on_sent
        self.on_first_audio = on_first_audio
        self._queue: asyncio.Queue[ControllerMessage] = asyncio.Queue()
        self._clear = asyncio.Event()  # set while the pilot is not transmitting
        self._clear.set()
        self._cut = False
        self.current: ControllerMessage | None = None
        self._task: asyncio.Task[None] | None = None
        self.sent = 0
        self.interrupted = 0

    # ---------------------------------------------------------------- control

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="livefreq-playout")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def enqueue(self, messages: list[ControllerMessage]) -> None:
        for msg in messages:
            self._queue.put_nowait(msg)

    def withdraw(self, message_id: str) -> None:
        """Take a message off the air (a broadcast the pilot tuned away from): cut it if it is
        being spoken (`atc.message.end` says `interrupted`), drop it if it is still queued."""
        if self.current is not None and self.current.message_id == message_id:
            self._cut = True
            return
        kept = []
        while not self._queue.empty():
            msg = self._queue.get_nowait()
            if msg.message_id != message_id:
                kept.append(msg)
        for msg in kept:
            self._queue.put_nowait(msg)

    @property
    def talking(self) -> bool:
        return self.current is not None

    @property
    def pending(self) -> int:
        return self._queue.qsize() + (1 if self.current is not None else 0)

    def key(self) -> ControllerMessage | None:
        """The pilot keys the mic: hold the queue; cut the controller if on air (returns the cut one)."""
        self._clear.clear()
        if self.current is not None:
            self._cut = True
            return self.current
        return None

    def unkey(self) -> None:
        self._clear.set()

    async def idle(self) -> None:
        """Wait until everything queued has been transmitted (tests, benchmarks)."""
        while self.pending:
            await asyncio.sleep(0.02)

    # ---------------------------------------------------------------- transmitting

    async def _run(self) -> None:
        while True:
            msg = await self._queue.get()
            while not self._clear.is_set():  # woken by unkey(), the pilot may have keyed again before this ran
                await self._clear.wait()
            try:
                await self._transmit(msg)
            except asyncio.CancelledError:
                raise
            except Exception:  # a broken socket ends the connection elsewhere; never this loop's job
                log.exception("transmitting %s failed", msg.message_id)

    async def _transmit(self, msg: ControllerMessage) -> None:
        self.current, self._cut = msg, False
        await self._send_json(atc_message(msg, self.output_rate))
        radio = RadioEffect(self.tts.sample_rate, self.radio_level, seed=msg.seq) if self.radio_effect else None
        resampler = StreamResampler(self.tts.sample_rate, self.output_rate) if self.tts.sample_rate != self.output_rate else None
        started = self.clock()
        samples = 0
        try:
            async with contextlib.aclosing(prefetched(self.tts.stream(msg.speech), self._seconds)) as pieces:
                async for piece in pieces:
                    out = radio.process(piece) if radio is not None else piece
                    out = resampler.process(out) if resampler is not None else out
                    first = self._first_audio_of(msg) if samples == 0 else None
                    samples = await self._send_paced(out, started, samples, on_first=first)
                    if self._cut:
                        break
            if not self._cut:
                tail = radio.tail() if radio is not None else b""
                tail = resampler.process(tail) if resampler is not None and tail else tail
                rest = resampler.flush() if resampler is not None else b""
                samples = await self._send_paced(tail + rest, started, samples)
        finally:
            interrupted = self._cut
            self.current, self._cut = None, False
            self.sent += 1
            self.interrupted += int(interrupted)
            if self.on_sent is not None:
                await self.on_sent(msg)  # e.g. the delivery written, off the event loop
        await self._send_json(atc_message_end(msg, interrupted, round(samples * 1000 / self.output_rate)))

    def _seconds(self, pcm: bytes) -> float:
        return len(pcm) / 2 / self.tts.sample_rate

    def _first_audio_of(self, msg: ControllerMessage) -> Callable[[], None] | None:
        callback = self.on_first_audio
        return None if callback is None else lambda: callback(msg)

    async def _send_paced(self, pcm: bytes, started: float, samples: int, on_first: Callable[[], None] | None = None) -> int:
        """Send `pcm` in `CHUNK_MS` frames, at most `PACE_LEAD_S` ahead of real time; `on_first`
        runs once the first frame has left (the stage clocks stop at the first byte sent, not
        after a whole paced piece)."""
        step = self.output_rate * CHUNK_MS // 1000 * 2
        for i in range(0, len(pcm), step):
            if self._cut:
                break
            chunk = pcm[i : i + step]
            if self.pace:
                ahead = samples / self.output_rate - (self.clock() - started)
                if ahead > PACE_LEAD_S:
                    await asyncio.sleep(ahead - PACE_LEAD_S)
            await self._send_bytes(chunk)
            samples += len(chunk) // 2
            if on_first is not None:
                on_first()
                on_first = None
        return samples

