"""Unsure values checked in the audio before "say again" (engine/value_check.py, the question and
the verdict; gateway/speech/stt/whisper_scoring.py, whisper's answer; gateway/speech/checking.py,
when the radio asks).

With the real parts: the flows' registry, the radio service on a virtual clock, and whisper
tiny.en scoring espeak-ng recordings (the answers are real forced decodes).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

from hypothesis import assume, example, given
from hypothesis import strategies as st

from engine.hearing import Hearing, ValueCheck
from engine.models import ReadbackResult
from engine.value_check import (
    FLOOR,
    FREQUENCY_SLACK,
    MARGIN,
    SLACK,
    TEMPO_MARGIN,
    TEMPO_SLACK,
    apply_checks,
    check_question,
    confirms,
    margin_needed,
    passes,
    tempo_question,
)
from engine.value_query import query, said_twice
from engine.value_words import SYMBOLS, said_symbols, spoken_value
from gateway.service import RadioService
from gateway.speech.checking import check_values
from gateway.speech.stt.base import SttContext, SttResult, final_result
from gateway.speech.stt.whisper import WhisperEngine
from gateway.speech.stt.whisper_scoring import TEMPOS, _needs, _symbol_forms
from gateway.speech.stt.whisper_scoring import check_values as score_values
from tests.support.pilot_audio import espeak_pcm, pilot_pcm

RATE = 16000
_SYMBOL = {form: symbol for table in SYMBOLS.values() for symbol, forms in table.items() for form in forms}


def spelled(kind_name: str, value: str) -> str:
    """The symbols a value is made of, as a check compares them ("121.850" -> "121850")."""
    shown = value.removeprefix("FL") if kind_name == "flight_level" else value
    if kind_name == "altitude":
        return str(int(value) // 1000) + ("" if int(value) % 1000 == 0 else str(int(value) % 1000 // 100))
    return re.sub(r"[^0-9A-Z]", "", shown)


# --- the question: the issued value, spelled faithfully, where the recognizer wrote it ---------

VALUES = st.one_of(
    st.tuples(
        st.just("runway"),
        st.builds(lambda n, s: f"{n:02d}{s}", st.integers(1, 36), st.sampled_from(["", "L", "R", "C"])),
    ),
    st.tuples(st.just("heading"), st.builds(lambda n: f"{n:03d}", st.integers(1, 360))),
    st.tuples(st.just("qnh"), st.builds(str, st.integers(950, 1050))),
    st.tuples(
        st.just("squawk"),
        st.builds(lambda d: "".join(d), st.lists(st.sampled_from("01234567"), min_size=4, max_size=4)),
    ),
    st.tuples(
        st.just("frequency"),
        st.builds(lambda k: f"{k / 1000:.3f}", st.integers(118000 // 5, 136975 // 5).map(lambda k: k * 5)),
    ),
    st.tuples(st.just("flight_level"), st.builds(lambda n: f"FL{n:03d}", st.integers(10, 450))),
    st.tuples(st.just("letter"), st.sampled_from(sorted(SYMBOLS["letter"]))),
    st.tuples(
        st.just("designator"),
        st.builds(lambda a, n: f"{a}{n}", st.sampled_from("ABCDEFGHKLMNPSTVWY"), st.integers(1, 29)),
    ),
)
HEARD = st.lists(
    st.sampled_from(["roger", "the", "sierra", "one", "two", "niner", "runway", "wilco", "lufthansa"]), max_size=12
)


@given(VALUES, HEARD)
def test_a_hypothesis_spells_exactly_the_issued_value_in_place_of_the_heard_words(
    value: tuple[str, str], heard: list[str]
) -> None:
    kind_name, issued = value
    transcript = " ".join(heard)
    asked = query(transcript, {"field": (kind_name, issued)})
    assert asked is not None and asked.heard == heard
    for hypothesis in asked.hypotheses:
        assert hypothesis.value == issued and hypothesis.field == "field"
        symbols = "".join(slot.symbol for slot in hypothesis.slots)
        if kind_name == "frequency":  # trailing zeros of the decimals may be left unsaid
            assert spelled(kind_name, issued).rstrip("0").startswith(symbols.rstrip("0"))
        elif kind_name != "altitude":
            assert symbols == spelled(kind_name, issued), (issued, hypothesis.words)
        for slot in hypothesis.slots:  # each slot is the word that says its symbol
            assert _SYMBOL[hypothesis.words[slot.word]] == slot.symbol
        # the words around the value are the transcript's own, in order, none invented
        first, last = hypothesis.slots[0].word, hypothesis.slots[-1].word
        if hypothesis.appended:  # the whole transcript, then the words that introduce the value
            assert hypothesis.words[: len(heard)] == heard and first >= len(heard)
            assert set(hypothesis.words[len(heard) : first]) <= {
                "runway",
                "heading",
                "flight",
                "level",
                "squawk",
                "qnh",
                "information",
            }
            continue
        assert hypothesis.words[:first] == heard[: len(hypothesis.words[:first])]
        tail = hypothesis.words[last + 1 :]
        assert not tail or heard[-len(tail) :] == tail


def test_a_value_the_transcript_stops_before_is_tried_after_it() -> None:
    asked = query("All Nippon six zero two.", {"qnh": ("qnh", "1022")})
    assert asked is not None
    appended = [h.words for h in asked.hypotheses if h.appended]
    assert appended == [["all", "nippon", "six", "zero", "two", "qnh", "one", "zero", "two", "two"]]
    assert all(not h.appended for h in query("", {"qnh": ("qnh", "1022")}).hypotheses)  # type: ignore[union-attr]


def test_the_value_replaces_the_words_most_like_it() -> None:
    asked = query(
        "To holding point delta five contact, ground one two one, the sierra.", {"f": ("frequency", "121.850")}
    )
    assert asked is not None
    icao, short, plain, plain_short = [h for h in asked.hypotheses if not h.appended]
    assert icao.words[-8:] == ["ground", "one", "two", "one", "decimal", "eight", "fife", "zero"]
    assert plain.words[-4:] == ["point", "eight", "five", "zero"]  # pilots say "point" as often
    assert short.words[-3:] == ["decimal", "eight", "fife"]  # and leave the last zero out
    assert plain_short.words[-3:] == ["point", "eight", "five"]  # in either spelling
    assert (icao.end, short.end) == (len(icao.words), len(short.words))  # no digit may follow it
    assert query("roger", {"p": ("sid", "OKTAL 9M")}) is None  # a procedure whose name was not heard


def test_a_value_is_also_tried_spelled_as_the_recognizer_wrote_it() -> None:
    """ "decimal five five" mixes the two spellings (the controller's "decimal", plain "five"):
    scored against "decimal fife fife" or "point five five" the transcript with the issued value
    seemed e^10 less likely than as heard, so a right 128.550 was asked again (seed 59)."""
    asked = query("Jetblue 389 contact radar one two eight decimal five five.", {"f": ("frequency", "128.550")})
    assert asked is not None
    in_place = [h.words[4:] for h in asked.hypotheses if not h.appended]
    assert ["one", "two", "eight", "decimal", "five", "five"] in in_place  # as written, its last zero left out
    assert ["one", "two", "eight", "decimal", "fife", "fife", "zero"] in in_place  # and both spellings as before
    assert ["one", "two", "eight", "point", "five", "five", "zero"] in in_place
    # only words the transcript has: "tree" stays where no "three" was written
    tree = query("tower one one eight decimal tree", {"f": ("frequency", "118.300")})
    assert tree is not None and not any("three" in h.words and "decimal" in h.words for h in tree.hypotheses)


def test_a_procedure_is_checked_only_where_its_name_was_heard_and_only_in_place() -> None:
    # the fix name is no symbol: only its digit and letter are scored, so the transcript must
    # have the name itself, and no hypothesis puts it after the transcript where none was heard
    asked = query("Cleared to Rome via METRO one halfa, squawk two three", {"sid": ("sid", "METRO 1A")})
    assert asked is not None and asked.hypotheses
    assert all(not h.appended for h in asked.hypotheses)
    assert all(h.words[3:7] == ["via", "metro", "one", "alfa"] for h in asked.hypotheses)
    assert [slot.symbol for slot in asked.hypotheses[0].slots] == ["1", "A"]
    assert query("Cleared to Rome via RELUK one alfa", {"sid": ("sid", "METRO 1A")}) is None  # another name heard
    assert query("Cleared to Rome via metra one alfa", {"sid": ("sid", "METRO 1A")}) is not None  # misspelt


def test_a_taxi_route_is_also_tried_with_and_before_its_last_taxiway() -> None:
    asked = query("Taxi via romeo one and echo to, QNH one zero three four", {"r": ("route", "R1 E2")})
    assert asked is not None
    in_place = [h.words for h in asked.hypotheses if not h.appended]
    assert ["taxi", "via", "romeo", "one", "and", "echo", "two", "qnh", "one", "zero", "three", "four"] in in_place
    assert ["taxi", "via", "romeo", "one", "echo", "two", "qnh", "one", "zero", "three", "four"] in in_place


OTHER_NUMBERS = st.one_of(
    st.tuples(
        st.just("frequency"),
        st.builds(lambda k: f"{k / 1000:.3f}", st.integers(118000 // 5, 136975 // 5).map(lambda k: k * 5)),
    ),
    st.tuples(
        st.just("squawk"),
        st.builds(lambda d: "".join(d), st.lists(st.sampled_from("01234567"), min_size=4, max_size=4)),
    ),
    st.tuples(st.just("qnh"), st.builds(str, st.integers(950, 1050))),
    st.tuples(st.just("callsign"), st.builds(lambda n: str(n), st.integers(10, 9999))),
)


@given(
    other=OTHER_NUMBERS,
    at=st.integers(0, 3),
    size=st.integers(2, 3),
    before=HEARD,
    after=HEARD,
    lead=st.lists(st.sampled_from(["one", "two", "eight", "zero"]), max_size=2),
)
def test_a_value_is_never_tried_over_another_values_words_or_our_callsigns(
    other: tuple[str, str], at: int, size: int, before: list[str], after: list[str], lead: list[str]
) -> None:
    """Seen on seed 25 by voice: "Egyptair two eight seven, tower one three six, decimal five"
    (runway 36 dropped) was accepted: tried in place of the "three six" of the frequency, the
    dropped runway scored as said; and on seed 27, the frequency run together with the runway
    before it ("from way one eight one three six decimal five", `lead`). Whatever digits a
    missing or unsure value shares with a value heard right or with our callsign ("runway two
    eight" and "Egyptair two eight seven"), no hypothesis puts it over their words: they stay as
    heard, and the transcript is never asked about unchanged (which would score the other
    value's digits as this one's)."""
    kind_name, value = other
    if kind_name == "callsign":
        other_words, heard_right = [SYMBOLS["digit"][d][0] for d in value], {}
        callsign = "egyptair " + " ".join(other_words)
    else:
        other_words, callsign, heard_right = spoken_value(kind_name, value) or [], "", {"other": other}
    digits = [w for w in other_words if w in _SYMBOL and _SYMBOL[w].isdigit()]
    part = "".join(_SYMBOL[w] for w in digits[at : at + size])
    assume(len(part) == size)
    checked = {2: ("runway", part), 3: ("heading", part)}[size]
    assume(checked[0] != "runway" or 1 <= int(part) <= 36)
    assume(checked[0] != "heading" or 1 <= int(part) <= 360)
    lead = [] if callsign else lead  # digits run together with the other value, said before it
    transcript = " ".join([*before, "egyptair", *lead, *other_words, "roger", *after])
    heard = transcript.split()

    def symbols(words: list[str]) -> str:
        return "".join(_SYMBOL.get(w, "-") for w in words)

    assume(part not in symbols([*before, *after]))  # said nowhere else
    assume(symbols([*lead, *other_words]).count(part) == symbols(other_words).count(part))
    asked = query(transcript, {"field": checked}, heard_right, callsign)
    assert asked is not None
    said = " ".join(other_words)
    for hypothesis in asked.hypotheses:
        assert said in " ".join(hypothesis.words), hypothesis.words
        assert hypothesis.words != heard, hypothesis.words


SPOKEN = st.sampled_from(["one", "tree", "three", "six", "sick", "fife", "decimal", "tower", "runway", "roger", "the"])


@given(
    values=st.lists(VALUES, min_size=2, max_size=3),
    heard=st.lists(SPOKEN, max_size=14),
    contradicted=st.booleans(),
)
def test_no_two_values_are_tried_over_one_word(
    values: list[tuple[str, str]], heard: list[str], contradicted: bool
) -> None:
    """A runway 36 left out of a readback, with the tower's 136.5 garbled ("one tree sick decimal
    fife": an unsure frequency, which `taken_words` cannot know as a value heard right), was
    tried over the frequency's "tree six" and scored as said there. Every value checked, and one
    the best transcript heard as another (`contradicted`: never checked, its words still its
    own), has a place of its own: the words a hypothesis replaces (`place`) are never another
    field's, and around them the transcript is as heard."""
    fields = {f"field{i}": value for i, value in enumerate(values)}
    other = {"field0": fields.pop("field0")} if contradicted else {}
    asked = query(" ".join(heard), fields, heard_other=other)
    if asked is None:
        return
    places: dict[str, tuple[int, int]] = {}
    for hypothesis in asked.hypotheses:
        start, end = hypothesis.place
        if hypothesis.appended:
            assert hypothesis.place == (len(heard), len(heard))
            continue
        assert places.setdefault(hypothesis.field, (start, end)) == (start, end)  # one place per field
        assert hypothesis.words[:start] == heard[:start]
        assert hypothesis.words[len(hypothesis.words) - (len(heard) - end) :] == heard[end:]
    if other:  # the contradicted field's place: the words most like its value, taken first if longest
        assert all(h.field != "field0" for h in asked.hypotheses)
    spans = [set(range(a, b)) for a, b in places.values()]
    for i, one in enumerate(spans):
        for two in spans[i + 1 :]:
            assert not one & two, (places, heard)


def test_a_dropped_runway_is_not_tried_over_a_garbled_frequencys_digits() -> None:
    """The shape of the seed 25 and 30 findings with the frequency unsure rather than heard
    right: the runway's "tree six" is found inside "one tree sick decimal fife" no more."""
    asked = query(
        "contact tower one tree sick decimal fife", {"runway": ("runway", "36"), "tower_freq": ("frequency", "136.500")}
    )
    assert asked is not None
    frequency = next(h.place for h in asked.hypotheses if h.field == "tower_freq" and not h.appended)
    runway = next(h.place for h in asked.hypotheses if h.field == "runway" and not h.appended)
    assert frequency == (2, 7) and not set(range(*runway)) & set(range(*frequency))


DIGIT_WORDS = ("zero", "one", "two", "tree", "four", "fife", "six", "seven", "eight", "niner")
# what whisper writes for a digit word it mishears, no symbol of any kind ("three fifty zero")
GARBLE = st.sampled_from(["fifty", "sixty", "forty", "sick", "fight", "fire", "time", "nero"])


@given(
    heading=st.integers(1, 360),
    garbled=st.integers(0, 2),
    garble=GARBLE,
    thousands=st.integers(1, 9),
    callsign=st.sampled_from(["egyptair two eight seven", "american six three four", "wizz air niner fife"]),
)
# found by a fresh draw (stop 48): the heading's digits are our callsign's, so its spelling was
# found in the callsign's words and it claimed no place of its own
@example(heading=287, garbled=0, garble="fifty", thousands=2, callsign="egyptair two eight seven")
# found by a draw (stop 51): "sixty nine five" for 295 beside "wizz air niner fife", tried over "wizz air"
@example(heading=295, garbled=0, garble="sixty", thousands=2, callsign="wizz air niner fife")
def test_a_dropped_value_is_not_tried_over_a_value_a_check_confirmed(
    heading: int, garbled: int, garble: str, thousands: int, callsign: str
) -> None:
    """Fresh seed 61 (flite): "heading tree six zero" with the missed approach's altitude dropped,
    heard "heading three fifty zero". A check confirmed the heading there; whisper base's check
    after the third hearing then tried the dropped "three thousand" over the same "three fifty"
    (the heading, heard right only by its check, is spelled in no words `taken_words` knows),
    scored the audio's "tree" for it, and the readback was accepted. A value heard right, by its
    words or by a check, keeps its place: any heading garbled at any digit, any altitude, no
    hypothesis for the altitude replaces a word where the heading's own check puts it."""
    words = [DIGIT_WORDS[int(d)] for d in f"{heading:03d}"]
    words[garbled] = garble
    heard = f"{callsign} okay heading {' '.join(words)} roger"
    own = query(heard, {"heading": ("heading", f"{heading:03d}")}, callsign=callsign)
    assert own is not None
    checked = next(set(range(*h.place)) for h in own.hypotheses if not h.appended)
    assert checked & set(range(len(callsign.split()) + 2, len(callsign.split()) + 5))  # the heading's words
    right = {"heading": ("heading", f"{heading:03d}")}
    asked = query(heard, {"altitude": ("altitude", str(thousands * 1000))}, right, callsign, by_check=["heading"])
    assert asked is not None
    for hypothesis in asked.hypotheses:
        assert not set(range(*hypothesis.place)) & checked, (heard, hypothesis.words)


def test_a_value_heard_right_by_its_words_claims_no_other_words() -> None:
    """Seed 21's recordings, decided again with a first version of the rule above that reserved
    the words most like every value heard right: runway 36, heard right in "runway three six",
    claimed the "three six" inside the garbled frequency "one tree six one five" before it; QNH
    1024, heard right as "102, four", claimed "november four", the holding point's place. Only a
    value heard right by a check and spelled in no words claims the words most like it."""
    asked = query(
        "roger one tree six one five and runway three six roger egyptair two eight seven",
        {"tower_freq": ("frequency", "136.150")},
        {"runway": ("runway", "36")},
        "Egyptair 287",
        by_check=["runway"],
    )
    assert asked is not None
    assert set(range(1, 6)) <= set(range(*next(h.place for h in asked.hypotheses if not h.appended)))
    asked = query(
        "k holding point november four one with one eight qnh, 102, four via mike four hotel tree",
        {"holding_point": ("designator", "N4")},
        {"qnh": ("qnh", "1024"), "runway": ("runway", "18")},
    )
    assert asked is not None
    assert set(range(3, 5)) <= set(range(*next(h.place for h in asked.hypotheses if not h.appended)))


@given(VALUES, HEARD)
def test_only_a_value_that_could_go_on_needs_no_digit_after_it(value: tuple[str, str], heard: list[str]) -> None:
    # "runway one eight, one one eight decimal one": a runway has two digits at most, so the
    # "one" after it is the frequency's; a frequency or a holding point could go on ("decimal
    # one five", "alpha one two"), so a digit after it must be unlikelier than none
    kind_name, issued = value
    asked = query(" ".join(heard), {"field": (kind_name, issued)})
    assert asked is not None
    most = {"runway": 2, "heading": 3, "squawk": 4, "flight_level": 3, "qnh": 4}.get(kind_name)
    for hypothesis in asked.hypotheses:
        digits = sum(1 for slot in hypothesis.slots if slot.cls == "digit")
        ends_in_digit = hypothesis.slots[-1].cls == "digit"  # these kinds' values end in their last symbol
        full = most is not None and digits >= most
        assert (hypothesis.end is not None) == (ends_in_digit and not full), (kind_name, issued, hypothesis.words)


def test_spoken_values_are_the_controllers_words_without_their_frame() -> None:
    assert spoken_value("runway", "25L") == ["two", "fife", "left"]
    assert spoken_value("altitude", "11000") == ["one", "one", "thousand"]
    assert spoken_value("flight_level", "FL290") == ["two", "niner", "zero"]
    assert spoken_value("flight_level", "FL100") == ["one", "zero", "zero"]  # not "one hundred"
    assert spoken_value("designator", "W4") == ["whiskey", "four"]
    assert spoken_value("route", "B4 L4") == ["bravo", "four", "lima", "four"]
    assert spoken_value("airport", "LPPT") is None


# --- the verdict: the engine's thresholds, for the issued value only --------------------------

STATUSES = st.sampled_from(["ok", "missing", "wrong", "unsure"])


@given(
    st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), STATUSES, min_size=1),
    st.lists(
        st.builds(
            ValueCheck,
            field=st.sampled_from(["a", "b", "c", "d", "x"]),
            value=st.sampled_from(["1004", "1005", "07R", "5000", "6000"]),
            margin=st.floats(-20, 20),
            lowest=st.floats(-20, 0),
            delta=st.floats(-40, 10),
            appended=st.booleans(),
            tempo=st.sampled_from([1.0, 1 / 1.2, 1.25]),
        ),
        max_size=6,
    ),
    st.sampled_from(["Lufthansa three five niner", "Speedbird one zero zero four", "Wizz Air four", "Wizz Air 54", "Speedbird 1004"]),
    st.sampled_from([("qnh", "1004", "1004"), ("altitude", "5000", "5")]),  # kind, value, its symbols
    st.sets(st.sampled_from(["a", "b", "c", "d"])),  # fields a transcript heard as another value
    st.sets(st.sampled_from(["a", "b", "c", "d"])),  # heard only as another value, in the answer and before
)
def test_a_check_only_turns_an_unsure_or_missing_field_right_for_its_issued_value(
    statuses: dict[str, str],
    checks: list[ValueCheck],
    callsign: str,
    issue: tuple[str, str, str],
    heard_other: set[str],
    only_other: set[str],
) -> None:
    rb = ReadbackResult(
        ok=all(s == "ok" for s in statuses.values()),
        fields=statuses,
        missing=[f for f, s in statuses.items() if s == "missing"],
        unsure=[f for f, s in statuses.items() if s == "unsure"],
        wrong=[{"field": f, "expected": "1004", "heard": "1005"} for f, s in statuses.items() if s == "wrong"],
        contradicted=sorted(heard_other & {f for f, s in statuses.items() if s != "ok"}),
    )
    kind_name, value, said = issue
    issued = {name: (kind_name, value) for name in statuses}
    twice = sorted(only_other & {f for f, s in statuses.items() if s != "ok"})
    result, notes = apply_checks(rb, checks, issued, callsign, again_otherwise=twice)
    digits = {"one": "1", "zero": "0", "four": "4", "three": "3", "five": "5", "niner": "9"}
    in_callsign = said in "".join(w if w.isdigit() else digits.get(w, "") for w in callsign.split())
    needed = 2 * MARGIN if len(said) == 1 else MARGIN  # one place: one chance to be fooled
    for name, before in statuses.items():
        after = result.fields[name]
        # in place: all three numbers; appended: margin and floor, and never a value our callsign says
        confirming = [
            c
            for c in checks
            if c.field == name
            and c.value == value
            and c.margin >= needed
            and c.lowest >= FLOOR
            and not (in_callsign and (c.appended or len(said) == 1))
            and (c.appended or c.delta >= -(SLACK if c.tempo == 1.0 else TEMPO_SLACK))
        ]
        if before in ("unsure", "missing") and confirming and name not in {*rb.contradicted, *twice}:
            assert after == "ok"
        else:
            # a wrong value is never overruled, nor one a transcript heard as another value (or
            # every hearing that heard it, twice: held-out seed 126 #170); another value never confirms
            assert after == before
    assert result.ok == all(s == "ok" for s in result.fields.values())
    assert result.wrong == rb.wrong
    assert set(result.missing) | set(result.unsure) <= set(rb.missing) | set(rb.unsure)
    keys = ("field", "value", "margin", "lowest", "delta", "appended", "tempo")
    assert all(
        n["confirmed"] == confirms(ValueCheck(**{k: n[k] for k in keys}), value, said if in_callsign else "", said)
        for n in notes
    )


