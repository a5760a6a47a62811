"""Routers choose among the candidates that survived guards, triggers and the readback check.

The deterministic router is the embedded default: it scores the transcript against each candidate's
example phrases with rapidfuzz, after removing what carries no intent (numbers, the callsign, the
station name, filler words), so "Lufthansa 359" alone never passes for "request taxi". Trigger hits
and readback evidence outrank fuzzy similarity. When its result is ambiguous (a near tie) or below
the threshold, the engine may ask the LLM router to choose among the same surviving candidates
(engine/router_llm.py: the question, the validation of the answer, the fallback).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from rapidfuzz import fuzz

from engine.candidates import Candidate

TRIGGER_SCORE = 100.0
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?[a-z]?\b")
_FILLER = frozenset(
    "uh um er ah the a an and with of on to for is are we our please sir roger thanks thank you "
    "good morning day evening".split()
)


@dataclass(slots=True)
class RouteRequest:
    transcript: str  # normalized transcript
    candidates: list[Candidate]  # survivors, in declaration order
    threshold: float
    noise_words: frozenset[str] = frozenset()  # callsign and station words of this session


@dataclass(slots=True)
class RouteResult:
    chosen: Candidate | None
    router: str
    scores: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    ambiguous: bool = False
    llm: dict | None = None  # the LLM router's call and verdict (RouterVerdict.trace_view)
    fallback: dict | None = None  # {reason, detail, policy} when the LLM's answer was not used
    updates: dict = field(default_factory=dict)  # variables the LLM set with its choice (validated)


@dataclass(slots=True)
class Routing:
    """How one transmission was routed: every candidate weighed (scores, eliminations), the
    router's result and the candidate the engine followed (None: not understood). Adapters that
    explain a decision read it (the compat API); it is not part of the stored decision."""

    candidates: list[Candidate]
    result: RouteResult
    chosen: Candidate | None
    threshold: float


class Router(Protocol):
    name: str

    def route(self, request: RouteRequest) -> RouteResult: ...


def intent_words(normalized: str, noise: frozenset[str]) -> str:
    """The words of a phrase that can say what the pilot wants."""
    text = _NUMBER.sub(" ", normalized)
    return " ".join(w for w in text.split() if w not in _FILLER and w not in noise)


def similarity(transcript: str, example: str, noise: frozenset[str]) -> float:
    a = intent_words(transcript, noise)
    b = intent_words(example, noise)
    if not a or not b:
        return 0.0
    # token_set_ratio forgives extra or missing words; the sort ratio keeps a one-word
    # fragment from scoring 100 against a long phrase.
    return 0.7 * fuzz.token_set_ratio(a, b) + 0.3 * fuzz.token_sort_ratio(a, b)


class DeterministicRouter:
    """Highest score wins; ties go to declaration order (the flow author's priority)."""

    name = "deterministic"
    ambiguity_margin = 3.0

    def route(self, request: RouteRequest) -> RouteResult:
        live = [c for c in request.candidates if not c.eliminated]
        scores: dict[str, float] = {}
        for cand in request.candidates:
            if cand.eliminated:
                continue
            if cand.trigger_hit:
                cand.score = max(cand.score, TRIGGER_SCORE + cand.transition.priority)
            elif cand.examples and cand.score < TRIGGER_SCORE:
                best = max(similarity(request.transcript, ex, request.noise_words) for ex in cand.examples)
                cand.score = max(cand.score, round(best, 1))
            scores[cand.id] = cand.score
        if not live:
            return RouteResult(None, self.name, scores, "no candidate left")
        best = max(live, key=lambda c: c.score)  # max keeps the first of equals
        if best.score < request.threshold:
            return RouteResult(None, self.name, scores, f"best score {best.score:.0f} < threshold {request.threshold:.0f}")
        rivals = [c for c in live if c is not best and best.score - c.score < self.ambiguity_margin]
        reason = f"{best.id} scored {best.score:.0f}"
        if rivals:
            reason += f"; near tie with {', '.join(c.id for c in rivals)} resolved by declaration order"
        return RouteResult(best, self.name, scores, reason, ambiguous=bool(rivals))
