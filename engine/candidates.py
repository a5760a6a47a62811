"""CandidateBuilder: every route a pilot transmission could take from where the session stands.

Candidates come from three places, in this order: the active flow's current pilot state, the
current states of parallel flows, and the global interrupt flows (radio check, emergency) that are
not already running. Timer transitions are never candidates for words: only the clock takes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from engine.models import FlowMode, Session, State, Transition, TransitionKind
from engine.registry import FlowRegistry

Origin = Literal["active", "parallel", "interrupt"]


@dataclass(slots=True)
class Candidate:
    """One route with the evidence gathered for it while deciding."""

    transition: Transition
    flow: str  # flow the transition belongs to
    state: str  # state it leaves
    origin: Origin
    target_flow: str
    target_state: str
    examples: list[str] = field(default_factory=list)  # rendered example pilot phrases
    score: float = 0.0
    trigger_hit: bool = False
    heard: str | None = None  # which trigger was heard (intent name or pattern)
    eliminated: bool = False
    reason: str | None = None
    # after routing: "eliminated", "remains" or "uncertain", and why (engine/router.py, steps 7/8)
    status: str | None = None
    evidence: str | None = None

    @property
    def id(self) -> str:
        if self.target_flow != self.flow:
            return f"{self.target_flow}:{self.target_state}"
        return self.target_state

    def eliminate(self, reason: str) -> None:
        self.eliminated = True
        self.reason = reason


_WORD_KINDS = (
    TransitionKind.NEXT,
    TransitionKind.OK,
    TransitionKind.BAD,
    TransitionKind.AUTO,
    TransitionKind.INTERRUPT,
    TransitionKind.RETURN,
)


def target_of(registry: FlowRegistry, flow_slug: str, transition: Transition, stack_top: str | None) -> tuple[str, str]:
    """Where a transition leads, as (flow, state); `return` leads back to the stacked flow."""
    if transition.kind is TransitionKind.RETURN and not transition.flow:
        return (stack_top or flow_slug, transition.to or "(resume)")
    if transition.flow:
        target = registry.get(transition.flow)
        return target.slug, transition.to or target.start_state
    return flow_slug, transition.to or ""


def _from_state(
    registry: FlowRegistry, session: Session, flow_slug: str, state: State, origin: Origin
) -> list[Candidate]:
    stack_top = session.flow_stack[-1].flow if session.flow_stack else None
    out: list[Candidate] = []
    for t in state.transitions:
        if t.kind not in _WORD_KINDS:
            continue
        if t.kind is TransitionKind.AUTO and not any(tr.kind != "telemetry" for tr in t.triggers):
            continue  # telemetry-only autos are taken by the telemetry path, not by words
        tflow, tstate = target_of(registry, flow_slug, t, stack_top)
        out.append(Candidate(t, flow_slug, state.id, origin, tflow, tstate))
    return out


def build_candidates(registry: FlowRegistry, session: Session) -> list[Candidate]:
    """All candidates for a pilot transmission, before guards, triggers and readback."""
    active = session.active
    flow = registry.get(active.flow)
    cands = _from_state(registry, session, flow.slug, flow.states[active.state], "active")
    for frame in session.parallel_flows:
        pflow = registry.get(frame.flow)
        pstate = pflow.states.get(frame.state)
        if pstate is not None:
            cands += _from_state(registry, session, pflow.slug, pstate, "parallel")
    running = {active.flow, *(f.flow for f in session.flow_stack)}
    for iflow in registry.interrupt_flows():
        if iflow.slug in running or iflow.interrupt is None:
            continue
        t = Transition(
            kind=TransitionKind.INTERRUPT,
            flow=iflow.slug,
            mode=FlowMode.INTERRUPT,
            label=iflow.name or iflow.slug,
            intent=iflow.slug,
            triggers=iflow.interrupt.triggers,
            priority=iflow.interrupt.priority,
        )
        cands.append(Candidate(t, active.flow, active.state, "interrupt", iflow.slug, iflow.start_state))
    return cands
