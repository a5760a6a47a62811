"""Directions are checked like any issued value: "right heading 070" for "turn left heading 070"
is wrong, and the controller repeats the whole instruction; so are "report right downwind" for
left and "facing west" for a pushback facing east.

Properties over every heading and direction, in the independent pilot's digit words
(`tooling.readback_pilot.words`), with and without "turn", our callsign first or last: the
direction said is "ok" exactly when it is the one issued; a runway's side before "heading" is never
a turn; and on every flow state that issues a turn, a readback turning the other way never takes
the state forward and is corrected with "turn <issued> heading <heading>".
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.phraseology.directions import POINTS, canonical, facing_canonical
from engine.readback import ReadbackEvaluator
from tests.support import readback as rb
from tooling.readback_pilot.words import digit_words

evaluator = ReadbackEvaluator()
CALLSIGN = {"callsign": "DLH359", "callsign_spoken": "Lufthansa 359"}
HEADINGS = st.integers(1, 72).map(lambda n: f"{n * 5:03d}")
SIDES = st.sampled_from(("left", "right"))
TURN_STATES = [
    (flow, state)
    for flow, state in rb.states()
    if "{{turn}}" in (rb.registry().get(flow).states[state].utterance_tpl or "")
]


def _say(heading: str, rng: random.Random) -> str:
    return digit_words(heading, rng, rng.choice(("icao", "plain", "mixed", "numeric")))


def _judge(text: str, heading: str, turn: str) -> dict[str, str]:
    variables = {**CALLSIGN, "heading": heading, "turn": turn}
    issued = {"turn": turn, "heading": heading}
    return dict(evaluator.evaluate(["heading"], variables, text, issued=issued).fields)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    heading=HEADINGS, issued=SIDES, said=SIDES, turn_word=st.sampled_from(("", "turn ", "turning ")),
    callsign_first=st.booleans(), rng=st.randoms(use_true_random=False),
)
def test_the_direction_said_is_ok_exactly_when_it_is_the_one_issued(
    heading: str, issued: str, said: str, turn_word: str, callsign_first: bool, rng: random.Random
) -> None:
    body = f"{turn_word}{said} heading {_say(heading, rng)}"
    text = f"Lufthansa three five niner, {body}" if callsign_first else f"{body}, Lufthansa three five niner"
    fields = _judge(text, heading, issued)
    assert fields == {"heading": "ok", "turn": "ok" if said == issued else "wrong"}, text


@settings(max_examples=100, deadline=None, derandomize=True)
@given(heading=HEADINGS, issued=SIDES, side=SIDES, runway=st.integers(1, 36), rng=st.randoms(use_true_random=False))
def test_a_runway_side_before_the_heading_is_no_turn(
    heading: str, issued: str, side: str, runway: int, rng: random.Random
) -> None:
    text = f"vectors ILS runway {_say(f'{runway:02d}', rng)} {side}, heading {_say(heading, rng)}, Lufthansa 359"
    assert _judge(text, heading, issued) == {"heading": "ok"}, text


@settings(max_examples=60, deadline=None, derandomize=True)
@given(heading=HEADINGS, issued=SIDES, rng=st.randoms(use_true_random=False))
def test_a_heading_read_back_without_its_direction_is_fine(heading: str, issued: str, rng: random.Random) -> None:
    text = f"heading {_say(heading, rng)}, Lufthansa 359"
    assert _judge(text, heading, issued) == {"heading": "ok"}, text


def test_turn_canonical_forms() -> None:
    assert [canonical(v) for v in ("left", "Right", "L", "r", "up", "")] == ["left", "right", "left", "right", None, None]


def test_some_flow_states_issue_a_turn() -> None:
    assert len(TURN_STATES) >= 3, TURN_STATES


@pytest.mark.parametrize(("flow", "state"), TURN_STATES, ids=[f"{f}:{s}" for f, s in TURN_STATES])
@pytest.mark.parametrize("seed", rb.SEEDS)
def test_a_readback_turning_the_other_way_never_moves_on_and_is_corrected(flow: str, state: str, seed: int) -> None:
    session, now = rb.at_state(flow, state, seed)
    turn, heading = session.variables["turn"], session.variables["heading"]
    other = "right" if turn == "left" else "left"
    callsign = session.variables["callsign_spoken"]
    decision, forward = rb.transmit(flow, state, session, now + 5.0, f"{other} heading {heading}, {callsign}")
    assert not forward and decision.readback is not None and decision.readback.fields.get("turn") == "wrong"
    assert any(f"turn {turn} heading {heading}" in m.text for m in decision.messages), [m.text for m in decision.messages]
    session, now = rb.at_state(flow, state, seed)
    decision, forward = rb.transmit(flow, state, session, now + 5.0, f"{turn} heading {heading}, {callsign}")
    assert decision.readback is not None and decision.readback.fields.get("turn") == "ok"


@settings(max_examples=60, deadline=None, derandomize=True)
@given(issued=SIDES, said=SIDES, leg=st.sampled_from(("downwind", "base", "hand downwind")), runway_side=SIDES)
def test_a_circuit_side_is_ok_exactly_when_it_is_the_one_issued(issued: str, said: str, leg: str, runway_side: str) -> None:
    text = f"runway two five {runway_side}, cleared for takeoff, report {said} {leg}, Lufthansa 359"
    variables = {**CALLSIGN, "circuit_direction": issued, "runway": f"25{runway_side[0].upper()}"}
    fields = dict(evaluator.evaluate(["runway"], variables, text, issued={"circuit_direction": issued, "instruction:runway": "takeoff"}).fields)
    assert fields == {"runway": "ok", "circuit_direction": "ok" if said == issued else "wrong"}, text


@settings(max_examples=60, deadline=None, derandomize=True)
@given(issued=st.sampled_from(POINTS), said=st.sampled_from(POINTS), qnh=st.integers(980, 1040))
def test_a_pushback_facing_is_ok_exactly_when_it_is_the_one_issued(issued: str, said: str, qnh: int) -> None:
    text = f"startup and pushback approved, facing {said}, QNH {qnh}, Lufthansa 359"
    variables = {**CALLSIGN, "push_facing": issued, "qnh": qnh}
    fields = dict(evaluator.evaluate(["qnh"], variables, text, issued={"push_facing": issued}).fields)
    assert fields == {"qnh": "ok", "push_facing": "ok" if said == issued else "wrong"}, text


def test_facing_canonical_forms() -> None:
    assert [facing_canonical(v) for v in ("east", "West", "N", "s", "up")] == ["east", "west", "north", "south", None]

