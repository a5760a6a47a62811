"""`WS /v1/radio`: one pilot's radio over one WebSocket (protocol v1, docs/protocol-v1.md).

The pipeline is the transport-neutral `RadioConnection` (gateway/radio); this module is
only how its frames move on a WebSocket: JSON in text frames, PCM16 in binary frames, both ways,
at the rates the client declares.

Admission (README "Security"): a browser page from another origin is refused (`origin_allowed`),
and with authentication on the socket needs an API key or a session token (``?token=`` or
``Authorization: Bearer``); both refusals are a fatal `forbidden`/`unauthorized` error and close
code 1008. A `session.start`/`session.resume` past the node's voice capacity gets
`too_many_sessions` with `retry_after_s` (gateway/radio/session.py), and the socket stays open.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from gateway import metrics
from gateway.capacity import VoiceCapacity
from gateway.auth import AuthError, Authenticator, bearer, origin_allowed
from gateway.radio import protocol as p
from gateway.radio.connection import RadioConnection
from gateway.radio.transport import POLICY_VIOLATION, TransportClosed
from gateway.service import RadioService
from gateway.settings import Settings
from gateway.speech.stack import SpeechStack

__all__ = ["POLICY_VIOLATION", "WebSocketTransport", "route_handler", "serve_socket"]


class WebSocketTransport:
    """A Starlette WebSocket as a `Transport`: the client declares its audio rates."""

    kind = "ws"
    input_rate: int | None = None
    output_rate: int | None = None

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.receiver: asyncio.Task[Any] | None = None  # the task running the receive loop

    @property
    def connected(self) -> bool:
        return self.ws.application_state == WebSocketState.CONNECTED

    async def write_text(self, data: str) -> None:
        await self._send(self.ws.send_text, data)

    async def write_audio(self, pcm: bytes) -> None:
        await self._send(self.ws.send_bytes, pcm)

    async def write_close(self, code: int) -> None:
        await self._send(lambda _: self.ws.close(code=code), None)

    async def _send(self, send: Any, data: Any) -> None:
        try:
            await send(data)
        except (WebSocketDisconnect, RuntimeError) as exc:  # Starlette's two ways of saying "gone"
            raise TransportClosed(str(exc)) from exc

    def stop_receiving(self) -> None:
        if self.receiver is not None and self.receiver is not asyncio.current_task():
            self.receiver.cancel()  # from the loop itself: it checks `fatal` after each frame


async def serve_socket(
    ws: WebSocket,
    service: RadioService,
    speech: SpeechStack,
    settings: Settings,
    auth: Authenticator,
    capacity: VoiceCapacity | None = None,
) -> None:
    """Accept the socket and run its connection until the client leaves or a fatal error."""
    await ws.accept()
    metrics.CONNECTIONS.inc()
    transport = WebSocketTransport(ws)
    transport.receiver = asyncio.current_task()
    connection = RadioConnection(transport, service, speech, settings, auth, capacity=capacity)
    connection.open()
    try:
        _admit(ws, settings, auth, connection)
        while connection.fatal is None:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            data, text = message.get("bytes"), message.get("text")
            if data is not None:
                await connection.receive_audio(data)
            elif text is not None:
                await connection.receive_text(text)
    except WebSocketDisconnect:
        pass
    except asyncio.CancelledError:
        if connection.fatal is None:  # the server is shutting down
            raise
        asyncio.current_task().uncancel()  # cancelled by a slow reader: end with the error below
    finally:
        metrics.CONNECTIONS.dec()
        await connection.close()


def _admit(ws: WebSocket, settings: Settings, auth: Authenticator, connection: RadioConnection) -> None:
    """The Origin allow-list, then the credential (when authentication is on)."""
    headers = ws.headers
    if not origin_allowed(headers.get("origin"), headers.get("host"), settings.ws_origins):
        connection.fail(
            p.ProtocolError("forbidden", f"origin {headers.get('origin')!r} may not open this radio (LIVEFREQ_WS_ORIGINS)", fatal=True)
        )
        return
    try:
        connection.principal = auth.authenticate(ws.query_params.get("token") or bearer(headers))
    except AuthError as exc:
        connection.fail(p.ProtocolError(exc.code, exc.message, fatal=True))


def route_handler(
    service: RadioService,
    speech: SpeechStack,
    settings: Settings,
    auth: Authenticator | None = None,
    capacity: VoiceCapacity | None = None,
) -> Any:
    auth = auth or Authenticator(settings)

    async def radio(ws: WebSocket) -> None:
        await serve_socket(ws, service, speech, settings, auth, capacity)

    return radio
