"""Altitudes in feet and flight levels, kept apart: FL070 is not 7000 ft (different datum).

Canonical forms: feet as a plain integer ("5000"), levels as "FL" and three digits ("FL070").
Speech: "five thousand", "four thousand five hundred", "flight level zero seven zero", and whole
hundreds of levels with "hundred" ("flight level one hundred").

In a transcript a number is an altitude when it is said with "feet", with "hundred"/"thousand"
(not right after "squawk"), after "flight level" (or "level"), or shortly after climb/descend/
maintain/altitude (filler words such as "to", "and", "via sid" may come between); one verb
introduces one altitude, so a QNH said bare after it ("descend 3000, ten oh four") is not one.
"""

from __future__ import annotations

import re
from typing import Any

from engine.phraseology.context import Context, other_digits
from engine.phraseology.hits import Found, Hit
from engine.phraseology.numbers import DIGIT_WORDS, speak_digits, speak_whole
from engine.phraseology.transcript import Transcript

MAX_FEET = 60000
_LEVEL = re.compile(r"^\s*(?:FL|FLIGHT\s*LEVEL)\s*(\d{1,3})\s*$", re.IGNORECASE)
_FEET = re.compile(r"^\s*(\d{1,2}(?:,\d{3})|\d{2,5})\s*(?:FT|FEET)?\s*$", re.IGNORECASE)
ANCHORS = frozenset(  # words an altitude follows (its verbs)
    {
        "climb",
        "climbing",
        "descend",
        "descending",
        "maintain",
        "maintaining",
        "altitude",
        "initial",
        "initially",
        "passing",
        "leaving",
    }
)
_FILLER = frozenset({"to", "and", "via", "sid", "the", "maintain", "altitude", "initially", "climb", "descend", "of"})
_NOT_ALTITUDE_BEFORE = frozenset({"squawk", "squawking", "code", "transponder", "qnh", "heading", "runway"})
_NOT_ALTITUDE_AFTER = frozenset({"knots", "degrees", "decimal"})


def level(number: int) -> str:
    return f"FL{number:03d}"


def canonical(value: Any, *, levels: bool = False) -> str | None:
    """Feet for ints and "5000 ft"; a level for "FL070"/"flight level 70" (or any int if `levels`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        n = int(value)
        if levels:
            return level(n) if 0 < n < 1000 else None
        return str(n) if 0 <= n <= MAX_FEET else None
    text = str(value)
    match = _LEVEL.match(text)
    if match:
        return level(int(match.group(1)))
    match = _FEET.match(text)
    if match:
        return canonical(int(match.group(1).replace(",", "")), levels=levels)
    return None


def level_canonical(value: Any) -> str | None:
    return canonical(value, levels=True)


def display(canon: str) -> str:
    return canon


def speak(canon: str) -> str:
    if canon.startswith("FL"):
        n = int(canon[2:])
        if n >= 100 and n % 100 == 0:
            return f"flight level {DIGIT_WORDS[n // 100]} hundred"
        return f"flight level {speak_digits(canon[2:])}"
    return speak_whole(int(canon))


def find(t: Transcript, ctx: Context) -> Found:
    """Altitudes and levels in order. Where a level was issued (`ctx.expected` "FL330"), a
    number of up to three digits after a climb or descend without "feet" is that level, as
    pilots say it ("climbing three three zero"); no altitude in feet is that low."""
    levels = bool(ctx.expected and ctx.expected.startswith("FL"))
    words = t.words
    found: Found = []
    anchor_until = -1  # index up to which an altitude anchor is still in force
    for i, word in enumerate(words):
        if word in ANCHORS:
            anchor_until = i + 4
            continue
        if word in _FILLER and i <= anchor_until:
            anchor_until += 1
            continue
        if not word.isdigit():
            if i <= anchor_until and word not in ("flight", "level"):
                anchor_until = -1
            continue
        if t.word(i - 1) == "level":  # "flight level one two zero", "descend level one hundred"
            if len(word) <= 3 and int(word) > 0:
                found.append(Hit(i, level(int(word))))
                anchor_until = -1
            continue
        n = int(word)
        after, before = t.word(i + 1), t.word(i - 1)
        if found and found[-1].index == i - 1 and _second(found[-1].value, word, after, ctx):
            # "flight level 120, 130", "descend 3000, 4000": the pilot's correction, its word lost
            found.append(Hit(i, level(n) if found[-1].value.startswith("FL") else str(n)))
            continue
        if after in _NOT_ALTITUDE_AFTER or before in _NOT_ALTITUDE_BEFORE or n > MAX_FEET:
            continue
        anchored = i <= anchor_until and n >= 100
        said_as_level = levels and len(word) == 3 and 0 < n < 1000 and after != "feet" and i not in t.multiplied
        if i <= anchor_until and said_as_level:
            found.append(Hit(i, level(n)))  # "climbing three three zero": a level said without its words
        elif after == "feet" or (i in t.multiplied and n >= 500) or anchored:
            found.append(Hit(i, str(n)))
        else:
            continue
        anchor_until = -1  # one verb, one altitude: "descend 3000, ten oh four" has a QNH after it
    return found


def _second(first: str, word: str, after: str, ctx: Context) -> bool:
    """Whether the number `word`, said bare right after the level or altitude `first`, is a second
    value of its kind, as with its keyword said again: a level of three digits after a level, an
    altitude of whole hundreds of as many digits after an altitude; not followed by a unit of
    another kind ("knots"), and saying no other scenario value (`other_digits`: "descend 3000,
    1004" with the QNH 1004 issued is the QNH said bare)."""
    if after in _NOT_ALTITUDE_AFTER or word in other_digits(ctx) or not int(word):
        return False
    if first.startswith("FL"):
        return len(word) == 3 and level(int(word)) != first
    return len(word) == len(first) and int(word) % 100 == 0 and word != first
