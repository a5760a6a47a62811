"""Pilot recordings for voice tests, made the way a real one sounds: the piper voice speaking the
ICAO form of a phrase, through the radio effect, with band noise, padded with silence.

Everything is synthesized by the project's own engines (no audio files in the repository) and
cached per phrase for the test session.
"""

from __future__ import annotations

import functools

import numpy as np

from engine.phraseology import speak_text
from gateway.audio.radio import apply_radio
from gateway.audio.resample import resample
from gateway.speech.tts.piper import PiperTts

_tts: PiperTts | None = None


def _engine() -> PiperTts:
    global _tts
    if _tts is None:
        _tts = PiperTts()
    return _tts


@functools.lru_cache(maxsize=64)
def pilot_pcm(phrase: str, rate: int = 16000, *, radio_level: int = 4, noise_dbfs: float = -45.0, seed: int = 1) -> bytes:
    """PCM16 mono at `rate`: 0.3 s silence, the phrase spoken in ICAO form, 0.5 s silence."""
    tts = _engine()
    speech = tts.synthesize_sync(speak_text(phrase))  # blocking: callable inside or outside an event loop
    speech = apply_radio(speech, tts.sample_rate, level=radio_level, seed=seed, squelch=False)
    pcm = resample(speech, tts.sample_rate, rate)
    samples = np.frombuffer(pcm, dtype=np.int16).astype(np.float32)
    pad = np.zeros(int(rate * 0.3), dtype=np.float32)
    samples = np.concatenate([pad, samples, np.zeros(int(rate * 0.5), dtype=np.float32)])
    rng = np.random.default_rng(seed)
    samples += rng.normal(0.0, 32767.0 * 10 ** (noise_dbfs / 20), samples.size)
    return np.clip(samples, -32768, 32767).astype(np.int16).tobytes()


def frames(pcm: bytes, rate: int, ms: int = 20) -> list[bytes]:
    step = rate * ms // 1000 * 2
    return [pcm[i : i + step] for i in range(0, len(pcm), step)]