def test_heard_again_at_another_tempo_a_check_needs_the_stricter_slack() -> None:
    """Held-out seed 35 by voice: "runway one niner" (18 issued) written "runway one, I not", and
    at 0.83x "eight" led every other digit by 2.17 nats in a transcript e^4.3 less likely with it:
    a wrong runway accepted. The same numbers as recorded would pass; at another tempo they do not."""
    seen = {"field": "runway", "value": "18", "margin": 2.169, "lowest": -3.407, "delta": -4.288}
    assert passes(ValueCheck(**seen, tempo=1.0))
    assert not passes(ValueCheck(**seen, tempo=1 / 1.2))
    assert passes(ValueCheck(**{**seen, "delta": -TEMPO_SLACK}, tempo=1 / 1.2))
    rb = ReadbackResult(ok=False, fields={"runway": "unsure"}, unsure=["runway"])
    result, notes = apply_checks(rb, [ValueCheck(**seen, tempo=1 / 1.2)], {"runway": ("runway", "18")})
    assert result.fields["runway"] == "unsure" and notes[0]["slack"] == TEMPO_SLACK


@given(
    margin=st.floats(-8.0, 8.0),
    lowest=st.floats(-8.0, 0.0),
    delta=st.floats(-40.0, 10.0),
    tempo=st.sampled_from(TEMPOS),
    field=st.sampled_from(["center_freq", "tower_freq", "dest_approach_freq", "qnh", "runway", "squawk"]),
)
@example(margin=2.4, lowest=-1.5, delta=-12.0, tempo=1.0, field="dest_approach_freq")  # "decimal zero five flight"
def test_a_frequency_as_recorded_in_place_needs_its_places_not_the_whole_transcript(
    margin: float, lowest: float, delta: float, tempo: float, field: str
) -> None:
    """A frequency's five or six places, each with the issued digit e^2 likelier than any other,
    carry the evidence: in place and as recorded it may cost the transcript up to e^15
    (`FREQUENCY_SLACK`), where other kinds keep `SLACK`. Over the 88 recorded voice runs no
    changed or dropped frequency had such a check at any delta (the nearest 0.6 nats of margin
    short); at another tempo the stricter `TEMPO_SLACK` holds for every kind. Whatever the
    delta, a margin under `MARGIN` or a place under `FLOOR` never confirms."""
    value = {"qnh": "1004", "runway": "25L", "squawk": "4721"}.get(field, "133.200")
    check = ValueCheck(field=field, value=value, margin=margin, lowest=lowest, delta=delta, tempo=tempo)
    frequency = field.endswith("_freq")
    slack = TEMPO_SLACK if tempo != 1.0 else (FREQUENCY_SLACK if frequency else SLACK)
    assert passes(check) == (margin >= MARGIN and lowest >= FLOOR and delta >= -slack)
    if margin < MARGIN or lowest < FLOOR:
        rb = ReadbackResult(ok=False, fields={field: "unsure"}, unsure=[field])
        kind = "frequency" if frequency else field
        assert apply_checks(rb, [check], {field: (kind, value)})[0].fields[field] == "unsure"


