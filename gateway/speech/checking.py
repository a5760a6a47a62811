"""Checking unsure values in the audio before the controller asks "say again".

After the first hearing (and the second, `gateway.speech.rehearing`), a voice readback the engine
would still not accept because a value is unsure or missing is asked about once more: the engine
states which issued values to check (`SessionEngine.value_query`, on a copy of the session), the
recognizer scores the transcript with each one in place (`WhisperStream.check_values`), and the
answers go to the engine with the hearing (`Hearing.checks`), which confirms a value only on its
own thresholds (`engine.value_check`). A recognizer without it (pocketsphinx, vosk) answers
nothing, and the controller asks again as before.

Like the second hearing it costs a decode (0.2-0.3 s on one core), so it runs only where it can
help, while a CPU worker is idle, and only while the reply can still come within the second
promised from PTT release (`LIVEFREQ_SECOND_HEARING_DUE_S`, with its own estimate of how long a
check takes). `LIVEFREQ_VALUE_CHECKS=false` turns it off, and `LIVEFREQ_SECOND_HEARING=false`
with the second hearing.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from engine.value_check import ValueQuery
from gateway import metrics
from gateway.speech.cpu import cpu_pool
from gateway.speech.rehearing import Durations
from gateway.speech.stt.base import SttResult, SttStream

DURATIONS = Durations()


async def check_values(
    stream: SttStream,
    heard: SttResult,
    ask: Callable[[SttResult], Awaitable[ValueQuery | None]],
    speech_ended: float | None = None,
    due_s: float | None = None,
) -> SttResult:
    """`heard` with the recognizer's checks of the values `ask(heard)` names (None: nothing to
    check) in its hearing; `heard` as it is where the recognizer cannot check, the CPU pool is
    busy, or a check would end more than `due_s` after `speech_ended` (see the module doc): both
    known before the engine is asked."""
    checker = getattr(stream, "check_values", None)
    if checker is None:
        return heard
    if not cpu_pool().idle():  # known before asking: no dry run of the engine under load
        metrics.VALUE_CHECKS.labels("busy").inc()
        return heard
    if speech_ended is not None and due_s is not None and not DURATIONS.ends_in_time(time.monotonic() - speech_ended, due_s):
        metrics.VALUE_CHECKS.labels("late").inc()
        DURATIONS.skipped()
        return heard
    query = await ask(heard)
    if query is None:
        metrics.VALUE_CHECKS.labels("unneeded").inc()
        return heard
    started = time.monotonic()
    checks = await checker(query)
    took = time.monotonic() - started
    DURATIONS.add(took)
    metrics.observe_stage("value_check", took)
    metrics.VALUE_CHECKS.labels("checked" if checks else "none").inc()
    if not checks:
        return heard
    return SttResult(heard.text, heard.hearing.model_copy(update={"checks": checks}))
