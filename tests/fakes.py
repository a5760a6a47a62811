"""Fake speech engines for logic tests that need text from audio, or audio of a plausible length,
and not a real recognizer or voice: they load in no time and answer the same every run.

`FakeTts` speaks any text as a deterministic tone whose length follows the text (about piper's
pace), so audio timing, pacing and interruption are exercised. `FakeStt` hears what it was told:
PCM made by `FakeStt.say(text)` (or given in `script`) is transcribed as that text; it records the
context of every transmission, so a test can check what the recognizer was asked to expect.
Tests of the engines themselves (tests/test_stt.py, tests/test_tts.py) keep the real ones.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping

import numpy as np

from gateway.speech.stt.base import SttContext, SttResult
from gateway.speech.tts.base import PieceTts

RATE = 16000
SECONDS_PER_CHAR = 0.065  # piper's joe voice says ~15 characters a second


def speech_pcm(text: str, rate: int = RATE) -> bytes:
    """PCM16 mono for `text`: a quiet tone, its pitch taken from the text, as long as the text
    would take to say. The same text always gives the same bytes."""
    samples = max(1, round(len(text) * SECONDS_PER_CHAR * rate))
    pitch = 200 + zlib.crc32(text.encode()) % 600
    tone = 3000 * np.sin(2 * np.pi * pitch / rate * np.arange(samples))
    return tone.astype("<i2").tobytes()


class FakeTts(PieceTts):
    """A `TtsEngine` speaking `speech_pcm` piece by piece (the real engines' sentence streaming)."""

    name = "fake"
    voice = "tone"

    def __init__(self, sample_rate: int = RATE) -> None:
        self.sample_rate = sample_rate
        self.spoken: list[str] = []  # every piece synthesized, in order

    async def synthesize_piece(self, text: str) -> bytes:
        self.spoken.append(text)
        return speech_pcm(text, self.sample_rate)


class FakeStt:
    """An `SttEngine` that transcribes scripted PCM: exact audio, or audio that starts with it
    (a client may pad the end with silence); anything else is heard as `default`."""

    name = "fake"
    streaming = False

    def __init__(self, script: Mapping[bytes, str] | None = None, default: str = "") -> None:
        self.script: dict[bytes, str] = dict(script or {})
        self.default = default
        self.contexts: list[SttContext] = []  # one per transmission, in order

    def say(self, text: str, rate: int = RATE) -> bytes:
        """PCM that this recognizer hears as `text` (sent at `rate`; the gateway's STT runs at 16 kHz)."""
        pcm = speech_pcm(text, rate)
        self.script[speech_pcm(text, RATE)] = text
        return pcm

    def load(self) -> None:
        return None

    def open(self, context: SttContext) -> FakeStream:
        self.contexts.append(context)
        return FakeStream(self)

    def hear(self, pcm: bytes) -> str:
        text = self.script.get(pcm)
        if text is not None:
            return text
        for audio, said in sorted(self.script.items(), key=lambda item: -len(item[0])):
            if pcm.startswith(audio):
                return said
        return self.default


class FakeStream:
    """One transmission to `FakeStt`: no partials, the scripted transcript at the end."""

    def __init__(self, engine: FakeStt) -> None:
        self.engine = engine
        self.audio = bytearray()
        self.closed = False

    def feed(self, pcm: bytes) -> None:
        self.audio += pcm

    async def partial(self) -> str | None:
        return None

    async def final(self) -> str:
        return (await self.final_result()).text

    async def final_result(self) -> SttResult:
        self.closed = True
        return SttResult(self.engine.hear(bytes(self.audio)))

    async def aclose(self) -> None:
        self.closed = True
