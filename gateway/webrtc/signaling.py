"""WebRTC signalling over HTTP: `POST /v1/webrtc/offer`, trickled candidates, hang-up.

- ``POST /v1/webrtc/offer`` ``{type: "offer", sdp, session?}`` answers ``{type: "answer", sdp,
  peer_id, ice_servers}``. `session` is an optional `session.start` or `session.resume` message,
  acted on as if it were the first on the data channel (its events wait there until the channel
  opens). The answer carries every gateway candidate (aiortc gathers before answering).
- ``POST /v1/webrtc/{peer_id}/candidates`` ``{candidates: [{candidate, sdpMid, sdpMLineIndex}],
  done?}`` → ``{peer_id, added, done}``: the client's candidates when it trickles them (an offer
  sent before its gathering ended); ``done`` (or an empty `candidate`) says there are no more.
- ``DELETE /v1/webrtc/{peer_id}`` → ``{peer_id, closed: true, reason}``: hang up now and wait
  until everything is released (closing the peer connection does the same, a moment later).

The peer id is a random secret known to the offerer only; peers live in this process
(`PeerRegistry`), so the candidate and hang-up calls must reach the node that answered the offer.
With authentication on (`gateway.api.access` has checked the credential): an API key may open
peers and start or resume its sessions on them, as on the socket; a session token may open a peer
only to resume its own session (the offer's `session` says so, checked before anything else is
read), and a peer is reached only by the credential that opened it (403 otherwise; a session
token is not even told whether the peer exists). Messages on the data channel are checked as over
the WebSocket. A browser page from a foreign origin is refused, as on the socket. Past the node's
voice capacity (gateway/capacity.py) an offer is refused with 503 `too_many_sessions` and
``Retry-After`` before a peer exists; an offer's `session` takes its slot before the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import secrets
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from gateway import metrics
from gateway.api.access import principal_of
from gateway.api.errors import ApiError, error_response, parse, read_json, read_model
from gateway.auth import AuthError, Authenticator, Principal, origin_allowed
from gateway.capacity import VoiceCapacity
from gateway.service import RadioService
from gateway.settings import Settings
from gateway.speech.stack import SpeechStack
from gateway.wire import JsonBody, json_int
from gateway.radio import protocol as p

if TYPE_CHECKING:  # the peer needs aiortc (the [webrtc] extra); the body models here do not (openapi)
    from gateway.webrtc.peer import WebRTCPeer

# A browser's offer is 2-6 KB (more with many network interfaces), a candidate line 100-200
# characters. The offer's body may be larger than `max_body_bytes`: every offer the schema allows
# must fit, even written with JSON escapes (up to 12 bytes a character); candidates fit in it.
MAX_SDP_CHARS = 16_000
OFFER_BODY_BYTES = 12 * MAX_SDP_CHARS + 16 * 1024
MAX_CANDIDATES = 16


class _Body(JsonBody):
    model_config = ConfigDict(extra="forbid", strict=True)


class WebRTCOffer(_Body):
    """The client's SDP offer: an audio track (the microphone) and a data channel."""

    type: Literal["offer"] = "offer"
    sdp: str = Field(min_length=1, max_length=MAX_SDP_CHARS)
    # a `session.start` or `session.resume` message (protocol v1) to act on at once
    session: dict[str, Any] | None = None


class IceCandidateBody(_Body):
    candidate: str = Field(max_length=256)  # "candidate:..." as RTCIceCandidate.candidate; "" ends
    sdpMid: str | None = Field(default=None, max_length=16)  # noqa: N815 (the browser's names)
    sdpMLineIndex: json_int(ge=0, le=64) | None = None  # noqa: N815


class CandidatesRequest(_Body):
    candidates: list[IceCandidateBody] = Field(default_factory=list, max_length=MAX_CANDIDATES)  # more: send again
    done: bool = False  # no more candidates will come


class PeerRegistry:
    """The open WebRTC peers of this process, by id; bounded by ``webrtc_max_peers``. Their
    sessions count against the node's voice `capacity` (gateway/capacity.py) as sockets' do."""

    def __init__(self, settings: Settings, capacity: VoiceCapacity | None = None) -> None:
        self.settings = settings
        self.capacity = capacity if capacity is not None else VoiceCapacity(None, "off")
        self.peers: dict[str, WebRTCPeer] = {}

    def __len__(self) -> int:
        return len(self.peers)

    def create(self, service: RadioService, speech: SpeechStack, auth: Authenticator, request: Request) -> WebRTCPeer:
        if len(self.peers) >= self.settings.webrtc_max_peers:
            raise ApiError(503, "too_many_peers", f"the gateway holds its limit of {self.settings.webrtc_max_peers} WebRTC peers")
        from gateway.webrtc.peer import WebRTCPeer

        peer_id = secrets.token_urlsafe(18)
        peer = WebRTCPeer(
            peer_id, service, speech, self.settings, auth, principal_of(request), on_closed=self._closed, capacity=self.capacity
        )
        self.peers[peer_id] = peer
        metrics.WEBRTC_PEERS.inc()
        return peer

    def get(self, peer_id: str, principal: Principal, auth: Authenticator) -> WebRTCPeer:
        """The peer `principal` opened (404 unknown, 403 opened by another credential)."""
        peer = self.peers.get(peer_id)
        if auth.enabled:
            opener = peer.connection.principal if peer is not None else None
            if not principal.is_key and opener != principal:
                raise ApiError(403, "forbidden", "this credential did not open that WebRTC peer")
            if peer is not None and opener != principal:
                raise ApiError(403, "forbidden", "this WebRTC peer was opened by another API key")
        if peer is None:
            raise ApiError(404, "unknown_peer", "no open WebRTC peer with this id (it ended, or lives on another node)")
        return peer

    def _closed(self, peer: WebRTCPeer) -> None:
        if self.peers.pop(peer.peer_id, None) is not None:
            metrics.WEBRTC_PEERS.dec()

    async def discard(self, peer: WebRTCPeer) -> None:
        """A peer that never ran (its offer failed): release its peer connection and the voice
        slot its session message reserved."""
        self._closed(peer)
        peer.connection.session.unreserve()
        with contextlib.suppress(Exception):
            await peer.pc.close()

    async def close_all(self) -> None:
        """Shutdown: end every peer and wait until each has released its resources."""
        peers = list(self.peers.values())
        for peer in peers:
            peer.end("the gateway shuts down")
        await asyncio.gather(*(peer.closed() for peer in peers), return_exceptions=True)


