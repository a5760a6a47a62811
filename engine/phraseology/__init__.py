"""The one phrase normalizer of livefreq: numbers, callsigns, frequencies, runways and the rest.

Every other module speaks, writes, parses and compares aviation values through this package, so
TTS, templates, triggers and readback checks can never disagree about what "two fife right" is.

- `speak_value(kind, value)`: ICAO speech of one value ("25R" -> "two fife right").
- `display_value(kind, value)`: the value as written in a clearance ("121.8" -> "121.800").
- `speak_text(text)`: ICAO speech for a whole rendered controller message (idempotent).
- `normalize_transcript(text, callsign=None)`: canonical lower-case pilot transcript (see
  `transcript`); `tokenize(text, callsign=None)` gives its words. The optional callsign
  ("SWR158") ends a number right after the spoken flight number; `callsign_hint(variables)` picks
  it from scenario variables.
- `extract(kind, text, variables)`: values of a kind found in a transcript, canonical.
- `same_value(kind, issued, heard)`: equality by meaning (121.8 == 121.800; 25L != 25R).
- `kind_for_variable(name)`: the kind of a scenario variable ("tower_freq" -> "frequency").
Kind names are listed in `kinds.KINDS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.phraseology.callsigns import (
    AIRLINES,
    ParsedCallsign,
    abbreviated_registration,
    callsign_telephony,
    parse_callsign,
    speak_callsign,
)
from engine.phraseology.context import Context
from engine.phraseology.handlers import canonical_of
from engine.phraseology.handlers import kind as _handler
from engine.phraseology.kinds import KINDS, kind_for_variable
from engine.phraseology.numbers import DIGIT_WORDS, speak_digits
from engine.phraseology.speech import speak_text
from engine.phraseology.transcript import Transcript, callsign_hint, normalize_transcript, tokenize

__all__ = [
    "AIRLINES",
    "DIGIT_WORDS",
    "KINDS",
    "ParsedCallsign",
    "Transcript",
    "abbreviated_registration",
    "callsign_hint",
    "callsign_telephony",
    "canonical_value",
    "display_value",
    "extract",
    "kind_for_variable",
    "normalize_transcript",
    "parse_callsign",
    "same_value",
    "speak_callsign",
    "speak_digits",
    "speak_text",
    "speak_value",
    "tokenize",
]


def canonical_value(kind: str, value: Any) -> str | None:
    """The value in its canonical form for comparisons ("121.8" -> "121.800"); None if invalid."""
    return canonical_of(_handler(kind), value)


def speak_value(kind: str, value: Any) -> str:
    """ICAO spoken form of one value; an invalid value is spoken as text."""
    handler = _handler(kind)
    canon = canonical_of(handler, value) if handler.name != "text" else None
    return handler.speak(canon) if canon is not None else speak_text(str(value if value is not None else ""))


def display_value(kind: str, value: Any) -> str:
    """Text form as written in a clearance ("25R", "121.800", "5000", "FL070", "MARUN 7F")."""
    handler = _handler(kind)
    canon = canonical_of(handler, value) if handler.name != "text" else None
    return handler.display(canon) if canon is not None else str(value if value is not None else "")


def extract(kind: str, text: str, variables: Mapping[str, Any] | None = None) -> list[str]:
    """Every value of `kind` in a transcript, canonical where valid, in order of appearance, once each.

    `variables` lets the airport kind recognise names (`destination_name`, `airport_name`), the
    callsign kind a scenario's own telephony (`callsign_spoken`), and the tokenizer end a number
    after the own callsign's flight number (`callsign`, see `callsign_hint`).
    """
    ctx = Context(variables=variables or {})
    values: list[str] = []
    for hit in _handler(kind).find(tokenize(text, callsign_hint(variables)), ctx):
        if hit.value not in values:
            values.append(hit.value)
    return values


def same_value(kind: str, issued: Any, heard: Any) -> bool:
    """Meaning-level equality of two values of one kind, written or spoken ("25R" == "two five
    right"); values that are not of the kind compare as normalized text."""
    handler = _handler(kind)
    a, b = canonical_of(handler, issued), canonical_of(handler, heard)
    if a is None or b is None:
        left, right = normalize_transcript(str(issued)), normalize_transcript(str(heard))
        return bool(left) and left == right
    return handler.equal(a, b)