@given(
    against_margin=st.floats(-6.0, -0.01),
    against_lowest=st.floats(FLOOR, 0.0),
    margin=st.floats(MARGIN, 8.0),
    tempo=st.sampled_from(TEMPOS),
    bigger=st.booleans(),
    field=st.sampled_from(["center_freq", "tower_freq", "qnh"]),
)
def test_a_frequency_heard_otherwise_in_place_is_not_confirmed_after_the_transcript(
    against_margin: float, against_lowest: float, margin: float, tempo: float, bigger: bool, field: str
) -> None:
    """Held-out seed 80 by voice: 133.225 said for 133.200, written "two two pine"; in place
    another digit was likelier at every tempo, but after the transcript the issued frequency
    passed at 1.11x: a wrong frequency accepted. A frequency's appended check no longer confirms
    where an in-place check by the same model heard another digit there; without that in-place
    check, or by the other model, it still does; other kinds keep it (the replay's cost)."""
    value = "1004" if field == "qnh" else "133.200"
    appended = ValueCheck(field=field, value=value, margin=margin, lowest=-2.0, delta=-30.0, appended=True,
                          tempo=tempo, bigger=bigger)
    in_place = ValueCheck(field=field, value=value, margin=against_margin, lowest=against_lowest, delta=0.0,
                          tempo=1.0, bigger=bigger)
    other_model = in_place.model_copy(update={"bigger": not bigger})
    rb = ReadbackResult(ok=False, fields={field: "unsure"}, unsure=[field])
    fields = {field: ("frequency" if field != "qnh" else "qnh", value)}
    alone, _ = apply_checks(rb, [appended], fields)
    assume(alone.fields[field] == "ok")  # the appended check passes its thresholds on its own
    against, _ = apply_checks(rb, [in_place, appended], fields)
    elsewhere, _ = apply_checks(rb, [other_model, appended], fields)
    assert elsewhere.fields[field] == "ok"
    assert against.fields[field] == ("unsure" if field != "qnh" else "ok")


