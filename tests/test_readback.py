"""The readback evaluator: every required value read back by meaning; a wrong value never passes."""

from __future__ import annotations

import pytest

from engine.models import ReadbackResult
from engine.readback import ReadbackEvaluator

VARS = {
    "callsign": "DLH359",
    "callsign_spoken": "Lufthansa 359",
    "destination": "EDDM",
    "destination_name": "Munich",
    "sid": "MARUN 7F",
    "initial_altitude_ft": 5000,
    "squawk": "4721",
    "runway": "25R",
    "tower_freq": "118.700",
    "ground_freq": "121.800",
    "holding_point": "A12",
    "taxi_route": "N3 U4",
    "qnh": 1013,
    "heading": 270,
}
CLEARANCE = ["destination", "sid", "initial_altitude_ft", "squawk", "callsign"]
TAXI = ["holding_point", "runway", "taxi_route", "qnh", "callsign"]

evaluator = ReadbackEvaluator()


def evaluate(required: list[str], transcript: str, variables: dict | None = None) -> ReadbackResult:
    return evaluator.evaluate(required, variables or VARS, transcript)


@pytest.mark.parametrize(
    "transcript",
    [
        "Cleared to Munich via MARUN 7F, climb 5000 feet, squawk 4721, Lufthansa 359",
        "cleared to munich via marun seven foxtrot climb five thousand feet squawk four seven two one lufthansa tree fife niner",
        "Lufthansa 359, cleared to Munich, MARUN 7F departure, squawk 4721, climb 5,000 ft",
        "squawk 4-7-2-1, climb five thousand, via MARUN7F, cleared to Munich, Lufthansa three fifty nine",
        "Cleared to Munich via Marun seven Foxtrot, initial climb 5000 feet, squawk four seven to one, Lufthansa 359.",
        "cleared to echo delta delta mike via marun 7 f climbing 5000 squawk 4721 delta lima hotel tree fife niner",
        "Cleared to EDDM via MARUN 7F climb 5 thousand feet squawk 4721 DLH359",
        "cleared to munic via maroon seven foxtrot climb 5000 feet squawk 4721 lufthanza 359",
    ],
)
def test_correct_clearance_readbacks_in_any_form_and_order(transcript: str) -> None:
    result = evaluate(CLEARANCE, transcript)
    assert result.ok, result
    assert result.fields == {name: "ok" for name in CLEARANCE}
    assert result.missing == [] and result.wrong == []


@pytest.mark.parametrize(
    "transcript",
    [
        "holding point A12 runway 25R via N3 U4, QNH 1013, Lufthansa 359",
        "taxi to holding point alfa one two runway two five right via november three uniform four qnh one zero one three lufthansa tree fife niner",
        "via November 3, Uniform 4, to holding point Alpha 12, runway 25 right, QNH 1013, Lufthansa 359",
        "QNH one oh one three, Lufthansa 359, runway too fife right, holding point A12 via N3 and U4",
    ],
)
def test_correct_taxi_readbacks(transcript: str) -> None:
    result = evaluate(TAXI, transcript)
    assert result.ok, result


