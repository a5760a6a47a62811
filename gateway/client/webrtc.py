"""The radio over WebRTC (aiortc): the microphone and the controller's voice as Opus tracks,
protocol v1's JSON on a data channel, signalled by `POST /v1/webrtc/offer`.

What a WebRTC client must do, and this one does (docs/protocol-v1.md, "WebRTC"):

- offer an audio track (sendrecv: the microphone out, the controller in) and a data channel;
- send its audio as it would be spoken: the track is paced at real time (`PacedAudioTrack`), so
  `stream` returns when the audio has left, and `transmit_audio` sends `ptt.up` right after;
- read the controller's track all the time (aiortc queues unread frames without bound) and cut it
  into messages: the gateway puts at least 0.1 s of silence between messages and sends each
  `atc.message` before its audio, so a run of sound belongs to the latest `atc.message` received
  when it began;
- ping on the data channel every few seconds: the gateway closes a peer it has not heard from for
  ``webrtc_liveness_s`` (15 s), because ICE notices a vanished peer only after about 30 s;
- reassemble `fragment` messages (gateway/webrtc/fragments.py);
- close the peer connection when done (`close`), which releases the gateway's side at once.

With ``trickle=True`` the offer goes without candidates and they follow on
``POST /v1/webrtc/{peer_id}/candidates``, as a browser that does not wait for its gathering does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from typing import Any

import httpx
import numpy as np
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

from gateway.audio.resample import resample
from gateway.client.base import FRAME_MS, ClientBase
from gateway.webrtc.fragments import Reassembler
from gateway.webrtc.signaling import MAX_CANDIDATES
from gateway.webrtc.tracks import TRACK_RATE, MicConverter, PacedAudioTrack

__all__ = ["WebRTCRadioClient"]

PING_EVERY_S = 5.0
SILENT_PEAK = 8  # a decoded frame whose samples all stay within +-8 of zero is silence (Opus of zeros)
_CANDIDATE = re.compile(r"^a=(candidate:.*)$", re.MULTILINE)


class WebRTCRadioClient(ClientBase):
    """A protocol-v1 client over WebRTC; the same verbs and recording as `RadioClient`."""

    transport = "webrtc"
    output_rate = TRACK_RATE

    def __init__(self, base_url: str, *, token: str | None = None, keep_audio: bool = False, ping_every_s: float = PING_EVERY_S) -> None:
        super().__init__(keep_audio)
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.ping_every_s = ping_every_s
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.channel = self.pc.createDataChannel("livefreq")
        self.mic = PacedAudioTrack(TRACK_RATE, gap_s=0.0)
        self.peer_id: str | None = None
        self.frames_received = 0
        self._open = asyncio.Event()
        self.fragments = Reassembler()  # long messages arrive in pieces
        self._latest_message: str | None = None  # the latest atc.message received
        self._quiet: list[bytes] = []  # silent frames since the last sound of `_current`
        self._tasks: list[asyncio.Task[Any]] = []
        self.channel.on("open", self._open.set)
        self.channel.on("message", self._on_message)
        self.channel.on("close", self._ended)
        self.pc.on("track", self._on_track)
        self.pc.on("connectionstatechange", self._on_state)
        self.pc.addTrack(self.mic)

    @classmethod
    async def connect(
        cls,
        base_url: str,
        *,
        token: str | None = None,
        keep_audio: bool = False,
        session: dict[str, Any] | None = None,
        trickle: bool = False,
        ping_every_s: float = PING_EVERY_S,
        timeout: float = 30.0,
    ) -> WebRTCRadioClient:
        """Offer, answer, and wait until the data channel is open. `session`: a `session.start`
        or `session.resume` message for the gateway to act on with the offer; `ping_every_s`:
        keep it under the gateway's ``webrtc_liveness_s``."""
        client = cls(base_url, token=token, keep_audio=keep_audio, ping_every_s=ping_every_s)
        try:
            await asyncio.wait_for(client._negotiate(session, trickle), timeout)
        except BaseException:
            await client.close()
            raise
        return client

    async def _negotiate(self, session: dict[str, Any] | None, trickle: bool) -> None:
        await self.pc.setLocalDescription(await self.pc.createOffer())  # aiortc gathers here
        sdp = self.pc.localDescription.sdp
        candidates = _CANDIDATE.findall(sdp)
        if trickle:
            sdp = _CANDIDATE.sub("", sdp).replace("a=end-of-candidates\r\n", "").replace("\r\n\r\n", "\r\n")
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        body: dict[str, Any] = {"type": "offer", "sdp": sdp}
        if session is not None:
            body["session"] = session
        async with httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=30.0) as http:
            response = await http.post("/v1/webrtc/offer", json=body)
            if response.status_code != 201:
                raise ConnectionError(f"offer refused: {response.status_code} {response.text}")
            answer = response.json()
            self.peer_id = answer["peer_id"]
            await self.pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type="answer"))
            if trickle:
                trickled = [{"candidate": c, "sdpMid": "0", "sdpMLineIndex": 0} for c in candidates]
                for start in range(0, len(trickled) or 1, MAX_CANDIDATES):
                    batch = trickled[start : start + MAX_CANDIDATES]
                    done = start + MAX_CANDIDATES >= len(trickled)
                    response = await http.post(f"/v1/webrtc/{self.peer_id}/candidates", json={"candidates": batch, "done": done})
                    response.raise_for_status()
        await self._open.wait()
        self._tasks.append(asyncio.get_running_loop().create_task(self._ping(), name="webrtc-client-ping"))

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.mic.stop()
        await self.pc.close()
        self._ended()

    # ------------------------------------------------------------------ sending

    async def send(self, message: dict[str, Any] | str | bytes) -> None:
        if self.channel.readyState != "open":
            raise ConnectionError("the data channel is not open")
        self.channel.send(json.dumps(message) if isinstance(message, dict) else message)

    async def stream(self, pcm: bytes, rate: int, *, realtime: bool = True, frame_ms: int = FRAME_MS) -> None:
        """Speak `pcm` into the microphone track; returns when it has left (always real time:
        a track has no faster way)."""
        if rate != TRACK_RATE:
            pcm = await asyncio.to_thread(resample, pcm, rate, TRACK_RATE)
        await self.mic.write(pcm)
        await self.mic.drained()

    # ------------------------------------------------------------------ receiving

    def _on_message(self, message: str | bytes) -> None:
        if not isinstance(message, str):
            return
        text = self.fragments.feed(message)
        if text is None:
            return
        event = json.loads(text)
        if event.get("type") == "atc.message":
            self._latest_message = event["message_id"]
        self._record_event(event)

    def _on_track(self, track: MediaStreamTrack) -> None:
        self._tasks.append(asyncio.get_running_loop().create_task(self._listen(track), name="webrtc-client-track"))

    async def _on_state(self) -> None:
        if self.pc.connectionState in ("failed", "closed"):
            self._ended()

    async def _listen(self, track: MediaStreamTrack) -> None:
        """Drain the controller's track and cut it into messages by their silences."""
        converter = MicConverter(TRACK_RATE)
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return
            self.frames_received += 1
            pcm = converter.pcm(frame)
            now = time.perf_counter()
            samples = np.frombuffer(pcm, dtype=np.int16)
            loud = samples.size > 0 and int(np.abs(samples.astype(np.int32)).max()) > SILENT_PEAK
            if loud:
                owner = self._latest_message
                if owner != self._current:  # a new run of sound: the message announced last
                    self._current, self._quiet = owner, []
                for quiet in self._quiet:  # a pause inside the message belongs to it
                    self._record_audio(owner, quiet, now)
                self._quiet = []
                self._record_audio(owner, pcm, now)
            elif self._current is not None and len(self._quiet) < 100:  # at most 2 s of pause
                self._quiet.append(pcm)

    async def _ping(self) -> None:
        while True:
            await asyncio.sleep(self.ping_every_s)
            if self.channel.readyState == "open":
                self.channel.send('{"type":"ping"}')