@given(
    doubt=st.floats(-8.0, 0.0),
    margin=st.floats(MARGIN, 8.0),
    tempo=st.sampled_from(TEMPOS),
    other_tempo=st.sampled_from(TEMPOS),
    bigger=st.booleans(),
    field=st.sampled_from(["runway", "tower_freq", "heading", "squawk"]),
)
def test_an_appended_reading_the_other_model_disagrees_with_is_not_confirmed(
    doubt: float, margin: float, tempo: float, other_tempo: float, bigger: bool, field: str
) -> None:
    """Held-out seed 114 by voice: "runway zero seven left" read back for 07R, only "All Nippon six
    zero two." written. After the transcript whisper base found "right" likelier by 2.1 at 0.83x
    and confirmed it; tiny.en, there at every tempo, found "left" likelier (margins -1.4 to -4.6):
    a wrong runway accepted. An appended check is not confirmed where the other model's appended
    check of the field has a margin of -`MARGIN` or less, at any tempo; the same model's own
    failing tries, and the other model's weaker doubt, leave it confirmed."""
    value = {"runway": "07R", "tower_freq": "136.500", "heading": "250", "squawk": "4721"}[field]
    appended = ValueCheck(field=field, value=value, margin=margin, lowest=-2.0, delta=-12.0, appended=True,
                          tempo=tempo, bigger=bigger)
    other = ValueCheck(field=field, value=value, margin=doubt, lowest=-5.0, delta=-15.0, appended=True,
                       tempo=other_tempo, bigger=not bigger)
    same_model = other.model_copy(update={"bigger": bigger})
    in_place = other.model_copy(update={"appended": False})
    kind = "frequency" if field == "tower_freq" else field
    rb = ReadbackResult(ok=False, fields={field: "missing"}, missing=[field])
    status = {
        name: apply_checks(rb, checks, {field: (kind, value)})[0].fields[field]
        for name, checks in {"alone": [appended], "other": [other, appended], "same": [same_model, appended],
                             "in_place": [in_place, appended]}.items()
    }
    assume(status["alone"] == "ok")  # the appended check passes its thresholds on its own
    assert status["other"] == ("missing" if doubt <= -MARGIN else "ok")
    assert status["same"] == status["in_place"] == "ok"


