"""Routers choose among the candidates that survived guards, triggers and the readback check.

The deterministic router is the embedded default: it scores the transcript against each candidate's
example phrases with rapidfuzz, after removing what carries no intent (numbers, the callsign, the
station name, filler words), so "Lufthansa 359" alone never passes for "request taxi". Trigger hits
and readback evidence outrank fuzzy similarity.

Seed 000's decision algorithm, steps 7 and 8, made explicit (`Status`): after guards, conditions,
triggers and the readback check (engine/session.py `_screen`, `_readback`) every candidate is

- ``eliminated``, with its reason (guard, condition, trigger not heard, readback);
- ``remains``: there is positive evidence for it: one of its triggers was heard, the readback
  evaluator scored it (``ok``/``bad`` routes), or its example phrase matched (similarity at or
  above the flow's ``match_threshold``);
- ``uncertain``: not eliminated, but nothing speaks for it: no trigger heard, no readback
  evidence, and its phrase did not match (similarity below the threshold, or no phrase at all).

An uncertain candidate does not remain. Fuzzy similarity below the threshold is no evidence:
unrelated words ("banana pancakes") score 20 to 49 against the curriculum's phrases, as many
real paraphrases do (tests/flows/paraphrases.yaml, 9 to 50), so a lone candidate with a weak
score is never taken on that score; that would answer gibberish with a clearance.

The rule that applies (`RouteResult.rule`, in every decision's trace):

- ``single_remaining`` (step 7): exactly one candidate remains; it is selected without the LLM,
  whatever uncertain candidates there are beside it.
- ``best_remaining`` (step 8): several remain; the best score wins, ties go to declaration order.
  A near tie among them (`ambiguous`) is what the LLM router may decide ("choose among explicit
  candidate states").
- ``uncertain``: none remains, some are uncertain; no deterministic choice. The LLM router, when
  configured, may classify the words among the uncertain candidates (the contract's "classify
  pilot intent"); otherwise the controller asks to say again.
- ``none_left``: every candidate was eliminated; say again, and no LLM is asked (it must never
  bring back an eliminated route).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, Protocol

from rapidfuzz import fuzz

from engine.candidates import Candidate
from engine.models import TransitionKind

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


# how the deterministic router decided (module docstring)
Rule = Literal["single_remaining", "best_remaining", "uncertain", "none_left"]


@dataclass(slots=True)
class RouteResult:
    chosen: Candidate | None
    router: str
    scores: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    ambiguous: bool = False
    rule: Rule | None = None  # the deterministic rule that applied (module docstring)
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
    """The best remaining candidate wins; ties go to declaration order (the flow author's priority)."""

    name = "deterministic"
    ambiguity_margin = 3.0

    def route(self, request: RouteRequest) -> RouteResult:
        live = [c for c in request.candidates if not c.eliminated]
        scores: dict[str, float] = {}
        for cand in request.candidates:
            if cand.eliminated:
                cand.status = "eliminated"
                continue
            if cand.trigger_hit:
                cand.score = max(cand.score, TRIGGER_SCORE + cand.transition.priority)
            elif cand.examples and cand.score < TRIGGER_SCORE:
                similar = max(similarity(request.transcript, ex, request.noise_words) for ex in cand.examples)
                cand.score = max(cand.score, round(similar, 1))
            scores[cand.id] = cand.score
            cand.status, cand.evidence = classify(cand, request.threshold)
        if not live:
            return RouteResult(None, self.name, scores, "no candidate left", rule="none_left")
        remaining = [c for c in live if c.status == "remains"]
        if not remaining:
            best = max(live, key=lambda c: c.score)  # max keeps the first of equals
            reason = (
                f"no candidate remains; best uncertain {best.id} scored {best.score:.0f}"
                f" < threshold {request.threshold:.0f}"
            )
            return RouteResult(None, self.name, scores, reason, rule="uncertain")
        best = max(remaining, key=lambda c: c.score)
        if len(remaining) == 1:
            reason = f"{best.id} is the one remaining candidate ({best.evidence}): selected without the LLM"
            return RouteResult(best, self.name, scores, reason, rule="single_remaining")
        rivals = [c for c in remaining if c is not best and best.score - c.score < self.ambiguity_margin]
        reason = f"{best.id} scored {best.score:.0f}, best of {len(remaining)} remaining"
        if rivals:
            reason += f"; near tie with {', '.join(c.id for c in rivals)} resolved by declaration order"
        return RouteResult(best, self.name, scores, reason, ambiguous=bool(rivals), rule="best_remaining")


def classify(cand: Candidate, threshold: float) -> tuple[str, str]:
    """Whether a candidate that survived the screens remains (positive evidence) or is uncertain,
    and the evidence in words (module docstring)."""
    if cand.trigger_hit:
        return "remains", f"trigger heard: {cand.heard}"
    if cand.transition.kind in (TransitionKind.OK, TransitionKind.BAD) and cand.score > 0 and not cand.examples:
        return "remains", f"readback evidence (score {cand.score:.0f})"
    if cand.examples and cand.score >= threshold:
        return "remains", f"phrase matched (score {cand.score:.0f} >= {threshold:.0f})"
    if not cand.examples:
        return "uncertain", "no trigger heard, no readback evidence and no phrase to match"
    return "uncertain", f"no trigger heard and the phrase did not match (score {cand.score:.0f} < {threshold:.0f})"
