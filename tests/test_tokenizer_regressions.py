"""Pinned counterexamples of tests/test_tokenizer_props.py (as hypothesis shrank them), and the
tokenizer cases of the "Readback safety" issue. Each was wrong before the fix named beside it."""

from __future__ import annotations

import pytest

from engine import phraseology as p

# (phrase, kind, expected values), no callsign hint
REGRESSIONS = [
    ("squawk ze-ro, ze-ro, ze-ro, too", "squawk", ["0002"]),  # "too" looks past a pause
    ("runway too", "runway", ["02"]),  # "too" right after a value keyword
    ("squawk uh too uh oh ten", "squawk", ["2010"]),  # homophone runs resolve together
    ("AAL too oh oh, flight level wun zero", "callsign", ["AAL200"]),  # "too" before "oh" (hypothesis, 2026-11-29)
    ("runway uh oh, too", "runway", ["02"]),
    ("too uh left", "runway", ["02L"]),  # "too" before a side word
    ("q uh n uh h uh nin-er, uh, fife, ze-ro", "qnh", ["950"]),  # fillers dropped before "q n h" merges
    ("ground uh wun twenty one decimal oh", "frequency", ["121.000"]),  # "oh" after a decimal word
    ("wun uh wun ait decimal too", "frequency", ["118.200"]),
    ("speed too hundred and too", "speed", ["202"]),  # "hundred and too"
    ("too uh oh uh thousand uh feet", "altitude", ["20000"]),  # "oh" before "thousand"
    ("too uh oh ten ze-ro feet", "altitude", ["20100"]),  # "oh" before a group form (hypothesis, 2026-11-27)
    ("Swiss one five eight, one four thousand feet", "altitude", ["14000"]),  # a comma after a group ends it
    ("heading two three zero, one two zero knots", "heading", ["230"]),
    ("heading two three zero, one two zero knots", "speed", ["120"]),
    ("contact tower one one eight decimal seven, ground one two one decimal eight", "frequency", ["118.700", "121.800"]),
    ("climb four thousand squawk four seven two one", "altitude", ["4000"]),
    ("climb four thousand squawk four seven two one", "squawk", ["4721"]),
    ("one two uh one decimal eight", "frequency", ["121.800"]),
    ("contact tower one twenty one eight five", "frequency", ["121.850"]),
    ("squawk seven triple zero", "squawk", ["7000"]),
    ("squawk double four double seven", "squawk", ["4477"]),
    ("squawk seven seven oh oh", "squawk", ["7700"]),
    ("squawk 4, 7, 2, 1", "squawk", ["4721"]),
    ("flight level fow er ze ro ze ro", "flight_level", ["FL400"]),
    ("climb fife tou sand feet", "altitude", ["5000"]),
    ("one two one day see mal nin er", "frequency", ["121.900"]),
]

# (phrase, callsign hint, kind, expected values)
HINTED = [
    ("heading wun alfa alfa lima too", "AAL2", "callsign", ["AAL2"]),  # "too" as the flight number
    ("alfa alfa lima wun wun, ze-ro, ze-ro feet", "AAL1", "altitude", ["100"]),  # a pause after the flight number
    ("alfa alfa lima uh wun uh wun, ze-ro left", "AAL1", "runway", ["10L"]),
    ("alfa alfa lima uh wun six, ze-ro knots", "AAL1", "speed", ["60"]),
    ("Air Canada uh wun wun eighteen decimal ze-ro ze-ro ze-ro", "ACA1", "frequency", ["118.000"]),  # no fuzzy telephony over digits
    ("Air Canada wun wun twenty one ze-ro ze-ro feet", "ACA1", "altitude", ["12100"]),
    ("Air Canada uh too too, ze-ro, ze-ro knots", "ACA2", "speed", ["200"]),
    ("contact uh tower uh wun eighteen ten ze-ro AAL wun ze-ro ait ze-ro", "AAL1080", "frequency", ["118.100"]),  # 1080 is no frequency
    ("swiss one five eight one four thousand feet", "SWR158", "altitude", ["14000"]),
    ("swiss one five eight one four thousand feet", "SWR158", "callsign", ["SWR158"]),
    ("one four thousand feet, swiss one five eight", "SWR158", "altitude", ["14000"]),
    ("swiss five, one four thousand feet", "SWR5", "altitude", ["14000"]),
    ("lufthansa tree fife niner one two one decimal eight", "DLH359", "frequency", ["121.800"]),
    ("sierra whiskey romeo one fifty eight two five left", "SWR158", "runway", ["25L"]),
    ("november one two three one four thousand feet", "N123AB", "altitude", ["14000"]),
    # "EIN er" was glued to "einer" (whisper's "niner"): a designator and a filler (hypothesis, 2026-11-27)
    ("maintain uh wun, uh, ze-ro, ze-ro EIN er wun", "EIN1", "altitude", ["100"]),
]


@pytest.mark.parametrize(("phrase", "kind", "expected"), REGRESSIONS)
def test_regression(phrase: str, kind: str, expected: list[str]) -> None:
    assert p.extract(kind, phrase) == expected


@pytest.mark.parametrize(("phrase", "callsign", "kind", "expected"), HINTED)
def test_regression_with_callsign_hint(phrase: str, callsign: str, kind: str, expected: list[str]) -> None:
    assert p.extract(kind, phrase, {"callsign": callsign}) == expected


@pytest.mark.parametrize(
    ("heard", "callsign", "normalized"),
    [
        ("Swiss one five eight, one four thousand feet", None, "swiss 158 14000 feet"),
        ("swiss one five eight one four thousand feet", "SWR158", "swiss 158 14000 feet"),
        ("swiss one five eight one four thousand feet", "Swiss 158", "swiss 158 14000 feet"),
        ("ze-ro wun too tree fow-er fife six sev-en ait nin-er", None, "0123456789"),
        ("fow er nin er tou sand", None, "49000"),
        ("one tousand dayseemal", None, "1000 decimal"),
        ("double check the seven triple zero", None, "double check the 7000"),
        ("me too", None, "me too"),
        ("oh, standby", None, "oh standby"),
        ("uh roger", None, "roger"),
    ],
)
def test_normalize_transcript_with_hint(heard: str, callsign: str | None, normalized: str) -> None:
    assert p.normalize_transcript(heard, callsign=callsign) == normalized


def test_the_hint_is_cached_per_text_and_callsign() -> None:
    a = p.tokenize("swiss one five eight one four thousand feet", callsign="SWR158")
    assert a is p.tokenize("swiss one five eight one four thousand feet", callsign="SWR158")
    assert a is p.tokenize("swiss one five eight one four thousand feet", callsign="swr 158")
    assert a.text != p.tokenize("swiss one five eight one four thousand feet").text


def test_callsign_hint_from_variables() -> None:
    assert p.callsign_hint({"callsign": "DLH359"}) == "DLH359"
    assert p.callsign_hint({"callsign_spoken": "Lufthansa 359"}) == "Lufthansa 359"
    assert p.callsign_hint({}) is None
    assert p.callsign_hint(None) is None
