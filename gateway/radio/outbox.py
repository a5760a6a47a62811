"""A connection's bounded send queue: what a client that reads slowly may cost the gateway.

Everything a `RadioConnection` sends goes through its `Outbox`, drained by one writer task, so
no producer (the live frequency, decisions, partial transcripts, replies to the client) ever
waits on the client's socket, and the order of frames is the order they were queued.

Policy when the client does not keep up (the queue is bounded in bytes, ``ws_send_queue_bytes``):

- *droppable* frames, partial transcripts and `vad` events, go first: at most
  ``ws_send_queue_droppable`` of them wait (the oldest is dropped for a new one), and any of them
  is dropped to make room for a must-deliver frame. They are hints: the final transcript and the
  decision follow anyway;
- everything else (controller messages and their audio, decisions, state, final transcripts,
  errors, pongs) is never dropped. When it does not fit, the client is too slow to be served
  (`SlowConsumer`): the connection ends with a fatal ``slow_consumer`` error and close code 1008.

So the queue never holds more than its bound (plus the one frame being written), whatever the
client does. Controller audio is paced at real time, so a client that reads at real time never
gets near the bound: at the default 2 MiB, a client must stop reading for about 30 s of 16 kHz
controller audio (10 s at 48 kHz) to be disconnected.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass


class SlowConsumer(Exception):
    """A must-deliver frame does not fit: the client reads too slowly to be served."""


@dataclass(slots=True)
class Frame:
    data: str | bytes | None  # None: close the socket with `close_code`
    droppable: bool = False
    close_code: int = 1000

    @property
    def size(self) -> int:
        return len(self.data) if self.data is not None else 0


class Outbox:
    def __init__(self, max_bytes: int, max_droppable: int) -> None:
        self.max_bytes = max_bytes
        self.max_droppable = max_droppable
        self._frames: deque[Frame] = deque()
        self._ready = asyncio.Event()
        self.bytes = 0
        self.droppable = 0
        self.dropped = 0  # droppable frames discarded since the start
        self.peak_bytes = 0

    def __len__(self) -> int:
        return len(self._frames)

    def put(self, data: str | bytes, *, droppable: bool = False, force: bool = False) -> bool:
        """Queue a frame; False when a droppable one was dropped instead. `SlowConsumer` when a
        must-deliver frame does not fit even after dropping every droppable one; `force` queues
        it past the bound (the connection's last words: one error before closing)."""
        frame = Frame(data, droppable)
        if droppable:
            if self.max_droppable == 0 or frame.size > self.max_bytes - self.bytes:
                self.dropped += 1
                return False
            if self.droppable >= self.max_droppable:
                self._evict(1)
        elif self.bytes + frame.size > self.max_bytes and not force:
            self._evict(self.droppable)
            if self.bytes + frame.size > self.max_bytes:
                raise SlowConsumer(
                    f"{self.bytes} bytes wait for the client and {frame.size} more do not fit in {self.max_bytes}"
                )
        self._append(frame)
        return True

    def close(self, code: int) -> None:
        """Queue the closing handshake after everything queued so far."""
        self._append(Frame(None, close_code=code))

    async def get(self) -> Frame:
        while not self._frames:
            self._ready.clear()
            await self._ready.wait()
        frame = self._frames.popleft()
        self.bytes -= frame.size
        self.droppable -= frame.droppable
        return frame

    def _append(self, frame: Frame) -> None:
        self._frames.append(frame)
        self.bytes += frame.size
        self.droppable += frame.droppable
        self.peak_bytes = max(self.peak_bytes, self.bytes)
        self._ready.set()

    def _evict(self, count: int) -> None:
        """Drop the `count` oldest droppable frames."""
        if count <= 0:
            return
        kept: deque[Frame] = deque()
        for frame in self._frames:
            if count and frame.droppable:
                count -= 1
                self.bytes -= frame.size
                self.droppable -= 1
                self.dropped += 1
            else:
                kept.append(frame)
        self._frames = kept
