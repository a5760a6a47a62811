"""`livefreq bench assistant`: the deterministic planner's tool selection on the labelled set
(assistant/data/bench_questions.tsv) and the graph's latency: time to the first SSE event and to
`done`, measured through `stream_agent` (the same adapter the HTTP route uses), in process.

With an LLM (`run_llm_bench`) each question goes once through the graph with the LLM planner and
formatter (a model call costs seconds on a CPU, so the tool choice is read from the streamed run
instead of a second planning pass); `limit` takes a seeded sample, stratified by tool."""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from collections.abc import Callable
from typing import Any

from assistant.context import DATA_DIR, AssistantContext
from assistant.graph import build_agent
from assistant.llm import sum_tokens
from assistant.planning import plan
from assistant.streaming import stream_agent

LABELS = DATA_DIR / "bench_questions.tsv"


def load_labels(path: Path = LABELS) -> list[tuple[str, str]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            tool, question = line.split("\t", 1)
            out.append((tool.strip(), question.strip()))
    return out


def sample_labels(items: list[tuple[str, str]], limit: int | None, seed: int = 0) -> list[tuple[str, str]]:
    """`limit` questions drawn round-robin over the tools (each tool's questions shuffled with
    `seed`), so a small sample still covers every tool; all of them without a limit."""
    if limit is None or limit >= len(items):
        return items
    rng = random.Random(seed)
    by_tool: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for item in items:
        by_tool[item[0]].append(item)
    for group in by_tool.values():
        rng.shuffle(group)
    out: list[tuple[str, str]] = []
    while len(out) < limit:
        for tool in sorted(by_tool):
            if by_tool[tool] and len(out) < limit:
                out.append(by_tool[tool].pop())
    return out


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def run_assistant_bench(ctx: AssistantContext | None = None, labels: Path = LABELS, repeat: int = 1, llm: Any | None = None,
                        limit: int | None = None, seed: int = 0) -> dict[str, Any]:
    """With `llm` (assistant/llm.py `AssistantLlm`) the tool choice is the LLM planner's (a
    fallback counts as the deterministic plan it fell back to, and is counted apart), and the
    latency runs through the LLM planner and formatter."""
    ctx = ctx or AssistantContext.load()
    t0 = time.perf_counter()
    ctx.warm()
    warm_s = time.perf_counter() - t0
    graph = build_agent(ctx, llm=llm)
    llm_calls: list[dict[str, Any]] = []
    items = sample_labels(load_labels(labels), limit, seed)
    per_tool: dict[str, Counter[str]] = defaultdict(Counter)
    wrong = []
    for tool, q in items:
        p, why, _ = plan(ctx, [q])
        if llm is not None:
            p, why, calls = llm.plan([q], p, why)
            llm_calls.extend(calls)
        got = p.selected_tool
        per_tool[tool]["n"] += 1
        per_tool[tool]["right"] += got == tool
        if got != tool:
            wrong.append({"question": q, "expected": tool, "got": got})
    first_ms: list[float] = []
    done_ms: list[float] = []

    async def one(q: str) -> None:
        start = time.perf_counter()
        first = None
        async for _ in stream_agent(graph, q, "bench"):
            if first is None:
                first = time.perf_counter()
        first_ms.append(((first or time.perf_counter()) - start) * 1000)
        done_ms.append((time.perf_counter() - start) * 1000)

    async def all_() -> None:
        for _ in range(repeat):
            for _, q in items:
                await one(q)

    asyncio.run(all_())
    right = sum(c["right"] for c in per_tool.values())
    return {
        "questions": len(items),
        "sample": {"limit": limit, "seed": seed} if limit is not None else None,
        "correct": right,
        "accuracy": round(right / len(items), 4) if items else 0.0,
        "target_accuracy": 0.9,
        "per_tool": {t: {"n": c["n"], "right": c["right"], "accuracy": round(c["right"] / c["n"], 3)} for t, c in sorted(per_tool.items())},
        "wrong": wrong,
        "warm_s": round(warm_s, 3),
        "first_event_ms": {"p50": round(statistics.median(first_ms), 2), "p95": round(_pct(first_ms, 0.95), 2), "max": round(max(first_ms), 2)},
        "done_ms": {"p50": round(statistics.median(done_ms), 2), "p95": round(_pct(done_ms, 0.95), 2), "max": round(max(done_ms), 2)},
        "target_first_event_p50_ms": 100,
        "planner": "deterministic" if llm is None else f"llm ({llm.chat.model})",
        "llm_planner": None if llm is None else {
            "calls": len(llm_calls),
            "used": sum(c["outcome"] == "used" for c in llm_calls),
            "fallbacks": [c["outcome"] for c in llm_calls if c["outcome"] != "used"],
            "tokens": sum_tokens(llm_calls),
            "latency_ms_p50": round(statistics.median([c["latency_ms"] for c in llm_calls]), 1) if llm_calls else None,
        },
    }


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"p50": round(statistics.median(values), 1), "p95": round(_pct(values, 0.95), 1), "max": round(max(values), 1)}


