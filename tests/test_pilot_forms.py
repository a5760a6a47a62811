"""Values pilots read back without their keyword, read as the issued value only where nothing else
can be meant (`engine.phraseology.numeric`, `altitudes`, `designators`), as properties:

- a QNH of four digits said bare ("descend 3000 feet, one zero zero four") is the QNH where the
  state asks for one in hectopascals: accepted exactly when it is the issued one, wrong otherwise,
  and never read from another value's number (a squawk, our flight number) nor from an
  alternative with doubted words; three digits said bare are never read as one;
- a heading said after the direction of turn ("left three six zero") is the heading, never the
  number after a runway's side;
- a level said after climb or descend without "flight level" ("climbing three three zero") is the
  level where a level was issued, and said with "feet" it never is;
- a holding point after "to" ("via delta two golf two to tango two") and after "vacate" without
  "via" is the holding point, and an aircraft type after "to" ("give way to A320") is none;
- a runway after the last words of its instruction ("cleared to land two five left", "line up and
  wait three six") is the runway, and a number after any other words of one is none.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.phraseology.numbers import speak_digits
from engine.readback import ReadbackEvaluator
from tooling.flow_scripts import SCRIPT_SCENARIO

EVALUATOR = ReadbackEvaluator()
CALLSIGN = "Lufthansa three five niner"
PLAIN = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _plain(digits: str) -> str:
    return " ".join(PLAIN[int(d)] for d in digits)


def _said(digits: str, style: str) -> str:
    return {"icao": speak_digits(digits), "plain": _plain(digits), "written": digits}[style]


def _evaluate(required: list[str], variables: dict[str, Any], text: str, **kwargs: Any):
    return EVALUATOR.evaluate(required, {**SCRIPT_SCENARIO, **variables}, text, **kwargs)


STYLE = st.sampled_from(["icao", "plain", "written"])


@given(issued=st.integers(1000, 1050), said=st.integers(1000, 1099), style=STYLE, first=st.booleans(), last=st.booleans())
@settings(max_examples=300, deadline=None, derandomize=True)
def test_a_bare_qnh_is_accepted_exactly_when_it_is_the_issued_one(
    issued: int, said: int, style: str, first: bool, last: bool
) -> None:
    parts = ["descend 3000 feet", _said(str(said), style)]
    body = ", ".join(parts if first else parts[::-1])
    text = f"{body}, {CALLSIGN}" if last else f"{CALLSIGN}, {body}"
    result = _evaluate(["arrival_altitude_ft", "arrival_qnh"], {"arrival_altitude_ft": 3000, "arrival_qnh": issued}, text)
    assert result.fields["arrival_qnh"] == ("ok" if said == issued else "wrong"), (text, result)
    assert result.ok == (said == issued), (text, result)


@given(qnh=st.integers(950, 1050), word=st.sampled_from(["squawk", "heading", "runway", "stand", "speed", "level"]), style=STYLE)
@settings(max_examples=150, deadline=None, derandomize=True)
def test_a_number_after_another_values_word_is_never_a_qnh(qnh: int, word: str, style: str) -> None:
    """Nor are three digits said bare ("descend 3000 feet, niner niner eight"): missing, not read."""
    said = f"{word} {_said(str(qnh), style)}" if qnh >= 1000 else _said(str(qnh), style)
    text = f"descend 3000 feet, {said}, {CALLSIGN}"
    result = _evaluate(["arrival_altitude_ft", "arrival_qnh"], {"arrival_altitude_ft": 3000, "arrival_qnh": qnh}, text)
    assert result.fields["arrival_qnh"] == "missing" and not result.ok, (text, result)


@given(qnh=st.integers(950, 1050), style=STYLE, first=st.booleans())
@settings(max_examples=100, deadline=None, derandomize=True)
def test_our_flight_number_is_never_the_qnh_read_back(qnh: int, style: str, first: bool) -> None:
    """A dropped QNH is never found in our callsign, whatever its flight number."""
    callsign = f"Lufthansa {_said(str(qnh), style)}"
    text = f"{callsign}, descend 3000 feet" if first else f"descend 3000 feet, {callsign}"
    variables = {"callsign": f"DLH{qnh}", "callsign_spoken": f"Lufthansa {qnh}", "arrival_altitude_ft": 3000, "arrival_qnh": qnh}
    result = _evaluate(["arrival_altitude_ft", "arrival_qnh"], variables, text)
    assert result.fields["arrival_qnh"] == "missing" and not result.ok, (text, result)


@given(qnh=st.integers(950, 1050), style=STYLE)
@settings(max_examples=50, deadline=None, derandomize=True)
def test_an_alternative_with_doubted_words_reads_no_bare_qnh(qnh: int, style: str) -> None:
    """'???' stands where the recognizer doubted a word: it may have been the QNH's keyword, or
    another value's ("squawk"); the value is asked again, never judged from the bare number."""
    variables = {"arrival_altitude_ft": 3000, "arrival_qnh": qnh}
    best = f"descend 3000 feet, QNH {_said(str(qnh), style)}, {CALLSIGN}"
    result = _evaluate(["arrival_altitude_ft", "arrival_qnh"], variables, best, alternatives=[best.replace("QNH", "???")])
    assert not result.ok and result.fields["arrival_qnh"] == "unsure", result


