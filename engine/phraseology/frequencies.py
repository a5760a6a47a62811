"""Radio frequencies: "121.800" in text, "one two one decimal eight" on the radio.

Canonical form is MHz with three decimals ("118.705"), so 121.8 == 121.800 and 118.75 != 118.7.
A number said without its decimal word ("ground one two one eight") is read only right after a
station word or "contact" (up to 3 words), and not when another number or a callsign comes
between ("contact tower 121.8, AAL 1080": 1080 is no frequency).

Speech follows ICAO Annex 10: all six digits, except that when the last two are zeros only the
first four are spoken (121.800 -> "one two one decimal eight", 118.705 -> "... decimal seven zero
fife", 118.750 -> "... decimal seven fife zero").
"""

from __future__ import annotations

import re
from typing import Any

from engine.phraseology.alphabet import LOWER_LETTERS
from engine.phraseology.callsigns import AIRLINES, TELEPHONY_WORDS
from engine.phraseology.context import Context, near
from engine.phraseology.hits import Found, Hit
from engine.phraseology.numbers import speak_digits
from engine.phraseology.stations import radio_names
from engine.phraseology.transcript import Transcript

LOW_MHZ, HIGH_MHZ = 108.0, 137.0  # VHF aeronautical band
COM_LOW_MHZ = 118  # below it, 108-117.975 MHz: navigation aids, never a controller's frequency
_VALUE = re.compile(r"^\s*(\d{3})(?:[.,](\d{1,3}))?\s*(?:mhz)?\s*$", re.IGNORECASE)
# Words after which a bare integer is read as a frequency said without "decimal" ("ground 1218").
_ANCHORS = frozenset(
    {
        "contact",
        "frequency",
        "monitor",
        "delivery",
        "ground",
        "apron",
        "tower",
        "departure",
        "approach",
        "director",
        "center",
        "radar",
        "information",
        "atis",
    }
)
STATION_WORDS = _ANCHORS - {"contact", "frequency", "monitor"}
# A number right after these is something else even next to a station name ("approach, squawk 1234").
_OTHER_VALUES = frozenset({"squawk", "squawking", "code", "transponder", "qnh", "altimeter", "heading"})


def _in_band(mhz: float) -> bool:
    return LOW_MHZ <= mhz < HIGH_MHZ


def _format(whole: str, frac: str) -> str | None:
    mhz = float(f"{whole}.{frac or '0'}")
    return f"{mhz:.3f}" if _in_band(mhz) else None


def canonical(value: Any) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{float(value):.3f}" if _in_band(float(value)) else None
    match = _VALUE.match(str(value))
    return _format(match.group(1), match.group(2) or "") if match else None


# kHz past each 25 kHz step that name a channel: the 25 kHz channel itself and the three 8.33 kHz
# channel names of its step (ICAO Annex 10: .000/.005/.010/.015, .025/.030/.035/.040, ...)
CHANNEL_OFFSETS_KHZ = (0, 5, 10, 15)


def is_channel(canon: str) -> bool:
    """Whether `canon` names a VHF voice channel a controller assigns (ICAO Annex 10): in the
    communication band (118-137 MHz; below it are navigation aids) and a 25 kHz channel (.000,
    .025, .050, .075) or an 8.33 kHz channel name (.005 .010 .015, .030 .035 .040, ...).
    "121.920" is none, nor "111.905": no controller issues them."""
    whole, _, frac = canon.partition(".")
    in_band = whole.isdigit() and COM_LOW_MHZ <= int(whole) < HIGH_MHZ
    return in_band and frac.isdigit() and int(frac.ljust(3, "0")[:3]) % 25 in CHANNEL_OFFSETS_KHZ


def display(canon: str) -> str:
    return canon


def speak(canon: str) -> str:
    whole, _, frac = canon.partition(".")
    frac = frac[:1] if frac.endswith("00") else frac
    return f"{speak_digits(whole)} decimal {speak_digits(frac)}"


def _from_integer(digits: str) -> str | None:
    """ "1218" -> "121.800", "118705" -> "118.705": a frequency said without its decimal word."""
    if not 4 <= len(digits) <= 6:
        return None
    return _format(digits[:3], digits[3:])


def find(t: Transcript, ctx: Context) -> Found:
    found: Found = []
    station = _station(ctx.name)
    for i, word in enumerate(t.words):
        if not word[:1].isdigit():
            continue
        whole, dot, frac = word.partition(".")
        if dot:
            # "lufthansa tree fife niner one two one decimal eight" runs together as 359121.8
            value = _format(whole[-3:], frac) if len(whole) >= 3 and len(frac) <= 3 else None
        elif t.word(i - 1) not in _OTHER_VALUES and _anchored(t, i):
            value = _from_integer(word)
        else:
            value = None
        if value is None:
            continue
        found.append(Hit(i, value))
    if station and found:
        # "contact tower 118.7 ground 121.8": a value right after its own station's name wins over
        # one after another station's; a value named with no station stays ("one one niner
        # decimal zero zero fife, contact tower 118.805": which of the two did the pilot set?)
        names = radio_names(station)  # "center" is "radar" too
        own = [h for h in found if near(t.words, h.index, names, 2)]
        if own:
            return [h for h in found if h in own or not near(t.words, h.index, STATION_WORDS - names, 2)]
    return found


def _anchored(t: Transcript, i: int) -> bool:
    """A station word or "contact" within 3 words before i, and between them neither another
    number nor a callsign ("contact tower 121.8 AAL 1080": 1080 is the flight number)."""
    if not near(t.words, i, _ANCHORS, 3):
        return False
    for j in range(i - 1, max(-1, i - 4), -1):
        word = t.words[j]
        if word in _ANCHORS:
            return True
        if word[:1].isdigit() or word in TELEPHONY_WORDS or word.upper() in AIRLINES or word in LOWER_LETTERS:
            return False
    return False


def _station(name: str | None) -> str | None:
    """ "arrival_tower_freq" -> "tower"."""
    if not name or not name.endswith("_freq"):
        return None
    word = name.removesuffix("_freq").rsplit("_", 1)[-1]
    return word if word in STATION_WORDS else None
