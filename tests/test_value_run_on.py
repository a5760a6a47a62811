"""A check in the audio of a value tried run together with another digit confirms nothing.

Two holes of fresh seeds 167 and 168 (`livefreq bench readback --mode voice --wrong 0.6`), each a
wrong value accepted on a check in place, passing at 1.25x only, whose place came right after a
digit word (`value_query.run_on`): the question scored the issued digits run on from it.
The rule is a property over every value of digits, neighbour and tempo, and each recorded hearing
is decided again.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.hearing import ValueCheck
from engine.value_query import run_on
from engine.value_words import words_of
from tooling.readback_pilot.words import digit_words

STYLES = st.sampled_from(["icao", "plain", "mixed", "numeric"])
SAID_DIGITS = tuple("zero one two three four five six seven eight nine niner tree fife".split())
DIGIT_WORDS = st.sampled_from([*SAID_DIGITS, "7"])
OTHER_WORDS = st.sampled_from("roger wilco heading runway thousand feet niropore report level contact".split())

VALUES = st.one_of(
    st.integers(1, 36).map(lambda n: ("runway", "runway", f"{n:02d}")),
    st.integers(1, 360).map(lambda n: ("heading", "heading", f"{n:03d}")),
    st.integers(1000, 7777).map(lambda n: ("squawk", "squawk", str(n))),
    st.integers(950, 1050).map(lambda n: ("qnh", "qnh", str(n))),
)


@given(
    value=VALUES, before=st.one_of(DIGIT_WORDS, OTHER_WORDS), after=st.one_of(DIGIT_WORDS, OTHER_WORDS),
    style=STYLES, tempo=st.sampled_from([1.0, 0.8333333333333334, 1.1111111111111112, 1.25]), theirs=st.booleans(),
)  # fmt: skip
def test_a_check_at_another_tempo_right_after_a_digit_word_is_not_counted(
    value: tuple[str, str, str], before: str, after: str, style: str, tempo: float, theirs: bool
) -> None:
    """Flagged exactly where, heard at another tempo than as recorded, the word right before the
    value's place says a digit that no other value tried in its own place says."""
    field, kind_name, issued = value
    said = digit_words(issued, random.Random(0), style)
    head = words_of(f"edelweiss seven zero four {before}")
    transcript = " ".join([*head, said, after, "good day"])
    place = (len(head), len(head) + len(words_of(said)))
    check = ValueCheck(field=field, value=issued, margin=5.0, lowest=-1.0, delta=0.0, place=place, tempo=tempo)
    fields = {field: (kind_name, issued)}
    checks = [check]
    if theirs:  # another value tried in place over the word before: its digit is that value's
        other = ValueCheck(field="other", value="7", margin=0.0, lowest=-1.0, delta=0.0, place=(place[0] - 1, place[0]))
        checks.append(other)
    digit = before.isdigit() or before in SAID_DIGITS
    assert run_on(transcript, checks, fields) == ([check] if digit and tempo != 1.0 and not theirs else [])
    # after the transcript (no place) the question is the value alone: never flagged
    appended = check.model_copy(update={"place": None, "appended": True})
    assert run_on(transcript, [appended], fields) == []


# The two recorded hearings (seed 167 as first recorded at d30d1f7, in git history at
# reports/unfixed/bench-readback-voice-seed167.json, recorded again since at stop 64; and
# reports/bench-readback-voice-seed168-corrections.json), with the checks that passed.
RECORDED: dict[tuple[int, int], tuple[str, str, int, dict[str, Any]]] = {
    # "wilco Edelweiss seven zero four", the 9000 dropped; tried over "niropore" after "seven"
    (167, 123): ("departure", "DEP_CLIMB_RB", 8, {
        "heard": "Wilcoeville waste seven niropore.",
        "alternatives": [
            "We will go have a way to have a 0.0 port.",
            "Wilcoeville waste seven nir report.",
            "will come have you waste seven zero four.",
        ],
        "checks": [
            {"field": "cleared_altitude_ft", "value": "9000", "margin": -1.304, "lowest": -1.128, "delta": -4.02,
             "place": [3, 4]},
            {"field": "cleared_altitude_ft", "value": "9000", "margin": -5.002, "lowest": -5.324, "delta": 2.074,
             "tempo": 0.8333333333333334, "place": [3, 4]},
            {"field": "cleared_altitude_ft", "value": "9000", "margin": 5.023, "lowest": -0.731, "delta": -1.488,
             "tempo": 1.25, "place": [3, 4]},
        ],
    }),
    # "descend to flight level one one zero" for FL100; tried over the last three of four digits
    (168, 265): ("enroute", "EN_DESCEND_RB", 4, {
        "heard": "Egyptair tree two. descend, flight level one one one zero.",
        "alternatives": [
            "Egyptair tree two. descend, flight level one one, zero.",
            "Egyptair tree two. descend, flight level one one, near o.",
        ],
        "checks": [
            {"field": "descent_level", "value": "FL100", "margin": 0.019, "lowest": -3.556, "delta": -0.978,
             "place": [7, 10]},
            {"field": "descent_level", "value": "FL100", "margin": -0.725, "lowest": -4.458, "delta": 0.176,
             "tempo": 0.8333333333333334, "place": [7, 10]},
            {"field": "descent_level", "value": "FL100", "margin": 2.727, "lowest": -2.411, "delta": -1.02,
             "tempo": 1.25, "place": [7, 10]},
        ],
    }),
}  # fmt: skip


@pytest.mark.parametrize("key", sorted(RECORDED))
def test_a_value_tried_run_on_is_asked_again(key: tuple[int, int]) -> None:
    from tests.support import readback as rb

    decision, said = rb.refused_recorded(*RECORDED[key])
    assert decision.readback is not None and not decision.readback.confirmed
    assert "a digit right before the value" in said, said
