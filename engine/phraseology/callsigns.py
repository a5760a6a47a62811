"""Callsigns: airline codes, telephony designators, registrations, and finding them in speech.

An airline callsign is the ICAO three-letter designator and a flight identification ("DLH359",
"EZY12AB"); on the radio the designator is replaced by the airline's telephony ("Lufthansa tree
fife niner", "Easy one two alfa bravo"). A registration ("D-EABC") is spelled ("Delta Echo Alfa
Bravo Charlie") and, once the controller has used it, may be abbreviated to its first character
and last two ("D-BC", ICAO Doc 4444 12.3.1.9).

A transcript names a callsign with the telephony and the flight number, or with the designator
spelled ("delta lima hotel tree fife niner", "DLH 359"). The number alone is never enough.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rapidfuzz import fuzz, process

from engine.phraseology.alphabet import letter_of, letter_word, spell
from engine.phraseology.context import Context
from engine.phraseology.hits import Found, Hit
from engine.phraseology.numbers import speak_digits
from engine.phraseology.phonetic import likeness

if TYPE_CHECKING:  # transcript.py imports this module (callsign hints); annotations only here
    from engine.phraseology.transcript import Transcript

# ICAO designator -> (telephony as spoken, airline name). Our own list of real airlines; telephony
# is written the way it is pronounced on the radio (AFR files "AIRFRANS", spoken "Air France").
AIRLINES: dict[str, tuple[str, str]] = {
    "DLH": ("Lufthansa", "Lufthansa"),
    "CLH": ("Hansaline", "Lufthansa CityLine"),
    "GEC": ("Lufthansa Cargo", "Lufthansa Cargo"),
    "DLA": ("Dolomiti", "Air Dolomiti"),
    "EWG": ("Eurowings", "Eurowings"),
    "OCN": ("Ocean", "Discover Airlines"),
    "CFG": ("Condor", "Condor"),
    "TUI": ("Tuijet", "TUIfly"),
    "TOM": ("Tomjet", "TUI Airways"),
    "BOX": ("German Cargo", "AeroLogic"),
    "SWR": ("Swiss", "Swiss International Air Lines"),
    "EDW": ("Edelweiss", "Edelweiss Air"),
    "AUA": ("Austrian", "Austrian Airlines"),
    "BEL": ("Beeline", "Brussels Airlines"),
    "BAW": ("Speedbird", "British Airways"),
    "SHT": ("Shuttle", "British Airways Shuttle"),
    "VIR": ("Virgin", "Virgin Atlantic"),
    "EZY": ("Easy", "easyJet"),
    "EJU": ("Alpine", "easyJet Europe"),
    "EZS": ("Topswiss", "easyJet Switzerland"),
    "EXS": ("Channex", "Jet2"),
    "RYR": ("Ryanair", "Ryanair"),
    "EIN": ("Shamrock", "Aer Lingus"),
    "AFR": ("Airfrance", "Air France"),
    "TVF": ("France Soleil", "Transavia France"),
    "TRA": ("Transavia", "Transavia"),
    "KLM": ("KLM", "KLM Royal Dutch Airlines"),
    "IBE": ("Iberia", "Iberia"),
    "VLG": ("Vueling", "Vueling"),
    "VOE": ("Volotea", "Volotea"),
    "TAP": ("Air Portugal", "TAP Air Portugal"),
    "ITY": ("Itarrow", "ITA Airways"),
    "AEE": ("Aegean", "Aegean Airlines"),
    "SAS": ("Scandinavian", "Scandinavian Airlines"),
    "NAX": ("Nor Shuttle", "Norwegian Air Shuttle"),
    "FIN": ("Finnair", "Finnair"),
    "ICE": ("Iceair", "Icelandair"),
    "BTI": ("Air Baltic", "airBaltic"),
    "LOT": ("LOT", "LOT Polish Airlines"),
    "CSA": ("CSA Lines", "Czech Airlines"),
    "WZZ": ("Wizz Air", "Wizz Air"),
    "ROT": ("Tarom", "TAROM"),
    "CTN": ("Croatia", "Croatia Airlines"),
    "LGL": ("Luxair", "Luxair"),
    "THY": ("Turkish", "Turkish Airlines"),
    "PGT": ("Sunturk", "Pegasus Airlines"),
    "SXS": ("Sunexpress", "SunExpress"),
    "AFL": ("Aeroflot", "Aeroflot"),
    "AUI": ("Ukraine International", "Ukraine International Airlines"),
    "ELY": ("El Al", "El Al"),
    "UAE": ("Emirates", "Emirates"),
    "ETD": ("Etihad", "Etihad Airways"),
    "QTR": ("Qatari", "Qatar Airways"),
    "SVA": ("Saudia", "Saudia"),
    "MSR": ("Egyptair", "EgyptAir"),
    "RAM": ("Royal Air Maroc", "Royal Air Maroc"),
    "ETH": ("Ethiopian", "Ethiopian Airlines"),
    "KQA": ("Kenya", "Kenya Airways"),
    "SAA": ("Springbok", "South African Airways"),
    "AIC": ("Air India", "Air India"),
    "SIA": ("Singapore", "Singapore Airlines"),
    "MAS": ("Malaysian", "Malaysia Airlines"),
    "THA": ("Thai", "Thai Airways"),
    "CPA": ("Cathay", "Cathay Pacific"),
    "EVA": ("Eva", "EVA Air"),
    "HVN": ("Vietnam Airlines", "Vietnam Airlines"),
    "JAL": ("Japanair", "Japan Airlines"),
    "ANA": ("All Nippon", "All Nippon Airways"),
    "KAL": ("Koreanair", "Korean Air"),
    "CCA": ("Air China", "Air China"),
    "CES": ("China Eastern", "China Eastern Airlines"),
    "CSN": ("China Southern", "China Southern Airlines"),
    "QFA": ("Qantas", "Qantas"),
    "ANZ": ("New Zealand", "Air New Zealand"),
    "ACA": ("Air Canada", "Air Canada"),
    "WJA": ("Westjet", "WestJet"),
    "UAL": ("United", "United Airlines"),
    "AAL": ("American", "American Airlines"),
    "DAL": ("Delta", "Delta Air Lines"),
    "SWA": ("Southwest", "Southwest Airlines"),
    "JBU": ("Jetblue", "JetBlue"),
    "ASA": ("Alaska", "Alaska Airlines"),
    "SKW": ("Skywest", "SkyWest Airlines"),
    "AMX": ("Aeromexico", "Aeromexico"),
    "CMP": ("Copa", "Copa Airlines"),
    "AVA": ("Avianca", "Avianca"),
    "FDX": ("Fedex", "FedEx Express"),
    "UPS": ("UPS", "UPS Airlines"),
    "CLX": ("Cargolux", "Cargolux"),
    "BCS": ("Eurotrans", "European Air Transport"),
    "NJE": ("Fraction", "NetJets Europe"),
}

_AIRLINE_CODE = re.compile(r"^([A-Z]{3})(\d[0-9A-Z]{0,5})$")
_REGISTRATION = re.compile(r"^(?=.*[A-Z])[A-Z0-9]{1,2}-?[A-Z0-9]{1,6}$")
_SPOKEN = re.compile(r"^\s*(.*?)\s*(\d[0-9A-Z]{0,5})\s*$", re.IGNORECASE)
_SHORT_WORDS = frozenset("a i am an as at be by do go he hi if in is it me my no of oh ok on or so to up us we".split())
TELEPHONY_SCORE = 85.0  # rapidfuzz ratio from which a heard word is the issued telephony
# ... and from which it is when the issued flight number follows it (exactly, or running on into the
# next number), the telephony is long enough to tell, and no other airline's is as near ("jupin
# air one one one tree" for Japanair 1113, "condonavian 372")
TELEPHONY_SCORE_WITH_FLIGHT = 70.0
# ... and from which a telephony heard by its sound is the issued one (`phonetic.likeness`), when
# the issued flight number follows it exactly and no other airline's sounds as near ("edelays
# seven zero four" for Edelweiss 704, "just lu three eight niner" for Jetblue 389)
TELEPHONY_SOUNDS_LIKE = 70.0


def _key(telephony: str) -> str:
    return telephony.casefold().replace(" ", "").replace("-", "")


_BY_TELEPHONY: dict[str, str] = {_key(tel): code for code, (tel, _name) in AIRLINES.items()}
_MAX_TELEPHONY_WORDS = max(len(tel.split()) for tel, _ in AIRLINES.values()) + 1
TELEPHONY_WORDS: frozenset[str] = frozenset(w.casefold() for tel, _ in AIRLINES.values() for w in tel.split())
_TELEPHONY_KEYS: frozenset[str] = frozenset(_key(tel) for tel, _ in AIRLINES.values())


@dataclass(frozen=True, slots=True)
class ParsedCallsign:
    code: str  # canonical text form: "DLH359", "EZY12AB", "D-EABC"
    airline: str | None  # ICAO designator of an airline callsign
    flight: str  # flight identification of an airline callsign ("359"); "" for registrations
    telephony: str | None  # "Lufthansa"; None for registrations and unknown designators

    @property
    def is_registration(self) -> bool:
        return self.airline is None

    @property
    def letters(self) -> str:
        """Characters as spelled on the radio, without the hyphen ("DEABC")."""
        return self.code.replace("-", "")


@lru_cache(maxsize=1024)
def parse_callsign(icao_code: str) -> ParsedCallsign | None:
    """ "DLH359" / "dlh 359" / "Lufthansa 359" / "D-EABC" -> ParsedCallsign; None if not a callsign."""
    text = str(icao_code).strip()
    compact = text.upper().replace(" ", "")
    match = _AIRLINE_CODE.match(compact)
    if match:
        airline, flight = match.groups()
        tel = AIRLINES.get(airline)
        return ParsedCallsign(compact, airline, flight, tel[0] if tel else None)
    spoken = _SPOKEN.match(text)
    if spoken and spoken.group(1):
        airline = _BY_TELEPHONY.get(_key(spoken.group(1)))
        if airline:
            flight = spoken.group(2).upper()
            return ParsedCallsign(f"{airline}{flight}", airline, flight, AIRLINES[airline][0])
    if _REGISTRATION.match(compact):
        return ParsedCallsign(compact, None, "", None)
    return None


def callsign_telephony(code: str) -> str:
    """Text form as said on the radio: "DLH359" -> "Lufthansa 359"; registrations stay "D-EABC"."""
    parsed = parse_callsign(code)
    if parsed is None:
        return str(code)
    if parsed.telephony:
        return f"{parsed.telephony} {parsed.flight}"
    return parsed.code


def abbreviated_registration(code: str) -> str:
    """ICAO abbreviation of a registration: first character and last two ("D-EABC" -> "D-BC")."""
    letters = code.replace("-", "").upper()
    if len(letters) <= 3:
        return code.upper()
    return f"{letters[0]}-{letters[-2:]}" if "-" in code else letters[0] + letters[-2:]


def _speak_chars(chars: str, *, capitalize: bool) -> str:
    words = []
    for ch in chars:
        if ch.isdigit():
            words.append(speak_digits(ch))
        elif ch.isalpha():
            words.append(letter_word(ch, capitalize=capitalize))
    return " ".join(words)


def speak_callsign(code: str, telephony: str | None = None) -> str:
    """ "DLH359" -> "Lufthansa tree fife niner"; "EZY12AB" -> "Easy one two alfa bravo";
    "D-EABC" -> "Delta Echo Alfa Bravo Charlie". `telephony` overrides the airline's."""
    parsed = parse_callsign(code)
    if parsed is None:
        return str(code)
    if parsed.is_registration:
        return _speak_chars(parsed.letters, capitalize=True)
    head = telephony or parsed.telephony or spell(parsed.airline or "")
    return f"{head} {_speak_chars(parsed.flight, capitalize=False)}"


