"""Runway designators: "25R" in text, "two fife right" on the radio.

Canonical form: two digits and the side letter ("07L", "25R", "09"). The side is part of the
value: 25L != 25R, and "runway 25" does not read back 25R.

In a transcript a runway is a number of up to two digits after "runway", or after the last words
of a runway instruction, as pilots read those back ("cleared to land two five left", "line up
and wait three six", "holding short zero seven"), or with its side where no taxiway can be meant.
"""

from __future__ import annotations

import re
from typing import Any

from engine.phraseology.context import Context
from engine.phraseology.hits import Found, Hit
from engine.phraseology.numbers import MISHEARD_SIDES, speak_digits
from engine.phraseology.transcript import Transcript

SIDE_WORDS: dict[str, str] = {"L": "left", "R": "right", "C": "center"}
_SIDES: dict[str, str] = {
    "left": "L",
    "l": "L",
    "right": "R",
    "r": "R",
    "center": "C",
    "centre": "C",
    "c": "C",
}
_VALUE = re.compile(r"^\s*(?:RWY|RUNWAY)?\s*(\d{1,2})\s*(LEFT|RIGHT|CENTER|CENTRE|L|R|C)?\s*$", re.IGNORECASE)
_ANCHORS = frozenset({"runway", "runways"})
# The last words of a runway instruction, which pilots read back with the runway's number and no
# "runway": "cleared to land two five left", "line up and wait three six", "holding short (of)
# zero seven", "cleared for takeoff / take off", "touch and go", "cleared ILS (approach) zero two".
# (word before the number, the word before that or None for any)
_INSTRUCTED: frozenset[tuple[str, str | None]] = frozenset(
    {
        ("land", None),
        ("takeoff", None),
        ("off", "take"),
        ("wait", "and"),
        ("up", "line"),
        ("up", "lining"),
        ("short", "hold"),
        ("short", "holding"),
        ("of", "short"),
        ("ils", None),
        ("approach", "ils"),
    }
)


# After "runway <number>", a word of MISHEARD_SIDES (whisper's for a side it misheard: "three four
# lift", "tree for last", "zero seven light") cannot tell which side was said, so the runway is
# reported garbled (shown "<number>?", engine/phraseology/hits.py), and the controller asks again
# instead of correcting a side the pilot may well have said right.
_TURN_WORDS = frozenset({"heading", "turn", "hand", "base", "downwind", "crosswind", "traffic", "circuit", "orbit"})


def _anchored(t: Transcript, i: int) -> bool:
    """Whether the number at i follows "runway" or a runway instruction's last words."""
    before = t.word(i - 1)
    if before == "go":  # only whole: whisper writes "and go" for a taxiway's "tango"
        return t.words[max(0, i - 3) : i - 1] == ("touch", "and")
    return before in _ANCHORS or (before, None) in _INSTRUCTED or (before, t.word(i - 2)) in _INSTRUCTED


def _make(number: str, side: str | None) -> str | None:
    n = int(number)
    if not 1 <= n <= 36:
        return None
    return f"{n:02d}{side or ''}"


def canonical(value: Any) -> str | None:
    match = _VALUE.match(str(value))
    if not match:
        return None
    side = match.group(2)
    return _make(match.group(1), _SIDES[side.lower()] if side else None)


def display(canon: str) -> str:
    return canon


def speak(canon: str) -> str:
    digits, side = canon[:2], canon[2:]
    return f"{speak_digits(digits)} {SIDE_WORDS[side]}" if side else speak_digits(digits)


def find(t: Transcript, ctx: Context) -> Found:
    found: Found = []
    for i, word in enumerate(t.words):
        if not (word.isdigit() and len(word) <= 2):
            continue
        anchored = _anchored(t, i)
        side = _SIDES.get(t.word(i + 1))
        if side and t.word(i + 2) in _TURN_WORDS:
            side = None  # "runway zero six, left heading one eight zero": the side of a turn
        if side and not anchored and (t.letter(i - 1) is not None or t.number(i + 2) is not None):
            side = None  # "via kilo eight, c three": taxiways K8 and C3, not a runway 08C
        if anchored or side:
            value = _make(word, side)
            if value and not side and anchored and t.word(i + 1) in MISHEARD_SIDES:
                found.append(Hit(i, f"{value}?", garbled=True))  # the side said is unknown
            elif value:
                found.append(Hit(i, value))
    return found