@given(
    doubts=st.lists(st.floats(-8.0, 1.0), min_size=3, max_size=3),
    margin=st.floats(2.0, 12.0),
    bigger=st.booleans(),
    field=st.sampled_from(["runway", "tower_freq", "heading", "squawk"]),
)
def test_a_reading_in_place_its_own_model_denies_at_two_other_tempos_is_not_confirmed(
    doubts: list[float], margin: float, bigger: bool, field: str
) -> None:
    """Fresh seed 166: "runway zero tree" for 02, written "one with zero tree" beside n-best
    hypotheses that heard 03; tiny.en's check of 02 in place passed by 2.2 at 1.25x only (-3.3 as
    recorded, -4.2 at 0.83x): a wrong runway accepted. An in-place check is not confirmed where
    the same model's in-place checks of the same words deny it by `MARGIN` or more at two other
    tempos or more; one such tempo, or other words, leave it confirmed."""
    value = {"runway": "07R", "tower_freq": "136.500", "heading": "250", "squawk": "4721"}[field]
    place = (6, 8)
    checked = ValueCheck(field=field, value=value, margin=margin, lowest=-2.0, delta=0.0, tempo=1.25, bigger=bigger, place=place)
    others = [
        checked.model_copy(update={"margin": d, "lowest": -5.0, "delta": -0.6, "tempo": t})
        for d, t in zip(doubts, (1.0, 0.8333333333333334, 1.1111111111111112), strict=True)
    ]
    kind = "frequency" if field == "tower_freq" else field
    rb = ReadbackResult(ok=False, fields={field: "missing"}, missing=[field])

    def status(checks: list[ValueCheck]) -> str:
        return apply_checks(rb, checks, {field: (kind, value)})[0].fields[field]

    assume(status([checked]) == "ok")
    denying = sum(d <= -MARGIN for d in doubts)
    assert status([*others, checked]) == ("missing" if denying >= 2 else "ok")
    assert status([*(o.model_copy(update={"place": (2, 4)}) for o in others), checked]) == "ok"


def test_seed_114_a_runway_side_whisper_base_heard_right_and_tiny_left_is_asked_again() -> None:
    """The recorded checks of held-out seed 114, index 178, as the engine got them: every one of
    07R failed but whisper base's after the transcript at 0.83x (margin 2.09)."""
    recorded = [
        (-3.158, -7.197, -19.91, False, 1.0, False), (-2.128, -4.788, -12.603, True, 1.0, False),
        (-5.587, -5.879, -20.772, False, 0.833, False), (-1.392, -4.399, -11.96, True, 0.833, False),
        (-4.059, -7.117, -21.103, False, 1.25, False), (-4.285, -6.635, -17.713, True, 1.25, False),
        (-4.723, -7.394, -21.023, False, 1.111, False), (-4.636, -6.684, -18.719, True, 1.111, False),
        (-4.941, -5.781, -24.936, False, 1.0, True), (-0.408, -4.777, -15.522, True, 1.0, True),
        (-5.323, -6.336, -24.386, False, 0.833, True), (2.09, -3.381, -10.779, True, 0.833, True),
    ]
    checks = [
        ValueCheck(field="runway", value="07R", margin=m, lowest=lo, delta=d, appended=a, tempo=t, bigger=b)
        for m, lo, d, a, t, b in recorded
    ]
    rb = ReadbackResult(ok=False, fields={"runway": "missing"}, missing=["runway"])
    assert apply_checks(rb, checks, {"runway": ("runway", "07R")})[0].fields["runway"] == "missing"
    # since stop 59 it falls short alone too (after the transcript at another tempo: `TEMPO_MARGIN`)
    assert apply_checks(rb, checks[-1:], {"runway": ("runway", "07R")})[0].fields["runway"] == "missing"
    alone = checks[-1].model_copy(update={"tempo": 1.0})  # as recorded, the margin it had sufficed
    assert apply_checks(rb, [alone], {"runway": ("runway", "07R")})[0].fields["runway"] == "ok"


