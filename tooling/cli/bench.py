"""`livefreq bench [engine|voice|router|assistant|readback]`: run one benchmark, print its table,
write its JSON report."""

from __future__ import annotations

import argparse
import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tooling.cli.common import EXIT_OK, CliError, load_settings, print_table, write_report
from tooling.cli.parser import BENCHMARKS

__all__ = [
    "cmd_bench_decode",
    "cmd_bench_engine",
    "cmd_bench_list",
    "cmd_bench_readback",
    "cmd_bench_router",
    "cmd_bench_voice",
]

PROFILE_MAX_TX = 1000  # a profiled run is ~3x slower; this many transmissions show the picture


def cmd_bench_list(args: argparse.Namespace) -> int:
    """`livefreq bench` without a target: what can be measured."""
    print("available benchmarks:")
    width = max(map(len, BENCHMARKS))
    for name, text in BENCHMARKS.items():
        print(f"  {name:<{width}}  {text}")
    print("run one with `livefreq bench NAME --help` for its options")
    return EXIT_OK


def cmd_bench_engine(args: argparse.Namespace) -> int:
    """Measure every mode, print the table (and the profile), write the JSON report."""
    from gateway.service import RadioService
    from tooling.bench.common import BenchError, Progress
    from tooling.bench.engine import (
        TARGET_TX_PER_S,
        bench_engine,
        bench_http,
        bench_service,
        bench_service_sqlite,
        profile_engine,
    )

    settings = load_settings(flows_dir=args.flows_dir)
    service = RadioService(settings)
    if args.flow is not None and args.flow not in service.registry:
        raise CliError(f"unknown flow {args.flow!r} (known: {', '.join(f.slug for f in service.registry)})")
    try:
        runs = [
            bench_engine(service, args.n, args.flow, Progress("engine", args.n)),
            bench_service(service, args.n, args.flow, Progress("service", args.n)),
            bench_service_sqlite(settings, args.n, args.flow, Progress("service-sqlite", args.n)),
        ]
        if args.http:
            runs.append(bench_http(settings, args.n, args.flow, Progress("http", args.n)))
    except BenchError as exc:
        raise CliError(str(exc)) from None
    results = [run.result() for run in runs]
    rows = [
        (r["mode"], str(r["transmissions"]), f"{r['tx_per_s']:.0f}", f"{r['p50_ms']:.3f}", f"{r['p99_ms']:.3f}")
        for r in results
    ]
    print_table(("mode", "transmissions", "tx/s", "p50 ms", "p99 ms"), rows, sys.stdout, right=(1, 2, 3, 4))
    engine_rate = results[0]["tx_per_s"] or 0.0
    meets = engine_rate >= TARGET_TX_PER_S
    print(
        f"in-process engine: {engine_rate:.0f} tx/s {'meets' if meets else 'is below'} the target of {TARGET_TX_PER_S:.0f} tx/s on one core"
    )
    report: dict[str, Any] = {
        "benchmark": "engine",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "n": args.n,
        "flow": args.flow or service.registry.main_flow,
        "target_tx_per_s": TARGET_TX_PER_S,
        "meets_target": meets,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "results": results,
    }
    if args.profile:
        n = min(args.n, PROFILE_MAX_TX)
        own, cumulative = profile_engine(service, n, args.flow)
        _print_profile(f"profile of {n} in-process transmissions, by own time", own, "tottime_s")
        _print_profile("by cumulative time", cumulative, "cumtime_s")
        report["profile"] = own
        report["profile_cumulative"] = cumulative
    path = write_report(args.json_path, report)
    print(f"wrote {path}")
    return EXIT_OK


def cmd_bench_voice(args: argparse.Namespace) -> int:
    """Measure the voice path, print the table, write the JSON report and the PNG histogram."""
    from gateway.speech.stt.base import SttError
    from gateway.speech.tts.base import TtsError
    from tooling.bench.common import BenchError
    from tooling.bench.voice import format_table, run_voice_bench, write_histogram

    settings = load_settings(flows_dir=args.flows_dir, stt_engine=args.stt, tts_engine=args.tts)
    try:
        report = run_voice_bench(settings, args.n, url=args.url)
    except (BenchError, SttError, TtsError, ValueError) as exc:
        raise CliError(str(exc)) from None
    print_table(("metric", "n", "p50", "p95", "mean"), format_table(report), sys.stdout, right=(1, 2, 3, 4))
    first_audio = report["metrics"]["ptt_up_to_first_audio_ms"]
    if first_audio["n"]:
        print(
            f"PTT release -> first ATC audio byte, one session: p50 {first_audio['p50']:.0f} ms, "
            f"p95 {first_audio['p95']:.0f} ms over {first_audio['n']} controller replies"
        )
    png = write_histogram(report, Path(args.png_path))
    report["png"] = str(png)
    path = write_report(args.json_path, report)
    print(f"wrote {path} and {png}")
    return EXIT_OK


