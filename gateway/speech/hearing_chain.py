"""What the radio does with a voice transmission the engine would not accept as first heard.

One order, for the WebSocket radio (`gateway.radio.pipeline`) and the readback bench alike
(`tooling.bench.readback_voice`), each step only while the engine would still not accept what
was heard (`judge`, a dry run on a copy of the session, asked once per hearing):

0. where the engine's only doubts are values heard right but rivalled (a frequency written short,
   a clearance limit the prompt named), their rivals checked in the audio
   (`engine/value_rivals.py`), within `bigger_due_s`, and nothing else: waiting its turn among
   the finals where no worker is idle (`checking.RIVAL_CHECK`), as no other step can accept them;
1. the second hearing, in the radio's words (`gateway.speech.rehearing.hear_again`);
2. the unsure or missing values checked in the audio (`gateway.speech.checking`);
3. the third hearing, by whisper base (`gateway.speech.stt.whisper_bigger`), and its values
   checked in the audio again;
4. the values still unsure checked once more, scored by whisper base itself (`checking`).

A readback the engine would accept before whisper base heard it (as first heard, after its
rivals' check, after the second hearing or after the checks in the audio) is heard by base too,
and a value base hears as another is asked again (`gateway.speech.rehearing.confirm_bigger`: a
changed value tiny.en wrote as the issued one, with nothing doubted), within `bigger_due_s`
like the third hearing: "readback correct" may wait for base, since on a slower host (base 1.1 s
idle) the reply's second would leave no time for it, and a wrong value accepted is the one
error the radio must not make.

Each is a spare decode: it starts only while a CPU worker is idle and where it would end in time,
steps 1-2 within `due_s` of PTT release (the reply's second), steps 3-4 within `bigger_due_s`: they
run only where the controller would otherwise say "say again" and the pilot repeat the whole
transmission, so half a second more is the better reply there; and only where another worker
stays free for another pilot's final (whisper base holds one about 0.35 s). Under load none of
them runs and the first hearing stands. Measured with `livefreq load --sessions 50 --duration
60` (the product's own voice, 2 cores): p95 release-to-reply 694 ms with two hearings, 840 ms
with the third (6 of 90 transmissions), 1,167 ms before the free-worker rule.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from engine.hearing import HeardVerdict
from engine.value_query import ValueQuery
from gateway.speech.checking import check_values
from gateway.speech.rehearing import Judge, confirm_bigger, hear_again, hear_bigger
from gateway.speech.stt.base import SttResult, SttStream

Ask = Callable[[SttResult], Awaitable[ValueQuery | None]]


async def hear_out(
    stream: SttStream,
    first: SttResult,
    judge: Judge,
    ask: Ask | None,
    *,
    speech_ended: float | None = None,
    due_s: float | None = None,
    bigger_due_s: float | None = None,
    bigger_checks: bool = True,
    confirm: bool = True,
    confirm_queued: bool = False,
) -> SttResult:
    """`first`, or what the steps above make of it (see the module doc). `judge`: the engine's
    verdict on a hearing (a dry run), asked once per hearing; `ask` None: no values checked;
    `bigger_checks` False: no step 4 (`LIVEFREQ_BIGGER_VALUE_CHECKS`); `confirm` False: no
    confirming hearing (`LIVEFREQ_CONFIRM_HEARING`), `confirm_queued` True: in its turn among the
    finals rather than on a free worker (`LIVEFREQ_CONFIRM_HEARING_QUEUED`). `speech_ended` None
    (the bench): no due times, the hearing of an idle node."""

    async def confirmed(heard: SttResult, verdict: HeardVerdict) -> SttResult:
        """`heard`, which the engine would accept, as whisper base confirms it."""
        if not confirm:
            return heard
        return await confirm_bigger(
            stream, heard, verdict, judge, speech_ended=speech_ended, due_s=bigger_due_s, queued=confirm_queued
        )

    verdict = await judge(first)
    if verdict.settled:
        return await confirmed(first, verdict)
    if ask is not None and _only_rivals(query := await ask(first)):
        # heard right, only rivalled: the rivals alone decide, and no other hearing can
        # (engine/value_rivals.py); given the third hearing's time, which it saves
        checked = await check_values(
            stream, first, _asked(query), speech_ended=speech_ended, due_s=bigger_due_s, rivals=True
        )
        if confirm and checked is not first and (verdict := await judge(checked)).settled:
            return await confirmed(checked, verdict)
        return checked
    heard = await hear_again(stream, first, verdict, speech_ended=speech_ended, due_s=due_s)
    if heard is not first:
        verdict = await judge(heard)
        if verdict.settled:
            return await confirmed(heard, verdict)
    if ask is not None:  # the engine's last "no" was to `heard`
        checked = await check_values(stream, heard, ask, speech_ended=speech_ended, due_s=due_s)
        if checked is not heard:
            heard, verdict = checked, await judge(checked)
            if verdict.settled:  # accepted after the checks in the audio
                return await confirmed(heard, verdict)
    bigger = await hear_bigger(stream, heard, verdict, speech_ended=speech_ended, due_s=bigger_due_s)
    if bigger is heard:  # base did not hear it: no third hearing
        return heard
    if ask is None or (await judge(bigger)).settled:
        return bigger
    checked = await check_values(stream, bigger, ask, speech_ended=speech_ended, due_s=bigger_due_s)
    if not bigger_checks or (checked is not bigger and (await judge(checked)).settled):
        return checked
    return await check_values(stream, checked, ask, speech_ended=speech_ended, due_s=bigger_due_s, bigger=True)


def _only_rivals(query: ValueQuery | None) -> bool:
    """The engine asks about rivals alone: every unsure value was heard right, only written short."""
    return query is not None and bool(query.hypotheses) and all(h.rival for h in query.hypotheses)


def _asked(query: ValueQuery | None) -> Ask:
    """`query`, as the question `check_values` asks for."""

    async def ask(_heard: SttResult) -> ValueQuery | None:
        return query

    return ask