def test_seed_147_a_runway_confirmed_only_after_the_transcript_at_another_tempo_needs_more() -> None:
    """Fresh seed 147, index 161, by voice: "runway one niner" read back for 18 (espeak-ng), written
    "runway one aina blanchor". Whisper base at 0.83x after the transcript found "eight" likelier
    than any other digit by 2.88 and confirmed 18: a wrong runway accepted (the value's two symbols
    needed `MARGIN`). After the transcript at another tempo every value now needs `TEMPO_MARGIN`
    more; the same reading as recorded, or in place, is judged as before."""
    recorded = [
        (-0.658, -5.415, 2.168, False, 1.0, False), (-0.068, -6.586, -15.427, True, 1.0, False),
        (0.215, -5.409, 3.835, False, 0.833, False), (-0.025, -6.29, -14.928, True, 0.833, False),
        (-1.706, -7.067, 3.002, False, 1.25, False), (-0.906, -7.149, -18.454, True, 1.25, False),
        (-0.921, -5.594, 1.273, False, 1.111, False), (-0.197, -6.394, -16.907, True, 1.111, False),
        (-0.465, -3.897, -9.445, False, 1.0, True), (2.678, -4.157, -17.54, True, 1.0, True),
        (2.451, -3.515, -5.831, False, 0.833, True), (2.881, -3.789, -15.641, True, 0.833, True),
    ]
    checks = [
        ValueCheck(field="runway", value="18", margin=m, lowest=lo, delta=d, appended=a, tempo=t, bigger=b)
        for m, lo, d, a, t, b in recorded
    ]
    rb = ReadbackResult(ok=False, fields={"runway": "unsure"}, unsure=["runway"])
    fields = {"runway": ("runway", "18")}
    assert apply_checks(rb, checks, fields)[0].fields["runway"] == "unsure"
    as_recorded = checks[-1].model_copy(update={"tempo": 1.0, "lowest": -3.0})
    assert apply_checks(rb, [as_recorded], fields)[0].fields["runway"] == "ok"
    stronger = checks[-1].model_copy(update={"margin": MARGIN + TEMPO_MARGIN})
    assert apply_checks(rb, [stronger], fields)[0].fields["runway"] == "ok"


def test_the_engine_asks_about_an_unsure_value_and_accepts_it_only_when_confirmed(radio_service: RadioService) -> None:
    service = radio_service
    session, opening, _ = service.create(flow="clearance", seed=5)
    sid = session.session_id
    readback = service.transmit(sid, opening.expected_pilot[0]).expected_pilot[0]
    squawk = service.get(sid).variables["squawk"]
    garbled = re.sub(r"squawk \d+", "squawk the sierra", readback)
    asked = service.value_query(sid, garbled, Hearing())
    assert asked is not None and {h.field for h in asked.hypotheses} == {"squawk"}
    assert all(h.value == str(squawk) for h in asked.hypotheses)
    assert service.value_query(sid, readback, Hearing()) is None  # heard right: nothing to ask
    wrong = re.sub(r"squawk \d+", "squawk 1234", readback)
    assert service.value_query(sid, wrong, Hearing()) is None  # heard wrong: corrected, not asked

    unsure = ValueCheck(field="squawk", value=str(squawk), margin=MARGIN - 0.5, lowest=-0.1, delta=0.0)
    decision = service.transmit(sid, garbled, hearing=Hearing(checks=[unsure]))
    assert decision.readback is not None and not decision.readback.ok
    assert any(s.detail == "checked in the audio: confirmed []" for s in decision.trace.steps)
    sure = ValueCheck(field="squawk", value=str(squawk), margin=MARGIN + 1.0, lowest=FLOOR + 1.0, delta=-SLACK + 1.0)
    decision = service.transmit(sid, garbled, hearing=Hearing(checks=[sure]))
    assert decision.readback is not None and decision.readback.ok
    assert any(s.detail == "checked in the audio: confirmed ['squawk']" for s in decision.trace.steps)


# --- whisper's answer, on real audio -----------------------------------------------------------

READBACK = "Lufthansa three five nine, runway zero seven right, squawk four two one five"


def _checks(
    whisper: WhisperEngine,
    said: str,
    heard: str,
    fields: dict[str, tuple[str, str]],
    speak: Callable[[str], bytes] = espeak_pcm,
) -> dict[str, bool]:
    asked = query(heard, fields)
    assert asked is not None
    answers = score_values(whisper, speak(said), None, asked)
    assert {a.field for a in answers} == set(fields)
    for tempo in TEMPOS:  # each tempo: both placements of the fields no check passed at before
        heard = [a for a in answers if a.tempo == tempo]
        before = [a for a in answers if TEMPOS.index(a.tempo) < TEMPOS.index(tempo)]
        assert all(not any(b.field == a.field and passes(b) for b in before) for a in heard)
        # in place and after the transcript; a procedure in place only
        placements = {f: 1 if fields[f][0] in ("sid", "star") else 2 for f in {a.field for a in heard}}
        assert len(heard) == sum(placements.values()) or len(fields) > 1
    assert {a.tempo for a in answers} <= set(TEMPOS) and answers[0].tempo == 1.0
    # each check says where its value was put: the words of one of the question's hypotheses
    # in place (kept in the bench's records), none after the transcript
    for a in answers:
        options = {h.place for h in asked.hypotheses if h.field == a.field and not h.appended}
        assert a.place is None if a.appended else a.place in options, (a, options)
    # as the engine decides: every field unsure, confirmed by any of its checks
    unsure = ReadbackResult(ok=False, fields=dict.fromkeys(fields, "unsure"), unsure=list(fields))
    result, _ = apply_checks(unsure, answers, fields, "Lufthansa three five niner")
    return {name: status == "ok" for name, status in result.fields.items()}


def test_whisper_confirms_the_value_said_and_never_another(whisper: WhisperEngine) -> None:
    runway_lost = "Lufthansa three five nine, runway zero seven, the sierra, squawk four two one five"
    assert _checks(whisper, READBACK, runway_lost, {"runway": ("runway", "07R")}) == {"runway": True}
    assert _checks(whisper, READBACK, runway_lost, {"runway": ("runway", "07L")}) == {"runway": False}
    assert _checks(whisper, READBACK, runway_lost, {"runway": ("runway", "25R")}) == {"runway": False}
    squawk_garbled = "Lufthansa three five nine, runway zero seven right, squawk for to one fight"
    assert _checks(whisper, READBACK, squawk_garbled, {"squawk": ("squawk", "4215")}) == {"squawk": True}
    # one digit off: the transcript is about as likely with it (delta), the digit is not (margin)
    assert _checks(whisper, READBACK, squawk_garbled, {"squawk": ("squawk", "4216")}) == {"squawk": False}
    assert _checks(whisper, READBACK, squawk_garbled, {"squawk": ("squawk", "4715")}) == {"squawk": False}


def test_whisper_does_not_confirm_a_value_that_was_not_said(whisper: WhisperEngine) -> None:
    said = "Lufthansa three five nine, wilco"
    assert _checks(whisper, said, "Lufthansa three five nine, wilco", {"runway": ("runway", "07R")}) == {
        "runway": False
    }


