"""A protocol-v1 WebSocket client for tests: records every event and every audio frame in order."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import websockets


@dataclass
class Received:
    events: list[dict[str, Any]] = field(default_factory=list)
    order: list[Any] = field(default_factory=list)  # event dicts and ("audio", nbytes) in arrival order
    audio: dict[str, int] = field(default_factory=dict)  # message_id -> bytes of audio


class RadioClient:
    def __init__(self, ws: websockets.ClientConnection) -> None:
        self.ws = ws
        self.rx = Received()
        self._current: str | None = None
        self._new = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, base_url: str) -> "RadioClient":
        ws = await websockets.connect(base_url.replace("http", "ws", 1) + "/v1/radio", max_size=None)
        return cls(ws)

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                if isinstance(frame, bytes):
                    self.rx.order.append(("audio", len(frame)))
                    if self._current is not None:
                        self.rx.audio[self._current] = self.rx.audio.get(self._current, 0) + len(frame)
                else:
                    event = json.loads(frame)
                    self.rx.events.append(event)
                    self.rx.order.append(event)
                    if event["type"] == "atc.message":
                        self._current = event["message_id"]
                    elif event["type"] == "atc.message.end":
                        self._current = None
                self._new.set()
        except websockets.ConnectionClosed:
            pass

    async def send(self, message: dict[str, Any] | bytes | str) -> None:
        await self.ws.send(json.dumps(message) if isinstance(message, dict) else message)

    async def wait_for(self, predicate, timeout: float = 60.0, start: int = 0) -> dict[str, Any]:
        """The first event from index `start` on that satisfies `predicate`."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for event in self.rx.events[start:]:
                if predicate(event):
                    return event
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise TimeoutError(f"no matching event; last events: {[e['type'] for e in self.rx.events[-8:]]}")
            self._new.clear()
            try:
                await asyncio.wait_for(self._new.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def wait_type(self, kind: str, timeout: float = 60.0, start: int = 0, **fields: Any) -> dict[str, Any]:
        return await self.wait_for(lambda e: e["type"] == kind and all(e.get(k) == v for k, v in fields.items()), timeout, start)

    def mark(self) -> int:
        return len(self.rx.events)

    async def transmit_audio(self, pcm: bytes, rate: int, *, realtime: bool = False, frame_ms: int = 20) -> None:
        """Push-to-talk one recording: ptt.down, 20 ms frames, ptt.up."""
        await self.send({"type": "ptt.down"})
        await self.stream(pcm, rate, realtime=realtime, frame_ms=frame_ms)
        await self.send({"type": "ptt.up"})

    async def stream(self, pcm: bytes, rate: int, *, realtime: bool = False, frame_ms: int = 20) -> None:
        step = rate * frame_ms // 1000 * 2
        for i in range(0, len(pcm), step):
            await self.ws.send(pcm[i : i + step])
            await asyncio.sleep(frame_ms / 1000 if realtime else 0)
