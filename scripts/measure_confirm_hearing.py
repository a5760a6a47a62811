"""Measure the confirming hearing on the readbacks a recorded voice run accepted (not a test).

Usage (from the repository root, after a voice bench wrote REPORT with its seed and channel):
    PYTHONPATH=. python scripts/measure_confirm_hearing.py REPORT SEED CHANNEL [INDEXES]

For every readback REPORT's run accepted (or the comma-separated INDEXES), the pilot's recording
is made again from the seed (`pilot_recording`: the same voice, noise and channel) and heard
through the bench's whole chain (`recognize`, the radio's `hear_out`) with the confirming hearing
(`gateway.speech.rehearing.confirm_bigger`), which a recorded run from before it did not have.
One JSON line per readback (the verdict recorded and now, whether whisper base confirmed, heard
otherwise or did not hear), then a summary line: how many right readbacks are asked again now,
how many wrong ones are caught.
"""

from __future__ import annotations

import asyncio
import json
import sys

from gateway import metrics
from gateway.speech.stack import stt_context
from gateway.speech.stt.base import start_engine
from tooling.bench.readback_voice import case_questions, recognize, verdict
from tooling.bench.recorded_run import RecordedRun

OUTCOMES = ("confirmed", "otherwise", "none", "busy", "late")


async def main(report: str, seed: int, channel: str, only: set[int] | None) -> None:
    run = RecordedRun.load(report)
    bench, stt = run.bench, run.stt
    await start_engine(stt)
    tally: dict[str, int] = {"right": 0, "right_asked_again": 0, "wrong": 0, "wrong_caught": 0, "heard_otherwise": 0}
    for case, row in run.cases(seed, only):
        session, _ = bench.at_state(case.flow, case.state, case.seed)
        pcm, made = run.recording(case, seed, channel)

        judge, ask = case_questions(bench, case)
        context = stt_context(session, bench.engine.expected_pilot(session), run.lexicon)
        counts = {k: metrics.CONFIRM_HEARINGS.labels(k)._value.get() for k in OUTCOMES}
        text, hearing = await recognize(stt, pcm, context, judge, ask, run.settings.bigger_value_checks, confirm=True)
        confirm = [k for k in OUTCOMES if metrics.CONFIRM_HEARINGS.labels(k)._value.get() > counts[k]]
        before = row["verdict"]
        after = verdict(bench.decide(case, text, hearing)[0])
        kind = "right" if row["mode"] == "correct" else "wrong"
        tally["heard_otherwise"] += text != row["heard"] and not confirm
        if before == "accepted":
            tally[kind] += 1
            tally[f"{kind}_asked_again" if kind == "right" else "wrong_caught"] += after != "accepted"
        line = {"index": case.index, "mode": row["mode"], "voice": made["voice"], "said": case.readback.text}
        line.update(heard=text, recorded=row["heard"], confirm=confirm, alternatives=hearing.alternatives)
        print(json.dumps({**line, "before": before, "after": after}), flush=True)
    print(json.dumps({"summary": tally, "report": report}), flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    picked = {int(i) for i in args[3].split(",")} if len(args) > 3 else None
    asyncio.run(main(args[0], int(args[1]), args[2], picked))