def test_a_dropped_value_is_not_confirmed_by_another_values_digits_or_our_callsign(whisper: WhisperEngine) -> None:
    # seed 25 by voice: runway 36 dropped, and tried over the tower frequency's "three six" it
    # scored as said (delta 0, margin 5.3): the readback was accepted; seed 27: runway 18 said
    # for 36, run together with the frequency ("from way one eight one three six decimal five")
    callsign = "Egyptair two eight seven"
    dropped_said = f"{callsign}, tower one three six decimal five"
    dropped_heard = f"{callsign}, tower one three six, decimal five."
    run_together_said = f"{callsign}, runway one eight, one three six decimal five"
    run_together_heard = "You just air two eight seven from way one eight one three six decimal five."
    for said, heard, runway in (
        (dropped_said, dropped_heard, "36"),
        (dropped_said, dropped_heard, "28"),
        (run_together_said, run_together_heard, "36"),
    ):
        fields = {"runway": ("runway", runway)}
        carved = query(heard, fields)  # the old question, which knew no other value's words
        asked = query(heard, fields, {"tower_freq": ("frequency", "136.500")}, callsign)
        assert carved is not None and asked is not None
        dropped = ReadbackResult(ok=False, fields={"runway": "missing", "tower_freq": "ok"}, missing=["runway"])
        before, _ = apply_checks(dropped, score_values(whisper, espeak_pcm(said), None, carved), fields, callsign)
        after, _ = apply_checks(dropped, score_values(whisper, espeak_pcm(said), None, asked), fields, callsign)
        assert (before.fields["runway"], after.fields["runway"]) == ("ok", "missing"), runway


def test_the_radio_adds_the_checks_to_the_hearing_only_where_the_engine_asks(whisper: WhisperEngine) -> None:
    pcm = espeak_pcm(READBACK)
    asked = query("Lufthansa three five nine, runway zero seven the sierra", {"runway": ("runway", "07R")})

    async def hear(question: object) -> tuple[SttResult, SttResult]:
        stream = whisper.open(SttContext(callsign="Lufthansa 359"))
        stream.feed(pcm)
        first = await final_result(stream)

        async def ask(_heard: SttResult) -> object:
            return question

        try:
            return first, await check_values(stream, first, ask)  # type: ignore[arg-type]
        finally:
            await stream.aclose()

    first, same = asyncio.run(hear(None))
    assert same is first  # nothing asked: nothing decoded, nothing added
    first, checked = asyncio.run(hear(asked))
    assert checked.text == first.text and [(c.field, c.appended) for c in checked.hearing.checks] == [
        ("runway", False),
        ("runway", True),
    ]
    assert checked.hearing.alternatives == first.hearing.alternatives


def test_a_value_not_heard_is_heard_at_every_tempo_but_none_started_past_the_deadline(whisper: WhisperEngine) -> None:
    said = "Lufthansa three five nine, wilco"  # no runway: no tempo can pass it, each is tried
    asked = query(said, {"runway": ("runway", "07R")})
    assert asked is not None
    pcm = espeak_pcm(said)
    every = score_values(whisper, pcm, None, asked)
    assert sorted({c.tempo for c in every}) == sorted(TEMPOS) and not any(passes(c) for c in every)
    # a deadline already past: the recording as it is, no further tempo
    assert {c.tempo for c in score_values(whisper, pcm, None, asked, until=0.0)} == {1.0}


def test_a_value_said_with_more_digits_is_not_confirmed(whisper: WhisperEngine) -> None:
    # 121.800 is spoken "one two one decimal eight": every place of it is in "decimal eight five",
    # so only the digit said after it tells them apart; 121.850 said without its last zero is it
    said = "Lufthansa three five nine, contact ground one two one decimal eight five"
    heard = "Lufthansa three five nine, contact ground one two one decimal eight fight"
    assert _checks(whisper, said, heard, {"frequency": ("frequency", "121.800")}) == {"frequency": False}
    assert _checks(whisper, said, heard, {"frequency": ("frequency", "121.850")}) == {"frequency": True}


def test_a_frequency_written_in_mixed_spelling_is_confirmed_and_another_is_not(whisper: WhisperEngine) -> None:
    said = "Jetblue three eight niner, contact radar one two eight decimal five five"
    heard = "Jetblue 389 contact radar one two eight decimal five five."
    assert _checks(whisper, said, heard, {"frequency": ("frequency", "128.550")}, pilot_pcm) == {"frequency": True}
    assert _checks(whisper, said, heard, {"frequency": ("frequency", "128.450")}, pilot_pcm) == {"frequency": False}
    assert _checks(whisper, said, heard, {"frequency": ("frequency", "128.555")}, pilot_pcm) == {"frequency": False}


def test_a_taxi_route_read_back_with_and_is_confirmed_and_another_is_not(whisper: WhisperEngine) -> None:
    # spoken by the piper pilot voice: what is tested is the "and" put before the last taxiway.
    # espeak-ng's "echo two" is heard too near another symbol to confirm on some hosts (an AMD EPYC
    # one scored it at margin -3.4; earlier hosts passed it): the decoder's kernels differ.
    said = "Lufthansa three five nine, taxi via romeo one and echo two"
    heard = "Lufthansa three five nine, taxi via romeo one and echo to"  # "two" written "to": unsure
    assert _checks(whisper, said, heard, {"route": ("route", "R1 E2")}, pilot_pcm) == {"route": True}
    assert _checks(whisper, said, heard, {"route": ("route", "R1 B2")}, pilot_pcm) == {"route": False}
    assert _checks(whisper, said, heard, {"route": ("route", "R1 E3")}, pilot_pcm) == {"route": False}


def test_a_symbol_is_scored_in_every_way_whisper_writes_it(whisper: WhisperEngine) -> None:
    # the tokenizer spells " foxtrot" " fo" "xt" "rot", whisper writes " fox" "trot": scored by
    # the tokenizer's alone, a "foxtrot" whisper had written scored -4.6 nats (seed 0, case 22)
    tokenizer = whisper.tokenizer()
    forms = _symbol_forms(tokenizer)["letter"]["F"]
    assert tuple(tokenizer.encode(" foxtrot")) in forms
    assert (tokenizer.encode(" fox")[0], *tokenizer.encode("trot")) in forms
    for cls, table in _symbol_forms(tokenizer).items():  # every form still spells its word
        for symbol, spelt in table.items():
            words = {tokenizer.decode(list(tokens)).strip().lower() for tokens in spelt}
            assert words <= {*SYMBOLS[cls][symbol], symbol.lower()}, (cls, symbol, words)


def test_the_recognizer_listens_for_the_margin_the_engine_will_ask() -> None:
    # "fife thousand" is one place, one chance: the engine asks twice the margin of it, so the
    # recognizer must not stop hearing other tempos at a check that passes only the plain one
    one = query("climb fife thousand", {"a": ("altitude", "5000")})
    four = query("squawk four two one five", {"s": ("squawk", "4215")})
    assert one is not None and four is not None
    check = ValueCheck(field="a", value="5000", margin=MARGIN + 0.5, lowest=FLOOR + 1, delta=0.0)
    assert {_needs(h, check) for h in one.hypotheses} == {2 * MARGIN}
    assert {_needs(h, check) for h in four.hypotheses} == {MARGIN}
    assert passes(check) and not passes(check, _needs(one.hypotheses[0], check))
    assert not confirms(check, "5000", said="5")
    late = check.model_copy(update={"appended": True, "tempo": TEMPOS[1]})  # as `confirms` asks of it
    assert _needs(one.hypotheses[0], late) == margin_needed("5", late) == 2 * MARGIN + TEMPO_MARGIN


