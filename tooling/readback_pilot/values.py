"""Each kind of value as a pilot says it in a readback ("runway two five left", "squawk four
seven one two"), and the callsign, in one of several ways drawn from the `random.Random` given."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from tooling.readback_pilot.words import (
    AIRPORT_NAMES,
    CORE_ONLY,
    DIGITS_PLAIN,
    FREQ_STATIONS,
    HEARD,
    SIDES,
    SPOKEN_ONLY,
    Paused,
    capitalize_some,
    digit_words,
    group_words,
    kind_of,
    letter_word,
    number_words,
    pick,
)

__all__ = ["PHRASERS", "say_callsign", "say_value", "split_designator", "split_runway", "split_sid"]

# --------------------------------------------------------------------------- value phrasers

def _verb(name: str) -> str | None:
    """Climb or descend as the controller said (`HEARD`); None where it said neither ("maintain
    4000 feet"); without the message, as the variable's name suggests."""
    heard = HEARD.get().lower()
    if heard:
        return "descend" if "descend" in heard else "climb" if "climb" in heard else None
    return "descend" if name.startswith("arrival") or "descent" in name else "climb"


def _say_altitude(value: Any, name: str, rng: random.Random) -> str:
    feet = int(value)
    thousands, hundreds = divmod(feet, 1000)
    form = pick(rng, ("numeric", "numeric_comma", "words", "words", "icao"), ("icao",))
    if form == "numeric":
        num = str(feet)
    elif form == "numeric_comma":
        num = f"{feet:,}"
    else:
        th = number_words(thousands) if (form == "words" and thousands < 100 and rng.random() < 0.5 and not CORE_ONLY.get()) else digit_words(str(thousands), rng, "icao" if form == "icao" else "plain")
        num = f"{th} {'tousand' if form == 'icao' and rng.random() < 0.5 else 'thousand'}"
        if hundreds:
            num += f" {DIGITS_PLAIN[hundreds // 100]} hundred"
    verb = _verb(name)
    prefixes = {
        "climb": ("climb", "climb", "climbing", "climb to", "climb and maintain", "maintain", "altitude"),
        "descend": ("descend", "descend", "descending", "descend to", "descend and maintain", "maintain", "altitude"),
        None: ("maintain", "maintaining", "altitude"),
    }[verb]
    prefix = rng.choice(prefixes + ("",))
    feet_word = "feet" if (not prefix or rng.random() < 0.6) else ""
    return " ".join(p for p in (prefix, num, feet_word) if p)


def _say_level(value: Any, name: str, rng: random.Random) -> str:
    level = str(value).upper().removeprefix("FL").lstrip("F")
    form = pick(rng, ("digits", "digits", "group", "numeric", "short"))
    if form == "short":
        said = f"FL{level}"
    elif form == "numeric":
        said = f"flight level {level}"
    elif form == "group" and len(level) == 3 and level[1:] != "00":
        said = f"flight level {DIGITS_PLAIN[int(level[0])]} {number_words(int(level[1:])) if level[1] != '0' else 'zero ' + DIGITS_PLAIN[int(level[2])]}"
    else:
        said = f"flight level {digit_words(level, rng, rng.choice(('icao', 'plain', 'hyphen', 'mixed')))}"
    verb = _verb(name)
    prefix = rng.choice((verb, f"{verb}ing", f"{verb} to", "maintain", "") if verb else ("maintain", ""))
    bare = pick(rng, ("full", "full", "full", "bare", "level"), ("bare", "level"))
    if bare == "bare" and verb:  # "climbing three three zero": the verb says it is a level
        return f"{rng.choice((verb, f'{verb}ing'))} {digit_words(level, rng, rng.choice(('icao', 'plain')))}"
    if bare == "level" and said.startswith("flight level"):  # "descend level one hundred"
        said = said.removeprefix("flight ")
    return f"{prefix} {said}".strip()


def _say_heading(value: Any, name: str, rng: random.Random) -> str:
    digits = f"{int(value):03d}"
    form = pick(rng, ("digits", "digits", "numeric"))
    num = digits if form == "numeric" else digit_words(digits, rng, rng.choice(("icao", "plain", "hyphen", "mixed")))
    turn = re.search(r"\bturn (left|right)\b", HEARD.get().lower())
    if turn and pick(rng, ("heading", "turn"), ("turn",)) == "turn":  # "left three six zero"
        return f"{rng.choice(('', 'turn '))}{turn.group(1)} {num}"
    return f"{rng.choice(('heading', 'heading', 'fly heading'))} {num}"


def split_runway(value: str) -> tuple[str, str]:
    m = re.fullmatch(r"(\d{1,2})([LRC]?)", value.strip().upper())
    if not m:
        raise ValueError(f"not a runway: {value!r}")
    return m.group(1).zfill(2), m.group(2)


# A runway instruction as pilots read it back with the runway's number and no "runway", by what
# the controller said ("cleared to land two five left").
_RUNWAY_INSTRUCTIONS = (
    ("cleared to land", ("cleared to land",)),
    ("cleared for takeoff", ("cleared for takeoff", "cleared for take off")),
    ("line up", ("line up and wait", "lining up")),
    ("hold short", ("holding short", "hold short of")),
    ("cleared ils", ("cleared ILS", "cleared ILS approach")),
    ("touch and go", ("cleared touch and go",)),
)


def _instruction_lead(rng: random.Random) -> str:
    """"runway", or in some readbacks the instruction the controller gave, said instead."""
    heard = HEARD.get().lower()
    said = [forms for words, forms in _RUNWAY_INSTRUCTIONS if words in heard]
    if said and pick(rng, ("runway", "runway", "instruction"), ("instruction",)) == "instruction":
        return rng.choice(said[0])
    return "runway"


def _say_runway(value: Any, name: str, rng: random.Random) -> str:
    number, side = split_runway(str(value))
    form = pick(rng, ("digits", "digits", "numeric", "numeric_side", "group"))
    lead = _instruction_lead(rng)
    if form == "numeric":
        return f"{lead} {number}{side}"
    if form == "group" and number[0] != "0":
        num = number_words(int(number))
    elif form == "numeric_side":
        num = number
    else:
        num = digit_words(number, rng, rng.choice(("icao", "plain", "hyphen")))
    side_word = rng.choice(SIDES[side]) if side else ""
    return f"{lead} {num} {side_word}".strip()


def _freq_parts(value: Any) -> tuple[str, str]:
    text = f"{float(value):.3f}"
    whole, frac = text.split(".")
    return whole, frac


def _say_frequency(value: Any, name: str, rng: random.Random) -> str:
    whole, frac = _freq_parts(value)
    short = frac.rstrip("0") or "0"
    form = pick(rng, ("digits", "digits", "numeric", "numeric_full", "group", "full_digits"))
    point = rng.choice(("decimal", "decimal", "point"))
    if form == "numeric":
        num = f"{whole}.{short}"
    elif form == "numeric_full":
        num = f"{whole}.{frac}"
    elif form == "group":
        tail = group_words(short, rng) if len(short) == 2 and short[0] != "0" else digit_words(short, rng, "plain")
        num = f"{group_words(whole, rng)} {point} {tail}"
    elif form == "full_digits":
        num = f"{digit_words(whole, rng, 'plain')} {point} {digit_words(frac, rng, 'plain')}"
    else:
        style = rng.choice(("icao", "plain", "hyphen", "mixed"))
        num = f"{digit_words(whole, rng, style)} {point} {digit_words(short, rng, style)}"
    station = next((s for s in FREQ_STATIONS if s in name), None)
    if station and rng.random() < 0.7:
        words = rng.choice(FREQ_STATIONS[station])
        return f"{rng.choice(('', 'contact ', 'monitor ' if station == 'tower' else 'contact '))}{words} {num}".strip()
    return num


def _say_squawk(value: Any, name: str, rng: random.Random) -> str:
    code = str(value).zfill(4)
    form = pick(rng, ("digits", "digits", "digits", "numeric", "group"), ())
    if form == "numeric":
        num = code
    elif form == "group":
        num = group_words(code, rng)
    else:
        num = digit_words(code, rng, rng.choice(("icao", "plain", "hyphen", "mixed")))
    return f"{rng.choice(('squawk', 'squawk', 'squawking'))} {num}"


def _say_qnh(value: Any, name: str, rng: random.Random) -> str:
    digits = str(int(value))
    form = pick(rng, ("digits", "digits", "numeric", "group"), ())
    if form == "numeric":
        num = digits
    elif form == "group":
        num = group_words(digits, rng)
    else:
        num = digit_words(digits, rng, rng.choice(("icao", "plain", "hyphen", "mixed")))
    if len(digits) == 4 and pick(rng, ("keyword", "keyword", "bare"), ("bare",)) == "bare":
        return Paused(num)  # "one zero one three": pilots often read a QNH back without its word
    return f"{rng.choice(('QNH', 'qnh', 'QNH'))} {num}{rng.choice(('', '', ' hectopascals'))}"


def split_sid(value: str) -> tuple[str, str, str]:
    m = re.fullmatch(r"([A-Za-z]+)\s*(\d)([A-Za-z])", value.strip())
    if not m:
        raise ValueError(f"not a SID: {value!r}")
    return m.group(1).upper(), m.group(2), m.group(3).upper()


def _say_sid(value: Any, name: str, rng: random.Random) -> str:
    fix, digit, letter = split_sid(str(value))
    form = pick(rng, ("words", "words", "numeric", "mixed"))
    fix_said = capitalize_some(fix, rng)
    if form == "numeric":
        core = f"{fix_said} {digit}{letter}"
    elif form == "mixed":
        core = f"{fix_said} {digit} {letter_word(letter, rng)}"
    else:
        core = f"{fix_said} {digit_words(digit, rng, rng.choice(('icao', 'plain', 'hyphen')))} {letter_word(letter, rng)}"
    return f"{rng.choice(('via ', 'via ', ''))}{core}{rng.choice((' departure', ' departure', ''))}"


def split_designator(value: str) -> tuple[str, str]:
    m = re.fullmatch(r"([A-Za-z])(\d+)", value.strip())
    if not m:
        raise ValueError(f"not a designator: {value!r}")
    return m.group(1).upper(), m.group(2)


def _say_designator(value: str, rng: random.Random) -> str:  # noqa: D103
    letter, number = split_designator(value)
    form = pick(rng, ("words", "words", "numeric", "group"))
    if form == "numeric":
        return f"{letter}{number}"
    if form == "group" and len(number) >= 2 and number[0] != "0":
        return f"{letter_word(letter, rng)} {number_words(int(number)) if len(number) == 2 else group_words(number, rng)}"
    return f"{letter_word(letter, rng)} {digit_words(number, rng, rng.choice(('icao', 'plain', 'hyphen')))}"


def _say_holding_point(value: Any, name: str, rng: random.Random) -> str:
    said = _say_designator(str(value), rng)
    if "vacate" in HEARD.get().lower():  # "vacate via bravo one three", "vacate B13"
        return f"{rng.choice(('vacate via', 'vacate via', 'vacate', 'vacating'))} {said}"
    lead = pick(rng, ("holding point", "holding point", "to holding point", "to"), ("to",))
    return f"{lead} {said}"


def _say_stand(value: Any, name: str, rng: random.Random) -> str:
    return f"{rng.choice(('stand', 'stand', 'to stand'))} {_say_designator(str(value), rng)}"


def _say_route(value: Any, name: str, rng: random.Random) -> str:
    segments = [_say_designator(seg, rng) for seg in str(value).split()]
    joiner = rng.choice((", ", " ", " and ", ", "))
    if joiner == " and " and len(segments) > 2:
        said = ", ".join(segments[:-1]) + " and " + segments[-1]
    else:
        said = joiner.join(segments)
    return f"{rng.choice(('via', 'via', 'taxi via'))} {said}"


def _say_airport(value: Any, name: str, rng: random.Random) -> str:
    code = str(value).upper()
    names = AIRPORT_NAMES.get(code)
    form = pick(rng, ("name", "name", "name", "spelled", "code"), ("spelled",)) if names else pick(rng, ("code", "spelled"), ("spelled",))
    if form == "name":
        said = rng.choice(names)  # type: ignore[arg-type]
    elif form == "spelled":
        said = " ".join(letter_word(c, rng) for c in code)
    else:
        said = code
    return f"{rng.choice(('cleared to', 'cleared to', 'to', ''))} {said}".strip()


def _say_letter(value: Any, name: str, rng: random.Random) -> str:
    letter = str(value).strip().upper()[:1]
    said = letter_word(letter, rng) if rng.random() < 0.8 or SPOKEN_ONLY.get() else letter
    return f"{rng.choice(('information', 'information', 'with information', 'we have information'))} {said}"


def _say_text(value: Any, name: str, rng: random.Random) -> str:
    return str(value)


PHRASERS: dict[str, Callable[[Any, str, random.Random], str]] = {
    "altitude": _say_altitude, "flight_level": _say_level, "heading": _say_heading, "runway": _say_runway,
    "frequency": _say_frequency, "squawk": _say_squawk, "qnh": _say_qnh, "sid": _say_sid,
    "holding_point": _say_holding_point, "stand": _say_stand, "route": _say_route, "airport": _say_airport,
    "letter": _say_letter, "text": _say_text,
}


def say_value(name: str, value: Any, rng: random.Random) -> str:
    """One value as a pilot says it in a readback (with its keyword: "runway", "squawk"...)."""
    return PHRASERS[kind_of(name)](value, name, rng)


# --------------------------------------------------------------------------- callsign

def say_callsign(spoken: str, rng: random.Random) -> str:
    """"Lufthansa 359" as a pilot says it: the telephony, then digits/letters ("tree fife niner",
    "three fifty-nine", "359")."""
    words = spoken.split()
    name = [w for w in words if not any(c.isdigit() for c in w)]
    ident = "".join(w for w in words if any(c.isdigit() for c in w))
    if not ident:
        return spoken
    m = re.fullmatch(r"(\d+)([A-Za-z]*)", ident)
    form = pick(rng, ("digits", "digits", "numeric", "group"), ())
    if m is None or form == "numeric":
        tail = ident
    else:
        digits, letters = m.groups()
        if form == "group" and len(digits) in (3, 4) and digits[0] != "0":
            said = group_words(digits, rng)
        else:
            said = digit_words(digits, rng, rng.choice(("icao", "plain", "hyphen", "mixed")))
        tail = " ".join([said, *(letter_word(c, rng) for c in letters)])
    return " ".join([*name, tail])


