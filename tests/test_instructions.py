"""Instructions in words are checked like values: "climb" read back for "descend", "cleared for
takeoff" for "line up and wait", a runway clearance nobody gave (`engine.phraseology.instructions`).

Properties: over every readback state of every flow, a correct readback by the independent pilot
(`tooling.readback_pilot`) with its climb and descend swapped is never accepted and never moves the
state on; over any controller message and pilot phrase of the runway group, a clearance is wrong
exactly when the controller did not give it (a takeoff clearance includes lining up; holding
short and going around are never wrong; what a pilot asks for is no readback).
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.phraseology.instructions import GROUPS, SAID, contradictions, record_instructions
from engine.phraseology.transcript import tokenize
from tests.support import readback as rb

STATES = rb.states()
RUNWAY = sorted(GROUPS["runway"])
_SWAP = {"climb": "descend", "descend": "climb", "climbing": "descending", "descending": "climbing"}


def _swapped(text: str) -> str:
    return re.sub(r"\b(climb|descend|climbing|descending)\b", lambda m: _SWAP[m.group(1).lower()], text, flags=re.IGNORECASE)


@pytest.mark.parametrize(("flow", "state"), STATES, ids=[f"{f}:{s}" for f, s in STATES])
@settings(max_examples=8, deadline=None, derandomize=True)
@given(rng=st.randoms(use_true_random=False), seed=st.sampled_from(rb.SEEDS))
def test_a_readback_climbing_where_told_to_descend_is_never_accepted(flow: str, state: str, rng: random.Random, seed: int):
    said, session, now = rb.generate(flow, state, seed, rng, "correct", forms="core")
    told = rb.last_atc_text(session).lower()
    swapped = _swapped(said.text)
    if swapped == said.text or not re.search(r"\b(climb|descend)\b", told):
        return  # no climb or descend said, or none told: nothing to swap here
    decision, forward = rb.transmit(flow, state, session, now, swapped)
    assert decision.readback is not None and not decision.readback.ok, (told, swapped)
    assert decision.readback.fields.get("instruction:vertical") == "wrong", (told, swapped, decision.readback.fields)
    assert not forward, (told, swapped)
    # the correction says the verb as a controller does, with its level, once: "descend 5000 feet"
    correction = " ".join(m.text for m in decision.messages).lower()
    verb, level = re.findall(r"\b(climb|descend) (\S+(?: feet)?)", told)[-1]
    assert f"{verb} {level.rstrip('.,')}" in correction, (told, swapped, correction)
    assert len(re.findall(rf"\b{verb}\b", correction)) == 1 and _SWAP[verb] not in correction, correction


def test_some_states_tell_to_climb_or_descend() -> None:
    told = set()
    for flow, state in STATES:
        session, _ = rb.at_state(flow, state, 0)
        told |= set(re.findall(r"\b(climb|descend)\b", rb.last_atc_text(session).lower()))
    assert told == {"climb", "descend"}


_PILOT = {
    "line_up": ("line up and wait", "lining up"),
    "takeoff": ("cleared for takeoff", "cleared for take-off", "cleared to take off"),
    "land": ("cleared to land",),
    "touch_and_go": ("cleared touch and go", "touch and go"),
    "cross": ("cross runway two five", "crossing runway 18"),
    "hold_short": ("holding short", "hold short of runway 07C"),
    "go_around": ("going around", "go around"),
}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    given_=st.lists(st.sampled_from(RUNWAY), max_size=2, unique=True),
    said=st.sampled_from(RUNWAY),
    form=st.integers(0, 2),
    asked=st.booleans(),
    callsign_first=st.booleans(),
)
def test_a_runway_clearance_is_wrong_exactly_when_not_given(
    given_: list[str], said: str, form: int, asked: bool, callsign_first: bool
) -> None:
    issued: dict[str, str] = {}
    record_instructions(issued, "Lufthansa 359, " + ", ".join(f"{SAID[g]} runway 25R" for g in given_) + ".")
    phrase = _PILOT[said][form % len(_PILOT[said])]
    phrase = f"request {phrase}" if asked else phrase
    text = f"Lufthansa 359, {phrase}, runway 25R" if callsign_first else f"{phrase} runway 25R, Lufthansa 359"
    wrong = contradictions(tokenize(text).words, issued)
    allowed = set(given_) | ({"line_up"} if "takeoff" in given_ else set()) | {"hold_short", "go_around"}
    assert ("instruction:runway" in wrong) == (said not in allowed and not asked), (given_, text, wrong)


def test_the_latest_runway_instruction_replaces_the_earlier_one() -> None:
    issued: dict[str, str] = {}
    record_instructions(issued, "Lufthansa 359, hold short of runway 25R, contact tower 118.7.")
    record_instructions(issued, "Lufthansa 359, Frankfurt Tower, line up runway 25R and wait.")
    assert issued == {"instruction:runway": "line_up"}
    assert contradictions(tokenize("line up and wait runway 25R").words, issued) == {}
    assert contradictions(tokenize("cleared for takeoff 25R").words, issued) == {
        "instruction:runway": ("line up and wait", "cleared for takeoff")
    }


def test_a_message_without_an_instruction_keeps_the_last_one() -> None:
    issued: dict[str, str] = {}
    record_instructions(issued, "Lufthansa 359, descend FL100.")
    record_instructions(issued, "Lufthansa 359, contact Munich Approach 119.0.")
    assert issued == {"instruction:vertical": "descend"}


@pytest.mark.parametrize(
    ("flow", "state", "said", "field"),
    [
        ("tower_departure", "TWR_LINEUP_RB", "cleared for takeoff runway {runway}, {callsign}", "instruction:runway"),
        ("taxi_out", "TX_TOWER_RB", "line up runway {runway}, tower {tower_freq}, {callsign}", "instruction:runway"),
        ("taxi_out", "TX_READBACK", "holding point {holding_point} runway {runway} via {taxi_route}, cleared for takeoff, {callsign}", "instruction:runway"),
        ("enroute", "EN_DESCEND_RB", "climb {descent_level}, {callsign}", "instruction:vertical"),
        ("clearance", "CD_READBACK", "cleared to {destination_name} via {sid} departure, descend {initial_altitude_ft} feet, squawk {squawk}, {callsign}", "instruction:vertical"),
    ],
)
def test_a_wrong_instruction_is_corrected_and_never_moves_on(flow: str, state: str, said: str, field: str) -> None:
    for seed in rb.SEEDS[:3]:
        session, now = rb.at_state(flow, state, seed)
        text = said.format(**{**session.variables, "callsign": session.variables["callsign_spoken"]})
        decision, forward = rb.transmit(flow, state, session, now, text)
        assert decision.readback is not None and decision.readback.fields.get(field) == "wrong", (text, decision.readback)
        assert not forward, text
        assert any("negative" in m.text for m in decision.messages), [m.text for m in decision.messages]


def test_going_around_is_never_a_wrong_instruction() -> None:
    session, now = rb.at_state("tower_arrival", "TA_LANDING_RB", 0)
    decision, _ = rb.transmit("tower_arrival", "TA_LANDING_RB", session, now, f"going around, {session.variables['callsign_spoken']}")
    assert decision.readback is None or "instruction:runway" not in decision.readback.fields


def test_a_climb_or_descent_counts_only_with_its_altitude_after_it() -> None:
    """By voice, whisper writes "climb tap, approach one two zero" for "contact approach" and
    "climbing storm seven four" for "China Eastern seven four": no altitude follows, no readback."""
    issued = {"instruction:vertical": "descend"}
    for heard in ("Climb tap, approach one two zero point five tree", "climbing storm seven four, tower 118.305"):
        assert contradictions(tokenize(heard).words, issued) == {}, heard
    for said in ("climb FL100", "climbing to flight level one zero zero", "climb and maintain 5000 feet"):
        assert "instruction:vertical" in contradictions(tokenize(said).words, issued), said


def test_after_a_missed_approach_a_landing_clearance_read_back_is_wrong() -> None:
    """The go-around message ("follow the published missed approach, climb ...") gives a
    go-around: "cleared to land" read back after it is wrong; "going around" is fine."""
    session, now = rb.at_state("tower_arrival", "TA_GO_AROUND_RB", 0)
    callsign = session.variables["callsign_spoken"]
    altitude = session.variables["arrival_altitude_ft"]
    decision, forward = rb.transmit("tower_arrival", "TA_GO_AROUND_RB", session, now, f"cleared to land, climb {altitude} feet, {callsign}")
    assert decision.readback is not None and decision.readback.fields.get("instruction:runway") == "wrong"
    assert not forward
    session, now = rb.at_state("tower_arrival", "TA_GO_AROUND_RB", 0)
    decision, _ = rb.transmit("tower_arrival", "TA_GO_AROUND_RB", session, now, f"going around, climb {altitude} feet, {callsign}")
    assert decision.readback is None or "instruction:runway" not in decision.readback.fields

