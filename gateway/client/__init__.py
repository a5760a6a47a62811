"""The livefreq client library: a pilot's radio for scripts, tests and flight-simulator plugins.

    from gateway.client import connect

    async with connect("http://127.0.0.1:8765", transport="webrtc", keep_audio=True) as radio:
        started = await radio.start(flow="tower_departure", scenario={"airport": "EDDF"})
        await radio.telemetry(on_ground=True, altitude_ft=364, ias_kt=0)
        await radio.transmit_audio(pcm, 16000)          # ptt.down, the audio, ptt.up
        decision = await radio.wait_type("decision")
        await radio.tune("127.275")
        for message in radio.messages():                  # controller messages, in order, with audio
            print(message.text, message.seconds)

`connect` opens a WebSocket (`transport="ws"`, gateway/client/ws.py) or a WebRTC peer
(`transport="webrtc"`, gateway/client/webrtc.py); both are `ClientBase`s (gateway/client/base.py):
the same verbs, the same recording of every event and audio frame in arrival order, the same
waiting by index. `livefreq client` (tooling/cli/client.py) is this library as a command.
The protocol itself is docs/protocol-v1.md; a whole flight for plugin authors is
docs/sim-plugins.md.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

from gateway.client.base import FRAME_MS, ClientBase, ControllerAudio, ProtocolRefused, Received, frames
from gateway.client.ws import RadioClient

__all__ = [
    "FRAME_MS",
    "ClientBase",
    "ControllerAudio",
    "ProtocolRefused",
    "RadioClient",
    "Received",
    "connect",
    "frames",
    "open_client",
]

Transport = Literal["ws", "webrtc"]


async def open_client(
    url: str, *, transport: Transport = "ws", token: str | None = None, keep_audio: bool = False, **options: Any
) -> ClientBase:
    """A connected client (close it with `await client.close()`); `options` go to the transport's
    `connect` (WebSocket: `output_rate`; WebRTC: `session`, `trickle`)."""
    if transport == "webrtc":
        from gateway.client.webrtc import WebRTCRadioClient  # aiortc only when asked for

        return await WebRTCRadioClient.connect(url, token=token, keep_audio=keep_audio, **options)
    if transport == "ws":
        return await RadioClient.connect(url, token=token, keep_audio=keep_audio, **options)
    raise ValueError(f"unknown transport {transport!r}: ws or webrtc")


@asynccontextmanager
async def connect(
    url: str, *, transport: Transport = "ws", token: str | None = None, keep_audio: bool = False, **options: Any
) -> AsyncIterator[ClientBase]:
    """`async with connect(url, transport=...) as radio:` a client, closed on the way out."""
    client = await open_client(url, transport=transport, token=token, keep_audio=keep_audio, **options)
    try:
        yield client
    finally:
        await client.close()
