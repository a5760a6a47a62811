"""An independent pilot that reads clearances back, for the readback property tests and
`livefreq bench readback` (tooling: never imported by serving code).

Independence is the point: the words come from this module's own tables, never from
`engine.phraseology` (whose speak/display functions the readback check itself relies on), so a
phrasing the engine's tokenizer does not know shows up as a refused correct readback instead of
being produced and understood by the same code.

For a flow state with ``readback: [vars]`` and a session's variables, `phrase_readback` builds
one transmission: every required value phrased in a random way (ICAO digits "tree fife niner",
hyphenated "fow-er", plain English, group forms "one twenty one decimal eight", "thousand" and
"hundred" for altitudes, "flight level one two zero", runway "two five left", frequencies with
"decimal" or "point", squawk, QNH, SID names with their digit and letter, taxi routes "via
november three, uniform four", holding points and stands, airports by name or spelled code, ATIS
letters), in random order, the callsign first or last, with optional fillers, "and", "roger" or
"wilco" and optional commas. Modes: ``correct``; ``wrong`` changes exactly one issued value to
another plausible value of its kind (25L for 25R, one squawk digit, 5000 -> 6000, another
destination, another letter); ``drop`` leaves one value out. Every choice is drawn from the
`random.Random` given, so hypothesis can drive it and a benchmark can replay it.

`readback_states` lists every (flow, state) with a readback; `StateDriver` brings a real
`SessionEngine` session to one of them by playing the flow (expected pilot phrases, their
alternatives, and the clock), never by setting the state.
"""

from __future__ import annotations

import contextvars
import random
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.models import Decision, Role, Session, TransitionKind
from engine.registry import FlowRegistry
from engine.session import SessionEngine

# --------------------------------------------------------------------------- word tables (own)

DIGITS_PLAIN = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
DIGITS_ICAO = ("zero", "one", "two", "tree", "four", "fife", "six", "seven", "eight", "niner")
DIGITS_HYPHEN = ("zee-ro", "wun", "too", "tree", "fow-er", "fife", "six", "sev-en", "ait", "nin-er")
TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

NATO: dict[str, tuple[str, ...]] = {
    "A": ("alfa", "alpha"), "B": ("bravo",), "C": ("charlie",), "D": ("delta",), "E": ("echo",),
    "F": ("foxtrot",), "G": ("golf",), "H": ("hotel",), "I": ("india",), "J": ("juliett", "juliet"),
    "K": ("kilo",), "L": ("lima",), "M": ("mike",), "N": ("november",), "O": ("oscar",), "P": ("papa",),
    "Q": ("quebec",), "R": ("romeo",), "S": ("sierra",), "T": ("tango",), "U": ("uniform",),
    "V": ("victor",), "W": ("whiskey",), "X": ("x-ray", "xray"), "Y": ("yankee",), "Z": ("zulu",),
}
SIDES = {"L": ("left",), "R": ("right",), "C": ("center", "centre")}

