"""Pilot transcripts -> one canonical word sequence that every matcher reads.

`tokenize(text, callsign=None)` (and `normalize_transcript`, its text) does exactly this, in order:

1. writes every digit as an ASCII digit ("²" -> "2", "٣" -> "3"); lower-cases; drops apostrophes;
   removes thousands separators ("5,000" -> "5000") and hyphens between digits ("4-7-2-1" -> "4721");
2. splits letters from digits inside a token ("25R" -> "25 r", "FL350" -> "fl 350",
   "DLH359" -> "dlh 359", "N3" -> "n 3"), and words at hyphens ("ze-ro" -> "ze ro");
3. keeps words (any alphabet), numerals ("121.8": a dot between digits is a decimal point) and
   drops all other punctuation; "," ";" ":" "!" "?" "/" and sentence dots still separate two
   numbers ("250/12" stays two; "one five eight, one four thousand" stays two; but "4, 7, 2, 1",
   where each pause follows one spoken digit, is one number);
4. folds abbreviations and spelling variants: "fl" -> "flight level", "ft" -> "feet",
   "kt"/"kts"/"knot" -> "knots", "rwy" -> "runway", "hdg" -> "heading", "centre" -> "center",
   and the ICAO spelling of phonetic letters ("alpha" -> "alfa", "juliet" -> "juliett",
   "whisky" -> "whiskey");
5. joins number words split into syllables and folds their spellings with
   `numbers.join_syllables` ("ze ro" -> "zero", "fow er" -> "fower", "nin er" -> "niner",
   "tou sand" -> "thousand", "day see mal" -> "decimal"); only where the joined form is a
   number word;
6. drops fillers (`FILLERS`: "uh", "um", "er", "erm", "ah", "eh", "hmm", ...), after step 5 so
   the "er" of "nin-er" is not lost: "one two uh one decimal eight" -> "121.8";
7. merges words said apart: "q n h" -> "qnh", "x ray" -> "xray", "fox trot" -> "foxtrot", and
   folds whisper's spellings of keywords: "q and eight"/"kqnh"/"unh"/"dnh" -> "qnh", "centa" -> "center",
   "mya"/"myo" -> "via", and "via" run into a phonetic letter ("myotango" -> "via tango"),
   "one way" before a number (and after none) and "on way" before one -> "runway"; and "I say
   again" (a pilot repeating himself) is a pause: its "I" is no letter India;
8. repeats digits after "double"/"triple" with `numbers.expand_repeats` ("double four" -> "four
   four"; "double check" stays);
9. with a `callsign` hint ("SWR158", "DLH359", "N123AB"; any form `parse_callsign` reads), finds
   where the callsign is said (its telephony, possibly misspelled, its designator written or
   spelled, or a registration's leading letters) and marks where its flight number starts, so
   the number ends right after the flight number's digits: "swiss one five eight one four
   thousand feet" -> "swiss 158 14000 feet" ("too" there is the digit: "american too");
10. collapses spoken numbers into digits with `numbers.collapse_numbers` (English and ICAO
    words, "hundred"/"thousand", homophones only where unambiguous, "oh" for zero,
    "decimal"/"point"/"dot" between numbers -> "."), so "squawk four seven to one" -> "squawk
    4721";
11. joins the words with single spaces.

Phonetic letters stay words, so flow regexes such as "request taxi" or "information alfa" still
match. The result is cached per input text and callsign: the router, the triggers and the
readback evaluator all tokenize the same transmission.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from engine.phraseology.alphabet import ICAO_LOWER, LOWER_LETTERS, SPELLING_VARIANTS, WORD_LETTERS
from engine.phraseology.number_passes import DIGITS
from engine.phraseology.numbers import BREAK, NUMBER_WORDS, collapse_numbers, expand_repeats, join_syllables

SINGLE_DIGIT_WORDS = frozenset(DIGITS) | frozenset("0123456789") | {"oh", "too"}  # DIGITS has the ICAO words

_THOUSANDS = re.compile(r"(?<![\d.])(\d{1,3})((?:,\d{3})+)(?![\d])")
_DIGIT_HYPHEN = re.compile(r"(?<=\d)\s*-\s*(?=\d)")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+|[,;:!?./]")

_REPLACE: dict[str, tuple[str, ...]] = {
    "fl": ("flight", "level"),
    "ft": ("feet",),
    "kt": ("knots",),
    "kts": ("knots",),
    "knot": ("knots",),
    "rwy": ("runway",),
    "hdg": ("heading",),
    "centre": ("center",),
    "centa": ("center",),
    "kqnh": ("qnh",),
    "unh": ("qnh",),  # whisper's for a spoken "QNH" ("UNH 1 0 0 4", "dnh one zero one two")
    "dnh": ("qnh",),
    "squak": ("squawk",),
    "mia": ("via",),  # whisper's for a spoken "via" ("taxi mia papa niner")
    "mya": ("via",),
    "myo": ("via",),
    **{variant: (icao,) for variant, icao in SPELLING_VARIANTS.items() if "-" not in variant},
}
# "via" run into the taxiway's letter, as whisper writes it ("myotango eight", "viapapa four").
_VIA_SPELLINGS = ("via", *(word for word, to in _REPLACE.items() if to == ("via",)))
_REPLACE.update(
    {
        via + said: ("via", ICAO_LOWER[letter])
        for via in _VIA_SPELLINGS
        for said, letter in WORD_LETTERS.items()
        if "-" not in said  # a token never holds a hyphen: words split at it
    }
)
_MERGE: dict[tuple[str, ...], str] = {
    ("x", "ray"): "xray",
    ("fox", "trot"): "foxtrot",
    ("q", "n", "h"): "qnh",
    ("q", "and", "h"): "qnh",  # whisper's spellings of a spoken "Q N H" ("aitch" sounds like "eight")
    ("q", "and", "eight"): "qnh",
    ("q", "n", "eight"): "qnh",
    ("i", "l", "s"): "ils",
    ("i", "say", "again"): BREAK,  # "victor tree, I say again, ..." read no taxiway India
}
_MERGE_FIRST = frozenset(key[0] for key in _MERGE)
# A pilot's "correction" (ICAO: the correct version follows), and the words whisper writes for it
# on the readback bench's voices (espeak-ng, flite, Kokoro: "heading zero seven zero, collection,
# zero eight zero", "runway two five ride, connection runway two five left"; seed 166 twice:
# "directions"). None is a word a readback otherwise uses. `engine.pilot_correction` reads what
# each replaces.
CORRECTION_WORDS = frozenset(
    {"correction", "corrections", "connection", "connections", "collection", "direction", "directions"}
)
# Hesitation sounds a recognizer writes; they are no words of the message.
FILLERS = frozenset({"uh", "uhh", "uhm", "um", "umm", "er", "erm", "ah", "eh", "ehm", "hm", "hmm", "mm"})


@dataclass(frozen=True, slots=True)
class Transcript:
    """Normalized words of one transmission, and which numbers were said with hundred/thousand."""

    words: tuple[str, ...]
    multiplied: frozenset[int]
    letters: tuple[str | None, ...]  # the letter each word spells ("foxtrot", "f" -> "F"), else None
    # words the recognizer doubted were masked ("???", engine.hearing): a value read without its
    # keyword (a bare QNH) may have lost that keyword there, so none is read
    doubted: bool = False

    @property
    def text(self) -> str:
        return " ".join(self.words)

    def number(self, i: int) -> str | None:
        """The numeral at index i, if there is one."""
        if 0 <= i < len(self.words):
            word = self.words[i]
            if word[:1].isdigit():
                return word
        return None

    def integer(self, i: int) -> str | None:
        word = self.number(i)
        return word if word is not None and word.isdigit() else None

    def word(self, i: int) -> str:
        return self.words[i] if 0 <= i < len(self.words) else ""

    def letter(self, i: int) -> str | None:
        return self.letters[i] if 0 <= i < len(self.letters) else None


def _ascii_digits(text: str) -> str:
    """Every character `str.isdigit` accepts as its ASCII digit: the number code checks words with
    `isdigit` and reads them with `int`, which refuses superscripts and circled digits ("²", "➊")."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.digit(ch)) if ch.isdigit() else ch for ch in text)


