"""Named designators: SIDs/STARs/waypoints, taxi routes, holding points and stands, ATIS letters.

Canonical forms: "MARUN 7F" (name, digit, letter), "N3 U4" (taxiways in order), "A12", "K".
Speech: "MARUN seven foxtrot", "November three, Uniform four", "Alfa one two", "Kilo".
In transcripts letters may be phonetic words or lone letters ("marun 7 f", "marun seven
foxtrot"); a procedure name is matched fuzzily (rapidfuzz) against the issued one, because a
recognizer spells an unknown fix name as it hears it ("maroon").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rapidfuzz import fuzz

from engine.phraseology import callsigns
from engine.phraseology.alphabet import LETTER_WORDS, is_phonetic_word, letter_of, letter_word, near_letter
from engine.phraseology.context import Context
from engine.phraseology.hits import Found, Hit
from engine.phraseology.numbers import DIGIT_WORDS, speak_digits
from engine.phraseology.transcript import Transcript

NAME_SCORE = 70.0  # rapidfuzz ratio from which a heard fix name is the issued one

# --------------------------------------------------------------------------- procedures

_PROCEDURE = re.compile(r"^\s*([A-Z]{2,7})\s*(\d)?\s*([A-Z])?\s*$")
# Words that are never a fix name, so "climb 5 ..." or "runway 2 ..." are not taken for a SID.
_NOT_NAMES = frozenset(
    """
    climb climbing descend descending maintain runway runways squawk heading via to cleared
    contact tower ground delivery departure approach center radar apron information flight level
    feet knots qnh wind degrees holding point position stand gate taxi and then expect
    correction say again request ready for the of on in at number left right center decimal
    when after before report leaving passing speed reduce increase altitude sid star
    transition arrival direct hold short line up cross behind minutes minute wilco roger or
""".split()
)


def procedure_canonical(value: Any) -> str | None:
    match = _PROCEDURE.match(str(value).upper())
    if not match:
        return None
    name, digit, letter = match.groups()
    return f"{name} {digit or ''}{letter or ''}".strip()


def procedure_speak(canon: str) -> str:
    name, _, suffix = canon.partition(" ")
    words = [name] + [DIGIT_WORDS[int(ch)] if ch.isdigit() else letter_word(ch, capitalize=False) for ch in suffix]
    return " ".join(words)


def _split_procedure(canon: str) -> tuple[str, str]:
    name, _, suffix = canon.partition(" ")
    return name, suffix


# Words whisper writes for a procedure's digit between the issued name and its letter ("a" and
# "ate" for "eight": the product's own voice through the radio, `livefreq load`).
_DIGIT_HOMOPHONES = {"for": "4", "fo": "4", "to": "2", "too": "2", "a": "8", "ate": "8"}
# A word whisper writes between a fix name and its digit: the prompt offers the airport's SIDs as
# "CHARL or GEDER or ... departure", and "via JEDER or niner quebec" came back for GEDER 9Q.
_BETWEEN_NAME_AND_DIGIT = frozenset({"or"})


def _is_name(word: str) -> bool:
    return (
        len(word) >= 2
        and word.isalpha()
        and word not in _NOT_NAMES
        and word not in callsigns.TELEPHONY_WORDS
        and not is_phonetic_word(word)
    )


def is_fix_name(word: str, name: str) -> bool:
    """Whether the heard `word` is the fix `name` (`NAME_SCORE`: "metro" for METRO, "chal" for CHARL)."""
    return bool(name) and fuzz.ratio(word.lower(), name.lower()) >= NAME_SCORE


_PROCEDURE_AFTER = frozenset({"departure", "arrival"})


def listed_fixes(variables: Mapping[str, Any]) -> frozenset[str]:
    """The fix names of the airport's SIDs the session lists (`sid_fixes`), lower-case."""
    listed = variables.get("sid_fixes")
    return frozenset(str(f).lower() for f in listed) if isinstance(listed, list | tuple) else frozenset()


def _named_procedure(t: Transcript, i: int, ctx: Context, issued: bool) -> bool:
    """Whether word `i` names a procedure for sure, so a "too" or "for" after it is its digit
    ("via IBERO too bravo" is IBERO 2B, another SID than the issued one, not a SID missing): the
    issued fix, one of the airport's (`sid_fixes`), or any name said after "via" or before
    "departure"/"arrival"; never a mere word before "to" ("expedite to bravo")."""
    listed = t.words[i] in listed_fixes(ctx.variables)
    return issued or listed or t.word(i - 1) == "via" or t.word(i + 3) in _PROCEDURE_AFTER


