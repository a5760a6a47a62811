"""Measure a check in the audio of every value a readback was heard right on (not a test).

Usage (from the repository root, after a voice bench wrote REPORT with its seed and channel):
    PYTHONPATH=. python scripts/measure_heard_right_checks.py REPORT SEED CHANNEL [LIMIT] [INDEXES]

For the first LIMIT (default 60) readbacks of REPORT the bench accepted (or the comma-separated
INDEXES, accepted or not), the pilot's recording is made again from the seed (`pilot_recording`:
the same voice, noise and channel), heard by whisper tiny.en under the radio's prompt, and each
value of digits the engine heard right is checked in place as the radio checks an unsure one
(`WhisperStream.check_values`, every tempo): one JSON line per readback, whether each check
passes the engine's margin (`value_check.passes`) and its best margin. The first hearing only (no
second or third): a probe of what such a check would cost and catch, not a run. Measured at stop
64 (docs/performance.md): seed 170 #259 (1003 written as the issued 1002) fails it, seed 169
#270 passes it, 4 of the first 60 right readbacks seed 170 accepted would be asked again.
"""

from __future__ import annotations

import asyncio
import json
import sys

from engine import value_query as vq
from engine.value_check import margin_needed, passes
from gateway.speech.stack import stt_context
from gateway.speech.stt.base import final_result, start_engine
from tooling.bench.recorded_run import RecordedRun
from tooling.readback_pilot.driver import render_context


async def main(report: str, seed: int, channel: str, limit: int, only: set[int] | None) -> None:
    run = RecordedRun.load(report)
    bench, stt = run.bench, run.stt
    await start_engine(stt)
    done = 0
    for case, row in run.cases(seed, only):
        session, _ = bench.at_state(case.flow, case.state, case.seed)
        decision, _, _ = bench.decide(case, row["heard"])
        ctx = render_context(bench.engine, session)
        right = vq.expected_values(decision.readback, ctx, session.issued.get(case.flow, {}), statuses=("ok",))
        right = {name: kv for name, kv in right.items() if any(ch.isdigit() for ch in kv[1])}
        if not right:
            continue
        pcm, made = run.recording(case, seed, channel)
        stream = stt.open(stt_context(session, bench.engine.expected_pilot(session), run.lexicon))
        try:
            stream.feed(pcm)
            heard = (await final_result(stream)).text.strip()
            fields: dict[str, object] = {}
            for name, (kind, value) in right.items():
                query = vq.query(heard, {name: (kind, value)}, callsign=str(ctx.get("callsign_spoken") or ""))
                in_place = [h for h in (query.hypotheses if query else []) if not h.appended]
                if not in_place:
                    fields[name] = None
                    continue
                assert query is not None
                checks = await stream.check_values(query.model_copy(update={"hypotheses": in_place}))
                best = max((c.margin for c in checks), default=float("-inf"))
                fields[name] = [any(passes(c, margin_needed(value, c)) for c in checks), round(best, 2)]
        finally:
            await stream.aclose()
        line = {"index": case.index, "mode": row["mode"], "voice": made["voice"], "heard": heard}
        print(json.dumps({**line, "recorded": row["heard"], "fields": fields}), flush=True)
        done += 1
        if done >= limit:
            break


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    picked = {int(i) for i in args[4].split(",")} if len(args) > 4 else None
    asyncio.run(main(args[0], int(args[1]), args[2], int(args[3]) if len(args) > 3 else 60, picked))