# --------------------------------------------------------------------------- kind handler


def canonical(value: Any) -> str | None:
    parsed = parse_callsign(str(value))
    return parsed.code if parsed else None


def display(canon: str) -> str:
    return canon


def speak(canon: str) -> str:
    return speak_callsign(canon)


def equal(a: str, b: str) -> bool:
    return a.replace("-", "") == b.replace("-", "")


def _telephony_of(spoken: Any) -> str | None:
    """ "Lufthansa 359" -> "Lufthansa": the telephony of a scenario's `callsign_spoken`."""
    match = _SPOKEN.match(str(spoken or ""))
    return match.group(1) if match and match.group(1) else None


def _flight_at(t: Transcript, j: int, letters: int | None, digits: str = "") -> tuple[str, int] | None:
    """Flight identification at word j: a number, then up to `letters` letters (None: phonetic only).

    `digits` (the issued flight number) also finds it run together with a frequency said right
    after it: "tree fife niner one two one decimal eight" is one numeral, 359121.8."""
    number = t.integer(j)
    if number is None:
        glued = t.number(j) or ""
        if digits and glued.startswith(digits) and len(glued.partition(".")[0]) == len(digits) + 3:
            return digits, j + 1
        return None
    flight, j = number, j + 1
    limit = 2 if letters is None else letters
    while len(flight) - len(number) < limit:
        word = t.word(j)
        if letters is None:
            # Not knowing the issued callsign: phonetic words, or letters glued to the number
            # in writing ("EZY12AB" -> "ezy 12 ab"), but not a short English word.
            glued_letters = word.isalpha() and word.isascii() and len(word) <= 2 and word not in _SHORT_WORDS
            letter = (
                word.upper()
                if glued_letters and not flight[len(number) :]
                else (letter_of(word) if len(word) > 1 else None)
            )
        elif word.isalpha() and 1 < len(word) <= limit and letter_of(word) is None:
            letter = word.upper()[: limit - (len(flight) - len(number))]  # "12ab" split as "12 ab"
        else:
            letter = letter_of(word)
        if not letter:
            break
        flight += letter
        j += 1
    return flight, j


