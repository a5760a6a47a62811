"""Speech to text with the real decoders: faster-whisper tiny.en and pocketsphinx.

Readbacks are synthesized with espeak-ng and resampled to 16 kHz. Each pair says the same words
once right and once wrong ("two five left" when 25R was issued), because a recognizer biased with
the expected phrase must not turn a wrong readback into a right one. One model per engine is
loaded for the whole module.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.phraseology import extract, normalize_transcript
from gateway.audio.pcm import float_to_pcm, silence
from gateway.audio.resample import resample
from gateway.service import RadioService
from gateway.speech.stack import stt_context
from gateway.speech.stt import SttConfigError, SttContext, SttEngine, SttStream, make_stt, transcribe
from gateway.speech.stt.base import ICAO_WORDS, SttResult, corpus_sentences, value_variants, words_of
from gateway.speech.stt.lexicon import own_words, radio_lexicon
from gateway.speech.stt.sphinx import Lexicon, SphinxEngine
from gateway.speech.stt.whisper import DIGITS_SENTENCE, WhisperEngine, build_prompt
from gateway.speech.tts.espeak import EspeakTts

RATE = 16000
FRAME = 640  # 20 ms of 16 kHz PCM16

RIGHT = "Lufthansa three five nine, runway two five right, cleared for takeoff"
LEFT = "Lufthansa three five nine, runway two five left, cleared for takeoff"
SHORT = "Lufthansa three five nine, runway two five right"  # about 3 s
CONTEXT = SttContext(
    expected_phrases=["DLH359, runway 25R, cleared for takeoff"],
    vocabulary=["Lufthansa", "DLH359", "25R"],
    speaker="pilot-1",
)


def run(coro):
    return asyncio.run(coro)


def synthesize(text: str) -> bytes:
    tts = EspeakTts()
    return resample(run(tts.synthesize(text)), tts.sample_rate, RATE)


@pytest.fixture(scope="module")
def clips() -> dict[str, bytes]:
    pad = silence(0.2, RATE)  # what the VAD pre-roll and hang-over leave around speech
    return {name: pad + synthesize(text) + pad for name, text in {"right": RIGHT, "left": LEFT, "short": SHORT}.items()}


@pytest.fixture(scope="module")
def sphinx() -> SphinxEngine:
    engine = make_stt("sphinx")
    assert isinstance(engine, SphinxEngine)
    engine.load()
    return engine


async def stream_frames(engine: SttEngine, context: SttContext, pcm: bytes) -> tuple[list[str], str, SttStream]:
    """Feed `pcm` in 20 ms frames asking for a partial after each, as the audio path does."""
    stream = engine.open(context)
    partials = []
    for offset in range(0, len(pcm), FRAME):
        stream.feed(pcm[offset : offset + FRAME])
        if (text := await stream.partial()) is not None:
            partials.append(text)
    final = await stream.final()
    await stream.aclose()
    return partials, final, stream


# --- whisper --------------------------------------------------------------------------------------


def test_whisper_hears_the_correct_readback(whisper: WhisperEngine, clips: dict[str, bytes]) -> None:
    heard = normalize_transcript(run(transcribe(whisper, clips["right"], CONTEXT)))
    assert "lufthansa 359" in heard
    assert "runway 25 right" in heard


def test_whisper_bias_does_not_turn_a_wrong_readback_right(whisper: WhisperEngine, clips: dict[str, bytes]) -> None:
    heard = normalize_transcript(run(transcribe(whisper, clips["left"], CONTEXT)))
    assert "runway 25 left" in heard
    assert "right" not in heard


def test_whisper_biased_by_noise_hears_nothing(whisper: WhisperEngine) -> None:
    # A prompted whisper fed hiss writes "right, right, right..." or the prompt itself; the
    # no-speech and repetition guards must drop that rather than hand the engine a readback.
    hiss = float_to_pcm(np.random.default_rng(3).normal(0.0, 0.01, 3 * RATE))
    assert run(transcribe(whisper, hiss, CONTEXT)) == ""


def test_whisper_partials_re_transcribe_the_growing_buffer(whisper: WhisperEngine, clips: dict[str, bytes]) -> None:
    engine = WhisperEngine(partial_every_s=1.0)  # shares the loaded model; fewer decodes than 0.7 s
    partials, final, stream = run(stream_frames(engine, CONTEXT, clips["short"]))
    assert 1 <= len(partials) <= stream.audio_s / 1.0  # at most one per second of new audio
    assert all(text.strip() for text in partials)
    assert "runway 25 right" in normalize_transcript(final)
    assert stream.partials == len(partials) and stream.decode_s > 0


def test_whisper_final_is_the_last_partial_when_only_silence_followed(
    whisper: WhisperEngine, clips: dict[str, bytes]
) -> None:
    async def scenario() -> tuple[str | None, str, bool]:
        stream = whisper.open(CONTEXT)
        stream.feed(clips["short"] + silence(0.5, RATE))  # the words and the half second after them
        partial = await stream.partial()
        stream.feed(silence(0.4, RATE))  # the pilot holds the key a little longer
        final = await stream.final()
        return partial, final, stream.reused_partial

    partial, final, reused = run(scenario())
    assert reused and final == partial
    assert "runway 25 right" in normalize_transcript(final)


def test_whisper_final_reuses_a_partial_cancelled_when_the_transmission_ended(
    whisper: WhisperEngine, clips: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partial decode that has started finishes even when its caller is cancelled (a worker
    cannot be stopped), and the final reuses it; one still queued would be dropped."""
    decoding = threading.Event()
    decode = whisper.decode_result  # what a partial decodes with

    def observed(pcm: bytes, prompt: str | None) -> SttResult:
        decoding.set()
        return decode(pcm, prompt)

    async def scenario() -> tuple[str, bool]:
        stream = whisper.open(CONTEXT)
        stream.feed(clips["short"] + silence(0.5, RATE))
        poller = asyncio.create_task(stream.partial())
        assert await asyncio.to_thread(decoding.wait, 30)  # the partial's decode has started on a worker
        stream.feed(silence(0.4, RATE))
        poller.cancel()  # what the audio path does with its partial poller at the end
        return await stream.final(), stream.reused_partial

    monkeypatch.setattr(whisper, "decode_result", observed)
    final, reused = run(scenario())
    assert reused
    assert "runway 25 right" in normalize_transcript(final)


