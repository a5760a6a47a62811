"""The second hearing: the radio's closed vocabulary, when it is spent, and what it hands on.

With the real parts: the flows' registry, the radio service on a virtual clock, and whisper
tiny.en decoding espeak-ng recordings (the second hearing is a real decode).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.hearing import HeardVerdict, Hearing
from engine.phraseology import normalize_transcript
from gateway.service import RadioService
from gateway.settings import Settings
from gateway.speech.rehearing import SpareDecode, hear_again, second_hearing
from gateway.speech.stack import stt_context
from gateway.speech.stt.base import ICAO_WORDS, VALUE_CLASSES, SttContext, SttResult, final_result
from gateway.speech.stt.lexicon import PILOT_WORDS, flow_words, radio_lexicon
from gateway.speech.stt.whisper import WhisperEngine, build_prompt
from gateway.store import MemorySessionRepository
from tests.support.pilot_audio import espeak_pcm

RATE = 16000


@pytest.fixture(scope="module")
def service() -> RadioService:
    return RadioService(Settings(), clock=lambda: 1_000.0, repository=MemorySessionRepository())


def closed_hearing(whisper: WhisperEngine, context: SttContext, pcm: bytes) -> SttResult | None:
    """The stream's final, then its second hearing (`WhisperStream.closed_result`)."""

    async def hear() -> SttResult | None:
        stream = whisper.open(context)
        stream.feed(pcm)
        await final_result(stream)
        try:
            return await stream.closed_result()
        finally:
            await stream.aclose()

    return asyncio.run(hear())


# --- the lexicon ----------------------------------------------------------------------------------


def test_the_lexicon_holds_every_value_word_so_it_can_favour_no_value(service: RadioService) -> None:
    lexicon = radio_lexicon(service.registry)
    for members in VALUE_CLASSES:  # every digit, letter, side, climb/descend: whatever was issued
        assert set(members) <= lexicon, sorted(set(members) - lexicon)
    assert {w for line in ICAO_WORDS for w in line.split()} <= lexicon
    assert set(PILOT_WORDS) <= lexicon
    assert {"lufthansa", "speedbird", "ryanair"} <= lexicon  # traffic stays hearable
    assert radio_lexicon(service.registry) is lexicon  # made once per registry


def test_flow_words_are_the_flows_words_without_template_variables(service: RadioService) -> None:
    words = flow_words(service.registry)
    assert {"cleared", "takeoff", "readback", "airborne", "mayday"} <= words
    assert not {w for w in words if "_" in w or "{" in w}
    assert "callsign_spoken" not in words and "station_name" not in words


# --- when a second hearing is spent ---------------------------------------------------------------


def test_the_verdict_is_decided_on_a_copy_and_stores_nothing(service: RadioService) -> None:
    session, opening, _ = service.create(flow="clearance", seed=5)
    sid = session.session_id
    clearance = service.transmit(sid, opening.expected_pilot[0])
    readback = clearance.expected_pilot[0]
    before, transcript = service.get(sid), service.transcript(sid)
    right = service.verdict(sid, readback, Hearing())
    assert right.settled is True and right.fields and set(right.fields.values()) == {"ok"}
    assert service.verdict(sid, "say again", Hearing()).settled is False
    assert service.verdict(sid, "", Hearing(confidence=0.0)).settled is False
    assert service.get(sid) == before and service.transcript(sid) == transcript
    assert service.transmit(sid, readback, hearing=Hearing()).readback.ok


@given(st.booleans(), st.booleans(), st.sampled_from([None, "say_again", "readback"]))
def test_a_decision_settles_only_when_understood_and_any_readback_is_correct(
    recognized: bool, ok: bool, intent: str | None
) -> None:
    from engine.models import Decision, ReadbackResult

    decision = Decision(recognized=recognized, intent=intent, readback=ReadbackResult(ok=ok))
    assert decision.settled == (recognized and ok and intent != "say_again")
    assert Decision(recognized=recognized, intent=intent).settled == (recognized and intent != "say_again")


