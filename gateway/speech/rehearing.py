"""A second hearing for a transmission the engine would not understand as heard.

Whisper writes any English: a garbled readback ("runway near o salmon right") is neither right
nor wrong, and the controller has to ask again. Before that, the radio hears the same audio once
more with only the radio's words allowed (`gateway.speech.stt.whisper_closed`), and hands the
engine that transcript with the first one among its alternatives: where the two disagree on a
value the engine still asks "say again" (`engine.readback`), so the second hearing can make a
value legible but cannot overrule one the first hearing heard clearly.

It costs a decode, so it is only spent where it can help: the engine, on a copy of the session
(`Decision.settled`), would not accept the first transcript; and only while a worker of the CPU
pool is idle (`CpuPool.idle`), so it never queues in front of another pilot's final. Under load
the first hearing stands: as safe (0 wrong readbacks accepted on the bench with one hearing or
two), it only asks again more often. And only while the reply can still come within the second
promised from PTT release (issue 17): where the first final came late (a queue on a loaded or
slow node) and a second hearing as long as the recent ones would end past its due time
(`LIVEFREQ_SECOND_HEARING_DUE_S`, 0.85 s after PTT release: the reply is due at 1 s, and the
decision and the first synthesized audio take 25-80 ms at p95 under load), the first hearing
stands too. Measured on a slow host (self-test 0.36 CPU-s per decode, 36 pilots offered
1.5x for 120 s): the second hearing ran on 59 of 188 transmissions at p50 424 ms and carried
p95 to 1,316 ms; with none, p95 951 ms (and 97 "say again" against 57).
`LIVEFREQ_SECOND_HEARING=false` turns it off.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from engine.hearing import HeardVerdict, Hearing, HearingStep
from gateway import metrics
from gateway.speech.cpu import cpu_pool
from gateway.speech.stt.base import SttResult, SttStream, unique_alternatives

# the engine's verdict on a hearing, from a dry run on a copy of the session (the radio's service,
# or the bench's engine): what every step asks before it spends a decode
Judge = Callable[[SttResult], Awaitable[HeardVerdict]]

_EWMA = 0.3  # weight of the newest second hearing in the estimate of the next one's duration
# Each one not started shrinks the estimate by this factor: no hearing runs to correct an estimate
# taken in a passing spike, so it decays until one is tried again.
_DECAY = 0.9
# ... and after this many skipped in a row, one starts anyway where a worker is idle, to measure
# again: decayed only down to the fastest one seen, an estimate set by one slow decode (a first
# rival check behind a queue, 1.35 s against a due time of 1.5 s) kept every later one late for
# the process's life (`livefreq load --sessions 20`, stop 66: 64 rival checks of 65 skipped, and
# "say again" three times as often)
PROBE_AFTER = 8


class Durations:
    """How long second hearings take on this node lately (an exponentially weighted mean), never
    less than the fastest one seen: decayed below that, a decode started on a busy node ended
    past its due time (value checks, rare, at p50 775 ms on a node offered 1.5x its capacity)."""

    def __init__(self) -> None:
        self.estimate_s: float | None = None
        self.fastest_s: float | None = None
        self.skips = 0  # skipped as late in a row since the last one ran

    def add(self, seconds: float) -> None:
        self.estimate_s = seconds if self.estimate_s is None else (1 - _EWMA) * self.estimate_s + _EWMA * seconds
        self.fastest_s = seconds if self.fastest_s is None else min(self.fastest_s, seconds)
        self.skips = 0

    def skipped(self) -> None:
        self.skips += 1
        if self.estimate_s is not None:
            self.estimate_s = max(self.estimate_s * _DECAY, self.fastest_s or 0.0)

    @property
    def stale(self) -> bool:
        """Skipped as late `PROBE_AFTER` times in a row: the estimate is worth measuring again."""
        return self.skips >= PROBE_AFTER

    def ends_in_time(self, elapsed_s: float, due_s: float) -> bool:
        """Whether a second hearing starting `elapsed_s` after the speech ended would end by
        `due_s` (unknown before the first one: it runs, and teaches the estimate)."""
        return self.estimate_s is None or elapsed_s + self.estimate_s <= due_s


class SpareDecode:
    """A decode beyond the final (the second hearing, the value check), spent only while a CPU
    worker is idle and where it would end within `due_s` of PTT release by the recent ones'
    durations; `counter` counts what kept one from starting (busy, late) and the ones started past
    their estimate to measure it again (probe: after `PROBE_AFTER` skipped in a row, on an idle
    worker), `stage` times those run.
    `queued`: a decode the verdict cannot do without (the rivals of a value heard right, a
    clearance limit's cities), which waits its turn among the finals instead of needing an idle
    worker, and is still not started where it would end late."""

    def __init__(self, counter: Any, stage: str, leave_one_free: bool = False, queued: bool = False) -> None:
        self.counter = counter
        self.stage = stage
        self.durations = Durations()
        # as partials: only where a worker stays free for another pilot's final (`CpuPool.spare`)
        self.leave_one_free = leave_one_free
        self.queued = queued

    def may_start(self, speech_ended: float | None, due_s: float | None) -> bool:
        pool = cpu_pool()
        if not self.queued and not (pool.spare() if self.leave_one_free else pool.idle()):
            self.counter.labels("busy").inc()
            return False
        if speech_ended is not None and due_s is not None:
            if not self.durations.ends_in_time(time.monotonic() - speech_ended, due_s):
                if self.durations.stale and pool.idle():  # measured again, on a node not saturated
                    self.counter.labels("probe").inc()
                    return True
                self.counter.labels("late").inc()
                self.durations.skipped()
                return False
        return True

    def spent(self, seconds: float) -> None:
        self.durations.add(seconds)
        metrics.observe_stage(self.stage, seconds)


SECOND_HEARING = SpareDecode(metrics.SECOND_HEARINGS, "second_hearing")
# whisper base takes a worker about 0.35 s: on a node where other pilots talk it would hold up
# their finals (measured with 50 pilots: their p95 release-to-final 385 -> 485 ms), so it runs
# only where another worker stays free
THIRD_HEARING = SpareDecode(metrics.THIRD_HEARINGS, "third_hearing", leave_one_free=True)
# the same decode for a readback the engine would accept: never in front of another pilot's final
CONFIRM_HEARING = SpareDecode(metrics.CONFIRM_HEARINGS, "confirm_hearing", leave_one_free=True)
# ... or, asked for (`LIVEFREQ_CONFIRM_HEARING_QUEUED`), in its turn among the finals like a rival
# check: under load a readback is confirmed as on a quiet frequency, while it can end in time
CONFIRM_QUEUED = SpareDecode(metrics.CONFIRM_HEARINGS, "confirm_hearing", queued=True)
DURATIONS = SECOND_HEARING.durations


async def hear_again(
    stream: SttStream,
    first: SttResult,
    verdict: HeardVerdict,
    speech_ended: float | None = None,
    due_s: float | None = None,
) -> SttResult:
    """`first`, or the second hearing of `stream`'s audio where the engine would not understand
    it (`verdict`: its answer to `first`) and the engine can hear in closed vocabulary (whisper,
    short audio). `speech_ended` (`time.monotonic()` at PTT release): the radio's; with it, a
    second hearing that would end more than `due_s` after it is not started (None: no limit).
    The readback bench leaves it out: it measures the hearing of an idle node, as the idle-worker
    rule does."""
    closed_result = getattr(stream, "closed_result", None)
    return await _hear(SECOND_HEARING, "second", closed_result, first, verdict, speech_ended, due_s)


async def hear_bigger(
    stream: SttStream,
    heard: SttResult,
    verdict: HeardVerdict,
    speech_ended: float | None = None,
    due_s: float | None = None,
) -> SttResult:
    """`heard`, or the third hearing of `stream`'s audio (whisper base,
    `gateway.speech.stt.whisper_bigger`) where the engine would not accept it (`verdict`: its
    answer to `heard`), on the same idle and due-time rules as the second (its own duration
    estimate)."""
    return await _hear(THIRD_HEARING, "third", _bigger_decode(stream), heard, verdict, speech_ended, due_s)


async def confirm_bigger(
    stream: SttStream,
    first: SttResult,
    verdict: HeardVerdict,
    judge: Judge,
    speech_ended: float | None = None,
    due_s: float | None = None,
    queued: bool = False,
) -> SttResult:
    """`first`, which the engine would accept (`verdict`: as first heard, or after its rivals'
    check, the second hearing or the checks in the audio), or, where whisper base hears one of its
    readback's values as another, `first` with base's transcript first among its alternatives:
    the engine then asks that value again ("heard ok, an alternative wrong").

    Why: tiny.en, told the issued values by its prompt, can write a changed value as the issued one
    in every hearing with nothing doubted (seed 170 #259, 1003 written 1002; seed 169 #270, four
    thousand written five): no rule of words tells that from the right readback, a bigger model's
    ear can. Base is asked only where some field was heard right (`HeardVerdict.heard_ok`), and
    only a value its best transcript, judged alone, reads as another counts (one it garbles or
    loses does not: tiny.en heard that one). On the third hearing's rules (a worker stays free,
    it ends by `due_s`): under load the first hearing stands, unless `queued`
    (`CONFIRM_QUEUED`: in its turn among the finals, still only where it ends in time)."""
    spare = CONFIRM_QUEUED if queued else CONFIRM_HEARING
    decode = _bigger_decode(stream)
    if decode is None or not verdict.heard_ok:
        return first
    if not spare.may_start(speech_ended, due_s):
        return first
    started = time.monotonic()
    again = await decode()
    if again is None or not again.text.strip():
        spare.counter.labels("none").inc()
        return first
    spare.spent(time.monotonic() - started)
    if not (await judge(SttResult(again.text, Hearing(confidence=again.hearing.confidence)))).heard_wrong:
        spare.counter.labels("confirmed").inc()
        return first
    spare.counter.labels("otherwise").inc()
    # base's best transcript first, then the first hearing's alternatives, then base's other ones
    base = _written_by("confirming", [again.text, *again.hearing.alternatives])
    alternatives, heard_by = _sourced(first.text, [base[0], *_sources(first), *base[1:]])
    return SttResult(first.text, first.hearing.model_copy(update={"alternatives": alternatives, "heard_by": heard_by}))


def _bigger_decode(stream: SttStream) -> Callable[[], Awaitable[SttResult | None]] | None:
    """Whisper base's decode of `stream`'s audio, where the stream can hear a third time."""
    return stream.bigger_result if getattr(stream, "hears_bigger", False) else None  # type: ignore[attr-defined]


async def _hear(
    spare: SpareDecode,
    step: HearingStep,
    decode: Callable[[], Awaitable[SttResult | None]] | None,
    heard: SttResult,
    verdict: HeardVerdict,
    speech_ended: float | None,
    due_s: float | None,
) -> SttResult:
    """`heard` with one more hearing by `decode` (None: the stream has none), where the engine
    would not accept `heard` (`verdict`) and `spare` lets it start."""
    if decode is None or verdict.settled:
        return heard
    if not spare.may_start(speech_ended, due_s):
        return heard
    started = time.monotonic()
    again = await decode()
    spare.counter.labels("none" if again is None else "heard_again").inc()
    if again is None:
        return heard
    spare.spent(time.monotonic() - started)
    return second_hearing(heard, again, step)


def second_hearing(first: SttResult, closed: SttResult, step: HearingStep = "second") -> SttResult:
    """The later decode (`closed`: in the radio's words, or by whisper base: `step`) as the
    transcript, and the earlier one first among its alternatives: a value they hear differently is
    not judged but asked again (`engine.readback`). `open_transcript` stays the very first
    hearing's; `heard_by` says which hearing wrote each alternative."""
    if not closed.text:
        return first
    sources = [(first.text, first.hearing.by), *_written_by(step, closed.hearing.alternatives), *_sources(first)]
    alternatives, heard_by = _sourced(closed.text, sources)
    hearing = Hearing(
        alternatives=alternatives,
        cut_off=first.hearing.cut_off,
        confidence=closed.hearing.confidence,
        open_transcript=first.hearing.open_transcript or first.text,
        told=first.hearing.told or closed.hearing.told,
        by=step,
        heard_by=heard_by,
    )
    return SttResult(closed.text, hearing)


def _sources(heard: SttResult) -> list[tuple[str, HearingStep]]:
    """`heard`'s alternatives, each with the hearing that wrote it."""
    return [(a, heard.hearing.source(a)) for a in heard.hearing.alternatives]


def _written_by(step: HearingStep, texts: list[str]) -> list[tuple[str, HearingStep]]:
    """`texts`, each as written by the hearing `step`."""
    return [(text, step) for text in texts]


def _sourced(text: str, sources: list[tuple[str, HearingStep]]) -> tuple[list[str], dict[str, HearingStep]]:
    """The alternatives to `text` among `sources` (`unique_alternatives`, in order), and which
    hearing wrote each one a later hearing brought (the first to write it)."""
    alternatives = unique_alternatives(text, [a for a, _step in sources])
    wrote: dict[str, HearingStep] = {}
    for alternative, step in sources:
        wrote.setdefault(alternative.strip(), step)
    return alternatives, {a: wrote[a] for a in alternatives if wrote[a] != "first"}
