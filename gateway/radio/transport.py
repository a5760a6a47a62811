"""What a transport gives one pilot's radio: frames in and out, nothing else.

WebSocket (gateway/ws) and WebRTC (gateway/webrtc) differ only in how JSON and audio move; each
implements `Transport` and feeds what the client sends to a `RadioConnection`.
"""

from __future__ import annotations

from typing import Protocol

CLOSE_TIMEOUT_S = 2.0  # how long the last words (a fatal error, the close) may take to leave
POLICY_VIOLATION = 1008  # close code of every fatal error


class TransportClosed(Exception):
    """The client is gone: a write found the connection closed (an ordinary hang-up)."""


class Transport(Protocol):
    """How one connection's frames move; everything else is `RadioConnection`'s."""

    kind: str  # "ws" | "webrtc": the transport label of error metrics and logs
    # audio formats the transport fixes (a WebRTC track decodes to its own rate) or None: the
    # client declares them in session.start/resume (`input_audio`, `output_audio`)
    input_rate: int | None
    output_rate: int | None

    @property
    def connected(self) -> bool: ...

    async def write_text(self, data: str) -> None:
        """Send one JSON text message; `TransportClosed` when the client is gone."""

    async def write_audio(self, pcm: bytes) -> None:
        """Send controller audio (PCM16 mono at the output rate); `TransportClosed` when gone."""

    async def write_close(self, code: int) -> None:
        """Close the connection after everything written so far (`code`: WebSocket close code)."""

    def stop_receiving(self) -> None:
        """The connection ends with a fatal error: stop waiting for the client's next frame."""