def _prefixes(keys: Any) -> frozenset[str]:
    return frozenset(key[:n] for key in keys for n in range(1, len(key) + 1))


# Every prefix of a telephony key: a word that is none of them cannot start a telephony.
_PREFIXES = _prefixes(_BY_TELEPHONY)


def _airline_at(
    t: Transcript, i: int, telephonies: dict[str, str], prefixes: frozenset[str], designators: Any
) -> list[tuple[str, int]]:
    """(designator, index after it) for each way a callsign's airline part can start at word i."""
    word = t.words[i]
    hits: list[tuple[str, int]] = []
    if word in prefixes:
        for n in range(1, _MAX_TELEPHONY_WORDS + 1):
            airline = telephonies.get("".join(t.words[i : i + n]))
            if airline:
                hits.append((airline, i + n))
    if len(word) == 3 and word.upper() in designators:
        hits.append((word.upper(), i + 1))  # "dlh 359"
    spelled = _spelled_designator(t, i)
    if spelled is not None and spelled in designators:
        hits.append((spelled, i + 3))  # "delta lima hotel 359"
    return hits


def find(t: Transcript, ctx: Context) -> Found:
    expected = parse_callsign(ctx.expected) if ctx.expected else None
    extra = _telephony_of(ctx.variables.get("callsign_spoken")) if expected else None
    return _find(t, expected, extra)


