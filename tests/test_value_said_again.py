"""A check in the audio decides nothing where the hearings say the pilot said another value.

Two holes of fresh seed 165 (`livefreq bench readback --mode voice --corrections 0.3`), both a
wrong value accepted on a check that passed over words the pilot did say:

- #79, a frequency one hearing wrote short ("point two. I'm", the issued 133.200) and the three
  others with the digit it lost ("point two five"): the check of 133.200 in place has no place for
  that digit (`value_rivals.written_longer`);
- #261, "QNH one zero one four, correction, QNH one zero one six" with its correction word and
  keyword lost in every hearing: the check of 1014 stood over the first four digits, the second
  value said after them (`value_query.said_again_otherwise`).

Each rule is a property over every value of its kind, and each recorded hearing is decided again.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.hearing import ValueCheck
from engine.phraseology.frequencies import is_channel
from engine.value_query import said_again_otherwise
from engine.value_rivals import written_longer
from engine.value_words import words_of
from tooling.readback_pilot.words import digit_words

# as a recognizer writes digits (it writes no "fow-er"; checks are only asked of its transcripts)
STYLES = st.sampled_from(["icao", "plain", "mixed", "numeric"])


def _digits(digits: str, style: str = "icao") -> str:
    """`digits` said one by one in `style` (tooling/readback_pilot/words.py)."""
    return digit_words(digits, random.Random(0), style)

SEED_165: dict[int, tuple[str, str, int, dict[str, Any]]] = {
    79: ("departure", "DEP_CENTER_RB", 9, {
        "heard": "Contact center one three three point two. I'm all Nippon six zero two.",
        "alternatives": [
            "contact center one three three point two five all Nippon six zero two.",
            "Contact center one three three point two. I'm all nippon six zero two.",
            "contact center one three three point two five all nippon six zero two.",
        ],
        # whisper base's check of 133.200 in place passed; its rival (the "two" said twice) nowhere near
        "checks": [
            {"field": "center_freq", "value": "133.200", "margin": 3.024, "lowest": -0.624, "delta": 0.0,
             "bigger": True, "place": [2, 7]},
            *({"field": "center_freq", "value": "133.220", "margin": -3.5, "lowest": -7.0, "delta": delta,
               "tempo": tempo, "rival": True, "bigger": True, "place": [2, 7]}
              for tempo, delta in ((1.0, -6.91), (0.8333, -7.645), (1.25, -8.016), (1.1111, -7.644))),
        ],
    }),
    261: ("startup_pushback", "SP_APPROVE_RB", 6, {
        "heard": "American six three four. Take the nh one, zero one four, three, chance, the nh one, zero one six Roger.",
        "alternatives": [
            "American six three four. Take the nh one zero one four. Federation's the nh one zero one six Roger.",
            "American six three four. Take the nh one, zero one four.",
        ],
        "checks": [{"field": "qnh", "value": "1014", "margin": 3.166, "lowest": -1.45, "delta": 0.0, "place": [7, 11]}],
    }),
}  # fmt: skip


@pytest.mark.parametrize("index", sorted(SEED_165))
def test_a_check_decides_nothing_where_the_hearings_say_another_value(index: int) -> None:
    from tests.support import readback as rb

    _, said = rb.refused_recorded(*SEED_165[index])
    assert "a hearing wrote a digit more" in said or "another value said after them" in said, said


frequencies = st.builds(
    lambda whole, decimals: f"1{whole:02d}.{decimals}",
    st.integers(18, 36),
    st.sampled_from([f"{d}{e}{z}" for d in "0123456789" for e in "0257" for z in "05" if (e, z) != ("0", "5")]),
)


def _said(value: str, style: str, full: bool = False) -> str:
    """`value` ("133.250") as a pilot says it, trailing zeros left out unless `full`."""
    whole, _, decimals = value.partition(".")
    decimals = decimals if full else decimals.rstrip("0") or "0"
    return f"{_digits(whole, style)} decimal {_digits(decimals, style)}"


@given(issued=frequencies, extra=st.sampled_from("123456789"), style=STYLES)
def test_a_frequency_written_short_beside_a_hearing_with_a_digit_more_is_flagged(
    issued: str, extra: str, style: str
) -> None:
    whole, _, decimals = issued.partition(".")
    short = decimals.rstrip("0")
    if not short or len(short) == 3:
        return  # written in full, or nothing said after the point: nothing to be written short
    longer = f"{whole}.{(short + extra).ljust(3, '0')}"
    fields = {"freq": ("frequency", issued)}
    best = f"contact radar {_said(issued, style)} thank you"
    # a digit more that names a channel is a value the pilot may have said; one that names none,
    # a word after the value run into it (our callsign's digits)
    flagged = ["freq"] if is_channel(longer) else []
    assert written_longer([best, f"contact radar {_said(longer, style)} thank you"], fields) == flagged
    # the same hearing twice, or the other one writing the issued value in full, flags nothing
    assert written_longer([best, best], fields) == []
    assert written_longer([best, f"contact radar {_said(issued, style, full=True)}"], fields) == []


qnh = st.integers(950, 1050).map(str)


@given(issued=qnh, later=qnh, accounted=st.booleans(), style=STYLES)
def test_a_check_before_another_value_of_its_kind_said_after_it_is_not_counted(
    issued: str, later: str, accounted: bool, style: str
) -> None:
    said, then = _digits(issued, style), _digits(later, style)
    transcript = f"american six three four qnh {said} chance {then} roger"
    start = len(words_of("american six three four qnh"))
    place = (start, start + len(words_of(said)))
    check = ValueCheck(field="qnh", value=issued, margin=3.0, lowest=-1.0, delta=0.0, place=place)
    known = {later} if accounted else set()
    superseded = said_again_otherwise(transcript, [check], {"qnh": ("qnh", issued)}, {"634", *known})
    # a second QNH said after the checked one, that no other issued value says, leaves the check out
    assert superseded == ([check] if later != issued and not accounted else [])
    # checked after the transcript (no place), or with nothing said after it, the check stands
    appended = check.model_copy(update={"place": None, "appended": True})
    assert said_again_otherwise(transcript, [appended], {"qnh": ("qnh", issued)}, {"634"}) == []
    alone = f"american six three four qnh {said} roger"
    assert said_again_otherwise(alone, [check], {"qnh": ("qnh", issued)}, {"634"}) == []


WORDS = st.sampled_from("contact approach one two zero decimal four three japanair tree runway left roger".split())


@given(
    before=st.lists(WORDS, max_size=8),
    block=st.lists(WORDS, min_size=3, max_size=6).filter(lambda b: len(set(b)) > 1),
    worn=st.lists(WORDS, max_size=6),
)
def test_whisper_s_loop_anywhere_in_a_transcript_is_a_loop(before: list[str], block: list[str], worn: list[str]) -> None:
    """Seed 164 #193: "... decimal fife three japanair one one one three japanair one one one three
    japanair one one three japanair one": a block of three words or more, not all one word, said
    again right after itself, wherever it starts and however the loop wears out after it."""
    from engine.value_query import said_twice

    assert said_twice(" ".join([*before, *block, *block, *worn]))


@given(digit=st.sampled_from("one two three four five".split()), times=st.integers(2, 9))
def test_one_word_said_again_and_again_is_no_loop_by_itself(digit: str, times: int) -> None:
    """ "Hotel one one one one one one": a digit stretched, left to the other rules."""
    from engine.value_query import said_twice

    assert not said_twice(f"holding point hotel {' '.join([digit] * times)} japanair four two")


# Fresh seed 168 (`--corrections 0.3`), stop 63: four wrong readbacks accepted where another
# hearing had the pilot correct himself and the best hearing, cut before it or the word lost, did
# not (`pilot_correction.corrected_elsewhere`), decided again.
FRESH: dict[tuple[int, int], tuple[str, str, int, dict[str, Any]]] = {
    (168, 8): ("taxi_out", "TX_GIVE_WAY_RB", 9, {
        "heard": "All Nippon six zero two. We will go to holding point victor four, the hold point zero four.",
        "alternatives": [
            "All Nippon six zero two. We'll call the holding point victor four correction to holding point cierra four.",
            "All nippon six zero two. We will go to holding point victor four, the hold point zero four.",
        ],
        "checks": [],
    }),
    (168, 164): ("departure", "DEP_HEADING_RB", 9, {
        "heard": "all Nippon six zero two ronger. heading, zero seven zero.",
        "alternatives": [
            "all Nippon six zero two ronja. heading near oseren zero correction. flight heading near ofour near o",
            "All Nippon six zero two ronger. heading, zero seven zero.",
        ],
        "checks": [],
    }),
    (168, 214): ("vfr_circuit", "VFR_TOUCH_AND_GO_RB", 4, {
        "heard": "Egyptair three two runway zero seven left.",
        "alternatives": [
            "Egyptair three two runway zero seven left. Carmack should runway zero seven right.",
            "Egyptair tree two runway zero seven left. Cair mike, chunt runway zero seven right.",
        ],
        "checks": [{"field": "runway", "value": "07L", "margin": 3.098, "lowest": -0.673, "delta": 0.0, "place": [4, 7]}],
    }),
    (168, 293): ("departure", "DEP_HEADING_RB", 9, {
        "heard": "All Nippon six zero two will go. heading zero seven zero.",
        "alternatives": [
            "All Nippon six zero two wheel coe. having zero seven zero correction. having zero five zero.",
            "All Nippon six zero two will go. heading, zero seven zero.",
        ],
        "checks": [],
    }),
}  # fmt: skip


@pytest.mark.parametrize("key", sorted(FRESH))
def test_a_correction_another_hearing_heard_leaves_the_value_unheard(key: tuple[int, int]) -> None:
    from tests.support import readback as rb

    decision, _ = rb.refused_recorded(*FRESH[key])
    assert decision.readback is not None and not decision.readback.confirmed  # no check in the audio confirmed the value


missing = ("missing", "", "")


@given(
    best=st.dictionaries(st.sampled_from(["runway", "heading", "qnh"]), st.sampled_from(["ok", "wrong", "unsure"]), min_size=1),
    cut=st.lists(st.dictionaries(st.sampled_from(["runway", "heading", "qnh"]), st.sampled_from(["ok", "wrong", "unsure", "missing"])), max_size=3),
    corrected=st.booleans(),
)  # fmt: skip
def test_a_field_another_hearing_may_have_corrected_is_never_left_as_heard(
    best: dict[str, str], cut: list[dict[str, str]], corrected: bool
) -> None:
    """Every field where another hearing says "correction" and the best none; else each a longer
    hearing (the best its first words) heard otherwise, and no other."""
    from engine.pilot_correction import corrected_elsewhere

    verdicts = {name: (status, "", "") for name, status in best.items()}
    hearings = [{name: (status, "", "") for name, status in c.items()} for c in cut]
    found = corrected_elsewhere(verdicts, hearings, corrected)
    otherwise = {n for n, s in best.items() if any(c.get(n, "missing") not in (s, "missing") for c in cut)}
    assert found == (set(best) if corrected else otherwise)