def test_whisper_hears_the_same_words_however_long_the_key_is_held_and_whenever_partials_run(
    whisper: WhisperEngine, clips: dict[str, bytes]
) -> None:
    """Whisper's words move with the silence after them (its window changes shape), so every
    decode reads the audio only through the speech and half a second after it: held 0.3 s or 2 s
    longer, fed at once or frame by frame with partials, the final is one transcript."""
    engine = WhisperEngine(partial_every_s=0.4)  # shares the loaded model; partials as often as it can

    async def at_once(pcm: bytes) -> tuple[str, bool]:
        stream = whisper.open(CONTEXT)
        stream.feed(pcm)
        return await stream.final(), stream.reused_partial

    finals = set()
    for hold in (0.3, 0.8, 2.0):
        pcm = clips["short"] + silence(hold, RATE)
        finals.add(run(at_once(pcm))[0])
        finals.add(run(stream_frames(engine, CONTEXT, pcm))[1])
    assert len(finals) == 1, finals
    assert "runway 25 right" in normalize_transcript(finals.pop())


def test_whisper_spends_no_partial_on_a_key_held_after_the_words(
    whisper: WhisperEngine, clips: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key held on after the words and their margin adds nothing to decode: the partial
    already heard that audio, so no other partial runs, and the final is that partial."""
    engine = WhisperEngine(partial_every_s=0.4)  # shares the loaded model; partials every 0.4 s of audio
    engine.load()
    decode, calls = engine.decode_result, []

    def counted(pcm: bytes, prompt: str | None) -> SttResult:
        calls.append(len(pcm))
        return decode(pcm, prompt)

    async def scenario() -> tuple[str | None, str | None, str, bool]:
        stream = engine.open(CONTEXT)
        stream.feed(clips["short"] + silence(0.5, RATE))
        first = await stream.partial()
        stream.feed(silence(1.5, RATE))  # held on: nothing new to hear
        second = await stream.partial()
        return first, second, await stream.final(), stream.reused_partial

    monkeypatch.setattr(engine, "decode_result", counted)
    first, second, final, reused = run(scenario())
    assert first and second is None and reused and final == first
    assert len(calls) == 1


def test_whisper_final_decodes_again_when_the_partial_had_not_the_whole_margin(
    whisper: WhisperEngine, clips: dict[str, bytes]
) -> None:
    async def scenario() -> tuple[str, bool]:
        stream = whisper.open(CONTEXT)
        stream.feed(words + silence(0.1, RATE))  # the words, and less than half a second after them
        await stream.partial()
        stream.feed(silence(1.0, RATE))
        return await stream.final(), stream.reused_partial

    async def at_once() -> str:
        stream = whisper.open(CONTEXT)
        stream.feed(words + silence(1.1, RATE))
        return await stream.final()

    sound = clips["short"].rstrip(b"\x00")
    words = clips["short"][: len(sound) + len(sound) % 2]  # to its last sound: espeak's own silence after it too

    final, reused = run(scenario())
    assert not reused and final == run(at_once())


def test_whisper_final_decodes_again_when_speech_followed_the_partial(
    whisper: WhisperEngine, clips: dict[str, bytes]
) -> None:
    async def scenario() -> tuple[str | None, str, bool]:
        stream = whisper.open(CONTEXT)
        half = len(clips["short"]) // 2 // FRAME * FRAME
        stream.feed(clips["short"][:half])
        partial = await stream.partial()
        stream.feed(clips["short"][half:])
        return partial, await stream.final(), stream.reused_partial

    partial, final, reused = run(scenario())
    assert not reused and partial != final
    assert "runway 25 right" in normalize_transcript(final)


def test_whisper_final_does_not_wait_behind_a_partial_that_misses_speech(
    whisper: WhisperEngine, clips: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the release, a partial still decoding a prefix is not waited for when speech followed
    its snapshot: the final decodes beside it, on another worker and model replica."""
    from gateway.speech.cpu import cpu_count

    if cpu_count() < 2:
        pytest.skip("needs two CPU workers")
    partial_started, partial_may_finish = threading.Event(), threading.Event()
    decode = whisper.decode_result  # what a partial decodes with
    calls = 0

    def observed(pcm: bytes, prompt: str | None) -> SttResult:
        nonlocal calls
        calls += 1
        if calls == 1:  # the partial: held until the final is done
            partial_started.set()
            assert partial_may_finish.wait(30)
        return decode(pcm, prompt)

    async def scenario() -> tuple[str, bool]:
        stream = whisper.open(CONTEXT)
        half = len(clips["short"]) // 2 // FRAME * FRAME
        stream.feed(clips["short"][:half])
        poller = asyncio.create_task(stream.partial())
        assert await asyncio.to_thread(partial_started.wait, 30)
        stream.feed(clips["short"][half:])
        poller.cancel()
        final = await stream.final()  # while the partial is still held
        partial_may_finish.set()
        with contextlib.suppress(asyncio.CancelledError):
            await poller
        return final, stream.reused_partial

    monkeypatch.setattr(whisper, "decode_result", observed)
    try:
        final, reused = run(scenario())
    finally:
        partial_may_finish.set()
    assert not reused and "runway 25 right" in normalize_transcript(final)


def test_whisper_finals_only(clips: dict[str, bytes], whisper: WhisperEngine) -> None:
    engine = WhisperEngine(partial_every_s=None)  # shares the loaded model
    engine.load()
    assert engine._model is whisper._model

    async def scenario() -> list[str | None]:
        stream = engine.open(CONTEXT)
        results = []
        for offset in range(0, len(clips["short"]), FRAME):
            stream.feed(clips["short"][offset : offset + FRAME])
            results.append(await stream.partial())
        await stream.aclose()
        return results

    assert set(run(scenario())) == {None}


def test_whisper_prompt_is_the_wording_of_the_expected_phrase_never_its_values() -> None:
    prompt = build_prompt(CONTEXT)
    assert prompt == DIGITS_SENTENCE + " Lufthansa, runway, cleared for takeoff."
    context = SttContext(expected_phrases=["DLH359, runway 25R, cleared for takeoff"], vocabulary=["left", "QNH 1013"])
    assert build_prompt(context) == (
        DIGITS_SENTENCE + " Lufthansa, runway, cleared for takeoff. QNH."
    )
    # the same prompt whatever values were issued: it cannot favour the right one over a wrong one
    other = SttContext(expected_phrases=["DLH359, runway 07L, cleared for takeoff"], vocabulary=["right", "QNH 998"])
    assert build_prompt(other) == build_prompt(context)
    assert build_prompt(SttContext()) == DIGITS_SENTENCE
    long = SttContext(expected_phrases=["cleared for takeoff"] * 40, vocabulary=["Lufthansa"])
    assert len((build_prompt(long, max_words=60) or "").split()) <= 60


_LETTERS = "ABCDEFGHKLMNPRSTVWYZ"


@given(
    values=st.lists(
        st.tuples(st.sampled_from(_LETTERS), st.integers(1, 99), st.integers(1, 36), st.sampled_from("LRC"), st.sampled_from(_LETTERS)),
        min_size=2, max_size=2,
    )
)
@settings(max_examples=100, deadline=None)
def test_whisper_prompt_is_the_same_whatever_values_were_issued(values: list[tuple[str, int, int, str, str]]) -> None:
    """Seen on the voice bench (seed 7): the phrase "holding point Foxtrot one one" left its
    capitalized "Foxtrot" in the prompt, and whisper wrote "Foxtrot one one" for a spoken "alfa
    one one", a wrong holding point accepted. Whatever holding point, runway, ATIS letter or
    single letter the controller issued, the prompt is the same: it cannot favour one."""

    def context(letter: str, number: int, runway: int, side: str, atis: str) -> SttContext:
        return SttContext(
            callsign="JBU438",
            expected_phrases=[f"Give way to the A320, then continue to holding point {letter}{number}, runway {runway:02d}{side}, JetBlue 438"],
            vocabulary=[f"{letter}{number}", f"information {atis}", atis, f"{letter}{number}, {atis}{number}"],
        )

    first, second = (build_prompt(context(*v)) for v in values)
    assert first == second


@given(issued=st.integers(0, 5), number=st.integers(1, 9), letter=st.sampled_from("ABMQTZ"), other=st.integers(0, 5))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_prompt_and_the_closed_vocabulary_offer_every_sid_of_the_airport_alike(
    radio_service: RadioService, issued: int, number: int, letter: str, other: int
) -> None:
    """Seen by voice: prompted with "cleared to Dusseldorf via CHARL departure", whisper wrote
    "Charon" for a spoken "Kerun", a wrong SID accepted; prompted with no fix at all, it could not
    spell a right one ("zuber fi" for SOBRA). Whichever of the airport's SIDs was issued, the prompt
    and the closed hearing's own words (and sphinx's and vosk's corpus) are the same, and they
    name every one of them."""
    session, opening, _ = radio_service.create(flow="clearance", seed=3)
    radio_service.transmit(session.session_id, opening.expected_pilot[0])  # the clearance: its readback next
    at = radio_service.get(session.session_id)
    fixes = at.variables["sid_fixes"]
    assert len(fixes) >= 2 and at.variables["sid"].split()[0] in fixes

    def context(fix: str, digit: int, suffix: str) -> SttContext:
        changed = at.model_copy(update={"variables": {**at.variables, "sid": f"{fix} {digit}{suffix}"}})
        return stt_context(changed, radio_service.engine.expected_pilot(changed), lexicon)

    lexicon = radio_lexicon(radio_service.registry)
    one = context(fixes[issued % len(fixes)], number, letter)
    another = context(fixes[other % len(fixes)], 5, "Z")
    assert build_prompt(one) == build_prompt(another)
    assert own_words(one) | lexicon == own_words(another) | lexicon  # the closed hearing: its letters and digits are shared
    assert corpus_sentences(one) == corpus_sentences(another)  # sphinx's and vosk's language model
    prompt = build_prompt(one) or ""
    assert all(fix in prompt for fix in fixes) and all(fix.lower() in own_words(one) for fix in fixes)


# Five letters that read as a fix name: not a word of the phraseology ("KNOTS", "RIGHT"), which
# no clearance names a SID after and `phraseology.extract` rightly does not take for one.
_FIX = st.text("ABCDEGHKLMNOPRSTUVWZ", min_size=5, max_size=5).filter(
    lambda fix: extract("sid", f"cleared via {fix} 1F departure") == [f"{fix} 1F"]
)


@given(
    issued=st.integers(0, 5),
    other=st.integers(0, 5),
    fix=_FIX,
    number=st.integers(1, 9),
    kind=st.sampled_from(["departure", "arrival"]),
)
@settings(max_examples=100, deadline=None)
def test_a_push_to_talk_prompt_never_names_the_issued_procedure_alone(
    issued: int, other: int, fix: str, number: int, kind: str
) -> None:
    """`/api/atc/ptt` has an expected phrase and no session: its "via MARUN 7F departure" made
    MARUN the prompt's only name, and whisper wrote "OBOKA" for a spoken "OBUKA" when OBOKA was
    issued. The phrase's fix is offered among the SIDs of an unknown airport (`phrase_names`):
    whichever of them was issued, the prompt is the same, and any other fix is never named alone."""
    from engine.scenario_values import sid_fixes
    from gateway.api.speech import PttRequest, ptt_context

    def prompt(name: str) -> str:
        phrase = f"DLH359 cleared to Frankfurt via {name} {number}F {kind}, climb 5000 feet, squawk 4721"
        request = PttRequest.model_validate({"audio": "", "expected": {"phrase": phrase}})
        return build_prompt(ptt_context(request)) or ""

    listed = sid_fixes(None)
    assert prompt(listed[issued]) == prompt(listed[other])
    named = prompt(fix)
    assert fix in named and all(f in named for f in listed)
    assert f"via {' or '.join(sorted({*listed, fix}))} {kind}" in named


@given(fix=_FIX, number=st.integers(1, 9), variable=st.sampled_from(["sid", "star"]))
@settings(max_examples=50, deadline=None)
def test_a_session_that_lists_no_sids_never_offers_its_procedure_alone(fix: str, number: int, variable: str) -> None:
    """A session restored without `sid_fixes`, or a STAR (no airport's SIDs are its choices):
    the fix is offered among an unknown airport's SIDs, as `/api/atc/ptt` offers it."""
    from engine.scenario_values import sid_fixes
    from gateway.speech.stack import name_choices

    (choice,) = name_choices({variable: f"{fix} {number}A"}, {fix.lower()})
    assert choice.choices == tuple(sorted({*sid_fixes(None), fix}))
    (kept_out,) = name_choices({variable: f"{fix} {number}A"}, set())  # not said: only kept out
    assert kept_out.choices == () and kept_out.issued == frozenset({fix.lower()})


def test_whisper_empty_stream_and_bad_input(whisper: WhisperEngine) -> None:
    assert run(transcribe(whisper, b"")) == ""
    stream = whisper.open(CONTEXT)
    with pytest.raises(ValueError, match="even number"):
        stream.feed(b"\x00")
    with pytest.raises(ValueError, match="16000 Hz"):
        whisper.open(SttContext(sample_rate=8000))


def test_whisper_never_downloads_a_missing_model(tmp_path: Path) -> None:
    with pytest.raises(SttConfigError, match="does not exist"):
        WhisperEngine(model_path=tmp_path / "tiny.en")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(SttConfigError, match="missing model.bin"):
        WhisperEngine(model_path=tmp_path)


# --- pocketsphinx ---------------------------------------------------------------------------------


def test_sphinx_streams_partials_before_the_final(sphinx: SphinxEngine, clips: dict[str, bytes]) -> None:
    partials, final, stream = run(stream_frames(sphinx, CONTEXT, clips["short"]))
    assert 2.5 <= stream.audio_s <= 4.5
    assert len(partials) >= 3  # a new hypothesis every few 200 ms steps while the pilot talks
    assert partials[-1] != final or len(partials) > 1
    heard = normalize_transcript(final)
    assert "lufthansa" in heard and "25 right" in heard


def test_sphinx_keeps_a_wrong_readback_wrong(sphinx: SphinxEngine, clips: dict[str, bytes]) -> None:
    heard = normalize_transcript(run(transcribe(sphinx, clips["left"], CONTEXT)))
    assert "25 left" in heard
    assert "right" not in heard


def test_sphinx_reuses_a_decoder_abandoned_mid_transmission(sphinx: SphinxEngine, clips: dict[str, bytes]) -> None:
    async def scenario() -> str:
        abandoned = sphinx.open(CONTEXT)
        abandoned.feed(clips["left"][: 2 * RATE])
        assert await abandoned.partial() is not None
        await abandoned.aclose()
        return await transcribe(sphinx, clips["right"], CONTEXT)

    # What the abandoned stream must not leave behind is its own words ("left"). Whether sphinx also
    # hears "runway" depends on the speaker's cepstral mean from earlier transmissions: run alone,
    # this test hears "lufthansa 35925 right cleared for takeoff" (found by a run with new draws).
    heard = normalize_transcript(run(scenario()))
    assert "left" not in heard and "lufthansa" in heard and heard.endswith("25 right cleared for takeoff"), heard


def test_sphinx_partial_cancelled_mid_decode_does_not_race_the_final(
    sphinx: SphinxEngine, clips: dict[str, bytes]
) -> None:
    async def scenario() -> str:
        await transcribe(sphinx, clips["short"], CONTEXT)  # adapted: the final decodes no second pass
        stream = sphinx.open(CONTEXT)
        stream.feed(clips["right"])
        poller = asyncio.create_task(stream.partial())
        for _ in range(3):  # let the partial reach the worker pool
            await asyncio.sleep(0)
        poller.cancel()
        final = await stream.final()  # must wait for the cancelled step, not decode beside it
        await stream.aclose()
        return final

    # What the abandoned stream must not leave behind is its own words ("left"). Whether sphinx also
    # hears "runway" depends on the speaker's cepstral mean from earlier transmissions: run alone,
    # this test hears "lufthansa 35925 right cleared for takeoff" (found by a run with new draws).
    heard = normalize_transcript(run(scenario()))
    assert "left" not in heard and "lufthansa" in heard and heard.endswith("25 right cleared for takeoff"), heard


def test_sphinx_knows_every_icao_word_and_splits_compounds(sphinx: SphinxEngine) -> None:
    lexicon: Lexicon = sphinx.lexicon
    assert [w for line in ICAO_WORDS for w in line.split() if not lexicon.pronunciations(w)] == []
    assert lexicon.pronunciations("niner") and lexicon.pronunciations("fife") and lexicon.pronunciations("wilco")
    assert lexicon.pronunciations("speedbird") == ["S P IY D B ER D"]
    assert lexicon.pronunciations("zzxqv") == []


def test_sphinx_reports_words_it_cannot_recognize(sphinx: SphinxEngine, clips: dict[str, bytes]) -> None:
    context = SttContext(expected_phrases=["Speedbird 12, Zzxqv approach"])
    _, _, stream = run(stream_frames(sphinx, context, clips["short"][: RATE * 2]))
    assert stream.unknown_words == ["zzxqv"]


# --- shared pieces --------------------------------------------------------------------------------


def test_corpus_biases_the_wording_never_the_values() -> None:
    right = corpus_sentences(CONTEXT)
    wrong = SttContext(["DLH359, runway 25L, cleared for takeoff"], vocabulary=["Lufthansa", "DLH359", "25L"])
    assert corpus_sentences(wrong) == right  # the same model whatever runway side was issued
    phrases = [s for s in right if len(s) == 11]
    assert {s[7] for s in phrases} == {"left", "right", "center"}  # "... runway two fife <side>"
    assert all(s[0] == "lufthansa" and s[4] == "runway" and s[-3:] == ["cleared", "for", "takeoff"] for s in phrases)
    assert {s[1] for s in phrases} >= {"tree", "three", "niner", "nine", "zero"}  # both digit forms
    singles = [s[0] for s in right if len(s) == 1]
    assert len(singles) == len(set(singles))
    assert {"lufthansa", "left", "right", "center", "niner", "nine", "zero", "decimal", "juliett"} <= set(singles)
    assert value_variants(words_of("cleared for takeoff")) == [["cleared", "for", "takeoff"]]


def test_make_stt_names_the_engines() -> None:
    with pytest.raises(ValueError, match="whisper, sphinx, vosk"):
        make_stt("kaldi")
    assert isinstance(make_stt("Sphinx", partial_every_s=0.5), SttEngine)


# --- whisper's short encoder window -------------------------------------------------------------


def test_whisper_short_window_hears_what_the_30_second_window_hears(whisper: WhisperEngine, clips: dict[str, bytes]) -> None:
    """The trimmed window (audio + 1 s) and faster-whisper's own 30 s one agree on the words: on
    the runway each clip says, and on all the rest but one word at most. Not word for word: the
    int8 kernels CTranslate2 picks differ by CPU, and on an AVX-512 machine the short window
    wrote "Lufthansa three five zine" where the long one wrote "niner" (on earlier machines both
    "niner"); the same happens between any two CPUs, whatever the window."""
    from difflib import SequenceMatcher

    from gateway.audio.pcm import pcm_to_float32

    prompt = build_prompt(CONTEXT)
    for name in ("right", "left", "short"):
        samples = pcm_to_float32(clips[name])
        said = [whisper._decode_window(samples, prompt, 60).text, whisper._decode_chunked(samples, prompt, 60).text]
        runways = [re.findall(r"runway \d+ \w+", normalize_transcript(text)) for text in said]
        assert runways[0] == runways[1] != [], (name, said)
        short, full = (re.findall(r"[a-z0-9]+", text.lower()) for text in said)
        ops = SequenceMatcher(None, full, short, autojunk=False).get_opcodes()
        assert sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal") <= 1, (name, said)
    assert "runway 25 left" in normalize_transcript(whisper._decode_window(pcm_to_float32(clips["left"]), prompt, 60).text)


def test_whisper_long_audio_goes_through_the_chunked_path(whisper: WhisperEngine, clips: dict[str, bytes]) -> None:
    """Past one 30 s window the audio is chunked by faster-whisper; the words are still there."""
    long = clips["right"] + silence(27.0, RATE)
    heard = normalize_transcript(whisper.decode(long, build_prompt(CONTEXT)))
    assert "runway 25 right" in heard and "lufthansa 359" in heard


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("Roger, Ukraine International six six four. Roger, Ukraine International six six four.",
         "Roger, Ukraine International six six four."),
        ("Wilco, DLH359. Wilco, DLH359. Wilco, DLH", "Wilco, DLH359."),
        ("Squawk one one. One one two. Lufthansa three.", "Squawk one one. One one two. Lufthansa three."),
        ("Roger. Wilco.", "Roger. Wilco."),
        ("Roger, Ukraine", "Roger, Ukraine"),
        ("", ""),
        # loops without sentence marks (seen on the readback bench's Kokoro voices)
        (" runway one eight roger with air nine or five runway one eight roger with air nine or five runway one eight roger"
         " with air nine or five runway one eight roger with air nine or five runway one eight roger",
         "runway one eight roger with air nine or five"),
        ("japanair one one one three runway one eight roja japanair one one one three runway one eight roja"
         " japanair one one one three runway one eight roja japanair one eight roja",
         "japanair one one one three runway one eight roja"),
        # two copies are not a loop; digits said in a row are no block of words
        ("runway one eight, runway one eight", "runway one eight, runway one eight"),
        ("squawk one one one one", "squawk one one one one"),
        ("QNH one zero one, one zero one, one zero one six", "QNH one zero one, one zero one, one zero one six"),
        ("roger wilco thanks roger wilco thanks roger wilco thanks runway six", "roger wilco thanks runway six"),
        # past the end of the speech, whisper reads the tail once more (an echo: digit words alike)
        ("Via MARUN seven foxtrot departure, squawk four seven two one, Lufthansa tree fife niner."
         " Squawk four seven two one, Lufthansa three five nine.",
         "Via MARUN seven foxtrot departure, squawk four seven two one, Lufthansa tree fife niner."),
        # a last sentence that says another value, or is too short to be an echo, stays
        ("Squawk four seven two one, Lufthansa tree fife niner. Squawk four seven two two, Lufthansa tree fife.",) * 2,
        ("Cleared to land runway two five left. Two five left.",) * 2,
        # a loop run to the end of the window: two copies and a cut-off third (a flite pilot,
        # readback bench seed 43; the compression guard made it "" before)
        ("Egyptair three two. Roger heading zero seven zero. Roger heading zero seven zero. Roger. Egyptair three"
         " two. Roger heading zero seven zero. Roger heading zero seven zero. Roger. Egyptair three two. Roger"
         " heading zero seven zero",
         "Egyptair three two. Roger heading zero seven zero. Roger."),
        # digits said on to the end: masked as doubted, the words before kept (a Kokoro pilot's
        # "Edelweiss seven zero four", seed 45); a shorter run of digits is a value and stays
        (" weeko one two zero decimal one seven five Roger edelweiss seven zero seven zero seven zero seven zero"
         " seven zero seven zero seven zero seven",
         "weeko one two zero decimal one seven five Roger edelweiss ???"),
        ("squawk two two two two, two two two", "squawk two two two two, two two two"),
        ("japanair one one one one one one one one three", "japanair one one one one one one one one three"),
    ],
)
def test_collapse_repeats_keeps_one_copy_of_a_looped_sentence(said: str, kept: str) -> None:
    from gateway.speech.stt.whisper import collapse_repeats

    assert collapse_repeats(said) == kept