@given(
    st.booleans(),
    st.booleans(),
    st.dictionaries(
        st.sampled_from(["runway", "squawk", "qnh"]), st.sampled_from(["ok", "missing", "wrong", "unsure"])
    ),
)
def test_a_verdict_is_its_decision_in_brief(recognized: bool, ok: bool, fields: dict[str, str]) -> None:
    """What the hearing chain reads of a dry run (`HeardVerdict.of`) is the decision's own
    settling and per-field verdict; no decision (nothing to decide) asks for no other hearing."""
    from engine.models import Decision, ReadbackResult

    decision = Decision(recognized=recognized, readback=ReadbackResult(ok=ok, fields=fields))
    verdict = HeardVerdict.of(decision)
    assert verdict.settled == decision.settled and verdict.fields == fields
    assert verdict.heard_ok == ("ok" in fields.values()) and verdict.heard_wrong == ("wrong" in fields.values())
    assert HeardVerdict.of(Decision(recognized=recognized)).fields == {}
    assert HeardVerdict.of(None) == HeardVerdict(settled=True, fields={})


# --- what the second hearing hands on -------------------------------------------------------------


@given(st.text(max_size=30), st.text(max_size=30), st.lists(st.text(max_size=20), max_size=3))
def test_second_hearing_keeps_the_first_transcript_among_the_alternatives(
    first: str, closed: str, alts: list[str]
) -> None:
    one = SttResult(first, Hearing(alternatives=alts, cut_off=True, confidence=0.5))
    two = SttResult(closed, Hearing(alternatives=alts[:1], confidence=0.7))
    combined = second_hearing(one, two)
    if not closed:
        assert combined is one
        return
    assert combined.text == closed and combined.hearing.open_transcript == first
    assert combined.hearing.cut_off is True and combined.hearing.confidence == 0.7
    if first.strip() and first.strip() != closed.strip():
        assert combined.hearing.alternatives[0] == first.strip()  # a value heard otherwise first is doubt
    assert closed.strip() not in combined.hearing.alternatives


@given(
    st.text(max_size=20),
    st.lists(st.text(max_size=12), max_size=3),
    st.text(min_size=1, max_size=20),
    st.lists(st.text(max_size=12), max_size=3),
    st.text(min_size=1, max_size=20),
    st.lists(st.text(max_size=12), max_size=3),
)
def test_each_alternative_names_the_hearing_that_wrote_it(
    first: str, first_alts: list[str], closed: str, closed_alts: list[str], base: str, base_alts: list[str]
) -> None:
    """Through a second and a third hearing, every alternative is named by the hearing that first
    wrote it (unnamed: the first hearing's own), and the transcript by the hearing that wrote it."""
    from engine.hearing import HearingStep

    hearings: list[tuple[HearingStep, str, list[str]]] = [("first", first, first_alts)]
    heard = SttResult(first, Hearing(alternatives=first_alts))
    for step, text, alts in (("second", closed, closed_alts), ("third", base, base_alts)):
        later = second_hearing(heard, SttResult(text, Hearing(alternatives=alts)), step)  # type: ignore[arg-type]
        if not text:
            assert later is heard
            continue
        hearings.append((step, text, alts))  # type: ignore[arg-type]
        heard = later
    writers: dict[str, set[str]] = {}  # each transcript, by every hearing that wrote it
    for step, text, alts in hearings:
        for t in [text, *alts]:
            writers.setdefault(t.strip(), set()).add(step)
    assert heard.hearing.by == hearings[-1][0]
    for alternative in heard.hearing.alternatives:
        assert heard.hearing.source(alternative) in writers[alternative]
        if len(writers[alternative]) == 1:  # written by one hearing alone: named by it
            assert heard.hearing.source(alternative) == next(iter(writers[alternative]))
    assert all(step != "first" for step in heard.hearing.heard_by.values())


RUNWAY_READBACK = "Lufthansa three five nine, runway zero seven right"


