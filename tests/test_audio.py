"""Audio helpers on synthetic signals: PCM/WAV conversion, framing, level, resampling, decoding
and the radio effect (band limits by FFT, noise per readability level, determinism, streaming)."""

from __future__ import annotations

import io
import math
import wave

import av
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.audio.codec import DecodeError, decode_audio
from gateway.audio.pcm import (
    SILENCE_DBFS,
    FrameBuffer,
    PcmError,
    duration_s,
    float_to_pcm,
    frame_size,
    frames,
    LEVEL_MAX_GAIN_DB,
    LEVEL_TARGET_DBFS,
    int16_to_pcm,
    level_dbfs,
    leveled,
    pcm_to_float32,
    pcm_to_int16,
    peak_dbfs,
    read_wav,
    silence,
    wav_bytes,
    write_wav,
)
from gateway.audio.radio import SQUELCH_TAIL_S, RadioEffect, apply_radio, check_level
from gateway.audio.resample import (
    SPEECH_RATE,
    SUPPORTED_RATES,
    StreamResampler,
    UnsupportedRate,
    check_supported_rate,
    resample,
    to_speech_rate,
)


def sine(freq: float, seconds: float, rate: int, amplitude: float = 0.5) -> bytes:
    t = np.arange(round(seconds * rate)) / rate
    return float_to_pcm(amplitude * np.sin(2 * math.pi * freq * t))


def white_noise(seconds: float, rate: int, seed: int = 1, amplitude: float = 0.2) -> bytes:
    return float_to_pcm(amplitude * np.random.default_rng(seed).standard_normal(round(seconds * rate)))


