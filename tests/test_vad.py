"""Voice activity detection on real webrtcvad with speech synthesized by espeak-ng (16 kHz)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.audio.pcm import float_to_pcm, silence
from gateway.audio.resample import resample
from gateway.audio.vad import SPEECH_END, SPEECH_START, SpeechEnd, VadEvent, VoiceActivityDetector, contains_speech
from gateway.speech.tts.espeak import EspeakTts

RATE = 16000
FRAME = 640  # 20 ms
BYTES_PER_MS = RATE * 2 // 1000


def synthesize(text: str) -> bytes:
    tts = EspeakTts()
    return resample(asyncio.run(tts.synthesize(text)), tts.sample_rate, RATE)


@pytest.fixture(scope="module")
def speech() -> bytes:
    return synthesize("Lufthansa three five nine, runway two five right, cleared for takeoff")


def low_noise(seconds: float, level: float = 0.003, seed: int = 7) -> bytes:
    """Gaussian hiss around -50 dBFS: an open mic in a quiet room."""
    return float_to_pcm(np.random.default_rng(seed).normal(0.0, level, int(seconds * RATE)))


def run_frames(vad: VoiceActivityDetector, pcm: bytes) -> list[VadEvent]:
    events = []
    for offset in range(0, len(pcm) - FRAME + 1, FRAME):
        event = vad.process(pcm[offset : offset + FRAME])
        if event is not None:
            events.append(event)
    return events


def test_one_utterance_padded_with_silence_gives_start_then_end(speech: bytes) -> None:
    lead, tail = 500, 1000
    audio = silence(lead / 1000, RATE) + speech + silence(tail / 1000, RATE)
    vad = VoiceActivityDetector(aggressiveness=2, start_ms=60, hangover_ms=400)
    events = run_frames(vad, audio)
    assert [e.type for e in events] == [SPEECH_START, SPEECH_END]
    start, end = events
    speech_ms = len(speech) // BYTES_PER_MS
    assert lead <= start.at_ms <= lead + 300  # espeak starts voicing within a few frames
    assert lead + speech_ms <= end.at_ms <= lead + speech_ms + 400 + 100  # after the hang-over
    assert len(start.audio) >= 100 * BYTES_PER_MS  # the pre-roll holds at least the start window
    assert start.audio in end.audio and end.audio.startswith(start.audio)
    assert len(end.audio) >= len(speech) - 200 * BYTES_PER_MS  # the whole utterance, not a piece
    assert not vad.in_speech and vad.flush() is None


def test_pre_roll_includes_audio_before_the_start_decision(speech: bytes) -> None:
    audio = silence(0.5, RATE) + speech
    start = run_frames(VoiceActivityDetector(preroll_ms=300), audio)[0]
    assert len(start.audio) == 300 * BYTES_PER_MS
    assert start.audio == audio[start.at_ms * BYTES_PER_MS - len(start.audio) : start.at_ms * BYTES_PER_MS]


@pytest.mark.parametrize(
    "audio",
    [silence(3.0, RATE), low_noise(3.0), low_noise(3.0, level=0.01)],
    ids=["silence", "hiss-50dBFS", "hiss-40dBFS"],
)
def test_no_events_without_speech(audio: bytes) -> None:
    vad = VoiceActivityDetector()
    assert run_frames(vad, audio) == []
    assert vad.flush() is None
    assert not contains_speech(audio)


def test_speech_from_the_first_frame_starts_after_the_warm_up(speech: bytes) -> None:
    start = run_frames(VoiceActivityDetector(warmup_ms=100), speech)[0]
    assert start.type == SPEECH_START and start.at_ms >= 100
    assert speech.startswith(start.audio)  # nothing before the start decision is lost


def test_two_transmissions_give_two_utterances(speech: bytes) -> None:
    gap = silence(1.0, RATE)
    events = run_frames(VoiceActivityDetector(), gap + speech + gap + speech + gap)
    assert [e.type for e in events] == [SPEECH_START, SPEECH_END] * 2


def test_flush_closes_an_open_utterance(speech: bytes) -> None:
    vad = VoiceActivityDetector()
    events = run_frames(vad, silence(0.3, RATE) + speech[: len(speech) // 2])
    assert [e.type for e in events] == [SPEECH_START]
    assert vad.in_speech
    end = vad.flush()
    assert end is not None and end.type == SPEECH_END and end.audio.startswith(events[0].audio)
    assert not vad.in_speech


def test_a_stuck_mic_is_cut_at_max_speech(speech: bytes) -> None:
    events = run_frames(VoiceActivityDetector(max_speech_ms=1000), silence(0.2, RATE) + speech)
    assert [e.type for e in events[:2]] == [SPEECH_START, SPEECH_END]
    assert len(events[1].audio) == 1000 * BYTES_PER_MS


def test_contains_speech(speech: bytes) -> None:
    assert contains_speech(silence(0.5, RATE) + speech + low_noise(0.5))


def test_rejects_bad_frames_and_settings() -> None:
    vad = VoiceActivityDetector()
    with pytest.raises(ValueError, match="640 bytes"):
        vad.process(b"\x00" * 320)
    with pytest.raises(ValueError, match="aggressiveness"):
        VoiceActivityDetector(aggressiveness=4)
    with pytest.raises(ValueError, match="sample rate"):
        VoiceActivityDetector(sample_rate=22050)
    with pytest.raises(ValueError, match="start_ms"):
        VoiceActivityDetector(start_ms=200, start_window_ms=100)


def test_other_rates_and_frame_lengths(speech: bytes) -> None:
    audio_8k = resample(silence(0.5, RATE) + speech + silence(1.0, RATE), RATE, 8000)
    vad = VoiceActivityDetector(sample_rate=8000, frame_ms=30)
    assert vad.frame_bytes == 480
    events = [e for i in range(0, len(audio_8k) - 479, 480) if (e := vad.process(audio_8k[i : i + 480]))]
    assert [e.type for e in events] == [SPEECH_START, SPEECH_END]


def test_speech_tracker_tells_a_cut_transmission_from_a_whole_one(speech: bytes) -> None:
    from gateway.audio.vad import SpeechTracker

    def track(pcm: bytes, chunk: int = 1000) -> SpeechTracker:
        tracker = SpeechTracker()
        for offset in range(0, len(pcm), chunk):  # any chunk length, not only whole frames
            tracker.feed(pcm[offset : offset + chunk])
        return tracker

    quiet = track(low_noise(2.0))
    assert not quiet.heard and not quiet.speaking_at_end
    whole = track(silence(0.3, RATE) + speech + silence(0.4, RATE))
    assert whole.heard and not whole.speaking_at_end
    released = track(silence(0.3, RATE) + speech)  # the key released the instant the last word ended
    assert released.heard and not released.speaking_at_end
    samples = np.frombuffer(speech, dtype=np.int16).astype(np.float64)
    frames = samples[: samples.size // 320 * 320].reshape(-1, 320)
    loud = int(np.argmax(np.mean(frames**2, axis=1)))  # cut at the loudest 20 ms: mid-word
    cut = track(silence(0.3, RATE) + speech[: (loud + 1) * 640])
    assert cut.heard and cut.speaking_at_end


# --- where the speech ends: what the recognizer decodes (SpeechEnd) ----------------------------------

HISS = low_noise(2.5, seed=11)  # an open mic after the last word: the same hiss whatever the hold


def spoken(pcm: bytes, chunks: list[int] | None = None) -> bytes:
    """`pcm` fed to a `SpeechEnd` in `chunks` (samples each, cycled; all at once without), cut
    where it says the speech and its margin end."""
    end = SpeechEnd(sample_rate=RATE)
    offset, sizes = 0, [n * 2 for n in chunks] if chunks else [len(pcm) or 1]
    while offset < len(pcm):
        for size in sizes:
            end.feed(pcm[offset : offset + size])
            offset += size
    return pcm[: end.spoken_bytes(len(pcm))]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    hold_ms=st.integers(min_value=0, max_value=2400),
    hiss=st.booleans(),
    chunks=st.one_of(st.none(), st.lists(st.integers(min_value=1, max_value=3000), min_size=1, max_size=6)),
)
def test_what_is_decoded_does_not_depend_on_how_long_the_key_was_held(
    speech: bytes, hold_ms: int, hiss: bool, chunks: list[int] | None
) -> None:
    """Any hold after the last word, silent or hissing, fed in any chunks: once the margin is
    there the audio decoded is the same bytes; before, nothing is cut."""
    after = HISS if hiss else silence(2.5, RATE)
    voice = silence(0.3, RATE) + speech
    held = voice + after[: hold_ms * BYTES_PER_MS]
    whole = spoken(voice + after)  # held as long as anyone would: the reference
    got = spoken(held, chunks)
    assert whole.startswith(voice.rstrip(b"\x00")[: len(voice) - 400 * BYTES_PER_MS])  # no word is lost
    assert len(whole) < len(voice + after)  # the long hold was cut
    if len(held) >= len(whole):
        assert got == whole
    else:
        assert got == held  # the margin is not complete yet: everything so far


def test_speech_end_keeps_every_word_and_cuts_nothing_from_silence(speech: bytes) -> None:
    audio = silence(0.3, RATE) + speech + silence(1.5, RATE)
    cut = spoken(audio)
    last_sound = len(audio.rstrip(b"\x00"))  # espeak's last non-zero sample
    assert last_sound <= len(cut) <= last_sound + SpeechEnd().margin_bytes
    assert spoken(silence(1.0, RATE)) == silence(1.0, RATE)  # no frame of speech: the guards decide
    assert spoken(b"") == b""


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(snr_db=st.floats(min_value=5.0, max_value=40.0), seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_speech_end_never_cuts_into_the_words_under_headset_noise(speech: bytes, snr_db: float, seed: int) -> None:
    """Noise at any level from a quiet headset to 5 dB under the voice: the cut falls after the
    last sound of the words (a floor of 10 dB over the quietest frame cut into them at 5-15 dB)."""
    words = np.frombuffer(silence(0.3, RATE) + speech + silence(1.0, RATE), dtype=np.int16).astype(np.float64)
    loud = np.abs(words)
    last_sound = int(np.nonzero(loud > 0.01 * loud.max())[0][-1]) + 1
    rms = float(np.sqrt(np.mean(words[loud > 0.02 * loud.max()] ** 2)))
    noise = np.random.default_rng(seed).normal(0.0, rms / 10 ** (snr_db / 20), words.size)
    noisy = np.clip(words + noise, -32768, 32767).astype(np.int16).tobytes()
    assert len(spoken(noisy)) >= 2 * last_sound
