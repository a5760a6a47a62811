"""A second hearing for a transmission the engine would not understand as heard.

Whisper writes any English: a garbled readback ("runway near o salmon right") is neither right
nor wrong, and the controller has to ask again. Before that, the radio hears the same audio once
more with only the radio's words allowed (`gateway.speech.stt.whisper_closed`), and hands the
engine that transcript with the first one among its alternatives: where the two disagree on a
value the engine still asks "say again" (`engine.readback`), so the second hearing can make a
value legible but cannot overrule one the first hearing heard clearly.

It costs a decode, so it is only spent where it can help: the engine, on a copy of the session
(`Decision.settled`), would not accept the first transcript. Over the readback bench's 300
recordings (docs/performance.md) that is about 40 % of readbacks with robot pilot voices and
15 % with human-sounding ones.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from gateway import metrics
from gateway.speech.stt.base import SttResult, SttStream
from gateway.speech.stt.whisper_closed import second_hearing


async def hear_again(
    stream: SttStream, first: SttResult, settles: Callable[[SttResult], Awaitable[bool]]
) -> SttResult:
    """`first`, or the second hearing of `stream`'s audio where `settles(first)` says the engine
    would not understand it and the engine can hear in closed vocabulary (whisper, short audio)."""
    closed_result = getattr(stream, "closed_result", None)
    if closed_result is None or await settles(first):
        return first
    started = time.monotonic()
    closed: SttResult | None = await closed_result()
    metrics.observe_stage("second_hearing", time.monotonic() - started)
    return first if closed is None else second_hearing(first, closed)