_SAID = st.sampled_from(
    ["squawk", "runway", "left", "climb", "feet", "one", "two", "tree", "four", "fife", "niner", "zero"]
)


@given(
    before=st.lists(_SAID, min_size=6, max_size=14),
    size=st.integers(4, 6),
    change=st.integers(0, 5),
    digit=st.sampled_from(["six", "seven"]),
)
@settings(max_examples=200, deadline=None)
def test_a_dropped_echo_never_loses_a_value(before: list[str], size: int, change: int, digit: str) -> None:
    """A last sentence that says the previous one's last words again goes (whisper's echo);
    one that differs in any word, a digit above all, stays: what it says may be another value."""
    from gateway.speech.stt.whisper import collapse_repeats

    first = " ".join(before).capitalize() + "."
    tail = before[-size:]
    assert collapse_repeats(f"{first} {' '.join(tail).capitalize()}.") == collapse_repeats(first)
    other = [*tail]
    other[change % size] = digit  # never among the words drawn
    kept = collapse_repeats(f"{first} {' '.join(other).capitalize()}.")
    assert digit in re.findall(r"[a-z]+", kept.lower())


_DIGIT_WORDS = st.sampled_from(["zero", "one", "two", "tree", "four", "fife", "six", "seven", "eight", "niner"])