def _hear_twice(
    whisper: WhisperEngine, service: RadioService, settled: bool, ended_ago_s: float | None = None
) -> tuple[SttResult, SttResult, float, float]:
    """The first hearing of `RUNWAY_READBACK`, what `hear_again` makes of it (the engine settled
    or not; `ended_ago_s`: PTT released that long ago, due in 0.85 s), and the stream's decode
    seconds before and after."""
    import time

    pcm = espeak_pcm(RUNWAY_READBACK)
    context = SttContext(callsign="Lufthansa 359", lexicon=radio_lexicon(service.registry))

    async def hear() -> tuple[SttResult, SttResult, float, float]:
        stream = whisper.open(context)
        stream.feed(pcm)
        first = await final_result(stream)
        spent = stream.decode_s

        ended = None if ended_ago_s is None else time.monotonic() - ended_ago_s
        result = await hear_again(stream, first, HeardVerdict(settled=settled), speech_ended=ended, due_s=0.85)
        await stream.aclose()
        return first, result, spent, stream.decode_s

    return asyncio.run(hear())


def test_hear_again_spends_a_decode_only_where_the_engine_would_not_settle(
    whisper: WhisperEngine, service: RadioService
) -> None:
    first, result, before, after = _hear_twice(whisper, service, settled=True)
    assert result is first and after == before  # settled: no second decode
    first, result, before, after = _hear_twice(whisper, service, settled=False)
    assert after > before and result.hearing.open_transcript == first.text
    assert "runway 07 right" in normalize_transcript(result.text)
    assert first.text.strip() == result.text.strip() or first.text.strip() in result.hearing.alternatives


def test_a_second_hearing_that_would_end_past_the_reply_due_time_is_not_started(
    whisper: WhisperEngine, service: RadioService
) -> None:
    """The first hearing stands where a second would end later than `due_s` after PTT release
    (the node is loaded or slow: the final came late); it runs where it ends in time."""
    from gateway.speech import rehearing

    saved = rehearing.DURATIONS.estimate_s
    try:
        rehearing.DURATIONS.estimate_s, rehearing.DURATIONS.skips = 0.3, 0  # second hearings lately took 0.3 s
        first, result, before, after = _hear_twice(whisper, service, settled=False, ended_ago_s=0.7)  # 0.7 + 0.3 > 0.85
        assert result is first and after == before
        first, result, before, after = _hear_twice(whisper, service, settled=False, ended_ago_s=-60.0)  # far ahead
        assert after > before and result.hearing.open_transcript == first.text
        assert rehearing.DURATIONS.estimate_s is not None and rehearing.DURATIONS.estimate_s != 0.3  # it learned
    finally:
        rehearing.DURATIONS.estimate_s = saved


@given(st.lists(st.floats(0.0, 5.0), min_size=1, max_size=20), st.floats(0.0, 2.0), st.floats(0.1, 2.0))
def test_the_due_time_estimate_stays_within_the_durations_seen(durations: list[float], elapsed: float, due: float) -> None:
    from gateway.speech.rehearing import Durations

    seen = Durations()
    for d in durations:
        seen.add(d)
    assert seen.estimate_s is not None and min(durations) - 1e-9 <= seen.estimate_s <= max(durations) + 1e-9
    assert seen.ends_in_time(elapsed, due) == (elapsed + seen.estimate_s <= due)
    for _ in range(500):
        if seen.ends_in_time(elapsed, due):
            break
        seen.skipped()
        assert seen.estimate_s >= min(durations) - 1e-9  # never below the fastest one seen
    # an estimate from a passing spike does not stop second hearings for good, where the
    # fastest one seen would still end in time
    assert seen.ends_in_time(elapsed, due) or elapsed + min(durations) > due - 1e-6


def test_no_second_hearing_without_a_lexicon(whisper: WhisperEngine) -> None:
    assert closed_hearing(whisper, SttContext(), espeak_pcm("runway zero seven right")) is None


def test_the_closed_hearing_writes_radio_words(whisper: WhisperEngine, service: RadioService) -> None:
    """The textbook readback of a clearance, heard again in closed vocabulary, keeps its values."""
    from engine.phraseology import speak_text

    session, opening, _ = service.create(flow="clearance", seed=5)
    clearance = service.transmit(session.session_id, opening.expected_pilot[0])
    context = stt_context(service.get(session.session_id), clearance.expected_pilot, radio_lexicon(service.registry))
    pcm = espeak_pcm(
        speak_text(clearance.expected_pilot[0])
    )  # "... climb six thousand feet, squawk fife seven two fife ..."
    result = closed_hearing(whisper, context, pcm)
    assert result is not None
    heard = normalize_transcript(result.text)
    assert "squawk 5725" in heard and "6000" in heard


