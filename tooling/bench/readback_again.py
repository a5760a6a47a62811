"""The pilot's answer to "say again", by voice: what a controller who asks again costs a pilot.

A readback asked again is not refused: on the radio the pilot says again what was asked ("say
again QNH": "QNH one zero one four, Lufthansa three five niner"), the engine keeps what it heard
right before (`Session.readback_heard`, a readback in parts), and the exchange goes on. The voice
bench plays that answer (unless `--no-again`) once for every right or changed readback asked again:

- the same pilot voice engine and voice says the items the controller asked for, from what the
  pilot believes (a changed value is said wrong again), in its own phrasing, new noise;
- it is heard by the same recognizer chain at the state the first transmission left, and decided
  there;
- right readbacks: accepted by the answer, or asked again once more, or refused; changed ones: an
  answer accepted is a wrong readback accepted, and counts with the others.

A dropped value is not answered: asked for by name, a pilot says it, so the answer is right and
says nothing of the first readback's safety.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from engine.models import Decision, Session
from tooling.bench.readback import Bench, Case, verdict
from tooling.readback_pilot.driver import last_atc_text, moved_forward, render_context
from tooling.readback_pilot.phrasing import phrase_readback

__all__ = ["AgainTally", "asked_items", "answer_text"]


def asked_items(decision: Decision, required: list[str]) -> list[str]:
    """The fields the controller asked again, as its trace names them (`asked`: the unsure and
    missing ones of an item-wise "say again", and by voice a clearance limit heard right but not
    kept), every required one when nothing of the readback was heard."""
    asked = next((step.data["asked"] for step in decision.trace.steps if "asked" in step.data), None)
    if decision.intent == "say_again_items" and asked:
        return [name for name in required if name in asked]
    return list(required)


def answer_text(bench: Bench, case: Case, session: Session, asked: list[str], forms: str) -> str:
    """What the pilot says again: the `asked` items, from what the pilot believes it was told (a
    changed value said wrong again), phrased anew (`phrase_readback`)."""
    believed = {**render_context(bench.engine, session), **case.readback.said}
    rng = random.Random(f"again:{case.index}")
    return phrase_readback(rng, asked, believed, forms=forms, heard=last_atc_text(session)).text


def decide_answer(bench: Bench, case: Case, session: Session, text: str, hearing: Any, now: float) -> tuple[Decision, bool]:
    """The answer decided at the state the first transmission left (`session`, changed)."""
    decision = bench.engine.transmit(session, text, now, hearing=hearing)
    return decision, moved_forward(decision, case.flow, case.state, session)


class AgainTally:
    """Outcomes of the answers to "say again" (right and changed readbacks)."""

    def __init__(self) -> None:
        self.outcomes: dict[str, Counter[str]] = {"correct": Counter(), "wrong": Counter()}
        self.wrong_accepted = 0

    def add(self, case: Case, decision: Decision, forward: bool) -> None:
        mode = case.readback.mode
        v = verdict(decision)
        self.outcomes[mode][v] += 1
        if mode != "correct" and (v == "accepted" or forward):
            self.wrong_accepted += 1

    def result(self, correct: int, first_accepted: int) -> dict[str, Any]:
        """The answers' outcomes, and right readbacks accepted within one "say again" of `correct`
        (`first_accepted` at the first transmission)."""
        answered = self.outcomes["correct"]
        within = first_accepted + answered["accepted"]
        return {
            "outcomes": {m: dict(c) for m, c in self.outcomes.items()},
            "correct_answered": sum(answered.values()),
            "correct_accepted": answered["accepted"],
            "correct_accepted_within_one": within,
            "correct_accepted_within_one_rate": round(within / correct, 4) if correct else None,
            "wrong_answered": sum(self.outcomes["wrong"].values()),
            "wrong_accepted": self.wrong_accepted,
        }