def _plain_letters(text: str) -> str:
    """Accented letters as their plain ones: whisper writes "Düsseldorf" and "Zürich" as they are
    spelled, and the place names the readback check knows are plain ("dusseldorf")."""
    if text.isascii():
        return text
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def _raw_words(text: str) -> list[str]:
    text = _plain_letters(_ascii_digits(text)).lower().replace("'", "").replace("\u2019", "")
    if "," in text:
        text = _THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), text)
    if "-" in text:
        text = _DIGIT_HYPHEN.sub("", text)
    words: list[str] = []  # _TOKEN splits letters from digits: "25r" -> "25", "r"
    for token in _TOKEN.findall(text):
        if token in ",;:!?./":
            if words and words[-1] != BREAK:
                words.append(BREAK)
        else:
            words.extend(_REPLACE.get(token, (token,)))
    return words


def _merge(words: list[str]) -> list[str]:
    if not _MERGE_FIRST.intersection(words):
        return words
    out: list[str] = []
    i = 0
    while i < len(words):
        for key, merged in _MERGE.items():
            if tuple(words[i : i + len(key)]) == key:
                if merged != BREAK or (out and out[-1] != BREAK):  # one pause, not one per comma
                    out.append(merged)
                i += len(key)
                break
        else:
            if words[i] != BREAK or not out or out[-1] != BREAK:
                out.append(words[i])
            i += 1
    return out


