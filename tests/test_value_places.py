"""Where a check in the audio puts an issued value (engine/value_places.py): never over the words
the recognizer wrote for our callsign's name, written right or garbled, and never over a value
said right before our callsign when the name was lost.

Pure engine: no audio. What these places lead to in the audio is tested with whisper in
tests/test_value_check.py.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from engine.value_places import _BEFORE_NAME, callsign_words, taken_words
from engine.value_query import query
from engine.value_words import SYMBOL_OF, words_of

DIGIT_WORDS = ("zero", "one", "two", "tree", "four", "fife", "six", "seven", "eight", "niner")
# what whisper writes for a callsign's name it mishears: no symbol, no radio word
NAME_GARBLE = st.lists(
    st.sampled_from(["date", "hold", "eidel", "vice", "egypt", "here", "wheel", "chai", "kisland", "jetpu"]),
    min_size=1,
    max_size=3,
)
CALLSIGNS = st.sampled_from(["edelweiss seven zero four", "egyptair three two", "china eastern seven four"])


def _name(heard: str, callsign: str) -> set[int]:
    """The words `callsign_words` takes for our callsign's name, beyond its digits' own
    (`taken_words`: digits run together with a value's are the callsign's by an older rule)."""
    words = words_of(heard)
    digits = taken_words(words, ["".join(SYMBOL_OF[w][1] for w in callsign.split() if w in SYMBOL_OF)])
    return callsign_words(words, callsign, digits) - digits


def test_a_dropped_value_is_not_tried_over_our_callsigns_garbled_name() -> None:
    """Held-out seed 110, the full radio channel: "wilco, Edelweiss seven zero four" with the go
    around's "three thousand" dropped, written "... will co date, hold five seven zero four". The
    altitude was tried over "date, hold", the words most like "tree thousand", and whisper at 0.83x
    passed it by 6.5: a wrong readback accepted."""
    heard = "Relenture, content approach one two zero, decimal one seven five will co date, hold five seven zero four."
    asked = query(heard, {"arrival_altitude_ft": ("altitude", "3000")}, callsign="Edelweiss 704")
    assert asked is not None
    name = {asked.heard.index("date"), asked.heard.index("hold")}
    for hypothesis in asked.hypotheses:
        assert not set(range(*hypothesis.place)) & name, hypothesis.words


@given(callsign=CALLSIGNS, garble=NAME_GARBLE, heading=st.integers(1, 360))
@example(callsign="edelweiss seven zero four", garble=["date", "hold"], heading=180)
def test_a_garbled_name_is_our_callsigns_and_the_value_before_it_is_not(
    callsign: str, garble: list[str], heading: int
) -> None:
    """Any heading said before our callsign, its name written as words of no symbol: the first of
    those words right before the digits is the callsign's (never a place for a value), and no
    word of the heading is."""
    digits = [w for w in callsign.split() if w in SYMBOL_OF]
    value = [DIGIT_WORDS[int(d)] for d in f"{heading:03d}"]
    heard = ["roger", "heading", *value, *garble, *digits]
    own = _name(" ".join(heard), callsign)
    assert len(heard) - len(digits) - 1 in own  # the word right before the digits
    assert not own & set(range(2, 2 + len(value))), (heard, own)


@given(callsign=CALLSIGNS, heading=st.integers(1, 360))
def test_a_value_right_before_our_digits_keeps_its_words_when_the_name_is_lost(callsign: str, heading: int) -> None:
    """ "heading zero seven zero, three two" (Egyptair's name lost by the recognizer): the words
    before the digits are the heading's, all symbols: none is taken for the name."""
    digits = [w for w in callsign.split() if w in SYMBOL_OF]
    value = [DIGIT_WORDS[int(d)] for d in f"{heading:03d}"]
    heard = ["wilco", "heading", *value, *digits]
    own = _name(" ".join(heard), callsign)
    assert not own & set(range(2, 2 + len(value))), (heard, own)


@given(callsign=CALLSIGNS, stop=st.sampled_from(sorted(_BEFORE_NAME)), garble=NAME_GARBLE)
def test_a_garbled_name_ends_at_a_word_said_before_a_callsign(callsign: str, stop: str, garble: list[str]) -> None:
    """ "... wilco, date hold five seven zero four": the name's words end at "wilco", however many
    syllables the name has left."""
    digits = [w for w in callsign.split() if w in SYMBOL_OF]
    heard = ["one", "two", stop, *garble, *digits]
    own = _name(" ".join(heard), callsign)
    assert not own & {0, 1, 2}, (heard, own)


LETTER_WORDS = ("alfa", "bravo", "delta", "echo", "golf", "kilo", "lima", "mike", "papa", "romeo", "sierra", "yankee")
# words a readback holds that are no anchor of an ATIS letter (whisper's garbles of radio words among them)
PLAIN = st.sampled_from(
    ["request", "taxi", "for", "the", "circuit", "rome", "roger", "wilco", "will", "go", "ready", "paper"]
)


def test_a_dropped_atis_letter_is_not_tried_over_a_word_like_it() -> None:
    """Fresh seed 151 #165 (espeak-ng): "Wilco request taxi for the circuit roger Japanair one one
    one three", information R dropped, written "... for the circuit, rome jonjap, niner one one one
    three". R was tried over "rome" (the pilot's "roger"), the word most like "romeo", and tiny.en
    passed it there by 4.3 nats: a dropped letter accepted. Without its anchor the letter is
    tried after the transcript only ("... information romeo")."""
    asked = query(
        "Wilk will request taxi for the circuit, rome jonjap, niner one one one three.",
        {"atis_letter": ("letter", "R")},
    )
    assert asked is not None and asked.hypotheses
    assert all(h.appended and h.words[-2:] == ["information", "romeo"] for h in asked.hypotheses)


@given(
    before=st.lists(PLAIN, max_size=5),
    after=st.lists(PLAIN, max_size=3),
    letter=st.sampled_from(LETTER_WORDS),
    anchor=st.sampled_from([None, "information", "atis", "have", "with"]),
    filler=st.booleans(),
)
def test_an_atis_letter_is_tried_in_place_only_after_its_anchor(
    before: list[str], after: list[str], letter: str, anchor: str | None, filler: bool
) -> None:
    """For any words around a letter: tried in place only where "information" or "atis" stands up
    to two words before the place ("information, uh, romeo" too), as the transcript's own reading
    finds a letter; never after "have" or "with" alone (common words: "with air" for "Wizz Air");
    after the transcript always."""
    said = [*before, *([anchor] if anchor else []), *(["on"] if anchor and filler else []), letter, *after]
    issued = letter[0].upper()
    asked = query(" ".join(said), {"atis_letter": ("letter", issued)})
    assert asked is not None
    in_place = [h for h in asked.hypotheses if not h.appended]
    assert any(h.appended for h in asked.hypotheses)
    if anchor not in ("information", "atis"):
        assert not in_place, said
    else:
        assert in_place, said
