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
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from engine.models import Hearing
from gateway import metrics
from gateway.speech.cpu import cpu_pool
from gateway.speech.stt.base import SttResult, SttStream, unique_alternatives


async def hear_again(stream: SttStream, first: SttResult, settles: Callable[[SttResult], Awaitable[bool]]) -> SttResult:
    """`first`, or the second hearing of `stream`'s audio where `settles(first)` says the engine
    would not understand it and the engine can hear in closed vocabulary (whisper, short audio)."""
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
