"""`livefreq corpus build` (the recorded pilot transmissions) and `livefreq load` (N pilots
replaying them against a gateway, or `--find-capacity`'s steps)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tooling.cli.common import EXIT_OK, CliError, load_settings, print_table, write_report

__all__ = ["cmd_corpus_build", "cmd_load"]


def _corpus_progress(label: str) -> Callable[[int, int], None]:
    from tooling.bench.common import Progress

    bar: dict[int, Progress] = {}

    def update(done: int, total: int) -> None:
        progress = bar.setdefault(total, Progress(label, total, unit="recordings"))
        progress.update(done)
        if done == total:
            progress.done()

    return update


def cmd_corpus_build(args: argparse.Namespace) -> int:
    """Build (or refresh) the corpus and say what it holds."""
    from tooling.corpus import CorpusError, build_corpus

    if not 0.0 <= args.wrong_share <= 1.0:
        raise CliError("--wrong-share must be between 0 and 1")
    settings = load_settings(flows_dir=args.flows_dir)
    try:
        corpus = build_corpus(
            Path(args.out),
            args.scenarios,
            turns=args.turns,
            first_seed=args.first_seed,
            flow=args.flow,
            wrong_share=args.wrong_share,
            settings=settings,
            progress=_corpus_progress("corpus"),
        )
    except CorpusError as exc:
        raise CliError(str(exc)) from None
    wrong = sum(1 for e in corpus.entries if e.kind == "wrong")
    seconds = sum(e.audio_s or 0.0 for e in corpus.entries)
    print(
        f"corpus: {len(corpus.entries)} recordings ({wrong} wrong readbacks), {seconds / 60:.1f} min of audio, "
        f"{len(corpus.seeds)} scenarios in {corpus.root}/ (manifest.jsonl)"
    )
    return EXIT_OK


def _range(text: str, option: str) -> tuple[float, float]:
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise CliError(f"{option} wants MIN,MAX seconds, got {text!r}") from None
    return low, high


def _load_corpus_for(args: argparse.Namespace, scenarios: int) -> Any:
    """The corpus of --audio, or the default one, built or extended to `scenarios` scenarios."""
    from tooling.corpus import DEFAULT_CORPUS_DIR, CorpusError, build_corpus, load_corpus

    try:
        if args.audio:
            return load_corpus(Path(args.audio))
        root = DEFAULT_CORPUS_DIR
        try:
            corpus = load_corpus(root)
            if len(corpus.seeds) >= scenarios:
                return corpus
        except CorpusError:
            pass
        print(f"load: building the corpus of {scenarios} scenarios in {root} (once; reused afterwards)", file=sys.stderr)
        return build_corpus(root, scenarios, progress=_corpus_progress("corpus"))
    except CorpusError as exc:
        raise CliError(str(exc)) from None


def cmd_load(args: argparse.Namespace) -> int:
    """One load run, or --find-capacity's steps; table, JSON and PNG per run."""
    import contextlib

    from tooling.bench.common import BenchError
    from tooling.load.gateway import gateway_process
    from tooling.load.pilot import LoadConfig
    from tooling.load.report import CAPACITY_P95_MS, format_table, write_outputs
    from tooling.load.run import capacity_steps, run_load

    report_dir = Path(args.report)
    steps = list(capacity_steps(args.sessions, args.max_sessions)) if args.find_capacity else [args.sessions]
    configs = [
        LoadConfig(
            n,
            args.duration,
            think_s=_range(args.think, "--think"),
            pause_s=_range(args.pause, "--pause"),
            seed=args.seed,
            token=args.token,
        )
        for n in steps
    ]
    try:
        for config in configs:
            config.check()
    except BenchError as exc:
        raise CliError(str(exc)) from None
    corpus = _load_corpus_for(args, min(max(steps), 100))  # beyond 100 pilots, scenarios are shared (a warning says so)
    results: list[dict[str, Any]] = []
    if args.url and args.find_capacity:
        print("load: steps share the gateway at --url: its TTS cache carries over from step to step", file=sys.stderr)
    try:
        for config in configs:
            with contextlib.ExitStack() as stack:
                if args.url:
                    url, pid = args.url, None
                else:  # a fresh gateway per step: no step speaks from the TTS cache of the one before
                    print("load: starting a gateway on loopback (default engines) and waiting for it to be ready", file=sys.stderr)
                    log_name = f"gateway-{config.sessions}.log" if args.find_capacity else "gateway.log"
                    url, pid = stack.enter_context(gateway_process(report_dir / log_name))
                report = run_load(config, corpus, url, pid=pid, label=f"load {config.sessions}")
                name = f"load-{config.sessions}" if args.find_capacity else "load"
                json_path, png = write_outputs(report, report_dir, name)
                print_table(("what", "figure"), format_table(report), sys.stdout)
                print(f"wrote {json_path} and {png}\n")
                results.append(report)
                if report["targets"]["over_capacity"]:
                    break
    except BenchError as exc:
        raise CliError(str(exc)) from None
    if args.find_capacity:
        under = [r for r in results if not r["targets"]["over_capacity"]]
        over = next((r for r in results if r["targets"]["over_capacity"]), None)
        summary = {
            "benchmark": "load-capacity",
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "limit_p95_ms": CAPACITY_P95_MS,
            "steps": [
                {"sessions": r["config"]["sessions"], "p95_ms": r["latency_ms"]["ptt_up_to_first_audio"]["p95"],
                 "errors": r["errors"]["total"], "load_average": r["load_average"]}
                for r in results
            ],
            "capacity_sessions": under[-1]["config"]["sessions"] if under else 0,
            "first_over_sessions": over["config"]["sessions"] if over else None,
        }
        write_report(str(report_dir / "capacity.json"), summary)
        for step in summary["steps"]:
            print(f"  {step['sessions']:>4} sessions: p95 {step['p95_ms']} ms, {step['errors']} errors")
        if over is None:
            print(f"capacity: p95 stayed under {CAPACITY_P95_MS:.0f} ms up to {summary['capacity_sessions']} sessions (the largest step tried)")
        elif not under:
            print(
                f"capacity: below {over['config']['sessions']} sessions (p95 was "
                f"{over['latency_ms']['ptt_up_to_first_audio']['p95']:.0f} ms there); start lower with --sessions"
            )
        else:
            print(
                f"capacity: {summary['capacity_sessions']} sessions (p95 <= {CAPACITY_P95_MS:.0f} ms); "
                f"at {over['config']['sessions']} sessions p95 was {over['latency_ms']['ptt_up_to_first_audio']['p95']:.0f} ms"
            )
        return EXIT_OK
    report = results[0]
    targets = report["targets"]
    latency = report["latency_ms"]["ptt_up_to_first_audio"]
    if latency["n"]:
        p50 = f"p50 {latency['p50']:.0f} ms" + (
            f" ({'within' if targets['p50_ok'] else 'over'} {targets['p50_ms_max']:.0f} ms), " if targets["p50_ms_max"] else ", "
        )
        print(
            f"PTT release -> first ATC audio byte, {report['config']['sessions']} session(s): {p50}"
            f"p95 {latency['p95']:.0f} ms ({'within' if targets['p95_ok'] else 'over'} {targets['p95_ms_max']:.0f} ms); "
            f"{report['errors']['total']} errors, {report['messages']['total_faults']} lost/out-of-order messages"
        )
    elif not report["transmissions"]:
        # pilots join over the first pause and pause again before a new call: a run shorter than
        # that measures nothing, which must not read like a quiet success
        low, high = report["config"]["pause_s"]
        print(
            f"load: no pilot transmitted within {report['config']['duration_s']:g} s: pilots join over the first "
            f"--pause ({low:g}-{high:g} s) and pause again before a new call; run longer or shorten --pause",
            file=sys.stderr,
        )
    return EXIT_OK