@given(
    before=st.lists(_SAID, min_size=1, max_size=10),
    block=st.lists(_DIGIT_WORDS, min_size=1, max_size=3),
    copies=st.integers(1, 12),
    cut=st.integers(0, 2),
)
@settings(max_examples=300, deadline=None)
def test_digits_said_on_to_the_end_are_doubted_never_read(before: list[str], block: list[str], copies: int, cut: int) -> None:
    """Digits whisper says on to the end of the window (a block of up to three, repeated to
    eight words or more) are masked as one doubted word: the words before stay as they were,
    and no digit of the run is left to be read as a value. A shorter run is left alone: it may
    be a value."""
    from gateway.speech.stt.whisper_guards import DIGIT_LOOP_MIN_WORDS, mask_digit_loop

    if before[-1] in {"one", "two", "tree", "four", "fife", "niner", "zero"}:
        before = [*before, "roger"]  # the run starts where the words before it end
    run = block * copies + block[: min(cut, len(block) - 1)]
    masked = mask_digit_loop(" ".join(before + run)).split()
    if len(run) >= DIGIT_LOOP_MIN_WORDS:
        assert masked[-1] == "???"
        assert masked[:-1] == before[: len(masked) - 1]  # only the words before, at most
        assert len(masked) - 1 >= len(before) - (len(block) - 1)  # a copy's tail at most joins the run
    else:
        assert masked == before + run