# Which kind of value a readback variable holds (own table: names as the flows use them).
VARIABLE_KINDS: dict[str, str] = {
    "destination": "airport", "sid": "sid", "squawk": "squawk", "atis_letter": "letter",
    "initial_altitude_ft": "altitude", "cleared_altitude_ft": "altitude", "arrival_altitude_ft": "altitude",
    "cruise_level": "flight_level", "descent_level": "flight_level", "heading": "heading",
    "runway": "runway", "arrival_runway": "runway", "qnh": "qnh", "arrival_qnh": "qnh",
    "holding_point": "holding_point", "arrival_holding_point": "holding_point",
    "stand": "stand", "arrival_stand": "stand", "taxi_route": "route", "arrival_taxi_route": "route",
}
# Station said before a frequency ("ground one two one decimal eight").
FREQ_STATIONS = {
    "ground": ("ground",), "tower": ("tower",), "departure": ("departure",), "approach": ("approach",),
    "center": ("center", "radar"), "delivery": ("delivery",),
}
# Words a request adds to an initial call whose readback is checked (ATIS letter): by intent.
CARRIERS: dict[str, tuple[str, ...]] = {
    "request_clearance": ("request IFR clearance", "requesting IFR clearance", "request clearance"),
    "request_taxi": ("request taxi for circuits", "request taxi for the circuit", "requesting taxi for circuits"),
}
FILLERS_FRONT = ("", "", "", "roger", "wilco", "okay")
FILLERS_BACK = ("", "", "", "wilco", "roger")
# Airports by ICAO code, for destinations (own table; the scenario's DESTINATIONS and a few more).
AIRPORT_NAMES: dict[str, tuple[str, ...]] = {
    "EDDM": ("Munich",), "EDDH": ("Hamburg",), "EDDB": ("Berlin",), "EDDL": ("Dusseldorf", "Düsseldorf"),
    "EGLL": ("London Heathrow", "Heathrow"), "EGKK": ("London Gatwick", "Gatwick"), "LFPG": ("Paris", "Charles de Gaulle"),
    "EHAM": ("Amsterdam", "Schiphol"), "LSZH": ("Zurich",), "LOWW": ("Vienna",), "EKCH": ("Copenhagen",),
    "ENGM": ("Oslo",), "ESSA": ("Stockholm", "Arlanda"), "EFHK": ("Helsinki",), "EPWA": ("Warsaw",),
    "LKPR": ("Prague",), "EBBR": ("Brussels",), "LEMD": ("Madrid",), "LEBL": ("Barcelona",), "LIRF": ("Rome",),
    "LPPT": ("Lisbon",), "EIDW": ("Dublin",), "EDDF": ("Frankfurt",), "EDDS": ("Stuttgart",), "EDDK": ("Cologne",),
}


# Forms: "all" (every way above) or "core": only what a textbook readback says: ICAO or plain
# digit words ("tree fife niner", "three five nine") and written digits; no hyphenated ICAO
# spellings, no grouped numbers ("one twenty-one", "three fifty"), no "tousand", no airport code
# spelled out ("echo delta delta mike").
# "spoken": every form said in words (no written digits or codes); "speech": the textbook forms
# (core) said in words, what the voice benchmark speaks.
FORMS = ("all", "core", "spoken", "speech")
WRITTEN = frozenset({"numeric", "numeric_comma", "numeric_full", "numeric_side", "short", "code"})
_core: contextvars.ContextVar[bool] = contextvars.ContextVar("readback_pilot_core", default=False)
_spoken: contextvars.ContextVar[bool] = contextvars.ContextVar("readback_pilot_spoken", default=False)


def _pick(rng: random.Random, options: tuple[str, ...], extended: tuple[str, ...] = ("hyphen", "group")) -> str:
    """`rng.choice(options)`, leaving out the extended forms in core mode (the draw is made from
    the full tuple either way and an extended pick falls back to the first option, so a core
    and an all run of the same seed stay close)."""
    choice = rng.choice(options)
    if _core.get() and choice in extended:
        return next(o for o in options if o not in extended)
    if _spoken.get() and choice in WRITTEN:
        return next(o for o in options if o not in WRITTEN)
    return choice


def kind_of(name: str) -> str:
    """The kind of a readback variable ("dest_tower_freq" -> "frequency"); unknown -> "text"."""
    if name in VARIABLE_KINDS:
        return VARIABLE_KINDS[name]
    if name.endswith("_freq"):
        return "frequency"
    if name.endswith("_level"):
        return "flight_level"
    if name.endswith("_ft"):
        return "altitude"
    return "text"


# --------------------------------------------------------------------------- numbers in words


def digit_words(digits: str, rng: random.Random, style: str | None = None) -> str:
    """Each digit as a word, in one style (icao, plain, hyphen, mixed) or as digits ("numeric")."""
    style = style or rng.choice(("icao", "plain", "plain", "hyphen", "mixed", "numeric"))
    if style == "numeric" and _spoken.get():
        style = "plain"
    if style == "numeric":
        return digits
    core = _core.get()
    if core and style == "hyphen":
        style = "icao"
    mixed = (DIGITS_ICAO, DIGITS_PLAIN) if core else (DIGITS_ICAO, DIGITS_PLAIN, DIGITS_HYPHEN)
    tables = {"icao": (DIGITS_ICAO,), "plain": (DIGITS_PLAIN,), "hyphen": (DIGITS_HYPHEN,), "mixed": mixed}[style]
    return " ".join(rng.choice(tables)[int(d)] for d in digits)


