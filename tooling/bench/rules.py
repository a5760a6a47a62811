"""`livefreq bench rules`: the rules retrievers of the briefing assistant (assistant/rules_rag.py)
on a labelled set of rules questions (assistant/data/rules_questions.tsv): recall@1, recall@5 and
MRR@10 of the right rules.json question, and the time per query, for bm25 alone, embeddings alone
(all-MiniLM-L6-v2 in numpy) and their hybrid (reciprocal rank fusion). The winner is the one the
assistant should use (rules_rag.DEFAULT_RETRIEVER); the report says whether it is."""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

from assistant.context import DATA_DIR, RULES_FILE
from assistant.rules_rag import DEFAULT_RETRIEVER, RETRIEVERS, RulesIndex

LABELS = DATA_DIR / "rules_questions.tsv"
DEPTH = 10  # ranks looked at: MRR@10


def load_rules_labels(path: Path = LABELS) -> list[tuple[str, str, set[str]]]:
    """(country, question, the correct rules.json question ids) per labelled line."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            country, question, *qids = line.split("\t")
            out.append((country.strip(), question.strip(), {q.strip() for q in qids if q.strip()}))
    return out


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] if s else 0.0


def _search(index: RulesIndex, retriever: str, query: str) -> list[str]:
    method = {"bm25": index.search_bm25, "embeddings": index.search_embeddings, "hybrid": index.search_hybrid}[retriever]
    return [q.qid for _, q in method(query, DEPTH)]


def run_rules_bench(
    labels: Path = LABELS, rules: Path = RULES_FILE, limit: int | None = None, seed: int = 0,
    retrievers: tuple[str, ...] = RETRIEVERS,
) -> dict[str, Any]:
    """Every retriever over the labelled set (or `limit` of it, a seeded sample)."""
    items = load_rules_labels(labels)
    if limit is not None and limit < len(items):
        items = random.Random(seed).sample(items, limit)
    t0 = time.perf_counter()
    index = RulesIndex.from_file(rules, retriever="bm25")
    build_s = time.perf_counter() - t0
    known = {q.qid for q in index.questions}
    unknown = sorted({qid for _, _, qids in items for qid in qids} - known)
    if unknown:
        raise ValueError(f"labels name questions that rules.json does not have: {unknown}")
    warm_s = 0.0
    if any(r != "bm25" for r in retrievers):
        t0 = time.perf_counter()
        index._question_vectors()  # model load + the questions' embeddings, once
        warm_s = time.perf_counter() - t0
    results: dict[str, Any] = {}
    for name in retrievers:
        _search(index, name, "warm-up")
        ranks: list[int | None] = []
        ms: list[float] = []
        misses = []
        for country, question, qids in items:
            t0 = time.perf_counter()
            got = _search(index, name, question)
            ms.append((time.perf_counter() - t0) * 1000)
            rank = next((i for i, qid in enumerate(got, 1) if qid in qids), None)
            ranks.append(rank)
            if rank != 1:
                misses.append({"country": country, "question": question, "expected": sorted(qids), "got": got[0] if got else None, "rank": rank})
        n = len(items)
        results[name] = {
            "recall_at_1": round(sum(r == 1 for r in ranks) / n, 4),
            "recall_at_5": round(sum(r is not None and r <= 5 for r in ranks) / n, 4),
            "mrr_at_10": round(sum(1 / r for r in ranks if r is not None) / n, 4),
            "not_in_top_10": sum(r is None for r in ranks),
            "query_ms": {"p50": round(statistics.median(ms), 2), "p95": round(_pct(ms, 0.95), 2), "max": round(max(ms), 2)},
            "misses": misses,
        }
    winner = max(results, key=lambda r: (results[r]["mrr_at_10"], results[r]["recall_at_1"], -results[r]["query_ms"]["p50"]))
    return {
        "benchmark": "rules",
        "questions": len(items),
        "countries": sorted({c for c, _, _ in items}),
        "sample": {"limit": limit, "seed": seed} if limit is not None else None,
        "rules_questions": len(index.questions),
        "bm25_build_s": round(build_s, 3),
        "embeddings_warm_s": round(warm_s, 3),
        "embedding_model": index.encoder.describe() if warm_s else None,
        "retrievers": results,
        "winner": winner,
        "assistant_uses": DEFAULT_RETRIEVER,
    }


def format_table(report: dict[str, Any]) -> list[tuple[str, ...]]:
    return [
        (name, f"{100 * r['recall_at_1']:.1f}%", f"{100 * r['recall_at_5']:.1f}%", f"{r['mrr_at_10']:.3f}",
         f"{r['query_ms']['p50']:.1f}", f"{r['query_ms']['p95']:.1f}")
        for name, r in report["retrievers"].items()
    ]
