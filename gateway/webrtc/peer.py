"""One pilot's radio over WebRTC: an aiortc peer connection as a `Transport` of `RadioConnection`.

What moves where (docs/protocol-v1.md, "WebRTC"):

- the pilot's microphone is the offer's audio track (Opus); it is always drained, decoded to 16 kHz
  mono and fed to the connection while a transmission is open (ptt keyed, or vox listening);
- the controller's voice is the answer's audio track (`PacedAudioTrack`): 20 ms frames paced on
  the server clock, silence between messages (at least 0.1 s, so a listener can cut them apart);
- protocol v1's JSON messages travel both ways on the client's data channel, in order; a message
  over the SCTP size limit leaves as `fragment` messages (gateway/webrtc/fragments.py).

Audio and the data channel are separate paths, so two rules keep them in step: `atc.message.end`
is sent once the message's audio has been handed to the track (a WebRTC client has no other way to
tell where a message ends), and an interrupted message's queued audio is dropped. On `ptt.up` the
mic stays open for `webrtc_ptt_tail_ms` more audio, because the release travels faster than the
last words (the receiver's jitter buffer holds ~80 ms of them).

A peer that vanishes without a goodbye is only noticed by ICE after ~30 s of failed consent checks,
so the client must send something on the data channel (a `ping` does) at least every
`webrtc_liveness_s`; a silent peer is closed then. Whatever ends the peer (the client's close, a
failed connection, a dead channel, a fatal protocol error, the gateway's shutdown), `run` releases
everything: the connection's session resources, the tracks, the peer connection, and its entry in
the registry. The session itself stays, for `session.resume`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from aiortc import RTCConfiguration, RTCDataChannel, RTCIceServer, RTCPeerConnection, RTCSessionDescription
from aiortc.exceptions import InvalidStateError
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack
from aiortc.sdp import SessionDescription, candidate_from_sdp

from gateway import metrics
from gateway.auth import ANONYMOUS, Authenticator, Principal
from gateway.capacity import VoiceCapacity
from gateway.radio import events as e
from gateway.radio.connection import RadioConnection
from gateway.radio.transport import TransportClosed
from gateway.service import RadioService
from gateway.settings import Settings
from gateway.speech.stack import SpeechStack
from gateway.webrtc.fragments import MAX_MESSAGE_BYTES, fragment
from gateway.webrtc.tracks import FRAME_MS, TRACK_RATE, PacedAudioTrack, MicConverter

log = logging.getLogger("livefreq.webrtc")

INBOX_MESSAGES = 256  # data-channel messages waiting to be handled (the WebSocket's TCP window)
HIGH_WATER_BYTES = 256 * 1024  # SCTP bytes queued for the client before the writer waits
LOW_WATER_BYTES = 64 * 1024
_END_PREFIX = '{"type":"atc.message.end"'
_MESSAGE_PREFIX = '{"type":"atc.message",'


class BadOffer(ValueError):
    """An SDP offer we cannot answer (not SDP, or without an audio track and a data channel)."""


def check_offer(sdp: str) -> None:
    """Parse the offer before any peer connection exists: garbage costs no sockets."""
    try:
        description = SessionDescription.parse(sdp)
    except Exception as exc:  # aiortc's parser raises whatever the input provokes
        raise BadOffer(f"the offer is not SDP aiortc can read: {type(exc).__name__}: {exc}") from None
    kinds = [media.kind for media in description.media]
    if "audio" not in kinds:
        raise BadOffer("the offer has no audio track: add the microphone (sendrecv) before creating it")
    if "application" not in kinds:
        raise BadOffer("the offer has no data channel: create one before the offer (protocol v1 travels on it)")


def ice_servers(settings: Settings) -> list[RTCIceServer]:
    """The configured STUN/TURN servers; none by default (aiortc would ask Google's STUN server,
    which an offline gateway cannot reach, and host candidates serve a LAN)."""
    return [RTCIceServer(urls=s.urls, username=s.username, credential=s.credential) for s in settings.webrtc_ice_servers]


class WebRTCPeer:
    """A `Transport` for `RadioConnection` over one aiortc peer connection."""

    kind = "webrtc"
    input_rate: int | None = 16000  # the mic track is decoded straight to the recognizer's rate
    output_rate: int | None = TRACK_RATE

    def __init__(
        self,
        peer_id: str,
        service: RadioService,
        speech: SpeechStack,
        settings: Settings,
        auth: Authenticator | None = None,
        principal: Principal = ANONYMOUS,
        on_closed: Callable[[WebRTCPeer], None] | None = None,
        capacity: VoiceCapacity | None = None,
    ) -> None:
        self.peer_id = peer_id
        self.settings = settings
        self.on_closed = on_closed
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=ice_servers(settings)))
        self.track = PacedAudioTrack(TRACK_RATE)
        self.connection = RadioConnection(self, service, speech, settings, auth, principal, capacity=capacity)
        self.channel: RTCDataChannel | None = None
        self.reason: str | None = None  # why the peer ended
        self.max_message_bytes = MAX_MESSAGE_BYTES  # longer JSON leaves in fragments
        self.frames_in = 0  # mic frames received (drained), wanted or not
        self._open = asyncio.Event()  # the data channel is open
        self._gone = False  # the client cannot be reached any more: nothing more is sent
        self._inbox: asyncio.Queue[str | bytes] = asyncio.Queue(INBOX_MESSAGES)
        self._room = asyncio.Event()  # the channel's send buffer went under the low-water mark
        self._heard = asyncio.Event()  # a data-channel message arrived (liveness)
        self._audio = asyncio.Event()  # a mic frame arrived (the ptt.up tail)
        self._ended = asyncio.Event()
        self._tasks: list[asyncio.Task[Any]] = []
        self._media: list[asyncio.Task[Any]] = []
        self._runner: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ signalling

    async def answer(self, offer_sdp: str) -> str:
        """Take the client's offer, return the answer SDP; the peer runs from now on (`run`)."""
        check_offer(offer_sdp)
        pc = self.pc
        pc.on("datachannel", self._on_channel)
        pc.on("track", self._on_track)
        pc.on("connectionstatechange", self._on_state)
        await pc.setRemoteDescription(RTCSessionDescription(sdp=offer_sdp, type="offer"))
        pc.addTrack(self.track)
        await pc.setLocalDescription(await pc.createAnswer())
        self.connection.open()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._serve(), name="livefreq-webrtc-inbox"),
            loop.create_task(self._watch(), name="livefreq-webrtc-liveness"),
        ]
        self._runner = loop.create_task(self.run(), name="livefreq-webrtc-peer")
        return pc.localDescription.sdp

    async def add_candidate(self, candidate: str | None, sdp_mid: str | None, sdp_mline_index: int | None) -> None:
        """A trickled remote ICE candidate ("candidate:..." as browsers give it); None: no more."""
        if candidate is None or not candidate.strip():
            await self.pc.addIceCandidate(None)
            return
        text = candidate.strip().removeprefix("a=").removeprefix("candidate:")
        try:
            parsed = candidate_from_sdp(text)
        except (AssertionError, ValueError, IndexError) as exc:
            raise BadOffer(f"not an ICE candidate: {candidate[:80]!r}") from exc
        parsed.sdpMid, parsed.sdpMLineIndex = sdp_mid, sdp_mline_index
        if sdp_mid is None and sdp_mline_index is None:
            parsed.sdpMLineIndex = 0  # bundled: every m-line shares the first one's transport
        await self.pc.addIceCandidate(parsed)

    async def start(self, message: dict[str, Any]) -> None:
        """Act on a `session.start`/`session.resume` given with the offer, as if it came first on
        the data channel (its answer waits there until the channel opens)."""
        await self._inbox.put(json.dumps(message))

    # ------------------------------------------------------------------ transport

    @property
    def connected(self) -> bool:
        return not self._gone

    async def write_text(self, data: str) -> None:
        await self._open.wait()
        if data.startswith(_END_PREFIX):
            if '"interrupted":true' in data:
                self.track.clear()  # the pilot keyed over the controller: the rest is not said
            else:
                await self.track.drained()  # the end follows the message's last audio frame
        elif data.startswith(_MESSAGE_PREFIX):
            self.track.begin()
        for piece in fragment(data, self.max_message_bytes):
            while self.channel is not None and self.channel.bufferedAmount > HIGH_WATER_BYTES and not self._gone:
                self._room.clear()
                await self._room.wait()  # a client that does not read: the outbox fills instead
            if self._gone or self.channel is None:
                raise TransportClosed("the data channel is closed")
            try:
                self.channel.send(piece)
            except (InvalidStateError, ConnectionError) as exc:
                raise TransportClosed(str(exc)) from exc

    async def write_audio(self, pcm: bytes) -> None:
        if self._gone:
            raise TransportClosed("the peer connection is closed")
        await self.track.write(pcm)

    async def write_close(self, code: int) -> None:
        self.end(f"closed by the gateway ({code})")

    def stop_receiving(self) -> None:
        self.end("fatal protocol error")

    # ------------------------------------------------------------------ lifetime

    def end(self, reason: str) -> None:
        """Let the peer go (idempotent); `run` releases everything."""
        if self.reason is None:
            self.reason = reason
        self._ended.set()

    async def closed(self) -> None:
        """Return when the peer has released everything."""
        if self._runner is not None:
            await asyncio.shield(self._runner)

    async def run(self) -> None:
        try:
            await self._ended.wait()
        finally:
            log.info("webrtc peer %s ends: %s", self.peer_id, self.reason)
            for task in [*self._tasks, *self._media]:
                task.cancel()
            for task in [*self._tasks, *self._media]:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await self.connection.close()  # session resources, then a fatal error's last words
            self._gone = True
            self._room.set()
            self.track.stop()
            with contextlib.suppress(Exception):
                await self.pc.close()
            if self.on_closed is not None:
                self.on_closed(self)

    # ------------------------------------------------------------------ events

    def _on_channel(self, channel: RTCDataChannel) -> None:
        if self.channel is not None:  # one channel carries the protocol; others are closed
            channel.close()
            return
        self.channel = channel
        channel.bufferedAmountLowThreshold = LOW_WATER_BYTES
        channel.on("message", self._on_message)
        channel.on("bufferedamountlow", self._room.set)
        channel.on("close", lambda: self._lost("the data channel closed"))
        if channel.readyState == "open":
            self._open.set()
        else:
            channel.on("open", self._open.set)

    def _on_message(self, message: str | bytes) -> None:
        self._heard.set()
        try:
            self._inbox.put_nowait(message)
        except asyncio.QueueFull:
            metrics.DROPPED.labels("in", "rate_limited").inc()

    def _on_track(self, track: MediaStreamTrack) -> None:
        drain = self._mic(track) if track.kind == "audio" and not self._media else self._drain(track)
        self._media.append(asyncio.get_running_loop().create_task(drain, name=f"livefreq-webrtc-{track.kind}"))

    async def _on_state(self) -> None:
        if self.pc.connectionState in ("failed", "closed"):
            self._lost(f"the peer connection {self.pc.connectionState}")

    def _lost(self, reason: str) -> None:
        self._gone = True  # nobody to send to: the writer stops, no last words wait for a dead peer
        self._room.set()
        self.end(reason)

    # ------------------------------------------------------------------ tasks

    async def _serve(self) -> None:
        """Handle data-channel messages one at a time, in order (the socket's receive loop)."""
        connection = self.connection
        while connection.fatal is None:
            message = await self._inbox.get()
            if isinstance(message, bytes):
                await connection.send(e.error("bad_message", "audio goes on the audio track; the data channel carries JSON text"))
                continue
            if _is_ptt_up(message):
                await self._tail()
            await connection.receive_text(message)
        self.end(f"fatal error: {connection.fatal.code}")

    async def _tail(self) -> None:
        """Keep the mic open for `webrtc_ptt_tail_ms` more audio after the release (at most three
        times that long, should the audio have stopped)."""
        target = self.frames_in + max(0, self.settings.webrtc_ptt_tail_ms) // FRAME_MS
        deadline = asyncio.get_running_loop().time() + 3 * self.settings.webrtc_ptt_tail_ms / 1000
        while self.frames_in < target:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return
            self._audio.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):  # not wait_for: 3.11's can swallow a cancel
                    await self._audio.wait()

    async def _mic(self, track: MediaStreamTrack) -> None:
        """Drain the pilot's track; what a transmission wants goes to the connection."""
        converter = MicConverter(self.input_rate or 16000)
        connection = self.connection
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return
            self.frames_in += 1
            self._audio.set()
            if connection.wants_audio and connection.fatal is None:
                await connection.receive_audio(converter.pcm(frame))
                if connection.fatal is not None:
                    self.end(f"fatal error: {connection.fatal.code}")

    @staticmethod
    async def _drain(track: MediaStreamTrack) -> None:
        """A track nobody listens to (video, a second audio track) is read and dropped."""
        while True:
            try:
                await track.recv()
            except MediaStreamError:
                return

    async def _watch(self) -> None:
        """Data-channel liveness: a peer silent for `webrtc_liveness_s` is gone."""
        limit = self.settings.webrtc_liveness_s
        while True:
            self._heard.clear()
            try:
                async with asyncio.timeout(limit):  # not wait_for: 3.11's can swallow a cancel
                    await self._heard.wait()
            except TimeoutError:
                self._lost(f"nothing on the data channel for {limit:g} s")
                return


def _is_ptt_up(text: str) -> bool:
    if '"ptt.up"' not in text:
        return False
    try:
        return json.loads(text).get("type") == "ptt.up"
    except (ValueError, AttributeError):
        return False
