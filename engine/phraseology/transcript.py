"""Pilot transcripts -> one canonical word sequence that every matcher reads.

`normalize_transcript` does exactly this, in order:

1. writes every digit as an ASCII digit ("²" -> "2", "٣" -> "3"); lower-cases; drops apostrophes;
   removes thousands separators ("5,000" -> "5000") and hyphens between digits ("4-7-2-1" -> "4721");
2. splits letters from digits inside a token ("25R" -> "25 r", "FL350" -> "fl 350",
   "DLH359" -> "dlh 359", "N3" -> "n 3");
3. keeps words (any alphabet), numerals ("121.8": a dot between digits is a decimal point) and
   drops all other punctuation; "," ";" ":" "!" "?" "/" and sentence dots still separate two
   numbers ("250/12" stays two; but "4, 7, 2, 1" between single digits is one number);
4. folds abbreviations and spelling variants: "fl" -> "flight level", "ft" -> "feet",
   "kt"/"kts"/"knot" -> "knots", "rwy" -> "runway", "hdg" -> "heading", "centre" -> "center",
   "q n h" -> "qnh", and the ICAO spelling of phonetic letters ("alpha" -> "alfa", "juliet" ->
   "juliett", "whisky" -> "whiskey", "x ray" -> "xray", "fox trot" -> "foxtrot");
5. collapses spoken numbers into digits with `numbers.collapse_numbers` (English and ICAO words,
   "hundred"/"thousand", homophones only where unambiguous, "decimal"/"point"/"dot" between
   numbers -> "."), so "squawk four seven to one" -> "squawk 4721";
6. joins the words with single spaces.

Phonetic letters stay words, so flow regexes such as "request taxi" or "information alfa" still
match. The result is cached per input text: the router, the triggers and the readback evaluator
all tokenize the same transmission.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from engine.phraseology.alphabet import LOWER_LETTERS, SPELLING_VARIANTS
from engine.phraseology.numbers import BREAK, collapse_numbers

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
    "squak": ("squawk",),
    **{variant: (icao,) for variant, icao in SPELLING_VARIANTS.items() if "-" not in variant},
}
_MERGE: dict[tuple[str, ...], str] = {
    ("x", "ray"): "xray",
    ("fox", "trot"): "foxtrot",
    ("q", "n", "h"): "qnh",
}
_MERGE_FIRST = frozenset(key[0] for key in _MERGE)


@dataclass(frozen=True, slots=True)
class Transcript:
    """Normalized words of one transmission, and which numbers were said with hundred/thousand."""

    words: tuple[str, ...]
    multiplied: frozenset[int]
    letters: tuple[str | None, ...]  # the letter each word spells ("foxtrot", "f" -> "F"), else None

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


def _raw_words(text: str) -> list[str]:
    text = _ascii_digits(text).lower().replace("'", "").replace("\u2019", "")
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
    return _merge(words)


def _merge(words: list[str]) -> list[str]:
    if not _MERGE_FIRST.intersection(words):
        return words
    out: list[str] = []
    i = 0
    while i < len(words):
        for key, merged in _MERGE.items():
            if tuple(words[i : i + len(key)]) == key:
                out.append(merged)
                i += len(key)
                break
        else:
            out.append(words[i])
            i += 1
    return out


@lru_cache(maxsize=4096)
def tokenize(text: str) -> Transcript:
    words, multiplied = collapse_numbers(_raw_words(text))
    return Transcript(tuple(words), multiplied, tuple(map(LOWER_LETTERS.get, words)))


def normalize_transcript(text: str) -> str:
    """Canonical lower-case form of a pilot transcript for matching (see module docstring)."""
    return tokenize(text).text
