"""Runway designators: "25R" in text, "two fife right" on the radio.

Canonical form: two digits and the side letter ("07L", "25R", "09"). The side is part of the
value: 25L != 25R, and "runway 25" does not read back 25R.
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
# After "runway <number>", a word of MISHEARD_SIDES (whisper's for a side it misheard: "three four
# lift", "tree for last", "zero seven light") cannot tell which side was said, so the runway is
# reported garbled (shown "<number>?", engine/phraseology/hits.py), and the controller asks again
# instead of correcting a side the pilot may well have said right.
_TURN_WORDS = frozenset({"heading", "turn", "hand", "base", "downwind", "crosswind", "traffic", "circuit", "orbit"})


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
        side = _SIDES.get(t.word(i + 1))
        if side and t.word(i + 2) in _TURN_WORDS:
            side = None  # "runway zero six, left heading one eight zero": the side of a turn
        if side and t.word(i - 1) not in _ANCHORS and (t.letter(i - 1) is not None or t.number(i + 2) is not None):
            side = None  # "via kilo eight, c three": taxiways K8 and C3, not a runway 08C
        if t.word(i - 1) in _ANCHORS or side:
            value = _make(word, side)
            if value and not side and t.word(i - 1) in _ANCHORS and t.word(i + 1) in MISHEARD_SIDES:
                found.append(Hit(i, f"{value}?", garbled=True))  # the side said is unknown
            elif value:
                found.append(Hit(i, value))
    return found