def _words(text: str) -> list[str]:
    """Steps 1-8 of the module docstring."""
    words = join_syllables(_raw_words(text))
    if not FILLERS.isdisjoint(words):
        words = [w for w in words if w not in FILLERS]
        words = [w for k, w in enumerate(words) if w != BREAK or (k and words[k - 1] != BREAK)]
    return expand_repeats(_runway_heard_as_one_way(_merge(words)))


def _runway_after_flight(
    words: list[str], flights: tuple[tuple[int, str], ...]
) -> tuple[list[str], tuple[tuple[int, str], ...]]:
    """ "all nippon six zero two one way tree four left": "one way" right after our flight number
    said digit by digit is "runway" too (the flight number ends there; see `_flight_starts`)."""
    out, starts = list(words), list(flights)
    for start, digits in sorted(flights, reverse=True):
        end = start + len(digits)  # the word after the flight number, its digits said one by one
        spoken = out[start:end]
        if (
            len(spoken) == len(digits)
            and all(w in SINGLE_DIGIT_WORDS for w in spoken)
            and out[end : end + 2] == ["one", "way"]
        ):
            if end + 2 < len(out) and out[end + 2] in NUMBER_WORDS:
                out[end : end + 2] = ["runway"]
                starts = [(s - 1, d) if s > end else (s, d) for s, d in starts]
    return out, tuple(starts)


def _runway_heard_as_one_way(words: list[str]) -> list[str]:
    """ "one way zero seven left" -> "runway zero seven left": whisper's spelling of "runway"
    before a number, where "one" cannot end a number (no number word or numeral before it); "on
    way" before a number too; a pause between is no number either ("one way, zero tree": held-out
    seed 93, a wrong runway confirmed in the audio because the transcript held none)."""
    if "way" not in words:
        return words
    out = list(words)
    for i in range(len(out) - 2, 0, -1):
        after = out[i + 2] if out[i + 1] == BREAK and i + 2 < len(out) else out[i + 1]
        if out[i] == "way" and out[i - 1] == "on" and after in NUMBER_WORDS:
            out[i - 1 : i + 1] = ["runway"]  # "on way three six": no number can lose a digit here
        elif out[i] == "way" and out[i - 1] == "one" and after in NUMBER_WORDS:
            before = out[i - 2] if i >= 2 else BREAK
            if before not in NUMBER_WORDS and not before[:1].isdigit():
                out[i - 1 : i + 1] = ["runway"]
    return out


