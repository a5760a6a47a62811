"""`livefreq bench callsign`: who is talking (tooling/bench/callsigns.py): print the outcomes per
speaker and per near edit, the safety headline, and write the JSON report."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tooling.cli.common import EXIT_OK, CliError, load_settings, print_table, write_report

HEAD = ("speaker", "n", "applied", "accepted", "refused", "said again", "asked who")


def cmd_bench_callsign(args: argparse.Namespace) -> int:
    from gateway.speech.stt.base import SttError
    from tooling.bench.callsigns import NEAR_EDITS, SPEAKERS, run_text, run_voice
    from tooling.bench.common import Progress, interval_text
    from tooling.bench.readback import ReadbackBenchError, default_bench
    from tooling.bench.readback_voice import espeak_available
    from tooling.readback_pilot.driver import DriveError

    n = args.n or (3000 if args.mode == "text" else 150)
    settings = load_settings(flows_dir=args.flows_dir)
    progress = Progress(f"callsign {args.mode}", n, unit="readbacks")
    try:
        bench = default_bench(settings)
        if args.mode == "text":
            report = run_text(bench, n, args.seed, progress)
        else:
            if not espeak_available():
                raise CliError(
                    "voice mode needs espeak-ng (apt-get install espeak-ng, or scripts/install-system-deps.sh)"
                )
            report = run_voice(bench, settings, n, args.seed, progress)
    except (ReadbackBenchError, DriveError, SttError) as exc:
        raise CliError(str(exc)) from None
    right = tuple(range(1, len(HEAD)))
    print(f"callsign {args.mode}: {report['n']} right readbacks, each said by nearby traffic or by us")
    print_table(HEAD, [_row(s, report["by_speaker"][s]) for s in SPEAKERS], sys.stdout, right=right)
    print()
    print("said by the aircraft one digit off ours, by how its flight number differs:")
    print_table(HEAD, [_row(e, report["by_near_edit"][e]) for e in NEAR_EDITS], sys.stdout, right=right)
    print()
    print(
        f"traffic's readbacks applied to our aircraft: {report['traffic_applied']} of {report['traffic']} "
        f"(should be 0; 95% interval {interval_text(report['traffic_applied_ci95'])})"
    )
    print(
        f"our readbacks accepted beside that traffic: {report['ours_accepted']} of {report['ours']} "
        f"(95% interval {interval_text(report['ours_accepted_ci95'])})"
    )
    path = write_report(args.json_path or f"reports/bench-callsign-{args.mode}.json", report)
    print(f"wrote {path}")
    return EXIT_OK


def _row(label: str, counts: dict[str, Any]) -> tuple[str, ...]:
    keys = ("applied", "accepted", "refused", "said_again", "asked_who")
    return (label, str(sum(counts.values())), *(str(counts.get(k, 0)) for k in keys))
