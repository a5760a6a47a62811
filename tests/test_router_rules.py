"""Seed 000 steps 7/8 in the deterministic router (engine/router.py): eliminated, remains, uncertain."""

from __future__ import annotations

from engine.candidates import Candidate
from engine.models import Transition, TransitionKind
from engine.router import DeterministicRouter, RouteRequest
from engine.router_llm import consult_reason, offered


def cand(to: str, example: str | None = None, *, kind: TransitionKind = TransitionKind.NEXT, score: float = 0.0) -> Candidate:
    c = Candidate(Transition(kind=kind, to=to), "f", "S", "active", "f", to, score=score)
    if example:
        c.examples.append(example)
    return c


def route(cands: list[Candidate], text: str, threshold: float = 70.0):
    return DeterministicRouter().route(RouteRequest(text, cands, threshold))


def test_one_remaining_is_selected_without_the_llm_beside_an_uncertain_near_tie() -> None:
    a, b = cand("A", "request taxi"), cand("B", "request taxi to holding point")
    result = route([a, b], "request taxi to holding")
    assert a.status == "remains" or b.status == "remains"
    remaining = [c for c in (a, b) if c.status == "remains"]
    if len(remaining) == 1:
        assert result.rule == "single_remaining" and result.chosen is remaining[0]
        assert consult_reason(result, [a, b]) is None


def test_gibberish_leaves_a_lone_candidate_uncertain_so_it_is_not_selected() -> None:
    lone = cand("A", "request pushback")
    result = route([lone], "banana pancakes")
    assert lone.status == "uncertain" and "did not match" in lone.evidence
    assert result.chosen is None and result.rule == "uncertain"
    assert consult_reason(result, [lone]) == "below_threshold"  # the LLM may classify, if configured


def test_readback_evidence_remains_below_the_threshold_and_the_llm_sees_only_the_remaining() -> None:
    bad = cand("S", kind=TransitionKind.BAD, score=65.0)  # scored by the readback evaluator
    other = cand("B", "standby")
    result = route([bad, other], "munich squawk four seven one two")
    assert bad.status == "remains" and other.status == "uncertain"
    assert result.rule == "single_remaining" and result.chosen is bad
    tie_a, tie_b = cand("A", "request taxi"), cand("B", "request taxi")
    tied = route([tie_a, tie_b, cand("C", "request pushback")], "request taxi")
    assert tied.rule == "best_remaining" and tied.ambiguous
    assert [qid for qid, _ in offered([tie_a, tie_b])] == ["A", "B"]


def test_all_eliminated_is_none_left() -> None:
    c = cand("A", "request taxi")
    c.eliminate("guard false: x")
    result = route([c], "request taxi")
    assert result.rule == "none_left" and c.status == "eliminated" and consult_reason(result, [c]) is None
