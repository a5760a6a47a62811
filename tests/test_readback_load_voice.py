"""Readback rules found by the load tester (`livefreq load`), whose pilots speak with the product's
own voice through the radio effect at readabilities 3-5: right readbacks whisper wrote in a way
the finders misread, refused as wrong. Each rule is value-neutral: it never turns another value
into the issued one, and a wrong readback is still never accepted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.phraseology.alphabet import letter_word
from engine.phraseology.numbers import speak_digits
from engine.readback import ReadbackEvaluator
from tooling.flow_scripts import SCRIPT_SCENARIO

CALLSIGN = "Lufthansa three five niner"
FIXES = ["GEDER", "CHARL", "COLEM", "TELOS", "WILDO", "RANOS", "OBOKA", "MARUN"]
LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


@given(name=st.sampled_from(FIXES), digit=st.integers(1, 9), letter=st.sampled_from(LETTERS), other=st.integers(1, 9), spoken=st.booleans())
@settings(max_examples=150, deadline=None)
def test_or_between_a_sids_name_and_its_digit_is_no_fix_name(name: str, digit: int, letter: str, other: int, spoken: bool) -> None:
    """Seen under load: "cleared to Barcelona via JEDER or niner quebec departure" for GEDER 9Q was
    refused as the SID "OR 9Q" (whisper echoing the prompt's "CHARL or GEDER or ... departure").
    "or" there is skipped, by voice and typed: the issued SID is read; another digit is wrong
    (by voice it may be asked again: "or" is no radio word, so the value before it may be cut)."""
    evaluate = ReadbackEvaluator().evaluate
    variables = {**SCRIPT_SCENARIO, "sid": f"{name} {digit}{letter}"}
    said = f"via {name.lower()} or {speak_digits(str(digit))} {letter_word(letter)} departure, {CALLSIGN}"
    assert evaluate(["sid"], variables, said, spoken=spoken).ok, said
    wrong = said.replace(f" or {speak_digits(str(digit))} ", f" or {speak_digits(str(other))} ")
    result = evaluate(["sid"], variables, wrong, spoken=spoken)
    assert result.ok is (other == digit), (wrong, result)
    if other != digit:
        assert result.fields["sid"] in (("wrong", "unsure") if spoken else ("wrong",))
        assert [w["heard"] for w in result.wrong] in ([], [f"{name} {other}{letter}"])


@given(name=st.sampled_from(FIXES), digit=st.integers(1, 9), letter=st.sampled_from(LETTERS), spelt=st.sampled_from(["a", "ate"]), spoken=st.booleans())
@settings(max_examples=150, deadline=None)
def test_a_before_a_sids_letter_is_eight_whatever_was_issued(name: str, digit: int, letter: str, spelt: str, spoken: bool) -> None:
    """Seen under load: "cleared to Rome by COLEM a victor departure" for COLEM 8V was asked again.
    Between a SID's name and its letter whisper writes "a" (or "ate") for "eight": read as 8,
    whichever digit was issued, so it is accepted only where 8 was issued and never elsewhere."""
    evaluate = ReadbackEvaluator().evaluate
    variables = {**SCRIPT_SCENARIO, "sid": f"{name} {digit}{letter}"}
    said = f"via {name.lower()} {spelt} {letter_word(letter)} departure, {CALLSIGN}"
    result = evaluate(["sid"], variables, said, spoken=spoken)
    assert result.ok is (digit == 8), (said, result)
    if digit != 8:  # by voice it may be asked again: the word after the name is no radio word
        assert result.fields["sid"] in (("wrong", "unsure") if spoken else ("wrong",))
        assert [w["heard"] for w in result.wrong] in ([], [f"{name} 8{letter}"])


@given(
    thousands=st.integers(1, 9),
    hundreds=st.sampled_from([0, 0, 0, 5]),
    prefix=st.integers(1, 9),
    before=st.sampled_from(["squawk two six tree one,", "cleared to Madrid,", ""]),
    verb=st.sampled_from(["", "climb", "climb to", "descend", "maintain"]),
)
@settings(max_examples=200, deadline=None)
def test_an_altitude_heard_with_a_digit_in_place_of_its_verb_is_asked_again_by_voice(
    thousands: int, hundreds: int, prefix: int, before: str, verb: str
) -> None:
    """Seen under load: "squawk zero fife two fife, one six thousand feet" for "climb six thousand
    feet" (the verb heard as "one") was refused as 16,000 ft. By voice, the issued altitude with one
    more digit in front and no altitude verb before it is asked again, never corrected and never
    accepted; with a verb before it ("climb one six thousand") it is another altitude, corrected
    (or asked again above 18,000 ft, where controllers give levels); typed it is always corrected."""
    evaluate = ReadbackEvaluator().evaluate
    issued = thousands * 1000 + hundreds * 100
    variables = {**SCRIPT_SCENARIO, "cleared_altitude_ft": issued}
    spoken_value = f"{speak_digits(str(prefix))} {speak_digits(str(thousands))} thousand" + (
        f" {speak_digits(str(hundreds))} hundred" if hundreds else ""
    )
    said = " ".join(filter(None, [before, verb, spoken_value, "feet,", CALLSIGN]))
    heard = prefix * 10000 + issued
    by_voice = evaluate(["cleared_altitude_ft"], variables, said, spoken=True)
    typed = evaluate(["cleared_altitude_ft"], variables, said)
    assert not by_voice.ok and not typed.ok, said
    if heard > 60000:  # no altitude at all (engine/phraseology/altitudes.py, MAX_FEET)
        assert by_voice.fields == typed.fields == {"cleared_altitude_ft": "missing"}
        return
    assert typed.fields["cleared_altitude_ft"] == "wrong", said
    expected = "unsure" if not verb or heard > 18000 else "wrong"
    assert by_voice.fields["cleared_altitude_ft"] == expected, (said, by_voice)
    right = " ".join(filter(None, [before, verb or "climb", spoken_value.split(" ", 1)[1], "feet,", CALLSIGN]))
    assert evaluate(["cleared_altitude_ft"], variables, right, spoken=True).ok, right
