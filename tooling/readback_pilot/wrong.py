"""A wrong readback's one changed value: another plausible value of the same kind (25L for 25R, one
squawk digit, 5000 -> 6000, another destination or one that sounds like it, another ATIS letter)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from tooling.readback_pilot.values import split_designator, split_runway, split_sid
from tooling.readback_pilot.words import AIRPORT_NAMES, SOUND_ALIKES, kind_of

__all__ = ["WRONGERS", "wrong_value"]

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
    number, side = split_runway(str(value))
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

    fix, digit, letter = split_sid(str(value))
    r = rng.random()
    if r < 0.4:
        digit = _other(rng, "123456789", digit)
    elif r < 0.8:
        letter = _other(rng, SID_LETTERS, letter)
    else:
        fix = _other(rng, FIXES, fix)
    return f"{fix} {digit}{letter}"


def _wrong_sid_name(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    """The same SID with another fix name: half the time another of the airport's SIDs (the one a
    pilot has in mind), else any fix (`FIXES`), which the recognizer's context does not name."""
    from engine.scenario import FIXES  # data lists, not phrasing

    fix, digit, letter = split_sid(str(value))
    published = [f for f in variables.get("sid_fixes") or () if f != fix]
    pool = published if published and rng.random() < 0.5 else list(FIXES)
    return f"{_other(rng, pool, fix)} {digit}{letter}"


def _wrong_designator(value: Any, rng: random.Random, variables: Mapping[str, Any]) -> Any:
    letter, number = split_designator(str(value))
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
    alike = [c for c in SOUND_ALIKES.get(issued, ()) if c != home]
    if alike and rng.random() < 0.5:
        return rng.choice(alike)
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


def wrong_value(
    name: str, value: Any, rng: random.Random, variables: Mapping[str, Any] | None = None, *, fix_names: bool = False
) -> Any:
    """A different plausible value of the same kind as `value` (variable `name`); `fix_names`: a SID
    changes its fix name, not its digit or letter (the name leak `--fields` measures)."""
    kind = kind_of(name)
    if fix_names and kind == "sid":
        return _wrong_sid_name(value, rng, variables or {})
    if kind not in WRONGERS:
        raise ValueError(f"no wrong value for {name!r} (kind {kind})")
    return WRONGERS[kind](value, rng, variables or {})


