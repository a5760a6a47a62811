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

After the third hearing (`gateway.speech.hearing_chain`) the values still unsure are checked once
more, scored by its whisper base (`bigger`): another model's reading of the same audio, on the
engine's same thresholds. Its checks join the earlier ones (`ValueCheck.bigger`), and like the
third hearing it starts only where another CPU worker stays free. Measured offline on the
recordings of seeds 20, 21 and 47 (every check labelled by the field the pilot changed or
dropped): right readbacks asked again 93 -> 76 of 612, none wrong accepted, no check of a
changed or dropped value passing (docs/performance.md, "Checks scored by whisper base").
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from engine.value_query import ValueQuery
from gateway import metrics
from gateway.speech.rehearing import SpareDecode
from gateway.speech.stt.base import SttResult, SttStream

VALUE_CHECK = SpareDecode(metrics.VALUE_CHECKS, "value_check")
# a value heard right but rivalled (a frequency written short; a clearance limit the prompt named,
# every clearance readback heard right) is accepted only after its rivals are scored: waiting for an idle
# worker, 20 pilots on 2 cores had 4 more of 55 readbacks asked again (docs/performance.md, stop 55)
RIVAL_CHECK = SpareDecode(metrics.RIVAL_CHECKS, "rival_check", queued=True)
# whisper base scores at about twice tiny.en's cost: as its hearing, only where a worker stays free
BIGGER_VALUE_CHECK = SpareDecode(metrics.BIGGER_VALUE_CHECKS, "bigger_value_check", leave_one_free=True)
DURATIONS = VALUE_CHECK.durations


async def check_values(
    stream: SttStream,
    heard: SttResult,
    ask: Callable[[SttResult], Awaitable[ValueQuery | None]],
    speech_ended: float | None = None,
    due_s: float | None = None,
    bigger: bool = False,
    rivals: bool = False,
) -> SttResult:
    """`heard` with the recognizer's checks of the values `ask(heard)` names (None: nothing to
    check) in its hearing (`bigger`: scored by whisper base, added to the checks it has);
    `heard` as it is where the recognizer cannot check, the CPU pool is busy, or a check would
    end more than `due_s` after `speech_ended` (see the module doc): both known before the
    engine is asked, so there is no dry run of the engine under load. `rivals`: the engine asks
    about rivals alone (`RIVAL_CHECK`: queued, not only on an idle worker)."""
    checker = getattr(stream, "check_values", None)
    spare = BIGGER_VALUE_CHECK if bigger else RIVAL_CHECK if rivals else VALUE_CHECK
    if checker is None or (bigger and not getattr(stream, "hears_bigger", False)):
        return heard
    if not spare.may_start(speech_ended, due_s):
        return heard
    query = await ask(heard)
    if query is None:
        spare.counter.labels("unneeded").inc()
        return heard
    started = time.monotonic()
    until = None if speech_ended is None or due_s is None else speech_ended + due_s
    checks = await checker(query, until, bigger=bigger)
    # the estimate is of the first tempo's: the recognizer starts another only while it fits
    spare.spent((time.monotonic() - started) / max(1, len({c.tempo for c in checks})))
    spare.counter.labels("checked" if checks else "none").inc()
    if not checks:
        return heard
    kept = [*heard.hearing.checks, *checks] if bigger else checks
    return SttResult(heard.text, heard.hearing.model_copy(update={"checks": kept}))
