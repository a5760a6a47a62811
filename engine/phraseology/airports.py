"""Airports: the ICAO code in text ("EDDM"), the code or the name in a readback.

A transcript names an airport by its name, when the scenario gives one (`destination_name` for
`destination`, `airport_name` for `airport`: any `<var>_name` beside an airport variable) or one
of its own names (`<var>_aliases`: "Heathrow" for London), matched fuzzily with rapidfuzz
("munic" is Munich); or by the code, written ("EDDM", only for codes the scenario knows, since any
four-letter word looks like a code) or spelled ("echo delta delta mike"), also right after a
SID's letter ("METRO 7R, echo delta delta lima": the R is the SID's). A phonetic letter is no
misspelt name ("eight romeo" names no Rome); a place followed by a station word is the station
("Frankfurt Delivery"); a place that is one of the session's procedure fixes is the fix
("direct to Milas" on a MILAS SID); and where the limit is read back but not heard, a place
(a city, or an airline airport's own name: "Gatwick") or an airline airport's code named bare
("squawk 3553, Dublin", "..., LEBL, ...") is a wrong one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rapidfuzz import fuzz, process

from engine.phraseology.alphabet import spell
from engine.phraseology.callsigns import TELEPHONY_WORDS
from engine.phraseology.context import Context
from engine.phraseology.designators import listed_fixes
from engine.phraseology.frequencies import STATION_WORDS
from engine.phraseology.hits import Found, Hit
from engine.phraseology.kinds import PROCEDURE_KINDS, kind_for_variable
from engine.phraseology.places import CODES, PLACES
from engine.phraseology.transcript import CORRECTION_WORDS, Transcript, last_correction, tokenize

NAME_SCORE = 85.0  # rapidfuzz ratio from which a heard name is the airport's name
_CODE = re.compile(r"^[A-Z]{4}$")


def canonical(value: Any) -> str | None:
    text = str(value).strip().upper()
    return text if _CODE.match(text) else None


def display(canon: str) -> str:
    return canon


def speak(canon: str) -> str:
    return spell(canon)


def _airport_variables(variables: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(variable, code) for every airport variable with a code ("destination", "EDDM")."""
    return [
        (key, code)
        for key, value in variables.items()
        if not key.endswith("_name") and kind_for_variable(key) == "airport" and (code := canonical(value))
    ]


def known_airports(variables: Mapping[str, Any]) -> dict[str, str]:
    """code -> name for every airport variable that has a `<var>_name` beside it (or no name: "")."""
    airports: dict[str, str] = {}
    for key, code in _airport_variables(variables):
        name = variables.get(f"{key}_name")
        # a name that is only a code ("EDDM") is no name; "Rome", "Oslo", "Nice" have four
        # letters too, and were taken for codes: the readback never found them
        is_code = bool(name) and canonical(name) is not None and str(name).strip().isupper()
        airports[code] = str(name) if name and not is_code else airports.get(code, "")
    return airports


def airport_aliases(variables: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(code, name) for every other name an airport variable's airport goes by (`<var>_aliases`:
    "Heathrow" for EGLL, whose `<var>_name` is London; `engine.airport.name_aliases`)."""
    out: list[tuple[str, str]] = []
    for key, code in _airport_variables(variables):
        aliases = variables.get(f"{key}_aliases")
        if isinstance(aliases, list | tuple):
            out.extend((code, str(alias)) for alias in aliases if alias)
    return out


# "cleared to X" names a clearance limit unless X is one of these ("cleared to land").
_NOT_LIMITS = frozenset(
    """
    land landing takeoff take off cross enter line push pushback start startup taxi climb descend
    leave the a runway ils approach for flight level altitude feet via hold holding position stand
    gate contact join proceed continue enter and then maintain squawk after behind touch go again
