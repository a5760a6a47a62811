"""The WebRTC routes of a gateway installed without the ``[webrtc]`` extra (aiortc).

The radio stays reachable over the WebSocket; a WebRTC offer is answered with a typed error (501
``webrtc_unavailable``) that names the extra to install, instead of the server failing to start.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from gateway.api.errors import ApiError
from gateway.extras import install_hint
from gateway.settings import Settings

MESSAGE = install_hint("webrtc", "the WebRTC radio") + "; the WebSocket radio (/v1/radio) works without it"


class PeerRegistry:
    """No peers can be opened: the registry the app holds and closes when aiortc is missing."""

    def __init__(self, settings: Settings, capacity: object = None) -> None:
        self.settings = settings

    def __len__(self) -> int:
        return 0

    async def close_all(self) -> None:
        return None


def routes(registry: PeerRegistry, *_: object) -> list[BaseRoute]:
    """`POST /v1/webrtc/offer`, the candidates and hang-up paths: each answers 501 with the hint."""

    async def unavailable(request: Request) -> JSONResponse:
        raise ApiError(501, "webrtc_unavailable", MESSAGE)

    return [
        Route("/v1/webrtc/offer", unavailable, methods=["POST"]),
        Route("/v1/webrtc/{peer_id}/candidates", unavailable, methods=["POST"]),
        Route("/v1/webrtc/{peer_id}", unavailable, methods=["DELETE"]),
    ]