@lru_cache(maxsize=1024)
def _find(t: Transcript, expected: ParsedCallsign | None, extra: str | None) -> Found:
    """Cached (callers must not change the list): the route extractor and the callsign field both
    look for the callsign."""
    if expected is not None and expected.is_registration:
        return _find_registration(t, expected)
    letters = sum(ch.isalpha() for ch in expected.flight) if expected else None
    digits = expected.flight if expected and expected.flight.isdigit() else ""
    telephonies, prefixes = _BY_TELEPHONY, _PREFIXES
    designators: AbstractSet[str] = AIRLINES.keys()
    if expected is not None and expected.airline:
        if expected.airline not in AIRLINES:
            designators = AIRLINES.keys() | {expected.airline}
        if extra and _key(extra) not in telephonies:
            telephonies = {**telephonies, _key(extra): expected.airline}
            prefixes = prefixes | _prefixes((_key(extra),))
    found: dict[int, str] = {}
    for i, word in enumerate(t.words):
        if word not in prefixes and len(word) != 3 and t.letters[i] is None:
            continue  # cannot start a telephony, a written designator or a spelled one
        for airline, end in _airline_at(t, i, telephonies, prefixes, designators):
            flight = _flight_at(t, end, letters, digits)
            if flight:
                found[i] = f"{airline}{flight[0]}"
                break
    if expected and expected.airline and not any(v.startswith(expected.airline) for v in found.values()):
        found.update(_fuzzy_telephony(t, expected, extra, letters))
    return [Hit(i, code) for i, code in sorted(found.items())]