def test_whisper_skips_partials_while_every_worker_decodes_a_final(whisper: WhisperEngine, clips: dict[str, bytes]) -> None:
    """Under load the pool's CPU goes to finals: a partial asked for meanwhile is skipped."""
    from gateway.speech.stt.base import cpu_count, pool_saturated

    async def scenario() -> None:
        finals = []
        for _ in range(cpu_count()):
            stream = whisper.open(CONTEXT)
            stream.feed(clips["right"])
            finals.append(asyncio.ensure_future(stream.final()))
        await asyncio.sleep(0)  # each final has submitted its decode
        assert pool_saturated()
        talking = whisper.open(CONTEXT)
        talking.feed(clips["right"])
        assert await talking.partial() is None and talking.decode_s == 0.0
        heard = await asyncio.gather(*finals)
        assert all("runway 25 right" in normalize_transcript(text) for text in heard)
        assert not pool_saturated()
        assert await talking.partial()  # a free pool makes partials again
        await talking.aclose()

    run(scenario())


# ---------------------------------------------------------------- hearing (what the recognizer was unsure of)


def test_masked_alternative_and_unique_alternatives() -> None:
    from gateway.speech.stt.base import UNSURE_WORD, masked_alternative, unique_alternatives

    words = [("qnh", 0.99), ("one", 0.9), ("zero", 0.4), ("zero", 0.8), ("four", 0.95)]
    assert masked_alternative(words, 0.5) == f"qnh one {UNSURE_WORD} zero four"
    assert masked_alternative(words, 0.3) is None
    assert unique_alternatives("a b", ["a b", "", " c ", "c", "d"]) == ["c", "d"]