@pytest.mark.parametrize(
    ("required", "transcript", "field", "heard"),
    [
        (["runway"], "runway two five left", "runway", "25L"),
        (["runway"], "runway 25", "runway", "25"),
        (["tower_freq"], "contact tower 118.75", "tower_freq", "118.750"),
        (["tower_freq"], "tower one one eight decimal seven fife", "tower_freq", "118.750"),
        (["ground_freq"], "ground one two one decimal niner", "ground_freq", "121.900"),
        (["squawk"], "squawk 4712", "squawk", "4712"),
        (["squawk"], "squawk four seven one two", "squawk", "4712"),
        (["initial_altitude_ft"], "climb four thousand", "initial_altitude_ft", "4000"),
        (["initial_altitude_ft"], "climb flight level five zero", "initial_altitude_ft", "FL050"),
        (["sid"], "via MARUN seven golf", "sid", "MARUN 7G"),
        (["sid"], "via marun 6 foxtrot", "sid", "MARUN 6F"),
        (["sid"], "via KOMIB 7F", "sid", "KOMIB 7F"),
        (["heading"], "heading two six zero", "heading", "260"),
        (["qnh"], "QNH 1012", "qnh", "1012"),
        (["holding_point"], "holding point alfa one three", "holding_point", "A13"),
        (["taxi_route"], "taxi via november three uniform five", "taxi_route", "N3 U5"),
        (["taxi_route"], "via U4 N3", "taxi_route", "U4 N3"),
        (["destination"], "cleared to echo delta delta foxtrot", "destination", "EDDF"),
        (["callsign"], "Lufthansa 395", "callsign", "DLH395"),
        (["callsign"], "Speedbird 359", "callsign", "BAW359"),
    ],
)
def test_each_kind_read_back_wrong(required: list[str], transcript: str, field: str, heard: str) -> None:
    result = evaluate(required, transcript)
    assert not result.ok
    assert result.fields[field] == "wrong"
    expected = {"runway": "25R", "tower_freq": "118.700", "ground_freq": "121.800", "squawk": "4721",
                "initial_altitude_ft": "5000", "sid": "MARUN 7F", "heading": "270", "qnh": "1013",
                "holding_point": "A12", "taxi_route": "N3 U4", "destination": "EDDM", "callsign": "DLH359"}[field]
    assert result.wrong == [{"field": field, "expected": expected, "heard": heard}]
    assert result.missing == []


def test_one_wrong_value_fails_an_otherwise_perfect_readback() -> None:
    result = evaluate(CLEARANCE, "Cleared to Munich via MARUN 7F, climb 5000 feet, squawk 4712, Lufthansa 359")
    assert not result.ok
    assert result.fields == {"destination": "ok", "sid": "ok", "initial_altitude_ft": "ok", "squawk": "wrong", "callsign": "ok"}


def test_missing_fields_are_listed_in_required_order() -> None:
    result = evaluate(CLEARANCE, "Cleared to Munich, Lufthansa 359")
    assert not result.ok
    assert result.missing == ["sid", "initial_altitude_ft", "squawk"]
    assert result.fields["destination"] == "ok" and result.fields["callsign"] == "ok"
    assert result.wrong == []


def test_an_empty_transcript_misses_everything() -> None:
    result = evaluate(CLEARANCE, "")
    assert result.missing == CLEARANCE and not result.ok


def test_no_required_fields_is_ok() -> None:
    assert evaluate([], "roger").ok


def test_a_variable_without_value_is_missing() -> None:
    result = evaluate(["runway", "sid"], "runway 25R via MARUN 7F", {"runway": "25R", "sid": ""})
    assert result.fields == {"runway": "ok", "sid": "missing"}


@pytest.mark.parametrize(
    ("transcript", "status"),
    [
        ("three five nine", "missing"),  # the number alone is not a callsign
        ("roger 359", "missing"),
        ("Lufthansa", "missing"),
        ("Lufthansa tree fife niner", "ok"),
        ("delta lima hotel 359", "ok"),
        ("Lufthansa three five eight", "wrong"),
    ],
)
def test_callsign_needs_telephony_and_number(transcript: str, status: str) -> None:
    assert evaluate(["callsign"], transcript).fields["callsign"] == status


@pytest.mark.parametrize(
    ("transcript", "status"),
    [
        ("runway 25R, Delta Echo Alfa Bravo Charlie", "ok"),
        ("runway 25R, D-EABC", "ok"),
        ("runway 25R, Delta Bravo Charlie", "ok"),  # ICAO abbreviation: first character + last two
        ("runway 25R, Delta Echo Alfa Bravo Delta", "wrong"),
        ("runway 25R", "missing"),
    ],
)
def test_registration_callsigns(transcript: str, status: str) -> None:
    variables = {"callsign": "D-EABC", "runway": "25R"}
    assert evaluate(["callsign", "runway"], transcript, variables).fields["callsign"] == status


