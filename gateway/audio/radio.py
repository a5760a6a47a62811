"""Server-side VHF radio effect with readability levels 1–5 (the "readability" of a radio check).

Trainees must learn to copy clearances through a real-sounding channel, and applying the effect
on the server means every client (browser, sim plugin, HTTP caller) hears the same thing.

Signal chain, per sample block, mirroring a real AM airband link:
transmitter band-pass (300–3400 Hz) → soft-clipping compressor (tanh drive: loud and a little
gritty) → fading of the carrier (levels 1–3) → + receiver noise and static crackle → receiver
band-pass → output gain. `tail()` appends the squelch tail, the short noise burst heard when the
carrier drops. Filter states (scipy `sosfilt` with `zi`), the fading phase and the noise generator
persist between `process` calls, so a stream processed chunk by chunk sounds (and is, to ±1 LSB)
identical to the same audio processed at once, and the same seed always gives the same output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import signal

from gateway.audio.pcm import float_to_pcm, pcm_to_float32

READABILITY_LEVELS = (1, 2, 3, 4, 5)
DEFAULT_LEVEL = 4
LOW_CUT_HZ = 300.0
HIGH_CUT_HZ = 3400.0
FILTER_ORDER = 4  # per band edge; transmitter and receiver filters in series give 48 dB/octave
MIN_SAMPLE_RATE = 8000
SQUELCH_TAIL_S = 0.12
_OUTPUT_GAIN = 10 ** (-3 / 20)  # soft-clipped speech peaks near -3 dBFS, leaving room for noise
_SQUELCH_DBFS = -15.0


@dataclass(frozen=True)
class RadioProfile:
    """How one readability level sounds."""

    noise_dbfs: float  # RMS of the band-limited receiver hiss
    drive: float  # tanh soft-clip drive: higher is more compressed and distorted
    fading_depth: float  # 0..1 dip of the speech level at the slowest fading cycle
    crackles_per_s: float  # static impulses per second


PROFILES: dict[int, RadioProfile] = {
    5: RadioProfile(noise_dbfs=-54.0, drive=2.0, fading_depth=0.0, crackles_per_s=0.0),  # clean radio
    4: RadioProfile(noise_dbfs=-40.0, drive=2.5, fading_depth=0.0, crackles_per_s=0.5),
    3: RadioProfile(noise_dbfs=-30.0, drive=3.0, fading_depth=0.2, crackles_per_s=2.0),
    2: RadioProfile(noise_dbfs=-23.0, drive=3.5, fading_depth=0.4, crackles_per_s=6.0),
    1: RadioProfile(noise_dbfs=-17.0, drive=4.5, fading_depth=0.6, crackles_per_s=12.0),  # barely readable
}


def check_level(level: int) -> int:
    """Return `level` if it is a readability level 1–5, else raise ValueError."""
    if isinstance(level, bool) or level not in READABILITY_LEVELS:
        raise ValueError(f"radio readability level must be 1..5, got {level!r}")
    return int(level)


def _band_pass(sample_rate: int) -> np.ndarray:
    high = min(HIGH_CUT_HZ, 0.45 * sample_rate)  # stay below Nyquist at 8 kHz
    return signal.butter(FILTER_ORDER, [LOW_CUT_HZ, high], btype="bandpass", fs=sample_rate, output="sos")


class RadioEffect:
    """Radio effect for one stream of PCM16 mono audio at `sample_rate` (one instance per stream)."""

    def __init__(self, sample_rate: int, level: int = DEFAULT_LEVEL, *, seed: int = 0) -> None:
        if sample_rate < MIN_SAMPLE_RATE:
            raise ValueError(f"radio effect needs at least {MIN_SAMPLE_RATE} Hz, got {sample_rate}")
        self.sample_rate = sample_rate
        self.level = check_level(level)
        self.seed = seed
        self.profile = PROFILES[self.level]
        self._sos = _band_pass(sample_rate)
        # independent generators per random source: each draws its own sequence in stream order,
        # so the output does not depend on how the stream was chunked
        self._noise_rng = np.random.default_rng([seed, 0])
        self._crackle_rng = np.random.default_rng([seed, 2])
        # slow carrier fading between 0.3 and 1.1 Hz, its rate fixed by the seed
        self._fade_hz = 0.3 + 0.8 * float(np.random.default_rng([seed, 1]).random())
        # white noise of std s through the pass band keeps s * sqrt(bandwidth / nyquist) of its RMS
        bandwidth = min(HIGH_CUT_HZ, 0.45 * sample_rate) - LOW_CUT_HZ
        band_fraction = bandwidth / (sample_rate / 2)
        self._noise_std = 10 ** (self.profile.noise_dbfs / 20) / math.sqrt(band_fraction)
        self._squelch_std = 10 ** (_SQUELCH_DBFS / 20) / math.sqrt(band_fraction)
        self._crackle_p = self.profile.crackles_per_s / sample_rate
        self.reset()

    def reset(self) -> None:
        """Start a new transmission: clear filter states and fading phase (the noise sequence goes on)."""
        zi = signal.sosfilt_zi(self._sos)
        self._tx_zi = np.zeros_like(zi)
        self._rx_zi = np.zeros_like(zi)
        self._position = 0  # samples since the transmission started, for the fading phase

    def process(self, pcm: bytes) -> bytes:
        """Apply the effect to the next chunk of the stream; returns as many bytes as it got."""
        x = pcm_to_float32(pcm).astype(np.float64)
        if x.size == 0:
            return b""
        speech, self._tx_zi = signal.sosfilt(self._sos, x, zi=self._tx_zi)
        drive = self.profile.drive
        speech = np.tanh(drive * speech) / math.tanh(drive)
        speech *= self._fading(x.size)
        mixed = speech + self._receiver_noise(x.size)
        out, self._rx_zi = signal.sosfilt(self._sos, mixed, zi=self._rx_zi)
        self._position += x.size
        return float_to_pcm(out * _OUTPUT_GAIN)

    def tail(self, duration_s: float = SQUELCH_TAIL_S) -> bytes:
        """The squelch tail that ends a transmission (~120 ms noise burst); then `reset()`s."""
        n = max(1, round(duration_s * self.sample_rate))
        t = np.arange(n) / self.sample_rate
        attack = np.minimum(1.0, t / 0.005)  # 5 ms rise: no click
        envelope = attack * np.exp(-t / (duration_s / 3)) * (1.0 - t / duration_s)  # ends at exactly 0
        burst = self._squelch_std * self._noise_rng.standard_normal(n) * envelope
        out, self._rx_zi = signal.sosfilt(self._sos, burst, zi=self._rx_zi)
        self.reset()
        return float_to_pcm(out * _OUTPUT_GAIN)

    def _fading(self, n: int) -> np.ndarray | float:
        depth = self.profile.fading_depth
        if depth == 0.0:
            return 1.0
        t = (self._position + np.arange(n)) / self.sample_rate
        return 1.0 - depth * (0.5 - 0.5 * np.cos(2 * math.pi * self._fade_hz * t))

    def _receiver_noise(self, n: int) -> np.ndarray:
        noise = self._noise_std * self._noise_rng.standard_normal(n)
        if self._crackle_p > 0.0:
            # one uniform draw per sample decides both where a crackle is and how loud it is
            u = self._crackle_rng.random(n)
            hits = u < self._crackle_p
            noise[hits] += 0.6 * (2.0 * u[hits] / self._crackle_p - 1.0)
        return noise


def apply_radio(pcm: bytes, sample_rate: int, level: int = DEFAULT_LEVEL, *, seed: int = 0, squelch: bool = True) -> bytes:
    """One-shot radio effect for a whole clip, with the squelch tail appended when `squelch`."""
    effect = RadioEffect(sample_rate, level, seed=seed)
    out = effect.process(pcm)
    return out + effect.tail() if squelch else out


def band_pass(pcm: bytes, sample_rate: int) -> bytes:
    """Only the VHF voice band (300-3400 Hz, the transmitter's filter), without the compressor,
    fading and static of a readability level: how a pilot's headset microphone reaches the
    gateway through a radio-like channel."""
    x = pcm_to_float32(pcm)
    return float_to_pcm(signal.sosfilt(_band_pass(sample_rate), x))