def test_the_suppressed_tokens_are_those_outside_the_lexicon_and_the_sessions_words(
    whisper: WhisperEngine, service: RadioService
) -> None:
    """The shared lexicon's token set is made once and a session's own words are added per
    hearing: the list is exactly every token outside both (plus whisper's defaults)."""
    from gateway.speech.stt.whisper_closed import PUNCTUATION, suppressed_tokens

    whisper.load()
    tokenizer = whisper.tokenizer()
    lexicon = radio_lexicon(service.registry)
    own = frozenset({"zanzibar", "quokka", "runway"})  # words no flow has, and one it has
    default = (220, 50256)
    allowed: set[int] = set()
    for word in lexicon | own:
        for form in {word, word.capitalize(), word.upper()}:
            allowed.update(tokenizer.encode(" " + form))
            allowed.update(tokenizer.encode(form))
    for mark in (*PUNCTUATION, *(str(d) for d in range(10))):
        allowed.update(tokenizer.encode(mark))
        allowed.update(tokenizer.encode(" " + mark))
    expected = sorted({*default, *(t for t in range(tokenizer.eot) if t not in allowed)})
    assert suppressed_tokens(tokenizer, lexicon, own, default) == expected
    assert set(tokenizer.encode(" zanzibar")).isdisjoint(expected)  # the session's words are writable
    assert suppressed_tokens(tokenizer, lexicon, frozenset(), default) != expected  # and only its


# --- the third hearing (whisper base) ------------------------------------------------------------


@pytest.fixture(scope="module")
def with_base() -> WhisperEngine:
    """tiny.en with whisper base for the third hearing (the `bigger` extra, installed by make)."""
    engine = WhisperEngine(bigger=True)
    engine.load()
    assert engine.bigger_engine is not None, "whisper base is part of the test install (pyproject: bigger)"
    return engine


def _hear_out(
    engine: WhisperEngine,
    service: RadioService,
    settled_after: int,
    ended_ago_s: float | None = None,
    question: object = None,
    bigger_checks: bool = True,
) -> tuple[SttResult, SttResult, list[str]]:
    """`RUNWAY_READBACK` through the radio's whole chain (`hear_out`; `question`: the values to
    check, None: no checks; no confirming hearing), the engine settling from its `settled_after`-th
    dry run on (0: never); the first hearing, the result and what each dry run was asked about."""
    import time

    from gateway.speech.hearing_chain import hear_out

    pcm = espeak_pcm(RUNWAY_READBACK)
    context = SttContext(callsign="Lufthansa 359", lexicon=radio_lexicon(service.registry))
    asked: list[str] = []

    async def hear() -> tuple[SttResult, SttResult]:
        stream = engine.open(context)
        stream.feed(pcm)
        first = await final_result(stream)

        async def judge(heard: SttResult) -> HeardVerdict:
            asked.append(heard.text)
            return HeardVerdict(settled=0 < settled_after <= len(asked))

        async def ask(_heard: SttResult) -> object:
            return question

        ended = None if ended_ago_s is None else time.monotonic() - ended_ago_s
        checks = None if question is None else ask
        result = await hear_out(
            stream, first, judge, checks,  # type: ignore[arg-type]
            speech_ended=ended, due_s=0.85, bigger_due_s=1.5, bigger_checks=bigger_checks, confirm=False,
        )
        await stream.aclose()
        return first, result

    first, result = asyncio.run(hear())
    return first, result, asked


