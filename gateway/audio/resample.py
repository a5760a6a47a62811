"""Sample-rate conversion of PCM16 mono with libsoxr (python-soxr).

Clients send at the rate their sound card runs (protocol v1 allows 8–48 kHz) and the recognizers
want 16 kHz; the TTS voices speak at their own native rates. soxr gives band-limited, alias-free
conversion; a `StreamResampler` per audio stream keeps the filter history between chunks, so a
stream cut into network frames resamples without clicks at the chunk boundaries.
"""

from __future__ import annotations

import numpy as np
import soxr

from gateway.audio.pcm import int16_to_pcm, pcm_to_int16

SPEECH_RATE = 16_000  # what VAD and STT consume
SUPPORTED_RATES: tuple[int, ...] = (8000, 16000, 24000, 32000, 44100, 48000)  # protocol v1 rates
QUALITY = "HQ"  # soxr "high quality": 20-bit precision, plenty for 16-bit speech
_MIN_RATE = 4000
_MAX_RATE = 384_000


class UnsupportedRate(ValueError):
    """A declared client audio rate that protocol v1 does not allow."""


def check_supported_rate(rate: int) -> int:
    """Return `rate` if it is one protocol v1 allows for client audio, else raise `UnsupportedRate`."""
    if rate not in SUPPORTED_RATES:
        allowed = "/".join(str(r) for r in SUPPORTED_RATES)
        raise UnsupportedRate(f"unsupported sample rate {rate} Hz; use one of {allowed}")
    return rate


def _check_rate(rate: int) -> None:
    if not isinstance(rate, int) or not _MIN_RATE <= rate <= _MAX_RATE:
        raise ValueError(f"sample rate must be an integer between {_MIN_RATE} and {_MAX_RATE} Hz, got {rate!r}")


def resample(pcm: bytes, in_rate: int, out_rate: int = SPEECH_RATE, *, quality: str = QUALITY) -> bytes:
    """Convert a whole PCM16 mono clip from `in_rate` to `out_rate` (identity when equal)."""
    _check_rate(in_rate)
    _check_rate(out_rate)
    if in_rate == out_rate or not pcm:
        return bytes(pcm)
    samples = pcm_to_int16(pcm)
    return int16_to_pcm(soxr.resample(samples, in_rate, out_rate, quality=quality))


def to_speech_rate(pcm: bytes, in_rate: int) -> bytes:
    """A client clip at a protocol rate, converted to the 16 kHz the recognizers use."""
    return resample(pcm, check_supported_rate(in_rate), SPEECH_RATE)


class StreamResampler:
    """Resamples one continuous PCM16 stream chunk by chunk (one instance per stream).

    `process` returns what the filter can emit so far (output lags input by the filter delay,
    a few ms); `flush` drains the rest at the end of the stream and resets for reuse.
    """

    def __init__(self, in_rate: int, out_rate: int = SPEECH_RATE, *, quality: str = QUALITY) -> None:
        _check_rate(in_rate)
        _check_rate(out_rate)
        self.in_rate = in_rate
        self.out_rate = out_rate
        self._stream = (
            None if in_rate == out_rate else soxr.ResampleStream(in_rate, out_rate, 1, dtype="int16", quality=quality)
        )

    @property
    def passthrough(self) -> bool:
        """True when the rates are equal and chunks pass unchanged."""
        return self._stream is None

    def process(self, pcm: bytes) -> bytes:
        """Resample the next chunk of the stream."""
        if self._stream is None:
            return bytes(pcm)
        out = self._stream.resample_chunk(pcm_to_int16(pcm), last=False)
        return int16_to_pcm(out)

    def flush(self) -> bytes:
        """End of stream: the samples still inside the filter; the resampler is then ready to reuse."""
        if self._stream is None:
            return b""
        out = self._stream.resample_chunk(np.zeros(0, dtype=np.int16), last=True)
        self._stream.clear()
        return int16_to_pcm(out)
