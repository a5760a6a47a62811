"""How an issued value is said and written: the symbols of its kind (digits, letters, runway
sides), the words a recognizer writes for each, and the spellings a check in the audio tries.

Kept apart from the question (`engine.value_query`) and the verdict (`engine.value_check`): the question, the words
another value holds there, and the recognizer's scoring (`gateway/speech/stt/whisper_scoring.py`,
by `SYMBOLS`) read a value's words through this one table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from engine.phraseology import speak_text
from engine.phraseology.alphabet import LETTER_WORDS

# The radio words a readback carries around its values ("wilco", "roger"): no value, no name.
RADIO_WORDS = (
    "wilco",
    "roger",
    "copied",
    "copy",
    "readback",
    "read",
    "back",
    "affirm",
    "cleared",
    "correct",
    "okay",
    "ok",
)

# The most digits a value of a kind has: no digit can follow a value that has them all.
MOST_DIGITS = {"runway": 2, "heading": 3, "squawk": 4, "flight_level": 3, "qnh": 4}

# The phrase each kind of value is spoken in (`speak_text` speaks a value by its context), and the
# words of it that are not the value.
_TEMPLATES: dict[str, str] = {
    "runway": "runway {}",
    "heading": "heading {}",
    "altitude": "{} feet",
    "flight_level": "FL{}",  # spoken digit by digit (`spoken_value`)
    "frequency": "{}",
    "squawk": "squawk {}",
    "qnh": "QNH {}",
    "letter": "information {}",
    "designator": "holding point {}",
    "route": "via {}",
    "sid": "via {}",
    "star": "via {}",
}
_FRAME_WORDS = frozenset(
    {"runway", "heading", "feet", "flight", "level", "squawk", "qnh", "information", "holding", "point", "via"}
)

# The forms each symbol is written in by a recognizer (the ICAO and plain spellings, the
# homophones it writes for them): a check scores a symbol by its likeliest form.
SYMBOLS: dict[str, dict[str, tuple[str, ...]]] = {
    "digit": {
        "0": ("zero", "o", "oh"),
        "1": ("one", "won"),
        "2": ("two", "to", "too"),
        "3": ("three", "tree", "free"),
        "4": ("four", "for", "fower", "fore"),
        "5": ("five", "fife"),
        "6": ("six",),
        "7": ("seven",),
        "8": ("eight", "ate"),
        "9": ("nine", "niner"),
    },
    "letter": {
        letter: (word.lower(), *{"A": ("alpha",), "J": ("juliet",), "X": ("x-ray",)}.get(letter, ()))
        for letter, word in LETTER_WORDS.items()
    },
    "side": {"L": ("left",), "R": ("right",), "C": ("center", "centre")},
}
SYMBOL_OF: dict[str, tuple[str, str]] = {
    form: (cls, symbol) for cls, table in SYMBOLS.items() for symbol, forms in table.items() for form in forms[:2]
}
# The two spellings a hypothesis is tried in: as the controller speaks (ICAO) and plain English
# (pilots say "point" as often as "decimal").
_PLAIN = {"tree": "three", "fife": "five", "niner": "nine", "decimal": "point"}
_ICAO_DIGITS = {"3": "tree", "5": "fife", "9": "niner"}


def words_of(text: str) -> list[str]:
    """The transcript's words, lower case, without punctuation (as the hypotheses are written)."""
    return re.sub(r"[^a-z0-9' ]", " ", text.lower()).split()


def spoken_value(kind_name: str, value: str) -> list[str] | None:
    """The value's words as spoken ("121.850" -> one two one decimal eight fife zero), or None
    for a kind this check does not handle (places, callsigns, free text)."""
    template = _TEMPLATES.get(kind_name)
    if template is None:
        return None
    if kind_name == "flight_level":  # digit by digit: "one hundred" would leave two digits unchecked
        return [_ICAO_DIGITS.get(d, SYMBOLS["digit"][d][0]) for d in value.upper().removeprefix("FL")] or None
    words = words_of(speak_text(template.format(value)))
    if kind_name == "altitude":
        return words[:-1] or None  # "... feet"
    while words and words[0] in _FRAME_WORDS:
        words = words[1:]
    return words or None


def said_symbols(kind_name: str, value: str) -> str:
    """The symbols a value is said with, in order ("25C" -> "25C", 5000 -> "5": "fife thousand")."""
    return symbols_in(spoken_value(kind_name, value) or [])


def symbols_in(words: Iterable[str]) -> str:
    """The symbols `words` say, in order, the other words left out."""
    return "".join(SYMBOL_OF[w][1] for w in words if w in SYMBOL_OF)


def class_of(word: str) -> str:
    """The class of symbol `word` says (digit, letter, side; a numeral's digits), or "" for none."""
    found = SYMBOL_OF.get(word)
    return found[0] if found else "digit" if word.isdigit() else ""


def is_full(kind_name: str, spelling: list[str]) -> bool:
    """Whether a value said in `spelling` has as many digits as a value of its kind can have: a
    digit said after it is the next value's ("runway one eight, one one eight decimal one")."""
    digits = sum(1 for w in spelling if class_of(w) == "digit")
    return digits >= MOST_DIGITS.get(kind_name, 99)


def spellings_of(kind_name: str, words: list[str], heard: Sequence[str] = ()) -> list[list[str]]:
    """ICAO and plain English, and the two mixed as the recognizer wrote them in `heard` (the
    words the value replaces: "decimal five five" is neither, and scored against either spelling
    the transcript with the issued value seems e^10 less likely than as heard, seed 59); and each
    as pilots also say it: a frequency without its last zero ("decimal eight fife" for 121.850:
    the digit check after the value, `Hypothesis.end`, keeps 121.855 apart), a taxi route with
    "and" before its last taxiway ("romeo one and echo two")."""
    written = set(heard)
    as_heard = [_PLAIN[w] if w in _PLAIN and _PLAIN[w] in written and w not in written else w for w in words]
    out = []
    for spelling in (words, [_PLAIN.get(w, w) for w in words], as_heard):
        if spelling in out:
            continue
        out.append(spelling)
        if "decimal" in words and spelling[-1] == "zero" and words.index("decimal") < len(words) - 2:
            out.append(spelling[:-1])
        if kind_name == "route":
            last = max((i for i, w in enumerate(spelling) if class_of(w) == "letter"), default=0)
            if last > 0:
                out.append([*spelling[:last], "and", *spelling[last:]])
    return out