def number_words(n: int) -> str:
    """0..99 in plain English ("twenty-one", "fifty", "seven")."""
    if n < 10:
        return DIGITS_PLAIN[n]
    if n < 20:
        return TEENS[n - 10]
    tens, ones = divmod(n, 10)
    return TENS[tens] if ones == 0 else f"{TENS[tens]}{'-' if ones else ''}{DIGITS_PLAIN[ones]}"


def group_words(digits: str, rng: random.Random) -> str:
    """Digits said in groups, as people read numbers: "121" -> "one twenty-one", "350" -> "three fifty",
    "4721" -> "forty-seven twenty-one", "1013" -> "ten thirteen"; a leading zero is said alone.
    In core mode: plain digit words."""
    if _core.get():
        return digit_words(digits, rng, "plain")
    out: list[str] = []
    rest = digits
    if len(rest) % 2 == 1:
        out.append(DIGITS_PLAIN[int(rest[0])])
        rest = rest[1:]
    for i in range(0, len(rest), 2):
        pair = rest[i : i + 2]
        if pair[0] == "0":
            out.append(f"{'zero' if rng.random() < 0.5 else 'oh'} {DIGITS_PLAIN[int(pair[1])]}")
        else:
            word = number_words(int(pair))
            out.append(word.replace("-", " ") if rng.random() < 0.4 else word)
    return " ".join(out)


def letter_word(letter: str, rng: random.Random) -> str:
    return rng.choice(NATO[letter.upper()])


def _cap(word: str, rng: random.Random) -> str:
    return rng.choice((word, word.lower(), word.capitalize(), word.upper()))


# --------------------------------------------------------------------------- value phrasers

def _say_altitude(value: Any, name: str, rng: random.Random) -> str:
    feet = int(value)
    thousands, hundreds = divmod(feet, 1000)
    form = _pick(rng, ("numeric", "numeric_comma", "words", "words", "icao"), ("icao",))
    if form == "numeric":
        num = str(feet)
    elif form == "numeric_comma":
        num = f"{feet:,}"
    else:
        th = number_words(thousands) if (form == "words" and thousands < 100 and rng.random() < 0.5 and not _core.get()) else digit_words(str(thousands), rng, "icao" if form == "icao" else "plain")
        num = f"{th} {'tousand' if form == 'icao' and rng.random() < 0.5 else 'thousand'}"
        if hundreds:
            num += f" {DIGITS_PLAIN[hundreds // 100]} hundred"
    verb = "descend" if name.startswith("arrival") or "descent" in name else "climb"
    prefixes = {
        "climb": ("climb", "climb", "climbing", "climb to", "climb and maintain", "maintain", "altitude"),
        "descend": ("descend", "descend", "descending", "descend to", "descend and maintain", "maintain", "altitude"),
    }[verb]
    prefix = rng.choice(prefixes + ("",))
    feet_word = "feet" if (not prefix or rng.random() < 0.6) else ""
    return " ".join(p for p in (prefix, num, feet_word) if p)


def _say_level(value: Any, name: str, rng: random.Random) -> str:
    level = str(value).upper().removeprefix("FL").lstrip("F")
    form = _pick(rng, ("digits", "digits", "group", "numeric", "short"))
    if form == "short":
        said = f"FL{level}"
    elif form == "numeric":
        said = f"flight level {level}"
    elif form == "group" and len(level) == 3 and level[1:] != "00":
        said = f"flight level {DIGITS_PLAIN[int(level[0])]} {number_words(int(level[1:])) if level[1] != '0' else 'zero ' + DIGITS_PLAIN[int(level[2])]}"
    else:
        said = f"flight level {digit_words(level, rng, rng.choice(('icao', 'plain', 'hyphen', 'mixed')))}"
    verb = "descend" if "descent" in name or name.startswith("arrival") else "climb"
    prefix = rng.choice((verb, f"{verb}ing", f"{verb} to", "maintain", ""))
    return f"{prefix} {said}".strip()


