"""`livefreq corpus build` (the recorded pilot transmissions) and `livefreq load` (N pilots
replaying them against a gateway; `--find-capacity`'s steps; `--offer-factor`'s run past the
node's capacity, tooling/load/capacity.py)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
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
    """One load run, --find-capacity's steps, or --offer-factor's run; table, JSON and PNG per run."""
    from tooling.bench.common import BenchError
    from tooling.load.run import capacity_steps

    if args.find_capacity and args.offer_factor is not None:
        raise CliError("--find-capacity and --offer-factor are two different runs: choose one")
    try:
        if args.offer_factor is not None:
            return _offer(args)
        steps = list(capacity_steps(args.sessions, args.max_sessions)) if args.find_capacity else [args.sessions]
        for config in (_config(args, n) for n in steps):
            config.check()
        if args.url and args.find_capacity:
            print("load: steps share the gateway at --url: its TTS cache carries over from step to step, "
                  "and its admission control refuses pilots past the capacity it knows (LIVEFREQ_VOICE_CAPACITY=off to measure)",
                  file=sys.stderr)
        results: list[dict[str, Any]] = []
        corpus: Any = None
        for n in steps:
            # a scenario per pilot: pilots flying the same one would speak from each other's TTS cache
            # and flatter the figure (at 125 pilots on 100 scenarios, 2026-11-28); the default corpus
            # grows step by step, as far as the run goes (about 10 s of synthesis per new scenario)
            if corpus is None or (not args.audio and len(corpus.seeds) < n):
                corpus = _load_corpus_for(args, n)
            # --find-capacity measures what the node can serve: its own admission control stays off
            report = _run(args, _config(args, n), corpus, f"load-{n}" if args.find_capacity else "load",
                          {"LIVEFREQ_VOICE_CAPACITY": "off"} if args.find_capacity else None)
            results.append(report)
            if report["targets"]["over_capacity"]:
                break
    except BenchError as exc:
        raise CliError(str(exc)) from None
    if args.find_capacity:
        return _capacity(results, Path(args.report))
    _summary_line(results[0])
    return EXIT_OK


def _config(args: argparse.Namespace, sessions: int) -> Any:
    from tooling.load.pilot import LoadConfig

    return LoadConfig(
        sessions, args.duration, think_s=_range(args.think, "--think"), pause_s=_range(args.pause, "--pause"),
        seed=args.seed, token=args.token,
    )


def _run(args: argparse.Namespace, config: Any, corpus: Any, name: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """One run against --url or a gateway started here (a fresh one per run: no run speaks from
    the TTS cache of the one before); its table printed, its JSON and PNG written."""
    import contextlib

    from tooling.load.gateway import gateway_process
    from tooling.load.report import format_table, write_outputs
    from tooling.load.run import run_load

    report_dir = Path(args.report)
    with contextlib.ExitStack() as stack:
        if args.url:
            url, pid = args.url, None
        else:
            print("load: starting a gateway on loopback (default engines) and waiting for it to be ready", file=sys.stderr)
            log_name = "gateway.log" if name == "load" else f"gateway-{name.removeprefix('load-')}.log"
            url, pid = stack.enter_context(gateway_process(report_dir / log_name, env))
        report = run_load(config, corpus, url, pid=pid, label=f"load {config.sessions}")
    json_path, png = write_outputs(report, report_dir, name)
    print_table(("what", "figure"), format_table(report), sys.stdout)
    print(f"wrote {json_path} and {png}\n")
    return report


def _capacity(results: list[dict[str, Any]], report_dir: Path) -> int:
    from tooling.load.capacity import capacity_lines, capacity_plot, capacity_summary

    summary = capacity_summary(results)
    png = capacity_plot(summary, report_dir / "capacity.png")
    summary["png"] = str(png)
    write_report(str(report_dir / "capacity.json"), summary)
    for line in capacity_lines(summary):
        print(line)
    print(f"wrote {report_dir / 'capacity.json'} and {png}")
    return EXIT_OK


def _offer(args: argparse.Namespace) -> int:
    """Offer --offer-factor times the node's capacity (its /health) at once; admitted vs refused."""
    import contextlib

    from tooling.load.capacity import offer_line, offer_verdict, offered_sessions, wait_capacity
    from tooling.load.gateway import gateway_process
    from tooling.load.report import format_table, write_outputs
    from tooling.load.run import run_load

    report_dir = Path(args.report)
    with contextlib.ExitStack() as stack:
        if args.url:
            url, pid = args.url, None
        else:
            print("load: starting a gateway on loopback (default engines, capacity self-tested) and waiting for it", file=sys.stderr)
            url, pid = stack.enter_context(gateway_process(report_dir / "gateway-offer.log"))
        voice = wait_capacity(url, args.token)
        capacity = voice.get("capacity")
        if not capacity:
            raise CliError(f"the gateway reports no voice capacity ({voice.get('source')}{': ' + voice['error'] if voice.get('error') else ''}): "
                           "set LIVEFREQ_VOICE_CAPACITY or let it measure (auto)")
        config = _config(args, offered_sessions(int(capacity), args.offer_factor))
        config.check()
        corpus = _load_corpus_for(args, config.sessions)  # a scenario per pilot offered (see cmd_load)
        print(f"load: the node's capacity is {capacity} voice sessions ({voice.get('source')}); offering {config.sessions}", file=sys.stderr)
        report = run_load(config, corpus, url, pid=pid, label=f"offer {config.sessions}")
    report["offer"] = verdict = offer_verdict(report, int(capacity), args.offer_factor)
    json_path, png = write_outputs(report, report_dir, "offer")
    print_table(("what", "figure"), format_table(report), sys.stdout)
    print(offer_line(verdict, report))
    print(f"wrote {json_path} and {png}")
    return EXIT_OK


def _summary_line(report: dict[str, Any]) -> None:
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
