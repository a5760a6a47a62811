"""Pilot recordings for voice tests: the package's synthetic pilot (`tooling.voicekit`), which the
voice benchmark uses too (piper voice, radio effect, band noise; cached per phrase), and plain
espeak-ng speech at 16 kHz (`espeak_pcm`: a voice the product never answers with)."""

import asyncio

from gateway.audio.pcm import silence
from gateway.audio.resample import resample
from gateway.speech.tts.espeak import EspeakTts
from tooling.voicekit import frames, pilot_pcm

__all__ = ["espeak_pcm", "frames", "pilot_pcm"]

RATE = 16000


def espeak_pcm(text: str) -> bytes:
    """`text` spoken by espeak-ng, resampled to 16 kHz, with 0.2 s of silence on each side."""
    tts = EspeakTts()
    pad = silence(0.2, RATE)
    return pad + resample(asyncio.run(tts.synthesize(text)), tts.sample_rate, RATE) + pad
