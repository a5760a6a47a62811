"""The audio tracks of a WebRTC radio: the controller's voice out, the pilot's microphone in.

`PacedAudioTrack` is what aiortc's sender pulls 20 ms frames from. It paces itself on the local
clock (frame k is handed over at start + k x 20 ms, a fixed schedule that never drifts), gives the
audio written to it in order, and silence when there is none, so the far end hears a continuous
radio channel. Writers get back-pressure: `write` waits while more than `max_lead_s` of audio is
queued, so a producer faster than real time (an unpaced `Frequency`) fills no memory, and
`drained` tells when the audio written so far has left. The gateway's controller voice is one; the
client library's microphone (gateway/client/webrtc.py) is another. `begin` keeps a gap of silence
before a new message, so a listener can tell where one transmission ends and the next begins.

`MicConverter` turns the pilot's decoded frames into PCM16 mono for the recognizer. (The track
itself must always be read, wanted or not: aiortc queues every decoded frame of a received track
without bound until someone calls `recv()`, aiortc issue #554; gateway/webrtc/peer.py drains it.)
"""

from __future__ import annotations

import asyncio
import fractions

import av
import numpy as np
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

__all__ = ["FRAME_MS", "TRACK_RATE", "PacedAudioTrack", "MicConverter", "pcm_frame"]

FRAME_MS = 20
TRACK_RATE = 48000  # Opus' own rate: the encoder only up-mixes, it does not resample


def pcm_frame(pcm: bytes, rate: int, pts: int) -> av.AudioFrame:
    """PCM16 mono as a PyAV frame stamped `pts` samples from the track's start."""
    frame = av.AudioFrame.from_ndarray(np.frombuffer(pcm, dtype=np.int16).reshape(1, -1), format="s16", layout="mono")
    frame.sample_rate = rate
    frame.pts = pts
    frame.time_base = fractions.Fraction(1, rate)
    return frame


class PacedAudioTrack(MediaStreamTrack):
    """Outbound audio: what is written, in order, silence in between, 20 ms per frame."""

    kind = "audio"

    def __init__(self, rate: int = TRACK_RATE, max_lead_s: float = 0.5, gap_s: float = 0.1) -> None:
        super().__init__()
        self.rate = rate
        self.frame_bytes = rate * FRAME_MS // 1000 * 2
        self.max_lead_bytes = int(rate * max_lead_s) * 2
        self.gap_samples = int(rate * gap_s)
        self._last_audio_end = 0  # pts just after the last frame that carried audio
        self._buffer = bytearray()
        self._room = asyncio.Event()  # set while the buffer is under the lead
        self._room.set()
        self._empty = asyncio.Event()
        self._empty.set()
        self._start: float | None = None
        self._pts = 0
        self.frames_sent = 0
        self.audio_frames_sent = 0  # frames that carried controller audio (not silence)

    @property
    def queued_s(self) -> float:
        return len(self._buffer) / 2 / self.rate

    async def write(self, pcm: bytes) -> None:
        """Queue controller audio (PCM16 mono at `rate`); waits while the queue is full."""
        while len(self._buffer) >= self.max_lead_bytes:
            if self.readyState != "live":
                return
            self._room.clear()
            await self._room.wait()
        self._buffer += pcm
        if self._buffer:
            self._empty.clear()

    def begin(self) -> None:
        """A new transmission starts: at least `gap_s` of silence after the previous one's audio
        (queued or already sent), none when the channel has been quiet that long."""
        queued = len(self._buffer) // 2
        quiet = self._pts - self._last_audio_end if not queued else 0
        if quiet < self.gap_samples and (queued or self._last_audio_end):
            self._buffer += bytes(2 * (self.gap_samples - quiet))
            self._empty.clear()

    async def drained(self) -> None:
        """Return once everything written so far has been handed to the sender."""
        while self._buffer and self.readyState == "live":
            await self._empty.wait()

    def clear(self) -> None:
        """Drop the queued audio (the controller was cut off: the pilot keyed)."""
        self._buffer.clear()
        self._signal()

    def stop(self) -> None:
        super().stop()
        self._buffer.clear()
        self._signal()

    async def recv(self) -> av.AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        loop = asyncio.get_running_loop()
        if self._start is None:
            self._start = loop.time()
        else:
            delay = self._start + self._pts / self.rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
        chunk = bytes(self._buffer[: self.frame_bytes])
        del self._buffer[: self.frame_bytes]
        if chunk.strip(b"\x00"):
            self.audio_frames_sent += 1
            self._last_audio_end = self._pts + len(chunk) // 2
        chunk = chunk.ljust(self.frame_bytes, b"\x00")
        self._signal()
        frame = pcm_frame(chunk, self.rate, self._pts)
        self._pts += self.frame_bytes // 2
        self.frames_sent += 1
        return frame

    def _signal(self) -> None:
        if len(self._buffer) < self.max_lead_bytes:
            self._room.set()
        if not self._buffer:
            self._empty.set()


class MicConverter:
    """Decoded frames of the pilot's track as PCM16 mono at `rate` (PyAV's resampler: the Opus
    decoder gives 48 kHz stereo)."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self._resampler = av.AudioResampler(format="s16", layout="mono", rate=rate)

    def pcm(self, frame: av.AudioFrame) -> bytes:
        return b"".join(bytes(out.planes[0])[: out.samples * 2] for out in self._resampler.resample(frame))