""".split()
)
_LIMIT_LEAD = (("cleared", "to"), ("clearance", "limit"), ("cleared", "for"))
LIMIT_BEFORE = frozenset({"to", "limit", "destination"})  # the words right before a clearance limit named


def _session_fixes(variables: Mapping[str, Any]) -> frozenset[str]:
    """The fix names of the session's procedures (`sid_fixes`, the SID or STAR issued), lower-case.
    Many are named after a navaid, and navaids after places ("CAIRO 2B", "MILAS 1A"): "direct
    to Milas" on such a SID names the fix, not a clearance limit."""
    issued = [str(v).split(" ")[0] for k, v in variables.items() if v and kind_for_variable(k) in PROCEDURE_KINDS]
    return listed_fixes(variables) | {fix.lower() for fix in issued if fix}


def _is_place(place: str, fixes: frozenset[str]) -> bool:
    return place in PLACES and place not in _NOT_PLACES and place not in fixes


def _limit_names(t: Transcript, fixes: frozenset[str] = frozenset()) -> list[tuple[int, str]]:
    """(index, NAME) for a place named after "cleared to": "cleared to zurich" when Barcelona was
    issued is a wrong clearance limit, not a missing one, even for a city we have no entry for.
    `fixes`: words that are the session's procedure fixes, never a place (`_session_fixes`)."""
    out: list[tuple[int, str]] = []
    words = t.words
    for i in range(len(words) - 2):
        if (words[i], words[i + 1]) not in _LIMIT_LEAD:
            continue
        j = i + 2
        name: list[str] = []
        while j < len(words) and len(name) < 3:
            w = words[j]
            if not w.isalpha() or w in _NOT_LIMITS or w in CORRECTION_WORDS or (len(w) < 3 and not name):
                break
            name.append(w)
            j += 1
        if name and (words[i + 1] == "to" or len(name) >= 1 and words[i] == "clearance"):
            out.append((i + 2, " ".join(name).upper()))
    # "... to Helsinki" without "cleared": only a place an airline flies to counts, since "to"
    # leads to many things ("to holding point", "to tower").
    taken = {i for i, _ in out}
    for i in range(len(words) - 1):
        if words[i] not in ("to", "destination", "cleared", "limit") or i + 1 in taken:
            continue
        for size in (3, 2, 1):
            place = " ".join(words[i + 1 : i + 1 + size])
            if len(place.split()) == size and _is_place(place, fixes):
                out.append((i + 1, place.upper()))
                break
        else:
            if len(words[i + 1]) == 4 and words[i + 1].upper() in CODES:
                out.append((i + 1, words[i + 1].upper()))  # "cleared ESSA"
    return out


# Place names that are also radio words (an airline's telephony): never heard as a place.
_NOT_PLACES = frozenset(w.casefold() for w in TELEPHONY_WORDS) | _NOT_LIMITS


def find(t: Transcript, ctx: Context) -> Found:
    names = known_airports(ctx.variables)
    found = _find_known(t, ctx, dict(names))
    fixes = _session_fixes(ctx.variables)
    if ctx.expected or ctx.variables:
        at = {i for i, _ in found}
        for i, name in _limit_names(t, fixes):
            if not any(i <= k < i + len(name.split()) for k in at):
                found.append((i, name))
    # after the pilot's last "correction" only what he said after it counts (`engine.readback._heard`)
    corrected = last_correction(t)
    if ctx.expected and ctx.required and not any(value == ctx.expected for i, value in found if i > corrected):
        taken = {i for i, _ in found}  # a bare place contradicts only the limit read back now
        found += [(i, name) for i, name in _bare_places(t, fixes) if i not in taken]
    return [Hit(i, value) for i, value in sorted(found) if not _is_station(t, i, value, names)]


def _is_station(t: Transcript, i: int, value: str, names: Mapping[str, str]) -> bool:
    """Whether the place found at word `i` (`value`: a code or a NAME) is followed by a station word."""
    if t.letters[i]:
        size = 4  # a spelled code
    elif value in names and names[value] and t.words[i] != value.lower():
        size = len(tokenize(names[value]).words)
    else:
        size = len(value.split())
    after = i + size
    return after < len(t.words) and t.words[after] in STATION_WORDS  # "Frankfurt Delivery"