def procedure_find(t: Transcript, ctx: Context) -> Found:
    """Name + digit + letter ("marun 7 foxtrot"); name alone only when the issued one has no suffix."""
    exp_name, exp_suffix = _split_procedure(ctx.expected) if ctx.expected else ("", "")
    found: Found = []
    words = t.words
    for i, word in enumerate(words):
        if not word.isalpha() or word in _NOT_NAMES:
            continue
        matches_expected = is_fix_name(word, exp_name)
        if not matches_expected and not _is_name(word):
            continue
        name = exp_name if matches_expected else word.upper()
        at = i + 1 + (t.word(i + 1) in _BETWEEN_NAME_AND_DIGIT)
        digit = t.word(at)
        if digit in _DIGIT_HOMOPHONES and letter_of(t.word(at + 1)) and _named_procedure(t, i, ctx, matches_expected):
            digit = _DIGIT_HOMOPHONES[digit]  # "via metro for mike" (whisper's "four") is METRO 4M
        if len(digit) == 1 and digit.isdigit():
            letter = letter_of(t.word(at + 1)) or near_letter(t.word(at + 1)) or ""  # "taunu six jankee"
            if letter or matches_expected:
                found.append(Hit(i, f"{name} {digit}{letter}"))
        elif matches_expected and not exp_suffix:
            found.append(Hit(i, name))
    return found


# --------------------------------------------------------------------------- taxi routes

_ROUTE_PART = re.compile(r"[A-Z]{1,2}\d{0,3}")
# "my" is whisper's most frequent spelling of a spoken "via" ("taxi my romeo one"); it only
# anchors a route when a taxiway designator follows it.
_ROUTE_ANCHORS = frozenset({"via", "taxi", "my"})
_ROUTE_SKIP = frozenset({"via", "taxiway", "taxiways"})
_ROUTE_JOIN = frozenset({"and", "then"})
_POSITION_WORDS = frozenset({"point", "position", "stand", "gate"})


def route_canonical(value: Any) -> str | None:
    parts = re.split(r"[\s,]+", str(value).upper().strip())
    parts = [p for p in parts if p and p not in ("AND", "THEN", "VIA")]
    if not parts or not all(_ROUTE_PART.fullmatch(p) for p in parts):
        return None
    return " ".join(parts)


def route_speak(canon: str) -> str:
    return ", ".join(position_speak(part) for part in canon.split())


def _designator_at(t: Transcript, i: int) -> tuple[str, int] | None:
    """A taxiway designator at word i ("november 3", "n 3", "alfa"): (text, next index)."""
    letter = t.letter(i)
    if letter is None:
        return None
    number = t.integer(i + 1)
    if number is not None and len(number) <= 3:
        return f"{letter}{number}", i + 2
    return letter, i + 1


def _route_at(t: Transcript, i: int, stops: frozenset[int]) -> tuple[list[str], int]:
    parts: list[str] = []
    while True:
        part = _designator_at(t, i) if i not in stops else None
        if part is None:
            if parts and t.word(i) in _ROUTE_JOIN:
                i += 1
                continue
            return parts, i
        parts.append(part[0])
        i = part[1]


def _callsign_starts(t: Transcript, ctx: Context) -> frozenset[int]:
    """Where a callsign begins: "via romeo 6, alfa 5, delta 646" ends the route before Delta 646."""
    own = callsigns.canonical(ctx.variables.get("callsign") or "") if ctx.variables else None
    found = callsigns.find(t, Context(own, ctx.variables))
    if own:
        return frozenset(h.index for h in found if callsigns.equal(h.value, own))
    # Not knowing the callsign, "delta 6" is taxiway D6 more likely than Delta Air Lines 6.
    return frozenset(h.index for h in found if not is_phonetic_word(t.words[h.index]))


def route_find(t: Transcript, ctx: Context) -> Found:
    found: Found = []
    covered = -1
    stops = _callsign_starts(t, ctx)
    for i, word in enumerate(t.words):
        if word not in _ROUTE_ANCHORS or i < covered:
            continue
        j = i + 1
        while t.word(j) in _ROUTE_SKIP:
            j += 1
        parts, end = _route_at(t, j, stops)
        if parts and word == "taxi" and t.word(end) == "via":
            continue  # "taxi tango two via delta two": where to, then the route (`position_find`)
        if parts:
            found.append(Hit(j, " ".join(parts)))
            covered = end
    if not found:
        # No "via": a run of two or more numbered taxiways ("november 3 uniform 4").
        i = 0
        while i < len(t.words):
            parts, end = _route_at(t, i, stops)
            if parts and t.word(i - 1) in _POSITION_WORDS:
                parts = parts[1:]  # "holding point alfa 12 november 3 ...": A12 is not part of the route
            if len(parts) >= 2 and all(p[1:].isdigit() for p in parts):
                found.append(Hit(i, " ".join(parts)))
            i = max(end, i + 1)
    return found


# --------------------------------------------------------------------------- holding points, stands