def test_callsign_with_flight_letters() -> None:
    variables = {"callsign": "EZY12AB", "callsign_spoken": "Easy 12AB"}
    assert evaluate(["callsign"], "Easy one two alfa bravo", variables).ok
    assert evaluate(["callsign"], "easy 12 ab", variables).ok
    result = evaluate(["callsign"], "Easy one two alfa charlie", variables)
    assert result.wrong == [{"field": "callsign", "expected": "EZY12AB", "heard": "EZY12AC"}]


def test_scenario_telephony_not_in_the_airline_table() -> None:
    variables = {"callsign": "XYZ123", "callsign_spoken": "Skyhopper 123"}
    assert evaluate(["callsign"], "Skyhopper one two tree", variables).ok
    assert evaluate(["callsign"], "Skyhopper one two four", variables).fields["callsign"] == "wrong"


def test_callsign_spoken_field_is_checked_as_a_callsign() -> None:
    assert evaluate(["callsign_spoken"], "Lufthansa 359").ok


@pytest.mark.parametrize(
    ("required", "transcript"),
    [
        (["callsign", "ground_freq"], "lufthansa tree fife niner one two one decimal eight"),
        (["callsign", "initial_altitude_ft"], "lufthansa tree fife niner fife thousand feet"),
        (["squawk", "initial_altitude_ft"], "squawk four seven two one five thousand feet"),
        (["callsign", "initial_altitude_ft"], "lufthansa three fifty nine fifteen thousand feet"),
    ],
)
def test_values_run_together_without_punctuation(required: list[str], transcript: str) -> None:
    """Recognizers without punctuation (vosk, pocketsphinx) run a callsign into the next value."""
    variables = {**VARS, "initial_altitude_ft": 15000 if "fifteen" in transcript else 5000}
    assert evaluate(required, transcript, variables).ok


def test_frequencies_of_two_stations_are_told_apart() -> None:
    both = ["tower_freq", "ground_freq"]
    assert evaluate(both, "tower 118.7, ground 121.8").ok
    swapped = evaluate(both, "tower 121.8, ground 118.7")
    assert swapped.fields == {"tower_freq": "wrong", "ground_freq": "wrong"}


@pytest.mark.parametrize(
    "transcript",
    ["contact tower one one eight decimal seven", "118.7", "one one eight point seven zero zero", "tower 1187"],
)
def test_frequency_forms(transcript: str) -> None:
    assert evaluate(["tower_freq"], transcript).ok


@pytest.mark.parametrize(
    ("transcript", "status"),
    [
        ("runway two five left, correction, two five right", "ok"),
        ("runway two five right, correction, runway two five left", "wrong"),
        ("climb 4000 feet, correction 5000 feet", "ok"),
    ],
)
def test_correction_replaces_earlier_values_of_that_kind(transcript: str, status: str) -> None:
    field = "runway" if "runway" in transcript else "initial_altitude_ft"
    assert evaluate([field], transcript).fields[field] == status


def test_correction_of_one_kind_keeps_other_kinds() -> None:
    result = evaluate(["runway", "squawk"], "squawk 4721, runway 25L, correction 25R")
    assert result.ok


def test_altitude_and_flight_level_are_different_values() -> None:
    variables = {"cruise_level": "FL070", "cleared_altitude_ft": 7000}
    assert evaluate(["cruise_level"], "climb flight level zero seven zero", variables).ok
    assert evaluate(["cruise_level"], "climb 7000 feet", variables).fields["cruise_level"] == "wrong"
    assert evaluate(["cleared_altitude_ft"], "climb 7000 feet", variables).ok
    assert evaluate(["cleared_altitude_ft"], "climb flight level 70", variables).fields["cleared_altitude_ft"] == "wrong"


