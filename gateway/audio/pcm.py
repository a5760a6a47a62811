"""PCM16 little-endian mono helpers: numpy views, WAV files, 20 ms frames, duration and level.

PCM16 mono bytes are the gateway's one audio currency (protocol v1 binary frames, VAD input, STT
input, TTS output), so every stage converts at its own edge with these helpers and nothing else
guesses byte order or sample width.
"""

from __future__ import annotations

import io
import math
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

SAMPLE_WIDTH = 2  # bytes per PCM16 sample
INT16_FULL_SCALE = 32768.0
SILENCE_DBFS = -96.0  # floor of the level meter: the dynamic range of 16-bit audio

_PCM16 = np.dtype("<i2")


class PcmError(ValueError):
    """Audio bytes that are not PCM16 mono as declared (odd length, unsupported WAV)."""


def check_pcm(pcm: bytes) -> None:
    """Raise `PcmError` unless `pcm` holds whole 16-bit samples."""
    if len(pcm) % SAMPLE_WIDTH:
        raise PcmError(f"PCM16 audio must have an even number of bytes, got {len(pcm)}")


def pcm_to_int16(pcm: bytes) -> np.ndarray:
    """Samples of `pcm` as a native-endian int16 array (a copy, safe to modify)."""
    check_pcm(pcm)
    return np.frombuffer(pcm, dtype=_PCM16).astype(np.int16)


def int16_to_pcm(samples: np.ndarray) -> bytes:
    """PCM16 little-endian bytes of an int16 array."""
    return np.asarray(samples, dtype=np.int16).astype(_PCM16, copy=False).tobytes()


def pcm_to_float32(pcm: bytes) -> np.ndarray:
    """Samples of `pcm` scaled to [-1, 1) as float32, the range DSP and ML models expect."""
    return pcm_to_int16(pcm).astype(np.float32) / np.float32(INT16_FULL_SCALE)


def float_to_pcm(samples: np.ndarray) -> bytes:
    """PCM16 bytes of float samples in [-1, 1]; out-of-range values are clipped, not wrapped."""
    scaled = np.rint(np.asarray(samples, dtype=np.float64) * INT16_FULL_SCALE)
    return int16_to_pcm(np.clip(scaled, -32768, 32767).astype(np.int16))


def sample_count(pcm: bytes) -> int:
    """Number of samples in `pcm`."""
    check_pcm(pcm)
    return len(pcm) // SAMPLE_WIDTH


def duration_s(pcm: bytes, sample_rate: int) -> float:
    """Length of `pcm` in seconds at `sample_rate`."""
    if sample_rate <= 0:
        raise ValueError(f"sample rate must be positive, got {sample_rate}")
    return sample_count(pcm) / sample_rate


def silence(duration: float, sample_rate: int) -> bytes:
    """`duration` seconds of digital silence."""
    return bytes(SAMPLE_WIDTH * round(duration * sample_rate))


def frame_size(sample_rate: int, ms: int = 20) -> int:
    """Bytes in one frame of `ms` milliseconds (20 ms at 16 kHz: 640 bytes)."""
    samples = sample_rate * ms / 1000
    if samples != int(samples) or samples <= 0:
        raise ValueError(f"{ms} ms is not a whole number of samples at {sample_rate} Hz")
    return int(samples) * SAMPLE_WIDTH


def frames(pcm: bytes, sample_rate: int, ms: int = 20, *, pad: bool = True) -> Iterator[bytes]:
    """Cut `pcm` into frames of exactly `ms` milliseconds (what webrtcvad accepts).

    A trailing partial frame is zero-padded when `pad` (no audio is lost at the end of a
    transmission) and dropped otherwise. For audio arriving in arbitrary chunks use `FrameBuffer`.
    """
    check_pcm(pcm)
    size = frame_size(sample_rate, ms)
    whole = len(pcm) - len(pcm) % size
    for start in range(0, whole, size):
        yield pcm[start : start + size]
    if pad and whole < len(pcm):
        tail = pcm[whole:]
        yield tail + bytes(size - len(tail))


class FrameBuffer:
    """Re-chunks a stream of arbitrary-length PCM chunks into fixed `ms` frames.

    Network frames rarely align with 20 ms; the remainder of one chunk is kept for the next, so
    the VAD sees every sample exactly once and in order.
    """

    def __init__(self, sample_rate: int, ms: int = 20) -> None:
        self.sample_rate = sample_rate
        self.ms = ms
        self.frame_bytes = frame_size(sample_rate, ms)
        self._pending = bytearray()

    @property
    def pending_bytes(self) -> int:
        """Bytes held back until the next frame is complete."""
        return len(self._pending)

    def push(self, pcm: bytes) -> list[bytes]:
        """Add a chunk; return the frames it completed (possibly none)."""
        check_pcm(pcm)
        self._pending.extend(pcm)
        whole = len(self._pending) - len(self._pending) % self.frame_bytes
        out = [bytes(self._pending[i : i + self.frame_bytes]) for i in range(0, whole, self.frame_bytes)]
        del self._pending[:whole]
        return out

    def flush(self, *, pad: bool = True) -> list[bytes]:
        """End of stream: the zero-padded last partial frame (if any and `pad`); the buffer empties."""
        tail = bytes(self._pending)
        self._pending.clear()
        if not tail or not pad:
            return []
        return [tail + bytes(self.frame_bytes - len(tail))]


def rms(pcm: bytes) -> float:
    """Root-mean-square amplitude in int16 units (0.0 for empty audio)."""
    samples = pcm_to_int16(pcm)
    if samples.size == 0:
        return 0.0
    return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))