def _say_heading(value: Any, name: str, rng: random.Random) -> str:
    digits = f"{int(value):03d}"
    form = _pick(rng, ("digits", "digits", "numeric"))
    num = digits if form == "numeric" else digit_words(digits, rng, rng.choice(("icao", "plain", "hyphen", "mixed")))
    return f"{rng.choice(('heading', 'heading', 'fly heading'))} {num}"


def _split_runway(value: str) -> tuple[str, str]:
    m = re.fullmatch(r"(\d{1,2})([LRC]?)", value.strip().upper())
    if not m:
        raise ValueError(f"not a runway: {value!r}")
    return m.group(1).zfill(2), m.group(2)


def _say_runway(value: Any, name: str, rng: random.Random) -> str:
    number, side = _split_runway(str(value))
    form = _pick(rng, ("digits", "digits", "numeric", "numeric_side", "group"))
    if form == "numeric":
        return f"runway {number}{side}"
    if form == "group" and number[0] != "0":
        num = number_words(int(number))
    elif form == "numeric_side":
        num = number
    else:
        num = digit_words(number, rng, rng.choice(("icao", "plain", "hyphen")))
    side_word = rng.choice(SIDES[side]) if side else ""
    return f"runway {num} {side_word}".strip()


def _freq_parts(value: Any) -> tuple[str, str]:
    text = f"{float(value):.3f}"
    whole, frac = text.split(".")
    return whole, frac


def _say_frequency(value: Any, name: str, rng: random.Random) -> str:
    whole, frac = _freq_parts(value)
    short = frac.rstrip("0") or "0"
    form = _pick(rng, ("digits", "digits", "numeric", "numeric_full", "group", "full_digits"))
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
    form = _pick(rng, ("digits", "digits", "digits", "numeric", "group"), ())
    if form == "numeric":
        num = code
    elif form == "group":
        num = group_words(code, rng)
    else:
        num = digit_words(code, rng, rng.choice(("icao", "plain", "hyphen", "mixed")))
    return f"{rng.choice(('squawk', 'squawk', 'squawking'))} {num}"


def _say_qnh(value: Any, name: str, rng: random.Random) -> str:
    digits = str(int(value))
    form = _pick(rng, ("digits", "digits", "numeric", "group"), ())
    if form == "numeric":
        num = digits
    elif form == "group":
        num = group_words(digits, rng)
    else:
        num = digit_words(digits, rng, rng.choice(("icao", "plain", "hyphen", "mixed")))
    return f"{rng.choice(('QNH', 'qnh', 'QNH'))} {num}{rng.choice(('', '', ' hectopascals'))}"


def _split_sid(value: str) -> tuple[str, str, str]:
    m = re.fullmatch(r"([A-Za-z]+)\s*(\d)([A-Za-z])", value.strip())
    if not m:
        raise ValueError(f"not a SID: {value!r}")
    return m.group(1).upper(), m.group(2), m.group(3).upper()


def _say_sid(value: Any, name: str, rng: random.Random) -> str:
    fix, digit, letter = _split_sid(str(value))
    form = _pick(rng, ("words", "words", "numeric", "mixed"))
    fix_said = _cap(fix, rng)
    if form == "numeric":
        core = f"{fix_said} {digit}{letter}"
    elif form == "mixed":
        core = f"{fix_said} {digit} {letter_word(letter, rng)}"
    else:
        core = f"{fix_said} {digit_words(digit, rng, rng.choice(('icao', 'plain', 'hyphen')))} {letter_word(letter, rng)}"
    return f"{rng.choice(('via ', 'via ', ''))}{core}{rng.choice((' departure', ' departure', ''))}"


def _split_designator(value: str) -> tuple[str, str]:
    m = re.fullmatch(r"([A-Za-z])(\d+)", value.strip())
    if not m:
        raise ValueError(f"not a designator: {value!r}")
    return m.group(1).upper(), m.group(2)


