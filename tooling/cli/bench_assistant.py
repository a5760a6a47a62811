"""`livefreq bench assistant` and `livefreq bench rules`: the briefing assistant's benchmarks."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tooling.cli.common import EXIT_FAILED, EXIT_OK, print_table, write_report


def cmd_bench_assistant(args: argparse.Namespace) -> int:
    """Tool-selection accuracy and latency: deterministic, or with an LLM at --llm-url."""
    from tooling.bench.assistant import run_assistant_bench

    if args.llm_url:
        if not args.llm_model:
            print("--llm-model is required with --llm-url", file=sys.stderr)
            return EXIT_FAILED
        from assistant.llm import AssistantLlm, LlmConfig
        from gateway.llm.chat import AssistantChat

        llm = AssistantLlm(AssistantChat(args.llm_url, args.llm_model, timeout_s=args.llm_timeout), LlmConfig.load())
        return _bench_assistant_llm(args, llm)
    report = run_assistant_bench(repeat=args.repeat, limit=args.limit, seed=args.seed)
    rows = [(tool, str(v["n"]), str(v["right"]), f"{100 * v['accuracy']:.0f}%") for tool, v in report["per_tool"].items()]
    rows.append(("all", str(report["questions"]), str(report["correct"]), f"{100 * report['accuracy']:.1f}%"))
    print_table(("tool", "questions", "right", "accuracy"), rows, sys.stdout, right=(1, 2, 3))
    f, d = report["first_event_ms"], report["done_ms"]
    print(f"first event p50 {f['p50']:.1f} ms, p95 {f['p95']:.1f} ms; done p50 {d['p50']:.1f} ms, p95 {d['p95']:.1f} ms "
          f"(index warm-up {report['warm_s']:.2f} s, once)")
    for w in report["wrong"]:
        print(f"  wrong: {w['question']!r}: {w['got']} (expected {w['expected']})")
    print(f"wrote {write_report(args.json_path, report)}")
    return EXIT_OK


def _bench_assistant_llm(args: argparse.Namespace, llm: Any) -> int:
    from tooling.bench.assistant import run_llm_bench

    report = run_llm_bench(llm, limit=args.limit, seed=args.seed, graph_runs=args.graph_runs, echo=lambda line: print(line, file=sys.stderr, flush=True))
    rows = [(tool, str(v["n"]), str(v["right"]), f"{100 * v['accuracy']:.0f}%") for tool, v in report["per_tool"].items()]
    rows.append(("all", str(report["questions"]), str(report["correct"]), f"{100 * report['accuracy']:.1f}%"))
    print_table(("tool", "questions", "right", "accuracy"), rows, sys.stdout, right=(1, 2, 3))
    f, d = report["first_event_ms"], report["done_ms"]
    if f and d:
        print(f"{report['planner']}, {report['graph_runs']} questions through the graph: first event p50 {f['p50'] / 1000:.1f} s, "
              f"p95 {f['p95'] / 1000:.1f} s; done p50 {d['p50'] / 1000:.1f} s, p95 {d['p95'] / 1000:.1f} s")
    print(f"LLM-planned questions: {report['llm_planned_correct']}/{report['llm_planned_questions']} right; "
          f"the deterministic planner on the same {report['questions']}: {report['deterministic_on_same_sample']} right")
    for name in ("llm_planner", "llm_formatter"):
        st = report[name]
        print(f"{name}: {st['used']}/{st['calls']} used, fallbacks {st['fallbacks'] or 'none'}")
    print(f"wrote {write_report(args.json_path, report)}")
    return EXIT_OK


def cmd_bench_rules(args: argparse.Namespace) -> int:
    """Recall@1/@5 and MRR of the rules retrievers on the labelled questions."""
    from tooling.bench.rules import format_table, run_rules_bench

    report = run_rules_bench(limit=args.limit, seed=args.seed)
    print_table(("retriever", "recall@1", "recall@5", "MRR@10", "p50 ms", "p95 ms"), format_table(report), sys.stdout, right=(1, 2, 3, 4, 5))
    print(f"{report['questions']} questions; winner {report['winner']}, the assistant uses {report['assistant_uses']}")
    print(f"wrote {write_report(args.json_path, report)}")
    return EXIT_OK
