"""Shared set-up of the readback property tests and regressions: the repository's flows on a real
`SessionEngine`, seeded scenarios, and sessions brought to each readback state by playing the
flow (`tooling.readback_pilot.driver.StateDriver`), cached and copied per example."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from engine.models import Decision, Session
from engine.registry import FlowRegistry
from engine.session import SessionEngine
from tooling.readback_pilot.driver import StateDriver, last_atc_text, moved_forward, render_context
from tooling.readback_pilot.driver import took_ok_route as took_ok
from tooling.readback_pilot.phrasing import Readback, carrier_of, phrase_readback, readback_states

__all__ = ["SEEDS", "Outcome", "at_state", "carrier_of", "describe", "engine", "generate", "phrase_readback",
           "registry", "render_context", "required", "run", "scenario", "states", "took_ok", "transmit"]

SEEDS = (0, 1, 2, 3, 4, 5)


@lru_cache(maxsize=1)
def registry() -> FlowRegistry:
    from engine.loader import load_registry
    from gateway.flows_source import DirectoryFlowSource
    from gateway.settings import REPO_ROOT

    return load_registry(DirectoryFlowSource(REPO_ROOT / "flows"))


@lru_cache(maxsize=1)
def engine() -> SessionEngine:
    return SessionEngine(registry())


@lru_cache(maxsize=1)
def driver() -> StateDriver:
    return StateDriver(engine())


@lru_cache(maxsize=None)
def scenario(seed: int) -> dict[str, Any]:
    from engine.scenario import resolve_airports, resolve_scenario
    from gateway.airports.repository import default_repository

    repo = default_repository()
    dep, dest = resolve_airports({}, seed)
    return resolve_scenario({}, airport=repo.get(dep), destination=repo.get(dest), seed=seed)


@lru_cache(maxsize=None)
def _reached(flow: str, state: str, seed: int) -> tuple[Session, float]:
    got = driver().reach(flow, state, scenario(seed), session_id=f"props-{seed}")
    return got.session, got.now


def states() -> list[tuple[str, str]]:
    return readback_states(registry())


def at_state(flow: str, state: str, seed: int) -> tuple[Session, float]:
    """A fresh copy of a session standing at (flow, state) with scenario `seed`."""
    session, now = _reached(flow, state, seed)
    return session.model_copy(deep=True), now


@dataclass
class Outcome:
    readback: Readback
    decision: Decision
    session: Session
    forward: bool


def required(flow: str, state: str) -> list[str]:
    return list(registry().get(flow).states[state].readback_required)


def generate(
    flow: str, state: str, seed: int, rng: random.Random, mode: str, field: str | None = None, forms: str = "all", corrections: float = 0.0
) -> tuple[Readback, Session, float]:
    session, now = at_state(flow, state, seed)
    ctx = render_context(engine(), session)
    rb = phrase_readback(
        rng, required(flow, state), ctx, mode=mode, field=field, carrier=carrier_of(registry(), flow, state), forms=forms,
        heard=last_atc_text(session), corrections=corrections,
    )
    return rb, session, now


def transmit(flow: str, state: str, session: Session, now: float, text: str) -> tuple[Decision, bool]:
    decision = engine().transmit(session, text, now + 5.0)
    return decision, moved_forward(decision, flow, state, session)


def decide_recorded(flow: str, state: str, seed: int, heard: dict[str, Any]) -> tuple[Decision, bool]:
    """A recorded voice transmission (`heard`: its transcript, alternatives and checks in the
    audio, as a voice bench report holds them) decided again at its state: the decision, and
    whether it took the state forward."""
    from engine.hearing import Hearing, ValueCheck

    session, now = at_state(flow, state, seed)
    hearing = Hearing(alternatives=heard["alternatives"], checks=[ValueCheck(**c) for c in heard["checks"]])
    decision = engine().transmit(session, heard["heard"], now + 5.0, hearing=hearing)
    return decision, moved_forward(decision, flow, state, session)


def refused_recorded(flow: str, state: str, seed: int, heard: dict[str, Any]) -> tuple[Decision, str]:
    """A recorded voice transmission decided again (`decide_recorded`) that must not be accepted:
    asserts the readback is not ok and the state stayed; returns the decision and the trace's
    readback steps as one text, for the test to say which rule refused it."""
    decision, forward = decide_recorded(flow, state, seed, heard)
    assert decision.readback is not None and not decision.readback.ok
    assert not forward
    return decision, " ".join(s.detail for s in decision.trace.steps if s.step == "readback")


def run(
    flow: str, state: str, seed: int, rng: random.Random, mode: str, field: str | None = None, forms: str = "all", corrections: float = 0.0
) -> Outcome:
    rb, session, now = generate(flow, state, seed, rng, mode, field, forms, corrections)
    decision, forward = transmit(flow, state, session, now, rb.text)
    return Outcome(rb, decision, session, forward)


def describe(o: Outcome) -> str:
    d = o.decision
    fields = d.readback.fields if d.readback else None
    said = [m.text for m in d.messages]
    return (
        f"transcript {o.readback.text!r} ({o.readback.mode} {o.readback.field}); expected {o.readback.expected}; "
        f"engine fields {fields}; recognized {d.recognized}; now at {o.session.active.flow}:{o.session.active.state}; "
        f"forward {o.forward}; controller {said}"
    )