def test_where_the_second_hearing_does_not_settle_whisper_base_hears_a_third_time(
    with_base: WhisperEngine, service: RadioService
) -> None:
    """Not settled after the closed hearing: whisper base's transcript is read, with both
    earlier ones among its alternatives (a value they hear otherwise is asked again); the
    very first transcript stays the open one in the trace."""
    from gateway import metrics

    before = metrics.THIRD_HEARINGS.labels("heard_again")._value.get()
    first, result, asked = _hear_out(with_base, service, settled_after=0)
    assert metrics.THIRD_HEARINGS.labels("heard_again")._value.get() == before + 1
    assert len(asked) == 2 and asked[0] == first.text  # the first, the second hearing (asked once), then no more
    assert result.hearing.open_transcript == first.text
    assert with_base.bigger_engine is not None
    context = SttContext(callsign="Lufthansa 359", lexicon=radio_lexicon(service.registry))
    base = with_base.bigger_engine.decode_result(espeak_pcm(RUNWAY_READBACK), build_prompt(context))
    assert result.text == base.text  # whisper base's own decode of the same audio and prompt
    earlier = {a.strip() for a in result.hearing.alternatives}
    assert first.text.strip() == result.text.strip() or first.text.strip() in earlier
    assert asked[1].strip() == result.text.strip() or asked[1].strip() in earlier  # the closed hearing
    # base may write "runway nero seven right" where tiny.en heard "zero": the earlier hearings
    # stay among the alternatives, so the engine reads them all (engine.readback: unsure hearing)
    assert any("runway 07 right" in normalize_transcript(text) for text in [result.text, *earlier])


def test_no_third_hearing_where_the_second_settles_or_none_is_installed(
    with_base: WhisperEngine, whisper: WhisperEngine, service: RadioService
) -> None:
    """The engine would accept the closed hearing: whisper base is not spent; without whisper
    base (tiny.en alone) the chain ends after the second hearing, asking the engine nothing more."""
    from gateway import metrics

    before = metrics.THIRD_HEARINGS.labels("heard_again")._value.get()
    _first, result, asked = _hear_out(with_base, service, settled_after=2)
    assert len(asked) == 2 and result.text == asked[1]  # the second hearing's, no third
    _first, result, asked = _hear_out(whisper, service, settled_after=0)
    assert len(asked) == 2
    assert metrics.THIRD_HEARINGS.labels("heard_again")._value.get() == before


def test_a_third_hearing_that_would_end_past_its_due_time_is_not_started(
    with_base: WhisperEngine, service: RadioService
) -> None:
    """whisper base runs only where it would end within `bigger_due_s` of PTT release, by the
    recent third hearings' durations."""
    from gateway.speech import rehearing

    saved = rehearing.THIRD_HEARING.durations.estimate_s
    try:
        rehearing.THIRD_HEARING.durations.skips = 0  # not stale: no probe
        rehearing.THIRD_HEARING.durations.estimate_s = 1.49  # released just now: the second hearing runs,
        _first, result, asked = _hear_out(with_base, service, settled_after=0, ended_ago_s=0.0)  # then 1.49 is late
        assert len(asked) == 2 and result.hearing.open_transcript is not None
        assert result.text == asked[1]  # the second hearing's: the third was not started
    finally:
        rehearing.THIRD_HEARING.durations.estimate_s = saved


def test_values_still_unsure_after_the_third_hearing_are_scored_by_whisper_base_too(
    with_base: WhisperEngine, service: RadioService
) -> None:
    """Never settling: the values are checked by tiny.en after the second hearing and after the
    third, then once more scored by whisper base; its checks (marked `bigger`) join tiny.en's and
    are whisper base's own scores of the same audio and question."""
    from engine.value_query import query
    from gateway.speech.stt.whisper_scoring import check_values as score_values

    asked = query("Lufthansa three five nine, runway zero seven the sierra", {"runway": ("runway", "07R")})
    assert asked is not None and with_base.bigger_engine is not None
    _first, result, dry_runs = _hear_out(with_base, service, settled_after=0, question=asked)
    checks = result.hearing.checks
    tiny = [c for c in checks if not c.bigger]
    base = [c for c in checks if c.bigger]
    assert tiny and base and checks == [*tiny, *base]  # tiny.en's first, whisper base's added
    context = SttContext(callsign="Lufthansa 359", lexicon=radio_lexicon(service.registry))
    own = score_values(with_base.bigger_engine, espeak_pcm(RUNWAY_READBACK), build_prompt(context), asked)
    assert [c.model_copy(update={"bigger": False}) for c in base] == own
    # the first, the second hearing, it with tiny.en's checks, the third, the third with its checks
    assert len(dry_runs) == 5