def routes(
    registry: PeerRegistry, service: RadioService, speech: SpeechStack, settings: Settings, auth: Authenticator
) -> list[BaseRoute]:
    from gateway.webrtc.peer import BadOffer  # aiortc: mounted only when the [webrtc] extra is installed

    async def offer(request: Request) -> JSONResponse:
        headers = request.headers
        if not origin_allowed(headers.get("origin"), headers.get("host"), settings.ws_origins):
            raise ApiError(403, "forbidden", f"origin {headers.get('origin')!r} may not open this radio (LIVEFREQ_WS_ORIGINS)")
        principal = principal_of(request)
        if auth.enabled and not principal.is_key:  # what a session token may do decides first
            try:
                raw = await read_json(request, OFFER_BODY_BYTES)
            except ApiError:
                raw = None
            _token_may_resume(auth, principal, raw)
        else:
            raw = await read_json(request, OFFER_BODY_BYTES)
        body = parse(WebRTCOffer, raw)
        first = _session_message(body.session)
        if not registry.capacity.accepting:  # a peer exists for a voice session: none can start here now
            return _full(registry.capacity)
        peer = registry.create(service, speech, auth, request)
        if first is not None and not peer.connection.session.reserve():  # its session's slot, before answering
            await registry.discard(peer)
            return _full(registry.capacity)
        try:
            sdp = await peer.answer(body.sdp)
        except BadOffer as exc:
            await registry.discard(peer)
            raise ApiError(400, "bad_sdp", str(exc), "sdp") from None
        except Exception as exc:  # aiortc refused the offer while applying it
            await registry.discard(peer)
            raise ApiError(400, "bad_sdp", f"the offer could not be answered: {type(exc).__name__}: {exc}", "sdp") from None
        if first is not None:
            await peer.start(first)
        servers = [s.model_dump(exclude_none=True) for s in settings.webrtc_ice_servers]
        return JSONResponse({"type": "answer", "sdp": sdp, "peer_id": peer.peer_id, "ice_servers": servers}, status_code=201)

    async def candidates(request: Request) -> JSONResponse:
        principal = principal_of(request)
        if auth.enabled and not principal.is_key:
            registry.get(request.path_params["peer_id"], principal, auth)  # 403 before the body
        body = await read_model(request, CandidatesRequest, settings.max_body_bytes)
        peer = registry.get(request.path_params["peer_id"], principal, auth)
        try:
            for item in body.candidates:
                await peer.add_candidate(item.candidate, item.sdpMid, item.sdpMLineIndex)
            if body.done:
                await peer.add_candidate(None, None, None)
        except (BadOffer, ValueError) as exc:
            raise ApiError(422, "bad_candidate", str(exc), "candidates") from None
        return JSONResponse({"peer_id": peer.peer_id, "added": len(body.candidates), "done": body.done})

    async def hang_up(request: Request) -> JSONResponse:
        peer = registry.get(request.path_params["peer_id"], principal_of(request), auth)
        peer.end("the client hung up")
        await peer.closed()
        return JSONResponse({"peer_id": peer.peer_id, "closed": True, "reason": peer.reason})

    return [
        Route("/v1/webrtc/offer", offer, methods=["POST"]),
        Route("/v1/webrtc/{peer_id}/candidates", candidates, methods=["POST"]),
        Route("/v1/webrtc/{peer_id}", hang_up, methods=["DELETE"]),
    ]


def _full(capacity: VoiceCapacity) -> JSONResponse:
    """503 `too_many_sessions` with ``Retry-After``: the node serves its voice capacity."""
    retry = capacity.retry_after_s()
    return error_response(
        503,
        "too_many_sessions",
        f"this gateway node serves its capacity of {capacity.capacity} voice sessions; try again in {retry:g} s, or another node",
        headers={"Retry-After": str(math.ceil(retry))},
    )


def _token_may_resume(auth: Authenticator, principal: Principal, raw: Any) -> None:
    """A session token opens a peer only with `session.resume` of its own session."""
    session = raw.get("session") if isinstance(raw, dict) else None
    target = session.get("session_id") if isinstance(session, dict) and session.get("type") == "session.resume" else None
    if not isinstance(target, str):
        raise ApiError(403, "forbidden", "a session token opens a WebRTC peer only to resume its own session "
                       "(session: {type: session.resume, ...}); use an API key to start one")
    try:
        auth.check_session(principal, target, None)
    except AuthError as exc:
        raise ApiError(exc.status, exc.code, exc.message) from None


def _session_message(message: dict[str, Any] | None) -> dict[str, Any] | None:
    """The offer's `session`, checked as protocol v1 checks it (422 naming the field)."""
    if message is None:
        return None
    try:
        parsed = p.parse_client(json.dumps(message))
    except p.ProtocolError as exc:
        raise ApiError(422, "validation_error", f"session: {exc.message}", "session") from None
    if not isinstance(parsed, p.SessionStart | p.SessionResume):
        raise ApiError(422, "validation_error", "session: only session.start or session.resume", "session.type")
    return message