def band_fractions(pcm: bytes, rate: int) -> tuple[float, float]:
    """Share of the signal's energy below 200 Hz and above 4 kHz."""
    spectrum = np.abs(np.fft.rfft(pcm_to_float32(pcm).astype(np.float64))) ** 2
    freqs = np.fft.rfftfreq(len(pcm) // 2, 1 / rate)
    total = spectrum.sum()
    return float(spectrum[freqs < 200].sum() / total), float(spectrum[freqs > 4000].sum() / total)


def dominant_hz(pcm: bytes, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(pcm_to_float32(pcm)))
    return float(np.fft.rfftfreq(len(pcm) // 2, 1 / rate)[np.argmax(spectrum)])


# --- pcm ---------------------------------------------------------------------------------------


def test_int16_and_float_round_trip_little_endian() -> None:
    samples = np.array([0, 1, -1, 32767, -32768, 1234], dtype=np.int16)
    pcm = int16_to_pcm(samples)
    assert pcm[:6] == b"\x00\x00\x01\x00\xff\xff"  # little-endian on any host
    assert np.array_equal(pcm_to_int16(pcm), samples)
    assert float_to_pcm(pcm_to_float32(pcm)) == pcm
    assert pcm_to_float32(pcm).dtype == np.float32
    assert pcm_to_int16(float_to_pcm(np.array([2.0, -2.0]))).tolist() == [32767, -32768]  # clipped, not wrapped


def test_odd_length_is_rejected() -> None:
    with pytest.raises(PcmError):
        pcm_to_int16(b"\x00\x01\x02")
    with pytest.raises(PcmError):
        list(frames(b"\x00", 16000))


def test_duration_and_silence() -> None:
    assert duration_s(silence(1.5, 16000), 16000) == 1.5
    assert duration_s(b"", 8000) == 0.0
    with pytest.raises(ValueError):
        duration_s(b"\x00\x00", 0)


def test_frames_are_exact_20ms_and_the_tail_is_padded_or_dropped() -> None:
    pcm = sine(440, 0.05, 16000)  # 50 ms = 2.5 frames
    assert frame_size(16000) == 640
    padded = list(frames(pcm, 16000))
    assert [len(f) for f in padded] == [640, 640, 640]
    assert b"".join(padded)[: len(pcm)] == pcm and padded[-1][320:] == bytes(320)
    assert len(list(frames(pcm, 16000, pad=False))) == 2
    assert [len(f) for f in frames(sine(440, 0.1, 44100), 44100, 10)] == [882] * 10
    with pytest.raises(ValueError):
        frame_size(44100, 3)  # 132.3 samples


def test_frame_buffer_rechunks_arbitrary_chunks_in_order() -> None:
    pcm = white_noise(0.5, 16000)
    buffer = FrameBuffer(16000)
    out: list[bytes] = []
    position = 0
    for size in [2, 100, 640, 1000, 3, 1, 5000, 642, 18]:
        size -= size % 2
        out += buffer.push(pcm[position : position + size])
        position += size
    out += buffer.push(pcm[position:])
    assert all(len(f) == 640 for f in out)
    assert b"".join(out) == pcm[: len(out) * 640]
    assert buffer.pending_bytes == len(pcm) - len(out) * 640
    tail = buffer.flush()
    assert b"".join(out + tail)[: len(pcm)] == pcm and buffer.pending_bytes == 0
    assert buffer.flush() == []


def test_levels_in_dbfs() -> None:
    full_sine = sine(1000, 1.0, 16000, amplitude=1.0)
    assert level_dbfs(full_sine) == pytest.approx(-3.01, abs=0.05)
    assert level_dbfs(sine(1000, 1.0, 16000, amplitude=0.1)) == pytest.approx(-23.01, abs=0.05)
    assert peak_dbfs(sine(1000, 1.0, 16000, amplitude=0.5)) == pytest.approx(-6.02, abs=0.05)
    assert level_dbfs(silence(0.1, 16000)) == SILENCE_DBFS
    assert level_dbfs(b"") == SILENCE_DBFS


def _words(rng: np.random.Generator, level: float, seconds: float) -> np.ndarray:
    """Bursts of a 300 Hz tone at `level` with gaps: a stand-in for syllables and pauses."""
    t = np.arange(round(seconds * 16000)) / 16000
    gate = (np.sin(2 * math.pi * rng.uniform(2.0, 5.0) * t) > 0).astype(np.float32)
    return (level * gate * np.sin(2 * math.pi * 300 * t)).astype(np.float32)


@settings(max_examples=60, deadline=None)
@given(
    st.floats(-40.0, 0.0), st.floats(15.0, 40.0), st.floats(0.0, 1.5), st.floats(0.0, 1.5), st.integers(0, 2**32 - 1)
)
def test_leveled_raises_quiet_speech_to_the_target_whatever_the_silence_around_it(
    peak_db: float, snr_db: float, lead_s: float, tail_s: float, seed: int
) -> None:
    # The recognizer hears quiet audio worse: words out of the noise reach the target peak (or the
    # gain limit), and digital silence before or after them changes nothing about that gain.
    rng = np.random.default_rng(seed)
    words = _words(rng, 10 ** (peak_db / 20), 1.5)
    words += rng.normal(0.0, 10 ** ((peak_db - snr_db) / 20), words.size).astype(np.float32)
    padded = np.concatenate([np.zeros(round(lead_s * 16000), np.float32), words, np.zeros(round(tail_s * 16000), np.float32)])
    out = leveled(padded)
    gain = float(np.abs(out).max() / np.abs(padded).max())
    expected = min(10 ** (LEVEL_TARGET_DBFS / 20) / float(np.abs(padded).max()), 10 ** (LEVEL_MAX_GAIN_DB / 20))
    assert gain == pytest.approx(expected, rel=1e-4)
    assert np.abs(out).max() <= 10 ** (LEVEL_TARGET_DBFS / 20) * 1.0001  # nothing clips
    alone = leveled(words)
    np.testing.assert_allclose(out[round(lead_s * 16000) :][: words.size], alone, rtol=1e-5, atol=1e-7)


@settings(max_examples=60, deadline=None)
@given(st.floats(-70.0, -10.0), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_leveled_leaves_noise_alone(level_db: float, silent_s: float, seed: int) -> None:
    # Raised hiss makes tiny.en write words ("It's a little bit of a"): hiss alone, after digital
    # silence or not, is passed on as it is.
    rng = np.random.default_rng(seed)
    hiss = rng.normal(0.0, 10 ** (level_db / 20), 3 * 16000).astype(np.float32)
    samples = np.concatenate([np.zeros(round(silent_s * 16000), np.float32), hiss])
    np.testing.assert_array_equal(leveled(samples), samples)


def test_leveled_leaves_silence_and_scraps_alone() -> None:
    for samples in (np.zeros(16000, np.float32), np.zeros(0, np.float32), np.full(100, 0.01, np.float32)):
        np.testing.assert_array_equal(leveled(samples), samples)


def test_wav_round_trip_path_and_bytes(tmp_path) -> None:
    pcm = sine(300, 0.3, 24000)
    path = tmp_path / "clip.wav"
    write_wav(path, pcm, 24000)
    assert read_wav(path) == (pcm, 24000)
    assert read_wav(wav_bytes(pcm, 24000)) == (pcm, 24000)
    assert read_wav(io.BytesIO(wav_bytes(pcm, 24000))) == (pcm, 24000)
    with pytest.raises(PcmError):
        read_wav(b"RIFF not a wave file")


@pytest.mark.parametrize("width", [1, 3, 4])
def test_wav_other_widths_and_stereo_become_pcm16_mono(width: int) -> None:
    left = pcm_to_int16(sine(500, 0.1, 8000, amplitude=0.4)).astype(np.int64)
    if width == 1:  # unsigned 8-bit
        samples = ((left >> 8) + 128).astype(np.uint8).reshape(-1, 1)
    else:  # signed little-endian 24/32-bit: the 16-bit value in the top bits
        samples = (left << (8 * (width - 2))).astype("<i4").view(np.uint8).reshape(-1, 4)[:, :width]
    raw = np.repeat(samples, 2, axis=0).tobytes()  # stereo, both channels equal
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(2)
        wav.setsampwidth(width)
        wav.setframerate(8000)
        wav.writeframes(raw)
    pcm, rate = read_wav(buffer.getvalue())
    assert rate == 8000
    tolerance = 256 if width == 1 else 1  # 8-bit files keep only 8 bits
    assert np.max(np.abs(pcm_to_int16(pcm).astype(np.int64) - left)) <= tolerance


# --- resampling --------------------------------------------------------------------------------


def test_resample_keeps_duration_and_pitch() -> None:
    pcm = sine(440, 2.0, 22050)
    out = resample(pcm, 22050, 16000)
    assert abs(duration_s(out, 16000) - 2.0) / 2.0 < 0.01
    assert dominant_hz(out, 16000) == pytest.approx(440, abs=1)
    assert resample(pcm, 22050, 22050) == pcm


@pytest.mark.parametrize("rate", SUPPORTED_RATES)
def test_every_protocol_rate_converts_to_16k(rate: int) -> None:
    out = to_speech_rate(sine(1000, 1.0, rate), rate)
    assert len(out) // 2 == pytest.approx(SPEECH_RATE, abs=2)
    assert dominant_hz(out, SPEECH_RATE) == pytest.approx(1000, abs=1)


def test_unsupported_rates_are_rejected() -> None:
    with pytest.raises(UnsupportedRate, match="8000/16000/24000/32000/44100/48000"):
        check_supported_rate(11025)
    with pytest.raises(UnsupportedRate):
        to_speech_rate(b"\x00\x00", 22050)
    with pytest.raises(ValueError):
        resample(b"\x00\x00", 0, 16000)


def test_stream_resampler_matches_one_shot_without_clicks() -> None:
    pcm = sine(1000, 1.0, 48000)
    one_shot = pcm_to_int16(resample(pcm, 48000, 16000)).astype(np.int64)
    resampler = StreamResampler(48000, 16000)
    streamed = b"".join(resampler.process(chunk) for chunk in frames(pcm, 48000, pad=False)) + resampler.flush()
    out = pcm_to_int16(streamed).astype(np.int64)
    assert len(out) == len(one_shot)
    assert np.max(np.abs(out - one_shot)) <= 4  # chunk boundaries leave no clicks
    # after flush the resampler starts a fresh stream
    again = resampler.process(pcm) + resampler.flush()
    assert len(again) == len(streamed)


def test_stream_resampler_passthrough_at_equal_rates() -> None:
    resampler = StreamResampler(16000, 16000)
    assert resampler.passthrough and resampler.process(b"\x01\x00") == b"\x01\x00" and resampler.flush() == b""


# --- decoding ----------------------------------------------------------------------------------


def encode_mp3(pcm: bytes, rate: int) -> bytes:
    """An mp3 file of `pcm` made with PyAV's encoder (what an online TTS would send)."""
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp3") as container:
        stream = container.add_stream("mp3", rate=rate, layout="mono")
        frame = av.AudioFrame.from_ndarray(pcm_to_int16(pcm).reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = rate
        for packet in stream.encode(frame):
            container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return buffer.getvalue()


def test_decode_mp3_and_wav_to_pcm16_mono_at_the_asked_rate() -> None:
    pcm = sine(440, 1.0, 24000)
    mp3 = encode_mp3(pcm, 24000)
    decoded = decode_audio(mp3, 24000, container_format="mp3")
    assert duration_s(decoded, 24000) == pytest.approx(1.0, abs=0.08)  # mp3 adds encoder padding
    assert dominant_hz(decoded, 24000) == pytest.approx(440, abs=2)
    from_wav = decode_audio(wav_bytes(pcm, 24000), 16000)
    assert duration_s(from_wav, 16000) == pytest.approx(1.0, abs=0.01)
    assert dominant_hz(from_wav, 16000) == pytest.approx(440, abs=2)


def test_decode_rejects_garbage() -> None:
    with pytest.raises(DecodeError):
        decode_audio(b"this is not audio at all" * 10, 16000)
    with pytest.raises(DecodeError):
        decode_audio(b"", 16000)


# --- radio effect ------------------------------------------------------------------------------


def test_radio_band_limits_the_signal() -> None:
    noise = white_noise(2.0, 22050)
    low_in, high_in = band_fractions(noise, 22050)
    for level in (5, 1):
        low_out, high_out = band_fractions(apply_radio(noise, 22050, level, seed=3), 22050)
        assert low_out < low_in / 50, (level, low_in, low_out)
        assert high_out < high_in / 50, (level, high_in, high_out)


def test_lower_readability_is_noisier() -> None:
    quiet = silence(1.0, 16000)
    noise_levels = [level_dbfs(apply_radio(quiet, 16000, level, seed=7, squelch=False)) for level in (1, 2, 3, 4, 5)]
    assert noise_levels == sorted(noise_levels, reverse=True)
    assert noise_levels[0] > noise_levels[4] + 25  # level 1 hiss is far louder than level 5
    assert noise_levels[4] < -45  # clean radio is quiet between words
    speech_like = sine(1000, 1.0, 16000, amplitude=0.3)
    clean = pcm_to_float32(apply_radio(speech_like, 16000, 5, seed=7, squelch=False))
    rough = pcm_to_float32(apply_radio(speech_like, 16000, 1, seed=7, squelch=False))
    phase = 2 * math.pi * 1000 * np.arange(4000, 16000) / 16000
    basis = np.stack([np.sin(phase), np.cos(phase)], axis=1)  # the tone at any phase shift

    def snr_db(out: np.ndarray) -> float:
        coefficients, *_ = np.linalg.lstsq(basis, out, rcond=None)
        tone = basis @ coefficients
        return 10 * math.log10(np.sum(tone**2) / np.sum((out - tone) ** 2))

    assert snr_db(clean[4000:]) > snr_db(rough[4000:]) + 10


def test_radio_is_deterministic_per_seed() -> None:
    pcm = sine(800, 0.5, 16000)
    assert apply_radio(pcm, 16000, 2, seed=11) == apply_radio(pcm, 16000, 2, seed=11)
    assert apply_radio(pcm, 16000, 2, seed=11) != apply_radio(pcm, 16000, 2, seed=12)


def test_radio_streams_chunk_by_chunk_like_one_shot() -> None:
    pcm = white_noise(1.0, 22050)
    whole = RadioEffect(22050, 1, seed=5)
    expected = pcm_to_int16(whole.process(pcm) + whole.tail()).astype(np.int64)
    chunked = RadioEffect(22050, 1, seed=5)
    pieces = [chunked.process(frame) for frame in frames(pcm, 22050, 20, pad=False)]
    assert all(len(piece) == 882 for piece in pieces)  # same length out as in
    got = pcm_to_int16(b"".join(pieces) + chunked.tail()).astype(np.int64)
    assert len(got) == len(expected)
    assert np.max(np.abs(got - expected)) <= 1


def test_squelch_tail_is_a_short_burst_that_fades_out() -> None:
    effect = RadioEffect(16000, 5, seed=1)
    effect.process(sine(600, 0.2, 16000))
    tail = effect.tail()
    assert duration_s(tail, 16000) == pytest.approx(SQUELCH_TAIL_S, abs=0.001)
    first_half, last_ms = tail[: len(tail) // 2], tail[-32:]
    assert level_dbfs(first_half) > -30  # audible burst
    assert level_dbfs(last_ms) < level_dbfs(first_half) - 20  # fades out, no click at the end
    assert len(apply_radio(sine(600, 0.2, 16000), 16000, 3)) == len(sine(600, 0.2, 16000)) + len(tail)


def test_radio_rejects_bad_levels_and_rates() -> None:
    for bad in (0, 6, 2.5, True):
        with pytest.raises(ValueError):
            check_level(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RadioEffect(6000, 3)
    assert RadioEffect(8000, 3).process(sine(1000, 0.1, 8000)) != b""
