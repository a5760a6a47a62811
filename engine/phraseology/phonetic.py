"""How alike two words sound: a recognizer misspells a name by its sound, not by its letters.

Whisper writes a telephony it does not know as the English words nearest in sound: "edelays" and
"edelway" for Edelweiss, "jedle you" and "just lu" for Jetblue, "all new pan" for All Nippon
(the voice bench, seeds 18-28). Their letters are far from the name's (rapidfuzz ratio 53-67);
their Metaphone keys (`jellyfish.metaphone`, a well-kept implementation of Lawrence Philips'
algorithm) are near it: ETLS against ETLWS, JTLY and JSTL against JTBL, ALNPN against ALNPN.

`likeness` is the nearer of the two readings, as a score of 0-100: the spelling by edit distance
(normalized Levenshtein similarity, which unlike rapidfuzz's `ratio` does not reward a short
name found inside a longer window: "withair" is 57 like "thai" and 71 like "wizzair"), and the
sound by rapidfuzz's `ratio` over Metaphone keys of four letters or more (a letter left out or
put in counts once: JTLY is 75 like JTBL), when they start with the same sound. Shorter keys
match too much ("flight" is FLT, as Volotea is; "and" is ANT, one letter from Air India's ARNT),
and so do keys of words run on before the name: "sierra romeo chinese turn" (SRRMXNSTRN) holds
China Eastern's XNSTRN whole, and its `ratio` is 75, but a name is heard from its first sound.
"""

from __future__ import annotations

from functools import lru_cache

import jellyfish
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

MIN_KEY = 4  # Metaphone letters a word needs before its sound is compared


@lru_cache(maxsize=4096)
def sound_key(word: str) -> str:
    """The Metaphone key of `word`, spaces left out ("jedle you" -> "JTLY")."""
    return jellyfish.metaphone(word.replace(" ", ""))


def likeness(heard: str, name: str) -> float:
    """0-100: how alike `heard` is to `name` in spelling or in sound, whichever is nearer."""
    spelt = Levenshtein.normalized_similarity(heard, name) * 100
    a, b = sound_key(heard), sound_key(name)
    if len(a) < MIN_KEY or len(b) < MIN_KEY or a[0] != b[0]:
        return spelt
    return max(spelt, fuzz.ratio(a, b))


def same_sound(heard: str, name: str) -> bool:
    """Whether `heard` is `name` written by its sound: the same first letter and the same whole
    Metaphone key ("popo" for papa, PP). For short names (the ICAO letter words' keys have two or
    three letters, under `MIN_KEY`), where a near key is too common for `likeness`'s ratio."""
    return bool(heard) and bool(name) and heard[0] == name[0] and sound_key(heard) == sound_key(name)
