"""Lexical retrieval (bm25s) over rules.json: which question of the rules a user asks, and each
country's answer to it with its review date.

rules.json (flyfun, MIT, assistant/data/rules.LICENSE) holds questions, each with a category, tags
and answers by country (ISO-2) with `last_reviewed`. It is pilots' know-how, not an authority.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s

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
    def __init__(self, questions: list[RuleQuestion]) -> None:
        self.questions = questions
        self.countries = sorted({c for q in questions for c in q.answers})
        self.tags = sorted({t for q in questions for t in q.tags})
        self.categories = sorted({q.category for q in questions})
        self._bm25 = bm25s.BM25()
        self._bm25.index(
            [tokens(f"{q.text} {q.text} {q.category} {' '.join(q.tags)}") for q in questions], show_progress=False
        )

    @classmethod
    def from_file(cls, path: Path | str) -> RulesIndex:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        questions = [
            RuleQuestion(
                q["question_id"], q["question_text"].strip(), q.get("category") or "", tuple(q.get("tags") or ()),
                dict(q.get("answers_by_country") or {}),
            )
            for q in data["questions"]
            if (q.get("category") or "").lower() != "ignore"
        ]
        return cls(questions)

    def search(self, query: str, k: int = 3) -> list[tuple[float, RuleQuestion]]:
        """The questions best matching `query`, best first, with their bm25 scores (> 0 only)."""
        q = tokens(query)
        if not q:
            return []
        k = min(k, len(self.questions))
        docs, scores = self._bm25.retrieve([q], k=k, show_progress=False)
        return [(float(s), self.questions[int(i)]) for i, s in zip(docs[0], scores[0], strict=True) if s > 0]

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
