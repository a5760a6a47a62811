"""`livefreq bench assistant`: the deterministic planner's tool selection on the labelled set
(assistant/data/bench_questions.tsv) and the graph's latency: time to the first SSE event and to
`done`, measured through `stream_agent` (the same adapter the HTTP route uses), in process."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
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


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def run_assistant_bench(ctx: AssistantContext | None = None, labels: Path = LABELS, repeat: int = 1, llm: Any | None = None) -> dict[str, Any]:
    """With `llm` (assistant/llm.py `AssistantLlm`) the tool choice is the LLM planner's (a
    fallback counts as the deterministic plan it fell back to, and is counted apart), and the
    latency runs through the LLM planner and formatter."""
    ctx = ctx or AssistantContext.load()
    t0 = time.perf_counter()
    ctx.warm()
    warm_s = time.perf_counter() - t0
    graph = build_agent(ctx, llm=llm)
    llm_calls: list[dict[str, Any]] = []
    items = load_labels(labels)
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
