"""Voice activity detection for vox mode: webrtcvad frame decisions smoothed into utterances.

webrtcvad (`webrtcvad-wheels`) says "voiced or not" for one 10/20/30 ms frame; a single frame is
too noisy to key a transmission on. `VoiceActivityDetector` turns those decisions into two events:

- ``speech_start`` once `start_ms` of voiced frames fall within the last `start_window_ms`
  (3 of the last 5 frames by default), so a click or a cough does not open an utterance;
- ``speech_end`` once the last `hangover_ms` hold at most `end_voiced_ratio` voiced frames, so the
  short pauses inside "runway two five right, ... cleared for takeoff" do not cut it in two.

The detector keeps a pre-roll of the last `preroll_ms` before the start: the first syllable is
usually voiced before the start window fills, and STT that misses it hears "ansa" for "Lufthansa".
webrtcvad calls the first ~80 ms of any stream speech while its noise model settles (measured:
hiss at -50 dBFS gives four voiced frames, then none), so the first `warmup_ms` cannot start an
utterance; they still go into the pre-roll. It works in stream time (frames counted), never
wall-clock time, so tests are exact.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import webrtcvad

SPEECH_START: Literal["speech_start"] = "speech_start"
SPEECH_END: Literal["speech_end"] = "speech_end"

_RATES = (8000, 16000, 32000, 48000)  # the only rates webrtcvad accepts
_FRAME_MS = (10, 20, 30)  # the only frame lengths webrtcvad accepts


@dataclass(frozen=True, slots=True)
class VadEvent:
    """A change of speech state, stamped in stream time (milliseconds of audio processed).

    `audio` is PCM16: for ``speech_start`` the pre-roll up to and including the frame that started
    speech (feed it to STT first, then every following frame); for ``speech_end`` the whole
    utterance from the pre-roll through the hang-over.
    """

    type: Literal["speech_start", "speech_end"]
    at_ms: int
    audio: bytes


class VoiceActivityDetector:
    """Feed equal PCM16 frames with `process`; get a `VadEvent` when speech starts or ends.

    `aggressiveness` is webrtcvad's mode (0 = keeps most audio as speech, 3 = strictest). A
    transmission longer than `max_speech_ms` is ended there, because STT models work on bounded
    windows (whisper: 30 s) and a stuck open mic must not grow a buffer forever.
    """

    def __init__(
        self,
        aggressiveness: int = 2,
        start_ms: int = 60,
        hangover_ms: int = 400,
        *,
        sample_rate: int = 16000,
        frame_ms: int = 20,
        start_window_ms: int = 100,
        end_voiced_ratio: float = 0.1,
        preroll_ms: int = 300,
        max_speech_ms: int = 30_000,
        warmup_ms: int = 100,
    ) -> None:
        if not 0 <= aggressiveness <= 3:
            raise ValueError(f"VAD aggressiveness must be 0..3, got {aggressiveness}")
        if sample_rate not in _RATES:
            raise ValueError(f"webrtcvad needs a sample rate in {_RATES}, got {sample_rate}")
        if frame_ms not in _FRAME_MS:
            raise ValueError(f"webrtcvad needs frames of {_FRAME_MS} ms, got {frame_ms}")
        if not frame_ms <= start_ms <= start_window_ms:
            got = (frame_ms, start_ms, start_window_ms)
            raise ValueError(f"need frame_ms <= start_ms <= start_window_ms, got {got}")
        if hangover_ms < frame_ms:
            raise ValueError(f"hangover_ms must be at least one frame ({frame_ms} ms), got {hangover_ms}")
        if not 0.0 <= end_voiced_ratio < 1.0:
            raise ValueError(f"end_voiced_ratio must be in [0, 1), got {end_voiced_ratio}")
        self.sample_rate = sample_rate
        self.frame_ms = frame_ms
        self.frame_bytes = sample_rate * frame_ms // 1000 * 2
        self._vad = webrtcvad.Vad(aggressiveness)
        self._start_needed = _frames(start_ms, frame_ms)
        self._start_window: collections.deque[bool] = collections.deque(maxlen=_frames(start_window_ms, frame_ms))
        self._hangover: collections.deque[bool] = collections.deque(maxlen=_frames(hangover_ms, frame_ms))
        self._end_max_voiced = int(end_voiced_ratio * self._hangover.maxlen)  # type: ignore[operator]
        preroll_frames = max(_frames(preroll_ms, frame_ms), self._start_window.maxlen or 1)
        self._preroll: collections.deque[bytes] = collections.deque(maxlen=preroll_frames)
        self._max_speech_frames = _frames(max_speech_ms, frame_ms)
        self._warmup_frames = warmup_ms // frame_ms
        self._utterance: list[bytes] = []
        self._frames_seen = 0
        self.in_speech = False

    @property
    def position_ms(self) -> int:
        """Stream time: milliseconds of audio processed so far."""
        return self._frames_seen * self.frame_ms

    def process(self, frame: bytes) -> VadEvent | None:
        """Take the next frame (exactly `frame_bytes` long); return an event if the state changed."""
        if len(frame) != self.frame_bytes:
            expected = f"{self.frame_bytes} bytes ({self.frame_ms} ms at {self.sample_rate} Hz)"
            raise ValueError(f"VAD frames must be {expected}, got {len(frame)}")
        voiced = self._vad.is_speech(frame, self.sample_rate) and self._frames_seen >= self._warmup_frames
        self._frames_seen += 1
        if not self.in_speech:
            self._preroll.append(frame)
            self._start_window.append(voiced)
            if sum(self._start_window) < self._start_needed:
                return None
            self.in_speech = True
            self._utterance = list(self._preroll)
            self._preroll.clear()
            self._start_window.clear()
            self._hangover.clear()
            return VadEvent(SPEECH_START, self.position_ms, b"".join(self._utterance))
        self._utterance.append(frame)
        self._hangover.append(voiced)
        hung_up = len(self._hangover) == self._hangover.maxlen and sum(self._hangover) <= self._end_max_voiced
        if hung_up or len(self._utterance) >= self._max_speech_frames:
            return self._end()
        return None

    def flush(self) -> VadEvent | None:
        """End of the stream: close an open utterance (``speech_end``), else nothing."""
        return self._end() if self.in_speech else None

    def reset(self) -> None:
        """Forget all state (a new stream, or vox switched off and on)."""
        self.in_speech = False
        self._utterance = []
        self._preroll.clear()
        self._start_window.clear()
        self._hangover.clear()

    def _end(self) -> VadEvent:
        audio = b"".join(self._utterance)
        self.reset()
        return VadEvent(SPEECH_END, self.position_ms, audio)


def contains_speech(pcm: bytes, *, sample_rate: int = 16000, aggressiveness: int = 3, start_ms: int = 60) -> bool:
    """Whether `pcm` holds at least one utterance start (a trailing partial frame is ignored).

    For push-to-talk: a transmission of only breath or hiss should not reach STT, because a
    prompt-biased recognizer fed noise tends to "hear" the phrase it was prompted with.
    """
    detector = VoiceActivityDetector(aggressiveness, start_ms, sample_rate=sample_rate)
    step = detector.frame_bytes
    for offset in range(0, len(pcm) - step + 1, step):
        event = detector.process(pcm[offset : offset + step])
        if event is not None and event.type == SPEECH_START:
            return True
    return False


class SpeechTracker:
    """Follows one transmission's audio: whether it held speech (`heard`: an utterance start as
    `contains_speech` finds it) and whether the pilot was still talking when it ended
    (`speaking_at_end`): the key released, or the length limit reached, mid-speech.

    Still talking means the last `tail_ms` all voiced *and* the last 40 ms within `tail_db` of the
    loudest 20 ms so far: speech that ends decays first. Measured on synthesized readbacks (piper,
    radio levels 3-5, 24 clips): released the instant the last word ends, 0 of 24 look cut (the
    voice detector alone, over the last 200 ms, called 23 of them cut); cut at 75 % of the speech,
    about 20 of 24 do; at 60 % (often inside a pause between words) fewer. A false "cut off" would
    make the controller ask again for a readback that was whole, so the test leans that way.
    Feed any lengths of PCM16 at `sample_rate`; one webrtcvad call per 20 ms.
    """

    def __init__(
        self,
        *,
        sample_rate: int = 16000,
        aggressiveness: int = 3,
        start_ms: int = 60,
        start_window_ms: int = 100,
        tail_ms: int = 60,
        tail_db: float = 20.0,
        warmup_ms: int = 100,
        frame_ms: int = 20,
    ) -> None:
        self.sample_rate = sample_rate
        self.frame_bytes = sample_rate * frame_ms // 1000 * 2
        self._vad = webrtcvad.Vad(aggressiveness)
        self._start_needed = _frames(start_ms, frame_ms)
        self._window: collections.deque[bool] = collections.deque(maxlen=_frames(start_window_ms, frame_ms))
        self._tail: collections.deque[bool] = collections.deque(maxlen=_frames(tail_ms, frame_ms))
        self._last_power: collections.deque[float] = collections.deque(maxlen=_frames(40, frame_ms))
        self._ratio = 10.0 ** (-tail_db / 10.0)
        self._peak = 0.0
        self._warmup_frames = warmup_ms // frame_ms
        self._pending = b""
        self._frames_seen = 0
        self.heard = False

    def feed(self, pcm: bytes) -> None:
        frames, self._pending = _whole_frames(self._pending + pcm, self.frame_bytes)
        for frame in frames:
            voiced = self._vad.is_speech(frame, self.sample_rate) and self._frames_seen >= self._warmup_frames
            self._frames_seen += 1
            power = _power(frame)
            self._peak = max(self._peak, power)
            self._last_power.append(power)
            self._window.append(voiced)
            self._tail.append(voiced)
            if not self.heard and sum(self._window) >= self._start_needed:
                self.heard = True

    @property
    def speaking_at_end(self) -> bool:
        if not self.heard or len(self._tail) < (self._tail.maxlen or 1) or not all(self._tail):
            return False
        return max(self._last_power) >= self._peak * self._ratio


class SpeechEnd:
    """Where a transmission's speech ends, so what it is decoded from does not depend on how long
    the key was held after the last word, nor on when a partial decode happened to run.

    Whisper's transcript moves with the length of the silence or hiss after the words (its window
    changes shape): the same readback with 0-1 s of trailing silence gave two or three different
    transcripts in 4 of 6 bench recordings ("Scandinavian three seven two" / "pre-sevent to"), and
    a final that reused a partial's decode of a shorter prefix heard "papa" as "pop up" on one run
    and not the next. `spoken_bytes` cuts the audio `margin_ms` after the last voiced 20 ms frame:
    frames are judged from the start of the stream, so a prefix holding the speech and its margin
    is cut at the very byte the whole transmission is, and both decode the same audio.

    A frame is speech when webrtcvad (mode 2) calls it voiced, it is within `quiet_db` (35 dB) of
    the loudest frame so far, and `above_floor_db` (3 dB) over the quietest frame so far that is
    not digital silence. Mode 2 because modes 0-1 called band-limited noise speech up to 0.5 s
    past the words. The loudness test because mode 2 calls white hiss at -50 dBFS voiced frame
    after frame once speech has been heard: an open mic's hiss would hold the cut open (35 dB: the
    level the partial-reuse test used before, under which radio hiss never is). The floor because
    hiss alone, cut short, made whisper write "It is still" (3 s at -40 dBFS), which its no-speech
    guard drops when whole: white hiss never varies 3 dB from one 20 ms frame to the next, speech
    does. Measured against the synthesizer's last sound on the voice bench's recordings
    (`scripts/measure_speech_end.py`, 80 each): a floor of 10 dB cut into the last word of 7 at
    5-15 dB SNR; at 3 dB none, the cut falling 0.24 s or more after the words on the VHF band at
    5-15 dB SNR (0.35 s at the bench's 15-30 dB), 0.33 s through the full radio effect at
    5-30 dB, and removing a median 0.3 s of the bench's half second of noise after them. The
    margin is 0.5 s because the last voiced frame comes up to 0.38 s before the synthesizer's
    end, which trailing unvoiced sounds fill. No speech frame at all (silence, hiss): nothing is
    cut, the recognizer's guards decide.
    """

    def __init__(
        self,
        *,
        sample_rate: int = 16000,
        aggressiveness: int = 2,
        margin_ms: int = 500,
        frame_ms: int = 20,
        warmup_ms: int = 100,
        quiet_db: float = 35.0,
        above_floor_db: float = 3.0,
    ) -> None:
        self.sample_rate = sample_rate
        self.frame_bytes = sample_rate * frame_ms // 1000 * 2
        self.margin_bytes = sample_rate * margin_ms // 1000 * 2
        self._vad = webrtcvad.Vad(aggressiveness)
        self._warmup_frames = warmup_ms // frame_ms
        self._ratio = 10.0 ** (-quiet_db / 10.0)
        self._above = 10.0 ** (above_floor_db / 10.0)
        self._peak = 0.0  # power of the loudest frame so far
        self._floor = math.inf  # power of the quietest frame so far that is not digital silence
        self._pending = b""
        self._judged = 0  # bytes of whole frames judged so far
        self._voiced_end: int | None = None  # byte offset where the last voiced frame ends

    def feed(self, pcm: bytes) -> None:
        """Judge the whole frames of the stream so far (one webrtcvad call per 20 ms)."""
        frames, self._pending = _whole_frames(self._pending + pcm, self.frame_bytes)
        for frame in frames:
            frame_index = self._judged // self.frame_bytes
            self._judged += self.frame_bytes
            power = _power(frame)
            self._peak = max(self._peak, power)
            if power > 0.0:
                self._floor = min(self._floor, power)
            loud = power >= self._peak * self._ratio and power >= self._floor * self._above
            if loud and frame_index >= self._warmup_frames and self._vad.is_speech(frame, self.sample_rate):
                self._voiced_end = self._judged

    def spoken_bytes(self, fed: int) -> int:
        """How many of the `fed` bytes (all fed so far) to decode: through the last voiced frame
        and the margin after it, or all of them when nothing was voiced."""
        if self._voiced_end is None:
            return fed
        return min(fed, self._voiced_end + self.margin_bytes)


def _whole_frames(data: bytes, frame_bytes: int) -> tuple[list[bytes], bytes]:
    """`data` cut into whole frames, and the rest (kept for the next feed)."""
    usable = len(data) - len(data) % frame_bytes
    return [data[offset : offset + frame_bytes] for offset in range(0, usable, frame_bytes)], data[usable:]


def _power(frame: bytes) -> float:
    """Mean square of a PCM16 frame, exact in integers. It runs on the event loop for every 20 ms
    of every pilot's audio: a dot product takes 2.7 us a frame, a float32 mean of squares 18."""
    samples = np.frombuffer(frame, dtype=np.int16).astype(np.int64)
    return float(samples.dot(samples)) / max(1, samples.size)


def _frames(ms: int, frame_ms: int) -> int:
    """Whole frames covering `ms` (at least one)."""
    return max(1, -(-ms // frame_ms))