def cmd_bench_router(args: argparse.Namespace) -> int:
    """Measure both router paths, print the tables, write the JSON report."""
    from gateway.llm import ChatCompletionsProvider
    from gateway.llm.prompts import PromptError
    from tooling.bench.router import RouterBenchError, format_tables, run_router_bench

    settings = load_settings(flows_dir=args.flows_dir, llm_url=args.llm_url, llm_model=args.llm_model)
    try:
        provider = ChatCompletionsProvider.from_settings(settings)
        report = run_router_bench(settings, seeds=args.seeds, provider=provider, echo=lambda line: print(line, file=sys.stderr))
    except (RouterBenchError, PromptError) as exc:
        raise CliError(str(exc)) from None
    corpus, paraphrases = format_tables(report)
    print_table(("textbook corpus", "transmissions", "without LLM", "ambiguous", "below threshold", "share"), corpus, sys.stdout, right=(1, 2, 3, 4, 5))
    share, target = report["share_without_llm"], report["target_share_without_llm"]
    print(
        f"decided without an LLM: {100 * share:.1f}% of textbook transmissions "
        f"({'meets' if report['meets_target'] else 'misses'} the target of {100 * target:.0f}%)\n"
    )
    print_table(("state", "expected", "deterministic (consulted because)", "LLM path (outcome)", "right"), paraphrases, sys.stdout)
    s = report["paraphrase_summary"]
    print(
        f"paraphrases: {s['paraphrases']}; the deterministic router decides {s['deterministic_decided']} alone "
        f"({s['deterministic_correct']} right, {s['deterministic_wrong']} wrong) and leaves {s['left_to_llm']} to the LLM "
        f"({s['left_to_llm_ambiguous']} near ties, {s['left_to_llm_below_threshold']} below threshold); "
        f"without an LLM the engine answers {s['deterministic_only_correct']} of {s['paraphrases']} as expected"
    )
    offered = ", ".join(f"{count} offer {n}" for n, count in s["left_to_llm_offered"].items())
    print(
        f"left to the LLM: {offered} candidate(s) besides 'none'; 'none' is right for {s['left_to_llm_expect_none']}; "
        f"reference (always the first offered candidate, no model): {s['first_candidate_resolved_correctly']} "
        f"of {s['left_to_llm']} resolved correctly"
    )
    if s["llm"] is None:
        print("LLM path: not measured (no LLM configured: --llm-url URL --llm-model NAME, or LIVEFREQ_LLM_URL/_MODEL)")
    else:
        print(
            f"LLM path ({s['llm']['model']} at {s['llm']['url']}): {s['llm_resolved_correctly']} of the {s['left_to_llm']} "
            f"left to it resolved correctly ({s['llm_answered_correctly']} by the model's answer, of "
            f"{s['llm_answered']} answers; the rest by a fallback); {s['llm_fallbacks']} fallbacks; "
            f"{s['llm_path_correct']} of {s['paraphrases']} right in all; outcomes {s['llm_outcomes']}; "
            f"latency p50 {_ms(s['llm_latency_ms_p50'])}, p95 {_ms(s['llm_latency_ms_p95'])}; "
            f"{s['llm_tokens']} tokens ({s['llm_tokens_per_call']} per call)"
        )
    path = write_report(args.json_path, report)
    print(f"wrote {path}")
    return EXIT_OK