_POSITION = re.compile(r"^\s*([A-Z]{0,2})\s*(\d{0,4})\s*([A-Z]?)\s*$")
_POSITION_ANCHORS: dict[str, frozenset[str]] = {
    "holding": frozenset({"point", "position"}),
    "stand": frozenset(),
    "gate": frozenset(),
    "parking": frozenset({"position"}),
    "vacate": frozenset({"via"}),
    "vacating": frozenset({"via"}),
}
_FOLLOW_OPTIONAL = frozenset({"vacate", "vacating"})  # "vacate bravo one three", "vacate via B13"


def position_canonical(value: Any) -> str | None:
    match = _POSITION.match(str(value).upper())
    if not match or not (match.group(1) or match.group(2)):
        return None
    return "".join(match.groups())


def position_speak(canon: str) -> str:
    words: list[str] = []
    for run in re.findall(r"[A-Z]|\d+", canon):
        words.append(LETTER_WORDS[run] if run.isalpha() else speak_digits(run))
    return " ".join(words)


def position_find(t: Transcript, ctx: Context) -> Found:
    """Holding points and stands after their words ("holding point", "stand", "vacate via"),
    right after "taxi" when "via" and the route follow ("taxi kilo two four via ..."), and
    after "to" as pilots say a taxi clearance ("via delta two golf two to tango two"):
    there only a lettered designator of up to two digits (not "to 6000", not "to A320"), and
    only where the state asks for a position (by voice, "tango two, juliett six" of a taxi route
    is written "tango a to juliett six")."""
    found: Found = []
    suffix = bool(ctx.expected and ctx.expected[-1:].isalpha())
    for i, word in enumerate(t.words):
        if word == "to":
            if not ctx.required:  # only where the state asks for it: "to" is no sure sign of a position
                continue
            value = _position_at(t, i + 1, suffix=suffix)
            if value and value[0].isalpha() and 1 <= sum(c.isdigit() for c in value) <= 2:
                found.append(Hit(i + 1, value))
            continue
        if word == "taxi" and ctx.required:  # "taxi kilo two four via yankee four ...": where to
            parts, end = _route_at(t, i + 1, frozenset())
            if len(parts) == 1 and t.word(end) == "via" and any(c.isdigit() for c in parts[0]):
                found.append(Hit(i + 1, parts[0]))
            continue
        follow = _POSITION_ANCHORS.get(word)
        if follow is None:
            continue
        j = i + 1
        if follow and t.word(j) in follow:
            j += 1
        elif follow and word not in _FOLLOW_OPTIONAL:
            continue
        value = _position_at(t, j, suffix=suffix)
        if value:
            found.append(Hit(j, value))
    return found


def _position_at(t: Transcript, j: int, *, suffix: bool) -> str | None:
    """Letters, number and a suffix letter ("alfa 12", "v 155", "12 a"). The suffix is only read
    when the issued designator has one: otherwise the next word (the "D" of "A12, D-EABC")
    would stick to it."""
    letters = ""
    while len(letters) < 2 and t.letter(j):
        letters += t.letter(j) or ""
        j += 1
    number = t.integer(j)
    if number is None:
        return letters or None
    end = t.integer(j + 2) is None and t.letter(j + 2) is None
    last = t.letter(j + 1) if suffix and end else None
    return f"{letters}{number}{last or ''}"


# --------------------------------------------------------------------------- ATIS letter


def letter_canonical(value: Any) -> str | None:
    text = str(value).strip()
    if len(text) == 1 and text.isalpha() and text.isascii():
        return text.upper()
    return letter_of(text.lower()) if len(text) > 1 else None


def letter_speak(canon: str) -> str:
    return letter_word(canon)


# Words an ATIS letter follows: "information kilo", "atis kilo", and as pilots also report it,
# "we have kilo", "with kilo" (there only when no number follows: "with alpha 12" is a taxiway).
LETTER_ANCHORS = frozenset({"information", "atis"})
_LOOSE_ANCHORS = frozenset({"have", "with"})


def letter_find(t: Transcript, ctx: Context) -> Found:
    found: Found = []
    for i, word in enumerate(t.words):
        if word in LETTER_ANCHORS or word in _LOOSE_ANCHORS:
            j = i + 1
            while t.word(j) in ("information", "atis"):
                j += 1
            letter = letter_of(t.word(j))
            if letter is None and word in LETTER_ANCHORS:
                letter = near_letter(t.word(j))  # "information delto": only a letter stands there
            loose = word in _LOOSE_ANCHORS and j == i + 1
            if not letter or (loose and (len(t.word(j) or "") < 2 or t.number(j + 1) is not None)):
                continue  # "we have a problem", "with alpha 12": no ATIS letter
            if Hit(j, letter) not in found:
                found.append(Hit(j, letter))
    return found