def _spelled_designator(t: Transcript, i: int) -> str | None:
    """Three letters spelled phonetically or one by one ("delta lima hotel", "d l h")."""
    if t.letter(i - 1) is not None:
        return None
    letters = t.letters[i : i + 3]
    if len(letters) == 3 and all(letters):
        return "".join(letters)  # type: ignore[arg-type]
    return None


def _fuzzy_telephony(t: Transcript, expected: ParsedCallsign, extra: str | None, letters: int | None) -> dict[int, str]:
    """A telephony the recognizer misspelled ("lufthanza 359"), compared with the issued one only."""
    found: dict[int, str] = {}
    for telephony in filter(None, (expected.telephony, extra)):
        target = _key(telephony)
        if len(target) < 5:
            continue
        size = len(telephony.split())
        for i in range(len(t.words)):
            for n in (size, size + 1, size + 2):  # "jup and air" for "Japanair"
                window = "".join(t.words[i : i + n])
                if any(c.isdigit() for c in window):
                    break  # "squawk 4721 lufthanza 359": a number is no part of a telephony
                score = fuzz.ratio(window, target)
                spelt = score >= (TELEPHONY_SCORE_WITH_FLIGHT if len(target) >= 7 else TELEPHONY_SCORE)
                sounds = likeness(window, target)
                if not spelt and sounds < TELEPHONY_SOUNDS_LIKE:
                    continue
                flight = _flight_at(t, i + n, letters, expected.flight if expected.flight.isdigit() else "")
                if flight is None:
                    continue
                loose = spelt and flight[0].startswith(expected.flight) and not _nearer_other(window, target, score)
                by_sound = flight[0] == expected.flight and _nearest_by_sound(window, target, sounds)
                if (spelt and score >= TELEPHONY_SCORE) or loose or by_sound:
                    found[i] = f"{expected.airline}{flight[0]}"
                    break
    return found


def _nearer_other(window: str, target: str, score: float) -> bool:
    """Whether a heard telephony is at least as near another airline's as the issued one ("air
    canada" is Air Canada's, whatever our telephony and flight number)."""
    return process.extractOne(window, _TELEPHONY_KEYS - {target}, scorer=fuzz.ratio, score_cutoff=score) is not None


def _nearest_by_sound(window: str, target: str, sounds: float) -> bool:
    """Whether a heard telephony sounds like the issued one (`TELEPHONY_SOUNDS_LIKE`) more than
    like any other airline's: "edelays" is Edelweiss, "eastern" is not China Eastern (Austrian)."""
    if sounds < TELEPHONY_SOUNDS_LIKE:
        return False
    return process.extractOne(window, _TELEPHONY_KEYS - {target}, scorer=_likeness, score_cutoff=sounds) is None


def _likeness(heard: str, name: str, **_: object) -> float:
    """`likeness` as a rapidfuzz scorer (which also passes `processor` and `score_cutoff`)."""
    return likeness(heard, name)


def _find_registration(t: Transcript, expected: ParsedCallsign) -> Found:
    """Full or abbreviated registration, spelled or written ("delta echo alfa bravo charlie",
    "d eabc", "delta bravo charlie"). Another spelled registration of the same length and first
    letter is reported as heard (wrong)."""
    full = expected.letters
    short = abbreviated_registration(full)
    found: Found = []
    words = t.words
    i = 0
    while i < len(words):
        run, j, phonetic = "", i, True
        while j < len(words) and len(run) < len(full):
            word = words[j]
            letter = letter_of(word)
            if letter:
                run += letter
            elif word.isalnum() and (full.startswith(run + word.upper()) or short.startswith(run + word.upper())):
                run += word.upper()
                phonetic = False
            else:
                break
            j += 1
        if len(run) >= 3 and run[0] == full[0]:
            if run.startswith(full) or run.startswith(short):
                found.append(Hit(i, expected.code))
                i = j
                continue
            if phonetic and len(run) == len(full):
                found.append(Hit(i, run))
                i = j
                continue
        i += 1
    return found
