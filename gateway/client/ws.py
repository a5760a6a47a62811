"""The radio over a WebSocket (`WS /v1/radio`): JSON text frames and PCM16 binary frames both ways.

The simplest transport for a script or a simulator plugin: audio is raw PCM16 at the rates the
client declares in `session.start` (`input_audio`, `output_audio`), and all audio of a controller
message arrives between its `atc.message` and `atc.message.end`, so it needs no cutting apart.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import websockets

from gateway.client.base import FRAME_MS, ClientBase, frames

__all__ = ["RadioClient"]


class RadioClient(ClientBase):
    """A protocol-v1 client on `WS /v1/radio` (docs/protocol-v1.md).

    A reader task records every event and audio frame as it arrives; `wait_for`/`wait_type`
    look for events from an index on (`mark()` before acting, then wait from the mark).
    """

    transport = "ws"

    def __init__(self, ws: websockets.ClientConnection, *, keep_audio: bool = False, output_rate: int = 16000) -> None:
        super().__init__(keep_audio)
        self.ws = ws
        self.output_rate = output_rate
        self._reader = asyncio.create_task(self._read(), name="radio-client-reader")

    @classmethod
    async def connect(cls, base_url: str, *, token: str | None = None, keep_audio: bool = False, output_rate: int = 16000) -> RadioClient:
        """Connect to the gateway at `base_url` (http://host:port; ws:// works too); `token`: an
        API key or session token when the gateway requires one. `output_rate` is what this
        client will ask for in `session.start` (`output_audio`), to label the audio it records."""
        url = base_url.rstrip("/").replace("http", "ws", 1) + "/v1/radio"
        headers = {"Authorization": f"Bearer {token}"} if token else None
        # no permessage-deflate: PCM does not compress, and deflating costs both ends CPU
        ws = await websockets.connect(url, max_size=None, additional_headers=headers, compression=None)
        return cls(ws, keep_audio=keep_audio, output_rate=output_rate)

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()

    @property
    def closed(self) -> bool:
        return self._reader.done()

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                if isinstance(frame, bytes):
                    self._record_audio(self._current, frame)
                else:
                    event = json.loads(frame)
                    if event["type"] == "atc.message":
                        self._current = event["message_id"]
                    elif event["type"] == "atc.message.end":
                        self._current = None
                    self._record_event(event)
        except websockets.ConnectionClosed:
            pass
        finally:
            self._ended()

    async def send(self, message: dict[str, Any] | bytes | str) -> None:
        await self.ws.send(json.dumps(message) if isinstance(message, dict) else message)

    async def stream(self, pcm: bytes, rate: int, *, realtime: bool = False, frame_ms: int = FRAME_MS) -> None:
        """Send `pcm` as `frame_ms` frames; in real time, frame k leaves at start + k * frame_ms
        (a fixed schedule: time spent sending never accumulates into drift)."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        for k, chunk in enumerate(frames(pcm, rate, frame_ms)):
            if realtime:
                delay = start + k * frame_ms / 1000 - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
            else:
                await asyncio.sleep(0)
            await self.ws.send(chunk)
        if realtime:  # the last frame's audio lasts until its end: release the key then
            delay = start + len(pcm) / 2 / rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
