"""Whether a heard value can be one of its kind at all: QNH 100, squawk 325 or runway "34 lift"
is a transmission cut short or misheard, not a pilot's wrong readback.

The readback check (engine/readback.py) hears such a value as *unsure*: the controller asks
"say again" for that item, as real ATC does with a garbled value, instead of correcting the
pilot for a number nobody said. Kinds not listed here take every value they parse.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["plausible"]


def _qnh(value: str) -> bool:
    """hPa 900-1099, or inHg x 100 (27.00-31.99 as 2700-3199)."""
    return value.isdigit() and (900 <= int(value) <= 1099 or 2700 <= int(value) <= 3199)


def _squawk(value: str) -> bool:
    return len(value) == 4 and set(value) <= set("01234567")


def _heading(value: str) -> bool:
    """Not "000": a heard "heading zero" is a cut "zero tree zero", never north (360)."""
    return value != "000"


def _runway(value: str) -> bool:
    """Not "25?": a runway whose side was misheard (engine/phraseology/runways.py)."""
    return not value.endswith("?")


# Frequencies need no rule: their finder reads only the air band (engine/phraseology/frequencies.py).
_RULES: dict[str, Callable[[str], bool]] = {"qnh": _qnh, "squawk": _squawk, "runway": _runway, "heading": _heading}


def plausible(kind: str, value: str) -> bool:
    """Whether `value` (as the kind's finder reports it) can be a value of `kind`."""
    rule = _RULES.get(kind)
    return rule is None or rule(str(value))
