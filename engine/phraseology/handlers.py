"""The table of value kinds: how each is parsed, written, spoken and found in a transcript.

Every kind has the same four operations, so the public API and the readback evaluator never
branch on the kind themselves. The `text` kind is the fallback for free values (approach type,
push direction): written as given, spoken through `speak_text`, found when its words occur.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from engine.phraseology import airports, altitudes, callsigns, designators, directions, frequencies, numeric, runways
from engine.phraseology.context import Context
from engine.phraseology.hits import Found, Hit
from engine.phraseology.numbers import speak_digits
from engine.phraseology.speech import speak_text
from engine.phraseology.transcript import Transcript, tokenize


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    canonical: Callable[[Any], str | None]  # issued or heard value -> canonical text, None if invalid
    display: Callable[[str], str]  # canonical -> as written in a clearance
    speak: Callable[[str], str]  # canonical -> ICAO speech
    find: Callable[[Transcript, Context], Found]  # hits: word index, canonical or raw heard value, garbled
    equal: Callable[[str, str], bool] = operator.eq


def _same(canon: str) -> str:
    return canon


def _text_canonical(value: Any) -> str | None:
    text = tokenize(str(value)).text
    return text or None


TEXT_SCORE = 90.0  # rapidfuzz partial ratio from which free text counts as said


def _text_find(t: Transcript, ctx: Context) -> Found:
    """Free text is only found when we know what to look for: the issued words, or nearly them."""
    if not ctx.expected:
        return []
    text = t.text
    at = f" {text} ".find(f" {ctx.expected} ")
    if at >= 0:
        return [Hit(text[:at].count(" "), ctx.expected)]
    if len(ctx.expected) >= 4 and fuzz.partial_ratio(ctx.expected, text) >= TEXT_SCORE:
        return [Hit(0, ctx.expected)]
    return []


_PROCEDURE: dict[str, Any] = dict(
    canonical=designators.procedure_canonical,
    display=_same,
    speak=designators.procedure_speak,
    find=designators.procedure_find,
)

KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind("callsign", callsigns.canonical, callsigns.display, callsigns.speak, callsigns.find, callsigns.equal),
        Kind("airport", airports.canonical, airports.display, airports.speak, airports.find),
        Kind("runway", runways.canonical, runways.display, runways.speak, runways.find),
        Kind("frequency", frequencies.canonical, frequencies.display, frequencies.speak, frequencies.find),
        Kind("altitude", altitudes.canonical, altitudes.display, altitudes.speak, altitudes.find),
        Kind("flight_level", altitudes.level_canonical, altitudes.display, altitudes.speak, altitudes.find),
        Kind("heading", numeric.heading_canonical, _same, numeric.heading_speak, numeric.heading_find),
        Kind("turn", directions.canonical, _same, _same, directions.find),
        Kind("circuit", directions.canonical, _same, _same, directions.circuit_find),
        Kind("facing", directions.facing_canonical, _same, _same, directions.facing_find),
        Kind("squawk", numeric.squawk_canonical, _same, speak_digits, numeric.squawk_find),
        Kind("qnh", numeric.qnh_canonical, _same, speak_digits, numeric.qnh_find),
        Kind("speed", numeric.speed_canonical, _same, speak_digits, numeric.speed_find),
        Kind("wind", numeric.wind_canonical, _same, numeric.wind_speak, numeric.wind_find),
        Kind("sid", **_PROCEDURE),
        Kind("star", **_PROCEDURE),
        Kind("waypoint", **_PROCEDURE),
        Kind("route", designators.route_canonical, _same, designators.route_speak, designators.route_find),
        Kind(
            "designator", designators.position_canonical, _same, designators.position_speak, designators.position_find
        ),
        Kind("letter", designators.letter_canonical, _same, designators.letter_speak, designators.letter_find),
        Kind("text", _text_canonical, _same, speak_text, _text_find),
    )
}


def kind(name: str) -> Kind:
    """The handler of a kind name; unknown names are free text."""
    return KINDS.get(name, KINDS["text"])


def canonical_of(handler: Kind, value: Any) -> str | None:
    """Written forms first ("25R"); then spoken ones ("two five right", "marun seven foxtrot")."""
    if value is None or value == "":
        return None
    canon = handler.canonical(value)
    if canon is not None or not isinstance(value, str) or handler.name == "text":
        return canon
    t = tokenize(value)
    hits = handler.find(t, Context())
    if any(hit.garbled for hit in hits):
        return None  # "heading zero": a cut "zero tree zero", never north; a misheard runway side
    canon = handler.canonical(t.text)
    if canon is not None:
        return canon
    found = {hit.value for hit in hits}
    return handler.canonical(found.pop()) if len(found) == 1 else None