def test_free_text_values_are_found_by_their_words() -> None:
    variables = {"approach_type": "ILS", "arrival_runway": "25L"}
    assert evaluate(["approach_type", "arrival_runway"], "cleared ILS approach runway 25L", variables).ok
    assert evaluate(["approach_type"], "cleared approach runway 25L", variables).missing == ["approach_type"]


def test_designator_with_a_suffix_letter() -> None:
    variables = {"stand": "12A"}
    assert evaluate(["stand"], "stand one two alfa", variables).ok
    assert evaluate(["stand"], "stand 12A", variables).ok
    assert evaluate(["stand"], "stand one two bravo", variables).wrong[0]["heard"] == "12B"


def test_wind_and_atis_letter() -> None:
    variables = {"wind": "250/12", "atis_letter": "K"}
    assert evaluate(["wind", "atis_letter"], "wind 250 degrees 12 knots, information kilo", variables).ok
    result = evaluate(["atis_letter"], "information lima", variables)
    assert result.wrong == [{"field": "atis_letter", "expected": "K", "heard": "L"}]


def test_many_distinct_readbacks_in_a_row() -> None:
    """Throughput sanity: distinct transcripts (no cache hits), every verdict right."""
    results = []
    for n in range(300):
        number = 100 + n
        variables = {**VARS, "callsign": f"DLH{number}", "callsign_spoken": f"Lufthansa {number}"}
        text = f"Cleared to Munich via MARUN 7F, climb 5000 feet, squawk 4721, Lufthansa {number}"
        results.append(evaluator.evaluate(CLEARANCE, variables, text).ok)
        wrong = text.replace("4721", "4712")
        results.append(not evaluator.evaluate(CLEARANCE, variables, wrong).ok)
    assert all(results)


@pytest.mark.parametrize("code, name", [("LIRF", "Rome"), ("ENGM", "Oslo"), ("LFMN", "Nice")])
def test_a_destination_named_in_four_letters_is_read_back_by_its_name(code: str, name: str) -> None:
    """Found by `livefreq load`: a four-letter name was taken for an ICAO code and never heard."""
    variables = {**VARS, "destination": code, "destination_name": name}
    assert evaluate(["destination"], f"cleared to {name.lower()} via marun seven foxtrot", variables).ok
    wrong = evaluate(["destination"], "cleared to munich via marun seven foxtrot", {**variables, "airport_name": "Munich", "airport": "EDDM"})
    assert wrong.fields["destination"] == "wrong"
    named_by_code = {**VARS, "destination": "EDDM", "destination_name": "EDDM"}  # no real name known
    assert evaluate(["destination"], "cleared to echo delta delta mike", named_by_code).ok


@pytest.mark.parametrize(
    ("required", "transcript", "field"),
    [
        (["squawk"], "squawk 472", "squawk"),
        (["squawk"], "squawk four seven two nine", "squawk"),  # 9 is no transponder digit
        (["qnh"], "QNH one zero zero", "qnh"),
        (["qnh"], "QNH 10", "qnh"),
        # whisper's word for a side it misheard: which side was said cannot be told
        (["runway"], "runway two five lift", "runway"),
        (["runway"], "Lufthansa three five niner, runway two fife light, wilco", "runway"),
        (["runway"], "runway two fife last", "runway"),
        # seen by voice: "descending flight level one near a mirror" for "one zero zero"
        (["cruise_level"], "descending flight level one near a mirror", "cruise_level"),
        (["speed"], "reduce speed one", "speed"),
    ],
)
def test_a_value_its_kind_cannot_have_is_asked_again(required: list[str], transcript: str, field: str) -> None:
    """Seen by voice: "QNH one zero zero" (whisper cut "two") was corrected as a wrong QNH. A value
    no QNH, squawk, flight level or assigned speed can have is a cut or a mishearing: unsure,
    never wrong or ok."""
    result = evaluate(required, transcript, {**VARS, "cruise_level": "FL100", "speed": 250})
    assert not result.ok
    assert result.fields[field] == "unsure" and field in result.unsure and not result.wrong
