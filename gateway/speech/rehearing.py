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
two), it only asks again more often. `LIVEFREQ_SECOND_HEARING=false` turns it off.

Then, before a correction: where the engine would say "negative" to what was heard (a readback
value other than the issued one), the audio is heard once more prompted with nothing of the
state (`neutral_result`, `confirm_correction`), and that transcript joins the alternatives. A
field it does not also hear wrong is no longer corrected but asked again (`engine.readback`:
alternatives that disagree make a field unsure), so a pilot who read back right is not told
"negative" on one hearing's word. It can only turn a correction into "say again", never into an
acceptance. Measured on the recorded voice benches (seeds 0, 3, 4, 5; the bench's unprompted
runs as that hearing): correct readbacks refused 26 -> 13 of 833, asked again 269 -> 282, wrong
readbacks corrected 131 -> 116 (the others asked again), none accepted.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from engine.models import Hearing
from gateway import metrics
from gateway.speech.cpu import cpu_pool
from gateway.speech.stt.base import SttResult, SttStream, unique_alternatives


Judge = Callable[[SttResult], Awaitable[bool]]


async def hear_again(stream: SttStream, first: SttResult, settles: Judge, refuses: Judge | None = None) -> SttResult:
    """`first`, or the second hearing of `stream`'s audio where `settles(first)` says the engine
    would not understand it and the engine can hear in closed vocabulary (whisper, short audio);
    then, where `refuses` says the engine would correct what was heard, `confirm_correction`."""
    heard = await _closed_hearing(stream, first, settles)
    return heard if refuses is None else await confirm_correction(stream, heard, refuses)


async def confirm_correction(stream: SttStream, heard: SttResult, refuses: Judge) -> SttResult:
    """`heard`, with a neutral hearing of the same audio among its alternatives where the engine
    would correct it (`refuses`) and a CPU worker is idle (the module docstring)."""
    neutral_result = getattr(stream, "neutral_result", None)
    if neutral_result is None or not await refuses(heard):
        return heard
    if not cpu_pool().idle():
        metrics.SECOND_HEARINGS.labels("correction_busy").inc()
        return heard
    neutral: SttResult | None = await neutral_result()
    if neutral is None or not neutral.text.strip():
        metrics.SECOND_HEARINGS.labels("correction_unheard").inc()
        return heard
    metrics.SECOND_HEARINGS.labels("correction_checked").inc()
    alternatives = unique_alternatives(heard.text, [*heard.hearing.alternatives, neutral.text])
    return SttResult(heard.text, heard.hearing.model_copy(update={"alternatives": alternatives}))


async def _closed_hearing(stream: SttStream, first: SttResult, settles: Judge) -> SttResult:
    closed_result = getattr(stream, "closed_result", None)
    if closed_result is None or await settles(first):
        return first
    if not cpu_pool().idle():
        metrics.SECOND_HEARINGS.labels("busy").inc()
        return first
    started = time.monotonic()
    closed: SttResult | None = await closed_result()
    metrics.SECOND_HEARINGS.labels("none" if closed is None else "heard_again").inc()
    if closed is None:
        return first
    metrics.observe_stage("second_hearing", time.monotonic() - started)
    return second_hearing(first, closed)


def second_hearing(first: SttResult, closed: SttResult) -> SttResult:
    """The closed decode as the transcript, and the open one first among its alternatives: a
    value the two hear differently is not judged but asked again (`engine.readback`)."""
    if not closed.text:
        return first
    alternatives = [first.text, *closed.hearing.alternatives, *first.hearing.alternatives]
    hearing = Hearing(
        alternatives=unique_alternatives(closed.text, [a for a in alternatives if a]),
        cut_off=first.hearing.cut_off,
        confidence=closed.hearing.confidence,
        open_transcript=first.text,
    )
    return SttResult(closed.text, hearing)
