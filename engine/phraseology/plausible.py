"""Whether a heard value can be one of its kind at all: QNH 100, squawk 325, flight level 1,
speed 1 or heading 369 is a transmission cut short or misheard, not a pilot's wrong readback.

The readback check (engine/readback.py) hears such a value as *unsure*: the controller asks
"say again" for that item, as real ATC does with a garbled value, instead of correcting the
pilot for a number nobody said. Kinds not listed here take every value they parse. A value its
finder already knows was garbled (runway "34 lift", heading "zero") comes flagged on its hit
(engine/phraseology/hits.py) and needs no rule here.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["plausible"]


def _qnh(value: str) -> bool:
    """hPa 900-1099, or inHg x 100 (27.00-31.99 as 2700-3199)."""
    return value.isdigit() and (900 <= int(value) <= 1099 or 2700 <= int(value) <= 3199)


def _squawk(value: str) -> bool:
    return len(value) == 4 and set(value) <= set("01234567")


def _flight_level(value: str) -> bool:
    """FL030 and up, in steps of 5: no transition level lies below 3,000 ft (the lowest transition
    altitudes are 3,000 ft, and the level above them higher still), so a lower one is a level cut
    short ("flight level one" of "one zero zero"; "two, zero" of "two eight zero", seed 42) or
    misheard, and levels go by tens (by fives for VFR), so "flight level three eight niner" is a
    misheard "tree eight zero". A level said as feet ("7000 feet" for FL070) is heard as FL7000
    and stays a wrong readback, corrected."""
    digits = value.removeprefix("FL")
    return digits.isdigit() and int(digits) >= 30 and int(digits) % 5 == 0


def _altitude(value: str) -> bool:
    """An altitude in feet, in hundreds as every clearance gives one: "three thousand eight" (3008,
    whisper's "eight" for "feet", the most frequent such garble in the recorded voice runs) or a
    lone "five" is a value misheard, not a wrong readback; or a level its finder heard for it
    ("flight level one eight" for a cleared 4000 ft, FL018), held to the flight level's rule."""
    if value.startswith("FL"):
        return _flight_level(value)
    return not value.isdigit() or (int(value) >= 100 and int(value) % 100 == 0)


def _speed(value: str) -> bool:
    """60-450 kt, the indicated airspeeds a controller assigns; "speed one" is a cut value."""
    return value.isdigit() and 60 <= int(value) <= 450


def _heading(value: str) -> bool:
    """Up to 360: "heading three six niner" (369) is a misheard "tree six zero", not a heading. A
    heading of zeros comes flagged from its finder (a cut "zero tree zero")."""
    return value.isdigit() and int(value) <= 360


# Frequencies need no rule: their finder reads only the air band (engine/phraseology/frequencies.py).
_RULES: dict[str, Callable[[str], bool]] = {
    "qnh": _qnh,
    "squawk": _squawk,
    "flight_level": _flight_level,
    "altitude": _altitude,
    "speed": _speed,
    "heading": _heading,
}


def plausible(kind: str, value: str) -> bool:
    """Whether `value` (as the kind's finder reports it) can be a value of `kind`."""
    rule = _RULES.get(kind)
    return rule is None or rule(str(value))