HEADINGS = st.integers(1, 36).map(lambda n: n * 10)


@given(issued=HEADINGS, said=HEADINGS, turn=st.sampled_from(["left", "right"]), said_turn=st.sampled_from(["left", "right"]),
       style=STYLE, lead=st.sampled_from(["", "turn "]))
@settings(max_examples=300, deadline=None, derandomize=True)
def test_a_heading_after_the_turn_is_accepted_exactly_when_both_are_issued(
    issued: int, said: int, turn: str, said_turn: str, style: str, lead: str
) -> None:
    text = f"{lead}{said_turn} {_said(f'{said:03d}', style)}, {CALLSIGN}"
    result = _evaluate(["heading"], {"heading": issued, "turn": turn}, text, issued={"heading": issued, "turn": turn})
    assert result.fields["heading"] == ("ok" if said == issued else "wrong"), (text, result)
    assert result.ok == (said == issued and said_turn == turn), (text, result)


@given(heading=HEADINGS, runway=st.integers(1, 36), side=st.sampled_from(["left", "right"]), style=STYLE)
@settings(max_examples=150, deadline=None, derandomize=True)
def test_the_number_after_a_runways_side_is_no_heading(heading: int, runway: int, side: str, style: str) -> None:
    text = f"runway {_said(f'{runway:02d}', style)} {side}, {_said(f'{heading:03d}', style)}, {CALLSIGN}"
    result = _evaluate(["heading"], {"heading": heading}, text)
    assert result.fields["heading"] == "missing" and not result.ok, (text, result)


LEVELS = st.integers(5, 45).map(lambda n: n * 10)


@given(issued=LEVELS, said=LEVELS, verb=st.sampled_from(["climb", "climbing", "descend", "descending", "maintain"]),
       style=st.sampled_from(["icao", "plain"]))
@settings(max_examples=300, deadline=None, derandomize=True)
def test_a_level_said_without_its_words_is_accepted_exactly_when_it_is_the_issued_one(
    issued: int, said: int, verb: str, style: str
) -> None:
    level = f"FL{issued:03d}"
    text = f"{verb} {_said(f'{said:03d}', style)}, {CALLSIGN}"
    result = _evaluate(["cruise_level"], {"cruise_level": level}, text)
    assert result.ok == (said == issued), (text, result)
    assert result.fields["cruise_level"] == ("ok" if said == issued else "wrong"), (text, result)
    feet = _evaluate(["cruise_level"], {"cruise_level": level}, f"{verb} {_said(f'{said:03d}', style)} feet, {CALLSIGN}")
    assert not feet.ok, feet  # 330 feet is no level


LETTERS = st.sampled_from(["A", "B", "D", "K", "N", "T", "Y"])
LETTER_WORDS = {"A": "alfa", "B": "bravo", "D": "delta", "K": "kilo", "N": "november", "T": "tango", "Y": "yankee"}


@given(issued=st.tuples(LETTERS, st.integers(1, 19)), said=st.tuples(LETTERS, st.integers(1, 19)),
       lead=st.sampled_from(["to", "vacate", "vacate via"]), style=STYLE)
@settings(max_examples=300, deadline=None, derandomize=True)
def test_a_holding_point_after_to_or_vacate_is_accepted_exactly_when_it_is_the_issued_one(
    issued: tuple[str, int], said: tuple[str, int], lead: str, style: str
) -> None:
    point = f"{issued[0]}{issued[1]}"
    words = f"{LETTER_WORDS[said[0]]} {_said(str(said[1]), style)}"
    text = f"{lead} {words}, {CALLSIGN}"
    result = _evaluate(["holding_point"], {"holding_point": point}, text)
    assert result.ok == (said == issued), (text, result)
    assert result.fields["holding_point"] == ("ok" if said == issued else "wrong"), (text, result)


@given(model=st.sampled_from(["A320", "A321", "B737", "B738", "A388"]), point=st.tuples(LETTERS, st.integers(1, 19)))
@settings(max_examples=50, deadline=None, derandomize=True)
def test_an_aircraft_type_after_to_is_no_holding_point(model: str, point: tuple[str, int]) -> None:
    text = f"give way to {model}, {CALLSIGN}"
    result = _evaluate(["holding_point"], {"holding_point": f"{point[0]}{point[1]}"}, text)
    assert result.fields["holding_point"] == "missing", (text, result)