def cmd_bench_readback(args: argparse.Namespace) -> int:
    """Run the readback benchmark, print the confusion tables and headlines, write the JSON report."""
    from gateway.speech.stt.base import SttError
    from tooling.bench.common import Progress
    from tooling.bench.readback import (
        CONFUSION_HEAD,
        ReadbackBenchError,
        confusion_rows,
        default_bench,
        headline,
        run_text_bench,
        tables,
    )
    from tooling.bench.readback_groups import ENGINE_HEAD, WER_HEAD, WHY_HEAD, engine_rows, why_rows, word_error_rows
    from tooling.bench.readback_voice import espeak_available, run_voice_bench
    from tooling.readback_pilot.driver import DriveError

    if not 0.0 <= args.wrong <= 1.0:
        raise CliError("--wrong must be between 0 and 1")
    if not 0.0 <= args.corrections <= 1.0:
        raise CliError("--corrections must be between 0 and 1")
    if args.mode == "replay":
        return _bench_readback_replay(args)
    n = args.n or (2000 if args.mode == "text" else 300)
    settings = load_settings(flows_dir=args.flows_dir, stt_engine=args.stt)
    try:
        bench = default_bench(settings)
        if args.fields:
            bench.focus(tuple(f.strip() for f in args.fields.split(",") if f.strip()))
        bench.corrections = args.corrections
        if args.mode == "text":
            report = run_text_bench(bench, n, args.seed, args.wrong, Progress("readback text", n, unit="readbacks"))
        else:
            if not espeak_available():
                raise CliError("voice mode needs espeak-ng (apt-get install espeak-ng, or scripts/install-system-deps.sh)")
            engines = tuple(e.strip() for e in args.voices.split(",") if e.strip()) if args.voices else None
            report = run_voice_bench(
                bench, settings, n, args.seed, args.wrong, Progress("readback voice", n, unit="readbacks"), bias=args.bias, channel=args.channel,
                checks=args.value_checks, mic_level_db=args.mic_level, forms=args.forms, again=args.again, **({"engines": engines} if engines else {}),
            )
    except (ReadbackBenchError, DriveError, SttError) as exc:
        raise CliError(str(exc)) from None
    right = tuple(range(1, len(CONFUSION_HEAD)))
    for title, result in tables(report):
        print(f"{title}: {result['n']} readbacks ({result['correct']} correct, {result['changed']} with a value changed, {result['dropped']} with one dropped)")
        print_table(CONFUSION_HEAD, confusion_rows(result), sys.stdout, right=right)
        print()
        if "by_engine" in result:
            print(f"{title}, by pilot voice engine:")
            print_table(ENGINE_HEAD, engine_rows(result["by_engine"]), sys.stdout, right=tuple(range(1, len(ENGINE_HEAD))))
            print()
        if "by_word_errors" in result:
            print(f"{title}, by the word errors of the transcript decided on:")
            print_table(WER_HEAD, word_error_rows(result["by_word_errors"]), sys.stdout, right=tuple(range(1, len(WER_HEAD))))
            print()
        if result.get("asked_why"):
            print(f"{title}, why the right readbacks asked again were asked (a readback may have several values):")
            print_table(WHY_HEAD, why_rows(result["asked_why"]), sys.stdout, right=(1, 2))
            print()
    for line in headline(report):
        print(line)
    path = write_report(args.json_path or f"reports/bench-readback-{args.mode}.json", report)
    print(f"wrote {path}")
    return EXIT_OK


def _bench_readback_replay(args: argparse.Namespace) -> int:
    """Decide every transmission of recorded voice runs again, print what changed, write JSON."""
    from tooling.bench.readback import default_bench
    from tooling.bench.readback_groups import WER_HEAD, WHY_HEAD, why_rows, word_error_rows
    from tooling.bench.readback_replay import LEFT_OUT, default_reports, replay_reports, summary

    paths = [Path(p) for p in args.reports] if args.reports else default_reports(Path.cwd())
    missing = [str(p) for p in paths if not p.is_file()]
    if missing or not paths:
        raise CliError(f"no such report: {', '.join(missing)}" if missing else "no voice reports to replay (reports/bench-readback-voice-seed*.json)")
    print(f"readback replay: deciding {len(paths)} recorded voice runs again", file=sys.stderr)
    result = replay_reports(default_bench(load_settings(flows_dir=args.flows_dir)), paths)
    for name, why in result["skipped"].items():
        print(f"  skipped {name}: {why}", file=sys.stderr)
    if not args.reports:
        for name, why in LEFT_OUT.items():
            print(f"  left out {name}: {why}", file=sys.stderr)
    figures = summary(result["rows"])
    head = ("readbacks", "accepted", "wrong", "missing", "say again")
    rows = [
        (mode, *(str(figures["by_mode"][mode].get(v, 0)) for v in ("accepted", "wrong", "missing", "say_again")))
        for mode in ("correct", "wrong", "drop")
    ]
    print(f"{figures['transmissions']} transmissions of {len(result['files'])} runs, decided again:")
    print_table(head, rows, sys.stdout, right=(1, 2, 3, 4))
    print()
    print("changed from the recorded verdict:" if figures["changes"] else "no verdict changed from the recorded one")
    for change, count in figures["changes"].items():
        print(f"  {count:5d}  {change}")
    c = figures["correct"] or 1
    print(f"wrong readbacks accepted: {figures['wrong_accepted']} of {figures['bad']} (should be 0)")
    unknown = f"; {figures['bad_unknown']} whose words typed get no value wrong today, not judged" if figures["bad_unknown"] else ""
    print(f"wrong values kept as read back right, for a readback in parts: {figures['wrong_kept']} (should be 0{unknown})")
    if figures["answers"]:
        print(f"answers to \"say again\" decided again: {figures['answers']}, wrong readbacks accepted in them: {figures['answers_wrong_accepted']} (should be 0)")
    if figures.get("unasked"):
        print(f"transmissions decided without recorded checks today's question would not ask: {figures['unasked']}")
    if figures["placed_otherwise"]:
        print(f"transmissions whose recorded checks today's question would put elsewhere: {figures['placed_otherwise']} (should be 0: record the run again, or leave it out)")
    if figures["correct_stale"]:
        print(f"right readbacks left out: {figures['correct_stale']}, whose words typed are not accepted today (the scenario or the bench's pilot changed since)")
    print(f"correct readbacks refused: {figures['correct_refused']} of {figures['correct']} ({100 * figures['correct_refused'] / c:.2f}%)")
    print(f"correct readbacks asked again: {figures['correct_said_again']} of {figures['correct']} ({100 * figures['correct_said_again'] / c:.2f}%)")
    if figures["correct_said_again_unrivalled"]:
        unrivalled = figures["correct_said_again_unrivalled"]
        print(
            f"  of them {unrivalled} only for a frequency written short whose rival the recording never scored "
            f"(recorded before engine/value_rivals.py); without them {figures['correct_said_again'] - unrivalled} "
            f"({100 * (figures['correct_said_again'] - unrivalled) / c:.2f}%)"
        )
    by_bias = {b: summary([r for r in result["rows"] if r["bias"] == b]) for b in ("on", "off")}
    for b, f in by_bias.items():
        if f["transmissions"]:
            n = f["correct"] or 1
            print(
                f"  bias {b}: wrong accepted {f['wrong_accepted']} of {f['bad']}, correct refused {f['correct_refused']} "
                f"({100 * f['correct_refused'] / n:.2f}%), asked again {f['correct_said_again']} ({100 * f['correct_said_again'] / n:.2f}%) of {f['correct']}"
            )
    figures["by_bias"] = by_bias
    print("by the word errors of the transcript decided on (right readbacks whose words typed are accepted today):")
    print_table(WER_HEAD, word_error_rows(figures["by_word_errors"]), sys.stdout, right=tuple(range(1, len(WER_HEAD))))
    print("why the right readbacks asked again were asked (a readback may have several values):")
    print_table(WHY_HEAD, why_rows(figures["asked_why"]), sys.stdout, right=(1, 2))
    report = {"benchmark": "readback", "mode": "replay", "files": result["files"], "skipped": result["skipped"], **figures, "rows": result["rows"]}
    path = write_report(args.json_path or "reports/bench-readback-replay.json", report)
    print(f"wrote {path}")
    return EXIT_OK