def test_whisper_base_scores_nothing_where_its_checks_are_switched_off(
    with_base: WhisperEngine, service: RadioService
) -> None:
    """`LIVEFREQ_BIGGER_VALUE_CHECKS=false`: whisper base still hears a third time and tiny.en
    checks the values of its transcript, but whisper base scores none (step 4 is not run), so
    the two can be compared on the same recordings."""
    from engine.value_query import query

    asked = query("Lufthansa three five nine, runway zero seven the sierra", {"runway": ("runway", "07R")})
    _first, result, dry_runs = _hear_out(with_base, service, settled_after=0, question=asked, bigger_checks=False)
    assert result.hearing.checks and not any(c.bigger for c in result.hearing.checks)
    assert len(dry_runs) == 4  # the first, the second, it with tiny.en's checks, the third


def test_no_check_by_whisper_base_where_there_is_no_third_hearing(whisper: WhisperEngine, service: RadioService) -> None:
    """tiny.en alone: the chain checks the values once and scores none by whisper base."""
    from engine.value_query import query

    asked = query("Lufthansa three five nine, runway zero seven the sierra", {"runway": ("runway", "07R")})
    _first, result, _dry_runs = _hear_out(whisper, service, settled_after=0, question=asked)
    assert result.hearing.checks and not any(c.bigger for c in result.hearing.checks)


def test_the_third_hearing_leaves_a_worker_free_for_another_pilots_final() -> None:
    """The second hearing starts on any idle worker; whisper base only where another stays free
    (`CpuPool.spare`): on a node where pilots talk, its 0.35 s would hold up their finals."""
    import threading

    from gateway.speech.cpu import Priority, cpu_pool
    from gateway.speech.rehearing import SECOND_HEARING, THIRD_HEARING

    pool = cpu_pool()
    assert pool.busy == 0 and pool.queued == 0
    assert SECOND_HEARING.may_start(None, None) and THIRD_HEARING.may_start(None, None)
    release = threading.Event()
    job = pool.submit(release.wait, Priority.FINAL)  # one worker busy with another pilot's final
    try:
        while pool.busy == 0:
            release.wait(0.001)
        if pool.workers > 1:
            assert SECOND_HEARING.may_start(None, None)
        assert not THIRD_HEARING.may_start(None, None)
    finally:
        release.set()
        job.result(timeout=5)


def test_a_decode_skipped_as_late_again_and_again_is_measured_again() -> None:
    """One slow decode must not keep every later one late for good: after `PROBE_AFTER` skipped
    in a row, one starts anyway where a worker is idle (counted `probe`), and a faster measure
    brings the estimate down (stop 66: a first rival check of 1.35 s, due 1.5 s, kept the next 64
    late)."""
    import time

    from gateway import metrics
    from gateway.speech.rehearing import PROBE_AFTER, SpareDecode

    spare = SpareDecode(metrics.RIVAL_CHECKS, "rival_check", queued=True)
    spare.durations.add(1.35)  # the one slow first measure: the estimate and the fastest seen
    late, probes = (metrics.RIVAL_CHECKS.labels(k)._value.get() for k in ("late", "probe"))
    started = [spare.may_start(time.monotonic() - 0.4, 1.5) for _ in range(PROBE_AFTER + 1)]
    assert started == [False] * PROBE_AFTER + [True]
    assert metrics.RIVAL_CHECKS.labels("late")._value.get() == late + PROBE_AFTER
    assert metrics.RIVAL_CHECKS.labels("probe")._value.get() == probes + 1
    spare.durations.add(0.5)  # the probe ran fast: no longer stale, and the estimate falls
    assert not spare.durations.stale and spare.durations.fastest_s == 0.5
    while not spare.may_start(time.monotonic() - 0.4, 1.5):  # each skip decays it to the fastest
        assert not spare.durations.stale
    assert spare.durations.estimate_s is not None and spare.durations.estimate_s <= 1.1


