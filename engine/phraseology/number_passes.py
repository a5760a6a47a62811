"""The two word passes the tokenizer runs before the number parser (engine/phraseology/numbers.py),
and the word tables both share with the homophone rules (engine/phraseology/homophones.py).

1. `join_syllables`: a number word split into syllables, by a hyphen or a space, as a recognizer
   or a written script gives it ("ze-ro", "fow er", "nin-er", "sev en", "hun-dred", "tou sand",
   "day see mal") becomes one word, and recognizer spellings are folded ("tousand" -> "thousand",
   "dayseemal"/"daysimal" -> "decimal", "nineer" -> "niner"). Words are only joined where the
   joined form is one of these number words, so ordinary words are never glued;
2. `expand_repeats`: "double"/"triple" before a single digit repeats it ("double four" -> "four
   four", "seven triple zero" -> 7000, "double oh" -> "zero zero"); before anything else
   ("double check") it stays a word.
"""

from __future__ import annotations

from collections.abc import Sequence

# Marker the tokenizer leaves for punctuation that separates numbers ("4721, 5000").
BREAK = "|"
DECIMAL_WORDS = frozenset({"decimal", "point", "dot"})
# The number parser's item classes (engine/phraseology/numbers.py): D digit, T teen, X tens,
# M multiplier, N numeral, P decimal, A "and" inside a number; the first five are numeric.
NUMERIC = frozenset("DTXMN")

# Digit words the parser reads, ICAO and plain English, with their values.
DIGITS: dict[str, int] = {
    "zero": 0,
    "one": 1,
    "wun": 1,
    "two": 2,
    "three": 3,
    "tree": 3,
    "four": 4,
    "fower": 4,
    "five": 5,
    "fife": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "ait": 8,
    "nine": 9,
    "niner": 9,
}
# Number words of more than one syllable, as written whole, split ("ze ro", "day see mal") or
# misspelled by a recognizer -> the word the parser reads.
_SPELLINGS: dict[str, str] = {
    "zero": "zero",
    "zeero": "zero",
    # "zero" as whisper writes it for the espeak-ng and flite pilots ("runway nero seven left",
    # "heading one eight nirro"): seeds 50-65 of the voice bench, never another digit there
    "nero": "zero",
    "nirro": "zero",
    "niro": "zero",
    "seven": "seven",
    "sevven": "seven",
    "fower": "fower",
    "fouer": "fower",
    "niner": "niner",
    "nineer": "niner",
    "niener": "niner",
    # "niner" as whisper writes it: "one one nine a decimal nine or zero five"
    "ninea": "niner",
    "nineor": "niner",
    "nineof": "niner",
    "nineare": "niner",
    "einer": "niner",
    "hiner": "niner",
    "hundred": "hundred",
    "hundret": "hundred",
    "thousand": "thousand",
    "tousand": "thousand",
    "tausand": "thousand",
    "thousend": "thousand",
    "decimal": "decimal",
    "dayseemal": "decimal",
    "daysimal": "decimal",
    "dayseamal": "decimal",
    "daysemal": "decimal",
    "deesimal": "decimal",
    "desimal": "decimal",
    "decimals": "decimal",
    "decimos": "decimal",
    "decimo": "decimal",
    "dasimo": "decimal",
    "dasimal": "decimal",
    "dasemal": "decimal",
    "nacimal": "decimal",
    "nacimos": "decimal",
    "decental": "decimal",
    "deciibil": "decimal",
    "vacibil": "decimal",
    "vacibal": "decimal",
    "desonall": "decimal",  # "deson all"
    "dasimall": "decimal",  # "dasim all"
}
_MAX_SYLLABLES = 3
# Recognizer spellings read only when written as one word: split, their pieces are other words
# ("EIN er wun": Aer Lingus's designator, a filler and its flight number, not "niner one").
_WHOLE_WORD_ONLY = frozenset({"einer", "hiner", "nero", "nirro", "niro"})
REPEATS: dict[str, int] = {"double": 2, "triple": 3}
# Words "double"/"triple" repeat, and the digit word they stand for.
_REPEATABLE: dict[str, str] = {
    **{w: w for w in DIGITS},
    **{str(n): str(n) for n in range(10)},
    "oh": "zero",
    "o": "zero",
    "too": "two",
}


def join_syllables(words: Sequence[str]) -> list[str]:
    """ "ze ro" -> "zero", "day see mal" -> "decimal", "tousand" -> "thousand" (see module docstring).

    Two or three words are joined only when together they spell a number word of `_SPELLINGS`
    ("fow er" -> "fower", "nine er" -> "niner"); no other words are ever glued."""
    out: list[str] = []
    i, n = 0, len(words)
    while i < n:
        for size in range(min(_MAX_SYLLABLES, n - i), 1, -1):
            pieces = words[i : i + size]
            joined = "".join(pieces)
            if joined in _SPELLINGS and joined not in _WHOLE_WORD_ONLY and all(w.isalpha() for w in pieces):
                out.append(_SPELLINGS[joined])
                i += size
                break
        else:
            out.append(_SPELLINGS.get(words[i], words[i]))
            i += 1
    return out


def expand_repeats(words: Sequence[str]) -> list[str]:
    """ "double four" -> "four four", "triple zero" -> "zero zero zero"; "double check" stays."""
    if "double" not in words and "triple" not in words:
        return list(words)
    out: list[str] = []
    i = 0
    while i < len(words):
        times = REPEATS.get(words[i])
        digit = _REPEATABLE.get(words[i + 1]) if times and i + 1 < len(words) else None
        if digit is not None and times is not None:  # a digit is only looked up after a repeat word
            out.extend([digit] * times)
            i += 2
        else:
            out.append(words[i])
            i += 1
    return out