@given(
    margin=st.floats(0.0, 8.0),
    tempo=st.sampled_from(TEMPOS),
    appended=st.booleans(),
    symbols=st.sampled_from(["5", "42", "121850"]),
)
def test_a_value_checked_after_the_transcript_at_another_tempo_needs_more(
    margin: float, tempo: float, appended: bool, symbols: str
) -> None:
    """Kokoro seed 63: a dropped altitude of 5000 checked after "... QNH one zero one four" scored
    a margin of 3.7 at 0.83x, 0.3 nats under the 4 a value of one symbol needs; held-out seed 114
    and fresh seed 147: two wrong runways of two symbols confirmed there by whisper base at 0.83x
    (2.09, 2.88). No `SLACK` guards a check after the transcript and each tempo is one more
    chance, so there every value needs `TEMPO_MARGIN` more; every other check is judged as before."""
    check = ValueCheck(field="f", value="v", margin=margin, lowest=FLOOR + 1, delta=0.0, appended=appended, tempo=tempo)
    base = 2 * MARGIN if len(symbols) == 1 else MARGIN
    extra = TEMPO_MARGIN if appended and tempo != 1.0 else 0.0
    assert confirms(check, "v", said=symbols) is (margin >= base + extra)


def test_a_procedure_heard_unsure_is_confirmed_and_another_is_not(whisper: WhisperEngine) -> None:
    said = "Lufthansa three five nine, climb five thousand feet, via metro seven delta departure, squawk four two"
    heard = "Lufthansa three five nine, climb five thousand feet, via metro seven the departure, squawk four two"
    assert _checks(whisper, said, heard, {"sid": ("sid", "METRO 7D")}) == {"sid": True}  # its letter unsure
    for other in ("METRO 7B", "METRO 7E", "METRO 1D", "METRO 8D"):
        assert _checks(whisper, said, heard, {"sid": ("sid", other)}) == {"sid": False}, other



@given(
    margin=st.floats(-8.0, 10.0),
    earlier=st.one_of(st.none(), st.floats(-12.0, 6.0)),
    at_tempo=st.one_of(st.none(), st.floats(-12.0, 6.0)),
    kind_value=st.sampled_from(
        [
            ("runway", "runway", "18"),
            ("qnh", "qnh", "1004"),
            ("tower_freq", "frequency", "118.500"),
            ("descent_level", "flight_level", "FL100"),
        ]
    ),
    appended=st.booleans(),
)
@example(margin=2.002, earlier=-0.589, at_tempo=None, kind_value=("runway", "runway", "18"), appended=True)  # seed 94
@example(  # held-out seed 136 #212: FL110 said twice, the first transmission's best check at 0.83x
    margin=2.013, earlier=1.053, at_tempo=-0.784, kind_value=("descent_level", "flight_level", "FL100"), appended=True
)
def test_what_the_audio_held_against_a_value_asked_again_it_needs_in_the_answer_too(
    margin: float, earlier: float | None, at_tempo: float | None, kind_value: tuple[str, str, str], appended: bool
) -> None:
    """Held-out seed 94: "runway one niner" read back for 18; every check of the first transmission
    found another digit likelier (the best margin -0.59) and the controller asked "say again
    runway". The answer's transcript held no runway, and one check after it, at 0.83x, passed by
    2.002: a changed runway accepted. The same pilot says the same words again, so the margin the
    audio held against a value in a transmission asked again (negative only) is added now: the
    same question's at its best tempo (`earlier`), and after the transcript the least of that and
    the same at the check's own tempo (`at_tempo`; held-out seed 136: -0.78 as recorded, +1.05 at
    0.83x, and the answer's check after the transcript as recorded passed by 0.013): a check
    confirms where it passes alone and its margin with that
    added still reaches the margin it needs; with nothing held, exactly where it passes alone."""
    field, kind_name, value = kind_value
    check = ValueCheck(field=field, value=value, margin=margin, lowest=-1.0, delta=-1.0, appended=appended)
    rb = ReadbackResult(ok=False, fields={field: "unsure"}, unsure=[field])
    question = check_question(check)
    other = "base in place" if question != "base in place" else "first in place"
    held_map = {other: -20.0, f"{other} at 1.00": -20.0}
    if earlier is not None:
        held_map[question] = earlier
    if at_tempo is not None:
        held_map[tempo_question(check)] = at_tempo
    result, notes = apply_checks(rb, [check], {field: (kind_name, value)}, "", {field: held_map})
    said = said_symbols(kind_name, value)
    alone = confirms(check, value, "", said)
    # only what the same question held (another model's is another scale), at its own tempo after the transcript
    held = min(0.0, earlier or 0.0, (at_tempo or 0.0) if appended else 0.0)
    expected = alone and margin + held >= margin_needed(said, check)
    assert (result.fields[field] == "ok") == expected, (margin, earlier, at_tempo)
    assert notes[0].get("earlier", 0.0) == held
    # kept for the next answer, at its best tempo, and after the transcript at this one
    kept = {question: margin, **({tempo_question(check): margin} if appended else {})}
    assert result.margins == ({} if expected else {field: kept})


WORDS = st.sampled_from(["all", "nippon", "six", "zero", "two", "departure", "one", "eight", "point", "four", "roger", "wilco"])


@given(block=st.lists(WORDS, min_size=3, max_size=12), copies=st.integers(2, 3))
def test_a_transcript_that_says_its_words_twice_over_is_a_loop(block: list[str], copies: int) -> None:
    """Held-out seed 96: 118.400 read back for 118.450 (espeak-ng), written "All Nippon six zero
    two. Departure one one eight point four." twice over; "five" put after the first "four" was
    scored beside the second copy, which the audio does not hold there, and passed by 2.8: a
    changed frequency accepted. Any block of three words or more said again to the end is a loop;
    said once, it is not (unless the block is itself a loop)."""
    text = ". ".join([" ".join(block)] * copies) + "."
    assert said_twice(text)
    assert said_twice(" ".join(block)) == any(
        all(block[i] == block[i % k] for i in range(len(block))) for k in range(3, len(block) // 2 + 1)
    )


def test_a_check_of_a_looped_transcript_confirms_nothing() -> None:
    """The engine's side of the same (engine/readback_policy.py): recorded at seed 96, the check
    that passed alone is not counted, and the readback is asked again, not accepted."""
    from pathlib import Path

    from engine.loader import load_registry
    from engine.session import SessionEngine
    from gateway.flows_source import DirectoryFlowSource
    from tooling.flow_scripts import SCRIPT_SCENARIO

    engine = SessionEngine(load_registry(DirectoryFlowSource(Path(__file__).resolve().parents[1] / "flows")))
    said = "Lufthansa three five niner. Descend four thousand feet, QNH one zero zero."
    check = ValueCheck(field="arrival_qnh", value="1004", margin=2.8, lowest=-1.0, delta=-1.0)
    verdicts = {}
    for text in (said, f"{said} {said}"):
        session, _ = engine.start(variables={**SCRIPT_SCENARIO, "arrival_qnh": 1004}, session_id="s", flow="approach")
        now = 1.0
        while session.active.state != "APP_DESCEND_RB":
            engine.transmit(session, engine.expected_pilot(session)[0], now)
            now += 1.0
        d = engine.transmit(session, text, now, hearing=Hearing(checks=[check]))
        verdicts[text == said] = (d.readback.ok if d.readback else None, d.intent)
    assert verdicts[True][0] is True  # said once: the check confirms the QNH
    assert verdicts[False] == (False, "say_again_items")  # said twice: it does not