@pytest.mark.parametrize("engine_name", ["whisper", "sphinx"])
def test_every_final_comes_with_a_hearing(engine_name: str, request: pytest.FixtureRequest, clips: dict[str, bytes]) -> None:
    engine = request.getfixturevalue(engine_name)

    async def scenario():
        stream = engine.open(CONTEXT)
        stream.feed(clips["left"])
        result = await stream.final_result()
        text = await stream.final()  # the same transcript, from the same decode
        await stream.aclose()
        return result, text

    result, text = run(scenario())
    assert result.text == text and text
    hearing = result.hearing
    assert hearing.confidence is not None and 0.0 <= hearing.confidence <= 1.0
    assert not hearing.cut_off  # the audio path's to set, never the engine's
    assert text not in hearing.alternatives and all(alt.strip() for alt in hearing.alternatives)
    if engine_name == "sphinx":  # word posteriors: an alternative exists only with a word masked
        assert all("???" in alt for alt in hearing.alternatives)


def test_whisper_hearing_of_silence_is_empty(whisper: WhisperEngine) -> None:
    from gateway.speech.stt.base import transcribe_result

    result = run(transcribe_result(whisper, silence(1.0, RATE), CONTEXT))
    assert result.text == "" and result.hearing.alternatives == []


def test_whisper_prompt_does_not_turn_a_wrong_qnh_into_the_expected_one(whisper: WhisperEngine) -> None:
    """The prompt holds the wording of the expected readback, never its values (build_prompt), so
    it cannot write the expected value for a spoken other one. One case, with its n-best: neither
    the best transcript nor any alternative may hold the expected QNH."""
    from gateway.speech.stt.base import transcribe_result

    context = SttContext(expected_phrases=["QNH 1004, DLH359"], vocabulary=["Lufthansa", "DLH359", "1004"])
    assert "zero zero four" not in (build_prompt(context) or "")
    result = run(transcribe_result(whisper, synthesize("QNH one zero zero five, Lufthansa three five nine"), context))
    heard = [normalize_transcript(t) for t in [result.text, *result.hearing.alternatives]]
    assert "1005" in heard[0], heard
    assert not any("1004" in h for h in heard), heard