def _say_designator(value: str, rng: random.Random) -> str:  # noqa: D103
    letter, number = _split_designator(value)
    form = _pick(rng, ("words", "words", "numeric", "group"))
    if form == "numeric":
        return f"{letter}{number}"
    if form == "group" and len(number) >= 2 and number[0] != "0":
        return f"{letter_word(letter, rng)} {number_words(int(number)) if len(number) == 2 else group_words(number, rng)}"
    return f"{letter_word(letter, rng)} {digit_words(number, rng, rng.choice(('icao', 'plain', 'hyphen')))}"


def _say_holding_point(value: Any, name: str, rng: random.Random) -> str:
    return f"{rng.choice(('holding point', 'holding point', 'to holding point'))} {_say_designator(str(value), rng)}"


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
    form = _pick(rng, ("name", "name", "name", "spelled", "code"), ("spelled",)) if names else _pick(rng, ("code", "spelled"), ("spelled",))
    if form == "name":
        said = rng.choice(names)  # type: ignore[arg-type]
    elif form == "spelled":
        said = " ".join(letter_word(c, rng) for c in code)
    else:
        said = code
    return f"{rng.choice(('cleared to', 'cleared to', 'to', ''))} {said}".strip()


def _say_letter(value: Any, name: str, rng: random.Random) -> str:
    letter = str(value).strip().upper()[:1]
    said = letter_word(letter, rng) if rng.random() < 0.8 or _spoken.get() else letter
    return f"{rng.choice(('information', 'information', 'with information', 'we have information'))} {said}"


def _say_text(value: Any, name: str, rng: random.Random) -> str:
    return str(value)


PHRASERS: dict[str, Callable[[Any, str, random.Random], str]] = {
    "altitude": _say_altitude, "flight_level": _say_level, "heading": _say_heading, "runway": _say_runway,
    "frequency": _say_frequency, "squawk": _say_squawk, "qnh": _say_qnh, "sid": _say_sid,
    "holding_point": _say_holding_point, "stand": _say_stand, "route": _say_route, "airport": _say_airport,
    "letter": _say_letter, "text": _say_text,
}


# --------------------------------------------------------------------------- wrong values

def _other(rng: random.Random, choices: Iterable[Any], not_: Any) -> Any:
    pool = [c for c in choices if c != not_]
    return rng.choice(pool)