@contextlib.contextmanager
def _every_worker_busy(spare: SpareDecode) -> Iterator[None]:
    """Every worker of the CPU pool held by another pilot's final, and `spare` with an estimate
    of this test's own (no earlier test's durations)."""
    import threading

    from gateway.speech.cpu import Priority, cpu_pool
    from gateway.speech.rehearing import Durations

    pool = cpu_pool()
    kept, spare.durations = spare.durations, Durations()
    release = threading.Event()
    jobs = [pool.submit(release.wait, Priority.FINAL) for _ in range(pool.workers)]
    try:
        while pool.busy < pool.workers:
            release.wait(0.001)
        yield
    finally:
        spare.durations = kept
        release.set()
        for job in jobs:
            job.result(timeout=5)


def test_a_queued_confirming_hearing_waits_its_turn_where_no_worker_is_free() -> None:
    """The confirming hearing needs a worker left free for another pilot's final; asked for
    queued (`LIVEFREQ_CONFIRM_HEARING_QUEUED`), it waits its turn among the finals instead, and
    like every spare decode is not started where it would end past its due time."""
    import time

    from gateway.speech.rehearing import CONFIRM_HEARING, CONFIRM_QUEUED

    assert Settings().confirm_hearing_queued is False
    assert Settings(confirm_hearing_queued="true").confirm_hearing_queued is True  # type: ignore[arg-type]
    with _every_worker_busy(CONFIRM_QUEUED):
        assert not CONFIRM_HEARING.may_start(None, None)
        assert CONFIRM_QUEUED.may_start(None, None)
        CONFIRM_QUEUED.durations.add(1.0)
        assert CONFIRM_QUEUED.may_start(time.monotonic(), 1.5)
        assert not CONFIRM_QUEUED.may_start(time.monotonic() - 0.6, 1.5)  # 0.6 s gone, 1.0 s more: late


def test_a_check_of_rivals_alone_waits_its_turn_where_no_worker_is_idle() -> None:
    """A value check starts only on an idle worker; a check of rivals alone (a limit heard right
    under the prompt that named it: nothing else can accept it) waits in the queue instead, and
    like every spare decode is not started where it would end past its due time."""
    import time

    from gateway import metrics
    from gateway.speech.checking import RIVAL_CHECK, VALUE_CHECK

    with _every_worker_busy(RIVAL_CHECK):
        assert not VALUE_CHECK.may_start(None, None)
        assert RIVAL_CHECK.may_start(None, None)
        RIVAL_CHECK.durations.add(0.3)
        assert RIVAL_CHECK.may_start(time.monotonic(), 1.5)
        late = (metrics.RIVAL_CHECKS.labels("late")._value.get(), metrics.VALUE_CHECKS.labels("late")._value.get())
        assert not RIVAL_CHECK.may_start(time.monotonic() - 1.4, 1.5)  # 1.4 s gone, 0.3 s more: late
        # counted as the rival check's own, apart from the value checks' (/metrics)
        after = (metrics.RIVAL_CHECKS.labels("late")._value.get(), metrics.VALUE_CHECKS.labels("late")._value.get())
        assert after == (late[0] + 1, late[1])


def test_a_frequency_heard_right_but_written_short_is_decided_by_its_rival_alone(
    with_base: WhisperEngine, service: RadioService
) -> None:
    """Where the engine's only doubt is a frequency written short (`engine/value_rivals.py`), the
    chain checks its rival in the audio and stops: no second or third hearing (which could not
    tell "five" from "five five" apart where the first did not), and no check of the issued
    value, which was heard; the rival is scored at every tempo."""
    from engine.value_query import query
    from gateway.speech.stt.whisper_scoring import TEMPOS

    said = "Lufthansa three five nine, runway zero seven right, tower one three six decimal five"
    asked = query(said, {"tower_freq": ("frequency", "136.500")}, rivals={"tower_freq": said}, rivalled=["tower_freq"])
    assert asked is not None and all(h.rival for h in asked.hypotheses)
    first, result, dry_runs = _hear_out(with_base, service, settled_after=0, question=asked)
    assert result.text == first.text and dry_runs == [first.text]  # no other hearing
    assert result.hearing.checks and all(c.rival and not c.bigger for c in result.hearing.checks)
    assert {c.tempo for c in result.hearing.checks} == set(TEMPOS)