def _bare_places(t: Transcript, fixes: frozenset[str] = frozenset()) -> list[tuple[int, str]]:
    """(index, NAME) of places, or airline airports' codes written (`CODES`), named without
    "cleared to" ("squawk 3553, Dublin, roger"; "..., LEBL, squawking"), looked for only where
    the issued limit was not heard: then such a name is a wrong limit, not a missing one. Where
    the issued one was heard, or the limit is not a readback the state asks for (`Context.required`:
    "contact departure, have a nice day"), a place word is no limit."""
    out: list[tuple[int, str]] = []
    words, i = t.words, 0
    while i < len(words):
        if len(words[i]) == 4 and words[i].upper() in CODES and not t.letters[i]:
            out.append((i, words[i].upper()))  # "squawk 3553, ESSA": a code written bare
            i += 1
            continue
        for size in (3, 2, 1):
            place = " ".join(words[i : i + size])
            named = len(place.split()) == size and _is_place(place, fixes)
            if named and not any(t.letters[i : i + size]):
                out.append((i, place.upper()))
                i += size - 1
                break
        i += 1
    return out


def _find_known(t: Transcript, ctx: Context, airports: dict[str, str]) -> list[tuple[int, str]]:
    """Places the session knows (`airports`: `known_airports`, a copy of its own), by code or name."""
    if ctx.expected and ctx.expected not in airports:
        airports[ctx.expected] = ""
    found: dict[int, str] = {}
    words = t.words
    for i, word in enumerate(words):
        if len(word) == 4 and word.upper() in airports:
            found[i] = word.upper()
        elif t.letters[i] and (t.letter(i - 1) is None or _suffix_letter(t, i - 1)):
            run = t.letters[i : i + 5]
            if len(run) >= 4 and all(run[:4]) and (len(run) == 4 or run[4] is None):
                found[i] = "".join(run[:4])  # type: ignore[arg-type]
    for code, name in [*airports.items(), *airport_aliases(ctx.variables)]:
        if not name:
            continue
        name_words = tokenize(name).words
        target = " ".join(name_words)
        # every place it is named: a limit said twice ("cleared to Dusseldorf, cleared to
        # Dusseldorf"; whisper writing a readback twice) is the issued one both times, not a second
        # place. Named right, it is not looked for misspelt (a SID's "romie" is no Rome).
        at_all = _indexes_of(words, name_words)
        for at in at_all:
            # a phonetic letter ("lima") names a place (Lima) only right after "to"
            if not all(t.letters[at : at + len(name_words)]) or (at > 0 and words[at - 1] in LIMIT_BEFORE):
                found.setdefault(at, code)
        if at_all:
            continue
        size = len(name_words)
        windows = [" ".join(words[i : i + size]) for i in range(max(0, len(words) - size + 1))]
        for _window, _score, i in process.extract(
            target, windows, scorer=fuzz.ratio, score_cutoff=NAME_SCORE, limit=None
        ):
            # a phonetic letter is no misspelt name: "via TELOS eight romeo" named no Rome
            if not any(t.letters[i : i + size]):
                found.setdefault(i, code)
    return sorted(found.items())


def _suffix_letter(t: Transcript, i: int) -> bool:
    """Word `i` is a letter closing a designator ("METRO 7R", "seven romeo"): a code spelled
    right after it starts after it ("METRO 7R, echo delta delta lima" clears to EDDL)."""
    return t.letter(i) is not None and i > 0 and t.words[i - 1].isdigit()


def _indexes_of(words: tuple[str, ...], part: tuple[str, ...]) -> list[int]:
    size = len(part)
    return [i for i in range(len(words) - size + 1) if words[i : i + size] == part]