def level_dbfs(pcm: bytes) -> float:
    """RMS level in dBFS (a full-scale square wave is 0 dBFS), floored at `SILENCE_DBFS`.

    The floor keeps the value finite, so a level meter can send it as JSON.
    """
    value = rms(pcm)
    if value <= 0.0:
        return SILENCE_DBFS
    return max(SILENCE_DBFS, 20.0 * math.log10(value / INT16_FULL_SCALE))


def peak_dbfs(pcm: bytes) -> float:
    """Peak sample level in dBFS, floored at `SILENCE_DBFS`."""
    samples = pcm_to_int16(pcm)
    if samples.size == 0:
        return SILENCE_DBFS
    peak = float(np.max(np.abs(samples.astype(np.int32))))
    if peak <= 0.0:
        return SILENCE_DBFS
    return max(SILENCE_DBFS, 20.0 * math.log10(peak / INT16_FULL_SCALE))


# Level for the recognizer (`leveled`): tiny.en (int8) hears quieter audio worse. Measured on seed
# 33's 300 bench recordings (median peak -4 dBFS), plain finals: word errors 56 % with the peak
# at -24 dBFS, 51 % at -14, 48 % at -6, 49 % as recorded, 46 % at -1 (docs/performance.md).
LEVEL_TARGET_DBFS = -1.0
LEVEL_MAX_GAIN_DB = 24.0  # a quiet microphone raised at most this much
# Raised only where something stands out of the noise: the loudest 20 ms frame this far above
# the quietest fifth of the frames (digital silence left out). Hiss alone varies about 1 dB from
# frame to frame; raised, tiny.en writes words into it ("It's a little bit of a").
LEVEL_MIN_RANGE_DB = 12.0
_LEVEL_FRAME = 320  # 20 ms at 16 kHz


def leveled(samples: np.ndarray) -> np.ndarray:
    """Float samples in [-1, 1] scaled so their peak is at `LEVEL_TARGET_DBFS` (nothing clips),
    raised by at most `LEVEL_MAX_GAIN_DB`, and only where a sound stands `LEVEL_MIN_RANGE_DB`
    out of the rest: noise alone is left as it is. The gain does not depend on how much silence
    surrounds the speech, so the same words give the same input however long the key is held."""
    magnitudes = np.abs(samples)
    if magnitudes.size < _LEVEL_FRAME:
        return samples
    frames = magnitudes[: magnitudes.size // _LEVEL_FRAME * _LEVEL_FRAME].reshape(-1, _LEVEL_FRAME)
    power = np.einsum("ij,ij->i", frames, frames)
    sounding = power[power > 0.0]
    if sounding.size == 0 or sounding.max() < np.percentile(sounding, 20) * 10 ** (LEVEL_MIN_RANGE_DB / 10):
        return samples
    gain = min(10 ** (LEVEL_TARGET_DBFS / 20) / float(magnitudes.max()), 10 ** (LEVEL_MAX_GAIN_DB / 20))
    return (samples * np.float32(gain)).astype(np.float32, copy=False)


WavSource = str | Path | bytes | BinaryIO


def read_wav(source: WavSource) -> tuple[bytes, int]:
    """Read an uncompressed PCM WAV (path, bytes or file object) as (PCM16 mono bytes, sample rate).

    8/16/24/32-bit integer samples are converted to 16 bits and channels are averaged to mono,
    so a test fixture or an upload in any common PCM layout enters the pipeline the same way.
    A header whose data size was never filled in is read to the end of the data: ``espeak-ng
    --stdout`` (1.51) writes 0x7ffff000 there, since it cannot seek back on a pipe.
    """
    handle: BinaryIO | str
    if isinstance(source, (bytes, bytearray)):
        handle = io.BytesIO(source)
    elif isinstance(source, Path):
        handle = str(source)  # wave.open takes str paths only before Python 3.12
    else:
        handle = source
    try:
        with wave.open(handle, "rb") as wav:
            channels = wav.getnchannels()
            width = wav.getsampwidth()
            rate = wav.getframerate()
            raw = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        raise PcmError(f"not a PCM WAV file: {exc}") from exc
    usable = len(raw) - len(raw) % (width * channels)
    samples = _wav_samples_to_int32(raw[:usable], width)
    if channels > 1:
        samples = np.rint(samples.reshape(-1, channels).mean(axis=1)).astype(np.int32)
    return int16_to_pcm(samples.astype(np.int16)), rate


def _wav_samples_to_int32(raw: bytes, width: int) -> np.ndarray:
    """Integer WAV samples of `width` bytes, rescaled to the int16 range (as int32)."""
    if width == 1:  # unsigned 8-bit
        return (np.frombuffer(raw, dtype=np.uint8).astype(np.int32) - 128) << 8
    if width == 2:
        return np.frombuffer(raw, dtype="<i2").astype(np.int32)
    if width == 3:
        bytes3 = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        value = bytes3[:, 0] | (bytes3[:, 1] << 8) | (bytes3[:, 2] << 16)
        value = np.where(value >= 1 << 23, value - (1 << 24), value)
        return value >> 8
    if width == 4:
        return (np.frombuffer(raw, dtype="<i4") >> 16).astype(np.int32)
    raise PcmError(f"unsupported WAV sample width: {width} bytes")


def wav_bytes(pcm: bytes, sample_rate: int) -> bytes:
    """A complete mono 16-bit WAV file holding `pcm`."""
    buffer = io.BytesIO()
    write_wav(buffer, pcm, sample_rate)
    return buffer.getvalue()


def write_wav(target: str | Path | BinaryIO, pcm: bytes, sample_rate: int) -> None:
    """Write `pcm` as a mono 16-bit WAV file to a path or a binary file object."""
    check_pcm(pcm)
    with wave.open(str(target) if isinstance(target, Path) else target, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(SAMPLE_WIDTH)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm)