RUNWAY_LEADS = {  # how the pilot reads the instruction back -> what the controller said
    "cleared to land": "runway {rwy}, cleared to land",
    "cleared for takeoff": "runway {rwy}, cleared for takeoff",
    "cleared for take off": "runway {rwy}, cleared for takeoff",
    "line up and wait": "line up runway {rwy} and wait",
    "lining up": "line up runway {rwy} and wait",
    "holding short": "hold short of runway {rwy}",
    "hold short of": "hold short of runway {rwy}",
    "cleared touch and go": "runway {rwy}, cleared touch and go",
    "cleared ILS": "cleared ILS approach runway {rwy}",
    "cleared ILS approach": "cleared ILS approach runway {rwy}",
}
SIDE_WORDS = {"": "", "L": " left", "R": " right", "C": " center"}


@given(lead=st.sampled_from(sorted(RUNWAY_LEADS)), issued=st.tuples(st.integers(1, 36), st.sampled_from(sorted(SIDE_WORDS))),
       said=st.tuples(st.integers(1, 36), st.sampled_from(sorted(SIDE_WORDS))), style=STYLE)
@settings(max_examples=400, deadline=None, derandomize=True)
def test_a_runway_after_its_instruction_is_accepted_exactly_when_it_is_the_issued_one(
    lead: str, issued: tuple[int, str], said: tuple[int, str], style: str
) -> None:
    from engine.phraseology.instructions import record_instructions

    runway = f"{issued[0]:02d}{issued[1]}"
    given_by: dict[str, Any] = {"runway": runway}
    record_instructions(given_by, RUNWAY_LEADS[lead].format(rwy=runway))
    text = f"{lead} {_said(f'{said[0]:02d}', style)}{SIDE_WORDS[said[1]]}, {CALLSIGN}"
    result = _evaluate(["runway"], {"runway": runway}, text, issued=given_by)
    assert result.ok == (said == issued), (text, result)
    assert result.fields["runway"] == ("ok" if said == issued else "wrong"), (text, result)


@given(number=st.integers(1, 36), words=st.sampled_from(["wait", "up", "go", "short", "take", "of", "lining"]))
@settings(max_examples=100, deadline=None, derandomize=True)
def test_a_number_after_other_words_of_an_instruction_is_no_runway(number: int, words: str) -> None:
    """Only the last words of a runway instruction read a bare number as a runway: "hold position,
    wait two minutes" names none."""
    text = f"hold position, {words} {_said(str(number), 'plain')} minutes, {CALLSIGN}"
    result = _evaluate(["runway"], {"runway": "36"}, text)
    assert result.fields["runway"] == "missing", (text, result)


@given(point=st.tuples(LETTERS, st.integers(1, 19)), said=st.tuples(LETTERS, st.integers(1, 19)))
@settings(max_examples=50, deadline=None, derandomize=True)
def test_a_position_after_to_is_read_only_where_the_state_asks_for_one(point: tuple[str, int], said: tuple[str, int]) -> None:
    """By voice a taxi route's "tango two, juliett six" is written "tango a to juliett six": where
    only the route is asked for, "to" names no holding point to contradict the issued one."""
    issued = {"holding_point": f"{point[0]}{point[1]}", "taxi_route": "T2 J6"}
    text = f"taxi via tango two to {LETTER_WORDS[said[0]]} {_plain(str(said[1]))}, {CALLSIGN}"
    result = _evaluate(["taxi_route"], issued, text, issued=issued)
    assert "holding_point" not in result.fields, (text, result)


@given(issued=st.tuples(LETTERS, st.integers(1, 19)), said=st.tuples(LETTERS, st.integers(1, 19)),
       kind=st.sampled_from(["holding_point", "stand"]), route_said=st.booleans())
@settings(max_examples=200, deadline=None, derandomize=True)
def test_a_position_right_after_taxi_is_where_to_and_the_route_follows_via(
    issued: tuple[str, int], said: tuple[str, int], kind: str, route_said: bool
) -> None:
    """ "Taxi kilo two four via yankee four, hotel eight": the stand or holding point, accepted
    exactly when it is the issued one; the route after "via" is still the route."""
    position = f"{issued[0]}{issued[1]}"
    route = "D2 G2" if route_said else "D2 G3"
    text = f"taxi {LETTER_WORDS[said[0]]} {_plain(str(said[1]))} via delta two golf two, {CALLSIGN}"
    result = _evaluate([kind, "taxi_route"], {kind: position, "taxi_route": route}, text)
    assert result.fields[kind] == ("ok" if said == issued else "wrong"), (text, result)
    assert result.fields["taxi_route"] == ("ok" if route_said else "wrong"), (text, result)
