"""The ICAO spelling alphabet, both ways.

Speech uses the ICAO spellings ("Alfa", "Juliett"); parsing also accepts the common English
spellings a recognizer writes ("alpha", "juliet", "whisky", "x-ray").
"""

from __future__ import annotations

from rapidfuzz.distance import Levenshtein

from engine.phraseology.phonetic import same_sound

LETTER_WORDS: dict[str, str] = {
    "A": "Alfa",
    "B": "Bravo",
    "C": "Charlie",
    "D": "Delta",
    "E": "Echo",
    "F": "Foxtrot",
    "G": "Golf",
    "H": "Hotel",
    "I": "India",
    "J": "Juliett",
    "K": "Kilo",
    "L": "Lima",
    "M": "Mike",
    "N": "November",
    "O": "Oscar",
    "P": "Papa",
    "Q": "Quebec",
    "R": "Romeo",
    "S": "Sierra",
    "T": "Tango",
    "U": "Uniform",
    "V": "Victor",
    "W": "Whiskey",
    "X": "Xray",
    "Y": "Yankee",
    "Z": "Zulu",
}

# Recognizer spellings folded onto the ICAO word (lower case), applied by the transcript tokenizer.
SPELLING_VARIANTS: dict[str, str] = {
    "alpha": "alfa",
    "juliet": "juliett",
    "whisky": "whiskey",
    "x-ray": "xray",
    # whisper's spellings of a spoken letter word, seen in the voice bench (none is a word of its own)
    "oxtrot": "foxtrot",
    "axtrot": "foxtrot",
    "forxtrot": "foxtrot",
    "fxtrot": "foxtrot",
    "fustrot": "foxtrot",
    "toxtrot": "foxtrot",
    "pokstrot": "foxtrot",
    "yankie": "yankee",
    "yenkee": "yankee",
    "yanky": "yankee",
    "wiskey": "whiskey",
    "duliett": "juliett",
}

WORD_LETTERS: dict[str, str] = {word.lower(): letter for letter, word in LETTER_WORDS.items()}
WORD_LETTERS.update({variant: WORD_LETTERS[icao] for variant, icao in SPELLING_VARIANTS.items()})


# Lower-case transcript word -> letter: phonetic words and lone letters.
LOWER_LETTERS: dict[str, str] = {**WORD_LETTERS, **{letter.lower(): letter for letter in LETTER_WORDS}}


def spell(letters: str, *, capitalize: bool = True) -> str:
    """ "EDDM" -> "Echo Delta Delta Mike"; non-letters are skipped."""
    words = (LETTER_WORDS[ch] for ch in letters.upper() if ch in LETTER_WORDS)
    return " ".join(words if capitalize else (w.lower() for w in words))


def letter_word(letter: str, *, capitalize: bool = True) -> str:
    """ "F" -> "Foxtrot" (or "foxtrot")."""
    word = LETTER_WORDS[letter.upper()]
    return word if capitalize else word.lower()


def letter_of(word: str) -> str | None:
    """The letter a transcript word stands for: a phonetic word ("foxtrot") or a lone letter ("f")."""
    return LOWER_LETTERS.get(word) or LOWER_LETTERS.get(word.lower())


ICAO_LOWER: dict[str, str] = {letter: word.lower() for letter, word in LETTER_WORDS.items()}
NEAR_LETTER_MIN_CHARS = 4  # "eco" is no "echo": one edit on a short word is too much


def near_letter(word: str) -> str | None:
    """The letter of a phonetic word misspelt by one edit ("delto", "jankee") or written by its
    sound ("popo" for papa: two edits, but the same first letter and Metaphone key, PP), for a
    place where only a letter can stand (an ATIS letter after "information", a SID's letter after
    its digit). ICAO's words are at least three edits apart and each starts with its own letter,
    so a word names at most one letter; one that would name two names none."""
    low = word.lower()
    if low in WORD_LETTERS:
        return WORD_LETTERS[low]
    if len(low) < NEAR_LETTER_MIN_CHARS or not low.isalpha():
        return None
    letters = {
        letter for known, letter in WORD_LETTERS.items() if Levenshtein.distance(low, known, score_cutoff=1) <= 1
    }
    letters |= {letter for letter, icao in ICAO_LOWER.items() if same_sound(low, icao)}
    return letters.pop() if len(letters) == 1 else None


def is_phonetic_word(word: str) -> bool:
    return word.lower() in WORD_LETTERS