def _flight_starts(words: list[str], callsign: str) -> tuple[tuple[int, str], ...]:
    """(index, digits) where the hinted callsign's flight number begins (step 8)."""
    # callsigns imports this module: import it when a hint is first used.
    from rapidfuzz import fuzz

    from engine.phraseology.callsigns import TELEPHONY_SCORE, parse_callsign

    parsed = parse_callsign(callsign)
    if parsed is None:
        return ()
    if parsed.is_registration:
        head = parsed.letters[: len(parsed.letters) - len(parsed.letters.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))]
        rest = parsed.letters[len(head) :]
        spelled, written, telephony = head, "", ""
    else:
        rest = parsed.flight
        spelled, written = parsed.airline or "", (parsed.airline or "").lower()
        telephony = "".join((parsed.telephony or "").lower().split())
    digits = rest[: len(rest) - len(rest.lstrip("0123456789"))]
    if not digits or not spelled:
        return ()
    size = len((parsed.telephony or "").split())
    starts: list[tuple[int, str]] = []
    for i, word in enumerate(words):
        ends: list[int] = []
        if telephony and word not in NUMBER_WORDS:
            for n in (size, size + 1):
                parts = words[i : i + n]
                window = "".join(parts)
                if window == telephony:
                    ends.append(i + n)
                    break
                if len(telephony) >= 5 and NUMBER_WORDS.isdisjoint(parts) and BREAK not in parts:
                    if fuzz.ratio(window, telephony) >= TELEPHONY_SCORE:  # misspelled: "lufthanza"
                        ends.append(i + n)
                        break
        if written and word == written:
            ends.append(i + 1)
        if LOWER_LETTERS.get(word) == spelled[0] and (i == 0 or words[i - 1] not in LOWER_LETTERS):
            n = len(spelled)
            if "".join(LOWER_LETTERS.get(w, "?") for w in words[i : i + n]) == spelled:
                ends.append(i + n)
        starts.extend((end, digits) for end in ends if end < len(words))
    return tuple(sorted(set(starts)))


def tokenize(text: str, callsign: str | None = None) -> Transcript:
    """Normalized words of a transmission (see module docstring). `callsign` ("SWR158") is the
    station's own callsign, if known: it ends a number right after the spoken flight number."""
    return _tokenize(text, _hint(callsign) if callsign else None)


@lru_cache(maxsize=1024)
def _hint(callsign: str) -> str | None:
    from engine.phraseology.callsigns import parse_callsign  # import cycle: see _flight_starts

    parsed = parse_callsign(str(callsign))
    return parsed.code if parsed is not None else None


@lru_cache(maxsize=4096)
def _tokenize(text: str, callsign: str | None) -> Transcript:
    raw = _words(text)
    flights = _flight_starts(raw, callsign) if callsign else ()
    if flights and "way" in raw:
        raw, flights = _runway_after_flight(raw, flights)
    for start, _digits in flights:
        if raw[start] == "too":
            raw[start] = "two"  # "american too": the flight number, not "also"
    words, multiplied = collapse_numbers(raw, flights)
    doubted = "???" in text  # engine.hearing.UNSURE_WORD (phraseology imports nothing of the engine)
    return Transcript(tuple(words), multiplied, tuple(map(LOWER_LETTERS.get, words)), doubted)


def callsign_hint(variables: Mapping[str, Any] | None) -> str | None:
    """The callsign to pass to `tokenize` from scenario variables ("callsign", else
    "callsign_spoken"), or None."""
    if not variables:
        return None
    for name in ("callsign", "callsign_spoken"):
        value = variables.get(name)
        if value:
            return str(value)
    return None


def normalize_transcript(text: str, callsign: str | None = None) -> str:
    """Canonical lower-case form of a pilot transcript for matching (see module docstring)."""
    return tokenize(text, callsign).text


def last_correction(t: Transcript) -> int:
    """Index of the pilot's last "correction" (`CORRECTION_WORDS`) in `t`, or -1: only what he
    said after it counts for the values he corrected (`engine.pilot_correction`)."""
    return max((i for i, w in enumerate(t.words) if w in CORRECTION_WORDS), default=-1)
