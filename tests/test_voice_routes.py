"""By voice, a route other than the readback's is taken only where another transcript of the same
audio routes there too (engine/routing.py `heard_alike`): unsure hearing is no verdict for what
the pilot asks, as for the values read back.

Checked over every readback state of every flow (the readback bench's states, each reached by
its own scripted pilot) and every other route those states offer by a phrase: the phrase heard
in the best transcript alone (the other transcripts our callsign only) is not taken; heard in
another transcript too, it is taken as typed. Found on the voice bench (seed 55, Kokoro): whisper
base heard a readback of the callsign alone as "Egyptair, cancel." and the emergency ended."""

from __future__ import annotations

import functools
import pytest

from engine.candidates import Candidate
from engine.hearing import Hearing
from engine.models import Decision, TransitionKind
from tooling.bench.readback import Bench, default_bench


@functools.cache
def _bench() -> Bench:
    return default_bench()


# What a pilot says to break into any state (the flows' interrupts: emergency, radio check).
INTERRUPT_PHRASES = ("mayday mayday mayday, engine failure", "pan pan, pan pan, pan pan", "radio check")


def _intent(c: Candidate) -> str:
    """The intent a decision records for a route taken (engine/session.py)."""
    return c.transition.intent or c.transition.label or c.transition.kind.value


def _phrase_routes() -> list[tuple[str, str, str, str]]:
    """(flow, state, route id, a phrase) for every route other than the readback's that a
    readback state offers (by its example phrase, or an interrupt's words) and that the phrase,
    typed, takes."""
    bench = _bench()
    engine, out = bench.engine, []
    for flow_slug, state_id in bench.states:
        session, now = bench.at_state(flow_slug, state_id, 0)
        flow = bench.registry.get(flow_slug)
        ctx = engine.routing.speaker.render_ctx(session, flow, flow.states[state_id])
        cands = engine.routing.screened(session, "", ctx)
        for c in cands:
            if c.transition.kind in (TransitionKind.OK, TransitionKind.BAD):
                continue
            if c.origin == "interrupt":
                phrases = [f"{ctx.get('callsign_spoken', '')}, {p}" for p in INTERRUPT_PHRASES]
            else:
                phrases = [] if c.eliminated else c.examples[:1]
            for phrase in phrases:
                typed = engine.transmit(session.model_copy(deep=True), phrase, now + 5.0)
                if typed.intent == _intent(c):
                    out.append((flow_slug, state_id, c.id, phrase))
                    break
    return out


ROUTES = _phrase_routes()


def _callsign(flow: str, state: str) -> str:
    bench = _bench()
    session, _now = bench.at_state(flow, state, 0)
    f = bench.registry.get(flow)
    return str(bench.engine.routing.speaker.render_ctx(session, f, f.states[state]).get("callsign_spoken", ""))


def test_every_readback_state_offers_routes_by_a_phrase() -> None:
    """The check below is not vacuous: the readback states offer such routes (an emergency
    declared or cancelled, a radio check, a pilot not ready yet)."""
    assert len({(f, s) for f, s, _id, _p in ROUTES}) >= 20
    assert {r.split(":")[-1] for _f, _s, r, _p in ROUTES} >= {"EM_CANCELLED", "CD_NOT_READY", "EM_ACK", "RC_REPLY"}


@pytest.mark.parametrize(("flow", "state", "route", "phrase"), ROUTES, ids=[f"{f}:{s}->{r}" for f, s, r, _p in ROUTES])
def test_a_route_heard_in_the_best_transcript_alone_is_not_taken(flow: str, state: str, route: str, phrase: str) -> None:
    bench = _bench()
    session, now = bench.at_state(flow, state, 0)
    callsign = _callsign(flow, state)

    typed = bench.engine.transmit(session.model_copy(deep=True), phrase, now + 5.0)

    def heard(*alternatives: str) -> Decision:
        return bench.engine.transmit(session.model_copy(deep=True), phrase, now + 5.0, hearing=Hearing(alternatives=list(alternatives)))

    alone = heard(callsign)
    assert alone.transition is None or alone.transition.kind is TransitionKind.BAD  # a correction at most
    assert alone.intent != typed.intent
    assert (alone.to_flow, alone.to_state) == (flow, state)  # the state stays
    assert any(f"{route} is heard in no other transcript" in step.detail for step in alone.trace.steps)
    twice = heard(callsign, phrase)
    assert (twice.to_flow, twice.to_state, twice.intent) == (typed.to_flow, typed.to_state, typed.intent)
