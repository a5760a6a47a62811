"""The radio phrase normalizer: a rendered controller message -> ICAO speech for text-to-speech.

Each pass recognises one kind of value by its shape or its keyword and speaks it with that kind's
rules, most specific first (callsigns, registrations, frequencies, flight levels, runways, wind,
altitudes, squawk, heading, QNH, ATIS letter, speeds, procedures, taxiways); whatever digits are
left are spoken one by one. Spoken output contains no digits and no designator shapes, so the
normalizer is idempotent: speaking already-spoken text changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.phraseology import altitudes, callsigns, designators, frequencies, numeric, runways
from engine.phraseology.alphabet import letter_word
from engine.phraseology.numbers import speak_digits, speak_whole

_ENGLISH_DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_ENGLISH_TEENS = (
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
)
_ENGLISH_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def _english_pair(two: str) -> str:
    """ "20" -> "twenty", "21" -> "twenty one", "19" -> "nineteen", "07" -> "oh seven"."""
    tens, unit = int(two[0]), int(two[1])
    if tens == 0:
        return f"oh {_ENGLISH_DIGITS[unit]}"
    if tens == 1:
        return _ENGLISH_TEENS[unit]
    return _ENGLISH_TENS[tens] + (f" {_ENGLISH_DIGITS[unit]}" if unit else "")


def _airbus(m: re.Match[str]) -> str:
    """Aircraft types are said the way pilots say them: "A320" -> "A three twenty"."""
    neo = " neo" if m.group(2) else ""
    return f"A {_ENGLISH_DIGITS[int(m.group(1)[0])]} {_english_pair(m.group(1)[1:])}{neo}"


def _boeing(m: re.Match[str]) -> str:
    return "Boeing " + " ".join(_ENGLISH_DIGITS[int(d)] for d in m.group(1))


def _callsign(m: re.Match[str]) -> str:
    return callsigns.speak_callsign(m.group(0)) if m.group(1) in callsigns.AIRLINES else m.group(0)


def _registration(m: re.Match[str]) -> str:
    chars = m.group(0).replace("-", "")
    return " ".join(speak_digits(ch) if ch.isdigit() else letter_word(ch) for ch in chars)


def _frequency(m: re.Match[str]) -> str:
    canon = frequencies.canonical(m.group(0))
    return frequencies.speak(canon) if canon else speak_digits(m.group(0))


def _level(m: re.Match[str]) -> str:
    return altitudes.speak(altitudes.level(int(m.group(1))))


def _runway(m: re.Match[str]) -> str:
    canon = runways.canonical(m.group(2) + (m.group(3) or ""))
    spoken = runways.speak(canon) if canon else speak_digits(m.group(2))
    return f"{m.group(1)} {spoken}"


def _bare_runway(m: re.Match[str]) -> str:
    canon = runways.canonical(m.group(0))
    return runways.speak(canon) if canon else m.group(0)


def _wind(m: re.Match[str]) -> str:
    canon = numeric.wind_canonical(m.group(0))
    return numeric.wind_speak(canon) if canon else m.group(0)


def _anchored_altitude(m: re.Match[str]) -> str:
    return f"{m.group(1)}{m.group(2)} {speak_whole(int(m.group(3).replace(',', '')))}"


def _feet(m: re.Match[str]) -> str:
    return f"{speak_whole(int(m.group(1).replace(',', '')))} feet"


def _keyword_digits(m: re.Match[str]) -> str:
    return f"{m.group(1)} {speak_digits(m.group(2))}"


def _heading(m: re.Match[str]) -> str:
    canon = numeric.heading_canonical(m.group(2))
    return f"{m.group(1)} {speak_digits(canon or m.group(2))}"


def _atis(m: re.Match[str]) -> str:
    return f"{m.group(1)} {letter_word(m.group(2))}"


def _speed(m: re.Match[str]) -> str:
    return f"{speak_digits(m.group(1))} knots"


def _procedure(m: re.Match[str]) -> str:
    return designators.procedure_speak(f"{m.group(1)} {m.group(2)}{m.group(3)}")


def _designators(m: re.Match[str]) -> str:
    parts = re.findall(r"[A-Z]{1,2}\d{1,3}[A-Z]?", m.group(0))
    return ", ".join(designators.position_speak(part) for part in parts)


_ALT_ANCHOR = r"climb|climbing|descend|descending|maintain|maintaining|altitude|passing|leaving"
_PASSES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"\bA(3[1-8]\d)(neo)?\b"), _airbus),
    (re.compile(r"\b(?:Boeing\s+B?|B)(7[1-8]7)\b"), _boeing),
    (re.compile(r"\b([A-Z]{3})(\d{1,4}[A-Z]{0,2})\b"), _callsign),
    (re.compile(r"\b[A-Z]{1,2}-[A-Z0-9]{2,5}\b"), _registration),
    (re.compile(r"\b1[0-3]\d\.\d{1,3}\b"), _frequency),
    (re.compile(r"\b(?:FL|flight level)\s?(\d{2,3})\b", re.IGNORECASE), _level),
    (re.compile(r"\b((?i:runways?|rwy))\s+(\d{1,2})(?:\s?([LRC]))?\b"), _runway),
    (re.compile(r"\b(?:0[1-9]|[12]\d|3[0-6])[LRC]\b"), _bare_runway),
    (re.compile(r"\b(?:\d{3}|VRB)/\d{1,3}(?:G\d{2,3})?(?:\s?(?:KT|kt|knots)\b)?"), _wind),
    (
        re.compile(
            rf"\b({_ALT_ANCHOR})((?:\s+(?:to|and|maintain|altitude))*)\s+(\d{{1,2}},\d{{3}}|\d{{3,5}})\b", re.IGNORECASE
        ),
        _anchored_altitude,
    ),
    (re.compile(r"\b(\d{1,2},\d{3}|\d{3,5})\s?(?:feet|ft)\b", re.IGNORECASE), _feet),
    (re.compile(r"\b((?i:squawk|transponder|code)(?:\s+(?i:code))?)\s+(\d{4})\b"), _keyword_digits),
    (re.compile(r"\b((?i:heading))\s+(\d{1,3})\b"), _heading),
    (re.compile(r"\b((?i:qnh|altimeter))\s+(\d{3,4})\b"), _keyword_digits),
    (re.compile(r"\b((?i:information|atis))\s+([A-Z])\b"), _atis),
    (re.compile(r"\b(\d{1,3})\s?(?:knots|kts|kt)\b", re.IGNORECASE), _speed),
    (re.compile(r"\b([A-Z]{2,6})\s?(\d)([A-Z])\b"), _procedure),
    (re.compile(r"\b[A-Z]{1,2}\d{1,3}[A-Z]?\b(?:,?\s+[A-Z]{1,2}\d{1,3}[A-Z]?\b)*"), _designators),
    (re.compile(r"\b\d+(?:\.\d+)?\b"), lambda m: speak_digits(m.group(0))),
    (re.compile(r"\bft\b"), lambda m: "feet"),
)


_LONE_LETTER = re.compile(r"\b[A-Z]\b")


def speak_text(text: str) -> str:
    """ICAO speech for a rendered controller message ("runway 25R" -> "runway two fife right")."""
    if not any(ch.isdigit() for ch in text) and "-" not in text and _LONE_LETTER.search(text) is None:
        return text
    for pattern, speak in _PASSES:
        text = pattern.sub(speak, text)
    return text