def _wrong_altitude(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    feet = int(value)
    return _other(rng, [feet + d for d in (-2000, -1000, 1000, 2000) if feet + d >= 1000], feet)


def _wrong_level(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    level = int(str(value).upper().removeprefix("FL").lstrip("F"))
    return f"FL{_other(rng, [level + d for d in (-30, -20, -10, 10, 20, 30) if 10 <= level + d <= 600], level):03d}"


def _wrong_heading(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    deg = int(value)
    new = (deg + rng.choice((-40, -30, -20, -10, 10, 20, 30, 40)) - 1) % 360 + 1
    return f"{new:03d}"


def _wrong_runway(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    number, side = _split_runway(str(value))
    if side and rng.random() < 0.7:
        return number + _other(rng, "LRC", side)
    n = int(number)
    new = _other(rng, [((n + d - 1) % 36) + 1 for d in (-1, 1, 18)], n)
    return f"{new:02d}{side}"


def _wrong_frequency(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    khz = round(float(value) * 1000)
    for _ in range(20):
        new = khz + rng.choice((-1000, 1000, -100, 100, -200, 200, -50, 50, -25, 25))
        if 118000 <= new <= 136975 and new != khz:
            return f"{new / 1000:.3f}"
    return f"{(khz + 100) / 1000:.3f}"


def _wrong_squawk(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    code = list(str(value).zfill(4))
    reserved = {"7500", "7600", "7700", "7000", "2000", "1200", "0000"}
    for _ in range(50):
        new = list(code)
        if rng.random() < 0.3:
            i = rng.randrange(3)
            new[i], new[i + 1] = new[i + 1], new[i]
        else:
            i = rng.randrange(4)
            new[i] = _other(rng, "01234567", new[i])
        text = "".join(new)
        if text != "".join(code) and text not in reserved:
            return text
    return "".join(code[:3]) + _other(rng, "01234567", code[3])


def _wrong_qnh(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    q = int(value)
    return q + rng.choice((-10, -3, -2, -1, 1, 2, 3, 10))


def _wrong_sid(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    from engine.scenario import FIXES, SID_LETTERS  # data lists, not phrasing

    fix, digit, letter = _split_sid(str(value))
    r = rng.random()
    if r < 0.4:
        digit = _other(rng, "123456789", digit)
    elif r < 0.8:
        letter = _other(rng, SID_LETTERS, letter)
    else:
        fix = _other(rng, FIXES, fix)
    return f"{fix} {digit}{letter}"


def _wrong_designator(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    letter, number = _split_designator(str(value))
    if rng.random() < 0.5:
        n = int(number)
        return f"{letter}{_other(rng, [x for x in (n - 2, n - 1, n + 1, n + 2, n + 10) if x > 0], n)}"
    return f"{_other(rng, 'ABCDEFGHJKLMNPRSTUVWYZ', letter)}{number}"


def _wrong_route(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    segments = str(value).split()
    i = rng.randrange(len(segments))
    for _ in range(20):
        new = _wrong_designator(segments[i], rng, variables)
        if new not in segments:
            segments[i] = new
            return " ".join(segments)
    segments[i] = _wrong_designator(segments[i], rng, variables)
    return " ".join(segments)


def _wrong_airport(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    from engine.scenario import DESTINATIONS  # the scenario's airport list

    issued = str(value).upper()
    taken = set(AIRPORT_NAMES.get(issued, ())) | {issued}
    home = str(variables.get("airport", "")).upper()
    pool = [c for c in DESTINATIONS if c not in (issued, home) and not (set(AIRPORT_NAMES.get(c, ())) & taken)]
    return rng.choice(pool)


def _wrong_letter(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    return _other(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", str(value).strip().upper()[:1])


WRONGERS: dict[str, Callable[[Any, random.Random, Mapping[str, Any]], Any]] = {
    "altitude": _wrong_altitude, "flight_level": _wrong_level, "heading": _wrong_heading, "runway": _wrong_runway,
    "frequency": _wrong_frequency, "squawk": _wrong_squawk, "qnh": _wrong_qnh, "sid": _wrong_sid,
    "holding_point": _wrong_designator, "stand": _wrong_designator, "route": _wrong_route, "airport": _wrong_airport,
    "letter": _wrong_letter,
}


def wrong_value(name: str, value: Any, rng: random.Random, variables: Mapping[str, Any] | None = None) -> Any:
    """A different plausible value of the same kind as `value` (variable `name`)."""
    kind = kind_of(name)
    if kind not in WRONGERS:
        raise ValueError(f"no wrong value for {name!r} (kind {kind})")
    return WRONGERS[kind](value, rng, variables or {})


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
    form = _pick(rng, ("digits", "digits", "numeric", "group"), ())
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


# --------------------------------------------------------------------------- readbacks

@dataclass
class Readback:
    """One generated readback and what a correct check must say about it."""

    text: str
    mode: str  # correct | wrong | drop
    field: str | None  # the changed or dropped variable
    expected: dict[str, str]  # variable -> ok | wrong | missing
    issued: dict[str, Any]  # variable -> value the controller issued
    said: dict[str, Any]  # variable -> value read back (absent when dropped)
    kinds: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text, "mode": self.mode, "field": self.field, "expected": dict(self.expected),
            "issued": {k: str(v) for k, v in self.issued.items()}, "said": {k: str(v) for k, v in self.said.items()},
        }


def phrase_readback(
    rng: random.Random,
    required: list[str],
    variables: Mapping[str, Any],
    *,
    mode: str = "correct",
    field: str | None = None,
    carrier: str | None = None,
    fillers: bool = True,
    forms: str = "all",
) -> Readback:
    """A readback of `required` from `variables` (the state's render context).

    mode ``correct``; ``wrong``: `field` (default: a random one) read back with another value of
    its kind; ``drop``: `field` left out (a readback of one value drops nothing else, so it is
    the callsign alone, with the carrier words of an initial call if any). `carrier` is an intent
    from `CARRIERS` whose words an initial call needs ("request IFR clearance"). `forms`: "all",
    or "core" for textbook digit forms only (see `FORMS`)."""
    if forms not in FORMS:
        raise ValueError(f"unknown forms {forms!r}")
    # "speech": what a pilot says aloud, textbook digit words only (core) and no written forms
    token, spoken = _core.set(forms in ("core", "speech")), _spoken.set(forms in ("spoken", "speech"))
    try:
        return _phrase(rng, required, variables, mode, field, carrier, fillers)
    finally:
        _core.reset(token)
        _spoken.reset(spoken)


def _phrase(
    rng: random.Random,
    required: list[str],
    variables: Mapping[str, Any],
    mode: str,
    field: str | None,
    carrier: str | None,
    fillers: bool,
) -> Readback:
    names = list(dict.fromkeys(required))
    if mode not in ("correct", "wrong", "drop"):
        raise ValueError(f"unknown mode {mode!r}")
    if mode != "correct":
        field = field if field is not None else rng.choice(names)
        if field not in names:
            raise ValueError(f"{field!r} is not required here ({names})")
    else:
        field = None
    issued = {n: variables.get(n) for n in names}
    said: dict[str, Any] = {}
    expected: dict[str, str] = {}
    parts: list[str] = []
    for n in names:
        value = issued[n]
        if n == field and mode == "drop":
            expected[n] = "missing"
            continue
        if n == field and mode == "wrong":
            value = wrong_value(n, value, rng, variables)
            expected[n] = "wrong"
        else:
            expected[n] = "ok"
        said[n] = value
        parts.append(say_value(n, value, rng))
    rng.shuffle(parts)
    if carrier in CARRIERS:
        parts.insert(rng.randrange(len(parts) + 1), rng.choice(CARRIERS[carrier]))
    comma = rng.random() < 0.6
    sep = ", " if comma else " "
    body = ""
    for i, part in enumerate(parts):
        if i == 0:
            body = part
        elif i == len(parts) - 1 and rng.random() < 0.25:
            body += f"{',' if comma else ''} and {part}"
        else:
            body += sep + part
    callsign = say_callsign(str(variables.get("callsign_spoken") or variables.get("callsign") or ""), rng)
    front = rng.choice(FILLERS_FRONT) if fillers else ""
    back = rng.choice(FILLERS_BACK) if fillers else ""
    pieces = [front, body, back] if body else [front, back]
    pieces = [p for p in pieces if p]
    if rng.random() < 0.5:
        pieces.insert(0, callsign)
    else:
        pieces.append(callsign)
    text = sep.join(pieces)
    if rng.random() < 0.5:
        text = text[:1].upper() + text[1:]
    return Readback(text, mode, field, expected, issued, said, {n: kind_of(n) for n in names})


# --------------------------------------------------------------------------- flow states

def readback_states(registry: FlowRegistry) -> list[tuple[str, str]]:
    """Every (flow, state) of the registry whose state has a `readback:` list, sorted."""
    return sorted(
        (flow.slug, state.id) for flow in registry for state in flow.states.values()
        if state.role is Role.PILOT and state.readback_required
    )


def carrier_of(registry: FlowRegistry, flow: str, state: str) -> str | None:
    """The intent of an initial call's ok route whose words must be heard (its word triggers)."""
    st = registry.get(flow).states[state]
    for t in st.of_kind(TransitionKind.OK):
        if t.triggers and t.intent in CARRIERS:
            return t.intent
    return None


# Inputs the driver plays: ("say", index of the expected phrase), ("tick", seconds).
Action = tuple[str, int]
_TICK_S = 200


class DriveError(RuntimeError):
    pass


@dataclass
class Reached:
    """A session at a readback state, and the clock it is at."""

    session: Session
    now: float
    path: list[Action]


class StateDriver:
    """Brings sessions to readback states by playing the flow on a real engine.

    From the start of the state's flow it searches (breadth first, on copies of the session) the
    pilot's expected phrases, their alternatives (side routes such as "going around") and the
    clock (timers), until the session stands at the target state. The path found is kept per
    state and replayed for other scenarios (searched again if it does not lead there)."""

    def __init__(self, engine: SessionEngine, *, max_depth: int = 14, max_nodes: int = 4000) -> None:
        self.engine = engine
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.paths: dict[tuple[str, str], list[Action]] = {}
        self.starts: dict[tuple[str, str], str] = {}  # the flow each path starts in

    def reach(self, flow: str, state: str, variables: Mapping[str, Any], session_id: str = "readback") -> Reached:
        path = self.paths.get((flow, state))
        if path is not None:
            got = self._replay(self.starts[(flow, state)], flow, state, variables, path, session_id)
            if got is not None:
                return got
        starts = [flow, *sorted(f.slug for f in self.engine.registry if f.slug != flow)]
        for start in starts:  # a state entered only from another flow (a missed approach)
            try:
                got = self._search(start, flow, state, variables, session_id)
            except DriveError:
                continue
            self.paths[(flow, state)] = got.path
            self.starts[(flow, state)] = start
            return got
        raise DriveError(f"no way found from the start of any flow to {flow}:{state}")

    def _start(self, flow: str, variables: Mapping[str, Any], session_id: str) -> Session:
        session, _ = self.engine.start(variables=dict(variables), session_id=session_id, flow=flow, now=0.0)
        return session

    def _at(self, session: Session, flow: str, state: str) -> bool:
        return session.active.flow == flow and session.active.state == state and not session.completed

    def _apply(self, session: Session, now: float, action: Action) -> float:
        kind, arg = action
        if kind == "say":
            expected = self.engine.expected_pilot(session)
            now += 5.0
            self.engine.transmit(session, expected[arg], now)
        else:
            now += arg
            self.engine.tick(session, now)
        return now

    def _replay(
        self, start: str, flow: str, state: str, variables: Mapping[str, Any], path: list[Action], session_id: str
    ) -> Reached | None:
        session, now = self._start(start, variables, session_id), 0.0
        try:
            for action in path:
                now = self._apply(session, now, action)
        except IndexError:
            return None
        return Reached(session, now, list(path)) if self._at(session, flow, state) else None

    def _search(self, start: str, flow: str, state: str, variables: Mapping[str, Any], session_id: str) -> Reached:
        first = self._start(start, variables, session_id)
        queue: deque[tuple[Session, float, list[Action]]] = deque([(first, 0.0, [])])
        seen: set[tuple[str, str, int]] = set()
        nodes = 0
        while queue and nodes < self.max_nodes:
            session, now, path = queue.popleft()
            nodes += 1
            if self._at(session, flow, state):
                return Reached(session, now, path)
            key = (session.active.flow, session.active.state, session.bad_readbacks)
            if key in seen or len(path) >= self.max_depth or session.completed or session.active.flow not in (start, flow):
                continue
            seen.add(key)
            actions: list[Action] = [("say", i) for i in range(len(self.engine.expected_pilot(session)))]
            actions.append(("tick", _TICK_S))
            for action in actions:
                copy = session.model_copy(deep=True)
                t = self._apply(copy, now, action)
                queue.append((copy, t, [*path, action]))
        raise DriveError(f"no way found from the start of {start} to {flow}:{state}")


# --------------------------------------------------------------------------- outcomes

def moved_forward(decision: Decision, flow: str, state: str, session: Session) -> bool:
    """Whether a decision took the session on from the readback state (`flow`, `state`) other than
    by the flow's own bad-readback route: still there, or sent along an explicit `kind: bad`
    route (a flow's correction, e.g. the current ATIS letter), is not forward."""
    if session.active.flow == flow and session.active.state == state and not session.completed:
        return False
    for step in decision.trace.steps:
        if step.step == "policy":
            return True  # on_max_bad moved it on
    for step in decision.trace.steps:
        if step.step == "select" and "(bad," in step.detail:
            return False
    return True


def took_ok_route(decision: Decision) -> bool:
    """Whether the decision selected the state's `kind: ok` route."""
    return any(step.step == "select" and "(ok," in step.detail for step in decision.trace.steps)


def render_context(engine: SessionEngine, session: Session) -> dict[str, Any]:
    """The values the readback check compares with: the session's variables and the derived
    speaking context of its current state (what `SessionEngine` hands the evaluator)."""
    flow = engine.registry.get(session.active.flow)
    state = flow.states[session.active.state]
    return engine._render_ctx(session, flow, state)  # noqa: SLF001 - the evaluator's own view