def run_llm_bench(llm: Any, ctx: AssistantContext | None = None, labels: Path = LABELS, limit: int | None = None,
                  seed: int = 0, graph_runs: int | None = None, echo: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The assistant with `llm` (assistant/llm.py `AssistantLlm`) as planner and formatter, on the
    (sampled) questions. The first `graph_runs` (all without it) go once through the graph, streamed:
    the tool it ran, every model call's outcome, tokens, time to the first event and to done. The
    others are planned only, as the graph plans them (the router; the LLM planner on the database
    path, the deterministic plan on the rules path, whose retrieval needs no model): a model's
    formatter call costs minutes on a shared CPU, its planner call seconds."""
    from assistant.planning import route

    ctx = ctx or AssistantContext.load()
    t0 = time.perf_counter()
    ctx.warm()
    warm_s = time.perf_counter() - t0
    graph = build_agent(ctx, llm=llm)
    items = sample_labels(load_labels(labels), limit, seed)
    full = len(items) if graph_runs is None else min(graph_runs, len(items))
    rows: list[dict[str, Any]] = []

    async def streamed(tool: str, q: str) -> dict[str, Any]:
        final: dict[str, Any] = {}
        start = time.perf_counter()
        first = None
        events: list[str] = []
        async for ev in stream_agent(graph, q, "bench-llm", on_final=final.update):
            if first is None:
                first = time.perf_counter()
            events.append(ev["event"])
        done = time.perf_counter()
        decision = final.get("router_decision")
        return {"got": getattr(final.get("plan"), "selected_tool", None), "path": getattr(decision, "path", None),
                "llm_calls": final.get("llm_calls") or [], "first_event_ms": round(((first or done) - start) * 1000, 1),
                "done_ms": round((done - start) * 1000, 1), "error_event": "error" in events}

    def planned(q: str) -> dict[str, Any]:
        decision, p, why = route(ctx, [q])
        calls: list[dict[str, Any]] = []
        if decision.path != "rules":
            p, why, calls = llm.plan([q], p, why)
        return {"got": p.selected_tool, "path": decision.path, "llm_calls": calls}

    for i, (tool, q) in enumerate(items, 1):
        r = asyncio.run(streamed(tool, q)) if i <= full else planned(q)
        calls = r.pop("llm_calls")
        row = {"question": q, "expected": tool, **r, "graph_run": i <= full,
               "planner": next((c["outcome"] for c in calls if c["stage"] == "planner"), None),
               "formatter": next((c["outcome"] for c in calls if c["stage"] == "formatter"), None),
               "calls": [{k: c.get(k) for k in ("stage", "outcome", "latency_ms", "input_tokens", "output_tokens")} for c in calls],
               "tokens": sum_tokens(calls)["total"]}
        rows.append(row)
        if echo is not None:
            timing = f", first {row['first_event_ms'] / 1000:.1f} s, done {row['done_ms'] / 1000:.1f} s" if row["graph_run"] else ""
            echo(f"[{i}/{len(items)}] {'ok ' if row['got'] == tool else 'BAD'} {row['got']} ({row['path']}; planner {row['planner']}, "
                 f"formatter {row['formatter']}{timing}): {q}")
    per_tool: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        per_tool[r["expected"]]["n"] += 1
        per_tool[r["expected"]]["right"] += r["got"] == r["expected"]
    right = sum(r["got"] == r["expected"] for r in rows)
    db = [r for r in rows if r["planner"] is not None]
    ran = [r for r in rows if r["graph_run"]]
    calls = [c for r in rows for c in r["calls"]]

    def stage(name: str) -> dict[str, Any]:
        cs = [c for c in calls if c["stage"] == name]
        return {"calls": len(cs), "used": sum(c["outcome"] == "used" for c in cs),
                "fallbacks": dict(Counter(c["outcome"] for c in cs if c["outcome"] != "used")),
                "latency_ms": _stats([float(c["latency_ms"]) for c in cs if c.get("latency_ms") is not None])}

    return {
        "planner": f"llm ({llm.chat.model})",
        "questions": len(items),
        "sample": {"limit": limit, "seed": seed, "stratified_by_tool": True} if limit is not None else None,
        "graph_runs": len(ran),
        "correct": right,
        "accuracy": round(right / len(rows), 4) if rows else 0.0,
        "llm_planned_questions": len(db),
        "llm_planned_correct": sum(r["got"] == r["expected"] for r in db),
        "deterministic_on_same_sample": sum(plan(ctx, [r["question"]])[0].selected_tool == r["expected"] for r in rows),
        "per_tool": {t: {"n": c["n"], "right": c["right"], "accuracy": round(c["right"] / c["n"], 3)} for t, c in sorted(per_tool.items())},
        "wrong": [{k: r[k] for k in ("question", "expected", "got", "planner")} for r in rows if r["got"] != r["expected"]],
        "warm_s": round(warm_s, 3),
        "first_event_ms": _stats([r["first_event_ms"] for r in ran]),
        "done_ms": _stats([r["done_ms"] for r in ran]),
        "llm_planner": stage("planner"),
        "llm_formatter": stage("formatter"),
        "tokens": sum_tokens(calls),
        "error_events": sum(r["error_event"] for r in ran),
        "rows": rows,
    }