def cmd_bench_decode(args: argparse.Namespace) -> int:
    """Decode in batches of each size and one at a time, print the table, write the JSON report and plot."""
    from tooling.bench.decode import TABLE_HEAD, format_table, run_decode_bench, write_plot

    try:
        sizes = [int(size) for size in args.batch_sizes.split(",") if size.strip()]
    except ValueError:
        raise CliError(f"--batch-sizes takes numbers: {args.batch_sizes!r}") from None
    if not sizes or min(sizes) < 1:
        raise CliError("--batch-sizes needs positive sizes")
    settings = load_settings(flows_dir=args.flows_dir)
    report = run_decode_bench(settings, args.k, sizes, args.rounds, args.workers, cpu_threads=args.cpu_threads)
    print_table(TABLE_HEAD, format_table(report), sys.stdout, right=(1, 2, 3, 4, 5, 6, 7))
    shapes = report["shapes"]
    print(
        f"{report['k']} utterances ({report['audio_s_total']} s of audio), {report['workers']} workers, load average "
        f"{report['load_average_before']} -> {report['load_average_after']}; {shapes['distinct']} distinct shapes; "
        f"finals of the head's shape in a queue of n (cap {report['batch_max']}): {shapes['head_batch_mean_by_queue']}"
    )
    exact = report["exact_batches"]
    print(
        f"utterances of one shape batched as the gateway does: {exact['identical']} of {exact['utterances']} "
        f"identical to their single decode ({exact['calls']} calls)"
    )
    for mode, figures in report["burst"].items():
        if isinstance(figures, dict):
            wait = figures["final_after_submit_ms"]
            print(
                f"all {report['k']} queued at once, {mode}: final after submit p50 {wait['p50']:.0f} ms, "
                f"p95 {wait['p95']:.0f} ms; queue drained in {figures['drain_ms_mean']:.0f} ms, "
                f"{figures['calls_per_round']} calls (largest {figures['largest_call']})"
            )
    print(f"transcripts differing between the two: {report['burst']['differ']}")
    report["png"] = str(write_plot(report, Path(args.png_path)))
    print(f"wrote {write_report(args.json_path, report)} and {report['png']}")
    return EXIT_OK


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def _print_profile(title: str, rows: list[dict[str, Any]], key: str) -> None:
    print(f"\n{title} (top {len(rows)}):")
    for r in rows:
        share = f" {r['share_pct']:5.1f}%" if key == "tottime_s" else ""
        print(f"  {r[key]:8.3f}s{share} {r['calls']:>9}  {r['function']}")
