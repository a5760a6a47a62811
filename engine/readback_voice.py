"""What the recognizer gets wrong, by voice: the issued value cut or misheard as no controller says it.

The readback check (`engine.readback`) judges a typed readback as written: "heading 189" is what
the pilot meant, and is corrected. By voice the same words are more likely the recognizer's: it
drops last words, splits numbers at pauses it invents, spells fix names its own way and writes
words no pilot says where it could not place the sounds. Each rule here marks such a hit as
garbled, so the field is asked again ("say again"), never corrected and never accepted; each
came from refusals of right readbacks on the voice bench (`livefreq bench readback --mode
voice`) and has a hypothesis test in tests/test_readback_safety.py. Only the best transcript by
voice goes through them; typed text and the n-best alternatives keep their strict reading.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, Levenshtein

from engine.phraseology.airports import LIMIT_BEFORE, NAME_SCORE
from engine.phraseology.airports import canonical as airport_code
from engine.phraseology.alphabet import LETTER_WORDS
from engine.phraseology.altitudes import ANCHORS as ALTITUDE_ANCHORS
from engine.phraseology.frequencies import is_channel
from engine.phraseology.handlers import Kind
from engine.phraseology.hits import Found, Hit
from engine.phraseology.number_passes import DECIMAL_WORDS, DIGITS
from engine.phraseology.places import CODES, PLACES
from engine.phraseology.transcript import Transcript, tokenize
from engine.vocabulary import words_in

LETTER_LIKE_SCORE = 80.0  # rapidfuzz ratio from which a heard place sounds like a phonetic letter ("rome": romeo)
MISSPELT_NAME_SCORE = 50.0  # rapidfuzz ratio from which a heard fix name is the issued one misspelt
TRANSITION_ALTITUDE_MAX_FT = 18000  # the highest anywhere (the US): above it, flight levels
# Kinds whose value is one number: a digit word misspelt right after it may be its lost last digit.
NUMBER_KINDS = frozenset({"frequency", "squawk", "qnh", "heading", "altitude", "flight_level", "speed", "runway"})
# Kinds read as one whole number: one heard as the issued one's last digits lost its first words.
WHOLE_NUMBER_KINDS = frozenset({"squawk", "qnh", "heading", "altitude", "flight_level", "speed"})
_LETTER_WORDS = tuple(w.lower() for w in LETTER_WORDS.values())
_LETTER_OF_WORD = {w.lower(): letter for letter, w in LETTER_WORDS.items()}
_SYMBOL_LETTER = re.compile(r"(?<![A-Z])[A-Z](?![A-Z])")
_LONG_DIGIT_WORDS = tuple(w for w in DIGITS if len(w) >= 3)  # "pife" is one edit from "fife"; "to" from nothing


@dataclass(frozen=True)
class Voice:
    """What the by-voice rules know beside the transcript: the radio's words (`vocabulary`), this
    session's values (`values`: its places and procedures are radio words here too), and per kind
    the values the pilot may say (issued or required)."""

    vocabulary: frozenset[str]
    values: tuple[Any, ...]
    acceptable: Mapping[str, list[str]]
    others: tuple[str, ...] = ()  # other transcripts of the same audio (n-best, earlier hearings)
    fixes: frozenset[str] = frozenset()  # the fix names of the airport's SIDs (`sid_fixes`), lower case

    @cached_property
    def session_words(self) -> frozenset[str]:
        # made only when a word is not in the vocabulary: most transmissions never need it
        return frozenset(w for v in self.values if isinstance(v, str) for w in words_in(v))

    @cached_property
    def letters(self) -> frozenset[str]:
        """The letters a pilot may say as symbols here: each letter standing apart from other
        letters in a value it may say (`acceptable`: "TELOS 8R": R; "E4 U6": E, U), never one
        inside a name or code."""
        said = (v for values in self.acceptable.values() for v in values)
        return frozenset(m for v in said if isinstance(v, str) for m in _SYMBOL_LETTER.findall(v.upper()))

    def knows(self, word: str) -> bool:
        return word in self.vocabulary or word in self.session_words


def garbled_by_voice(handler: Kind, t: Transcript, found: Found, expected: str, voice: Voice) -> Found:
    """By voice, hits that are the issued value with its end lost, or misheard where no controller
    speaks so, are garbled (asked again, never corrected): the recognizer drops words, splits
    numbers at pauses it invents, and hears espeak-ng's "zero" as "niner o".

    - Any value but the issued ones, written right before a word the radio never uses ("runway
      one nays" for 18, "heading two five niroc" for 250, "flight level three five niner o" for
      FL350): the recognizer guessed at sounds it could not place, there (`_stray_after`).
    - A number heard as the issued one's last digits ("one thousand" heard of "climb one one
      thousand" for 11,000 ft, "heading eight zero" for 180): its first words were lost
      (`_start_lost`).
    - Any value but the issued ones ending in a "one" said right before "way" and a number
      ("charlie tree one way tree six" for C3 and runway 36): the "one" may be "run(way)"
      (`_one_way_after`).
    - Any number, the issued one too, written right before a digit word misspelt by one edit
      that the radio never uses ("one one eight point seven pife" read as 118.7 for a spoken
      118.75 when 118.700 was issued: a wrong frequency accepted on seed 10): its last digit
      may be that word (`_digit_after`).
    - A runway: the issued number without its side ("runway zero six, flight" for 06R), or one
      digit where the issued number is another ("runway two. I am center", "runway three,
      flight center" for 25C): ICAO runways are said in two digits, so one was lost; or the
      issued one said without its zero right before a word the radio does not use ("runway two
      near" for 02, said "two zero"): that word may be the lost digit.
    - A SID or STAR: the issued procedure with its fix name misspelt ("othel niner mike" for
      OKTAL 9M, "reloc eight uniform" for RELUK 8U): the same digit and letter, a name that
      sounds alike (`MISSPELT_NAME_SCORE`); or with its letter lost ("farun nine and foxtrot"
      heard as FARUN 9 for FARUN 9F). A SID named by a word no SID of the airport has (its
      `sid_fixes` known): "cleared to Brussels five kilos eight kilos departure" for TELOS 8K,
      the product's own voice in the load runs, read BRUSSELS 5K.
    - A heading: its first digits as the very last word ("... heading three six" for 360), or
      one off the fives that was not issued ("heading one eight niner o" for 180): controllers
      vector in fives and tens. Typed, "heading 189" is what the pilot meant: corrected.
    - A frequency: fewer decimals than issued, the first one heard being the issued one ("one
      one niner decimal niner. Zero fife" for 119.905, "decimal eight niner" for 121.805), one
      heard without its decimal word ("one two one four nine zero" for 121.905: "point" heard
      as "four"), or one that is no channel a controller assigns (`frequencies.is_channel`:
      "one three four five six niner" for 134.560, "one one one point nine zero five" for
      119.905). All its decimals said after the decimal word, a channel, and one differing, it
      stays a value (wrong). And the issued one ending in two zeros heard with two decimals, the
      second a zero ("one three six decimal five zero" for 136.500): no pilot says it so (four
      digits or all six), a digit was lost ("five five zero", 136.550: a wrong frequency
      accepted on seed 21's recordings, 2026-11-29).
    - A taxi route: the issued route's start ("via victor five ntango five" heard as V5 for V5 T5)
      or its end ("myath whiskey seven, romeo five" heard as W7 R5 for L8 W7 R5), or its
      elements with digits lost ("via Lima, Whiskey seven" heard as L W7 for L8 W7 R5; "via c
      air eight" heard as C for S8 T5 N5, "yankee four, hotel a" as Y4 H A for Y4 H8 V3: a
      taxiway without a number where every issued one has one).
    - A flight level: the issued one's first digits ("flight level three five, we are all" for
      FL350): its last digit lost.
    - An altitude in feet above the highest transition altitude anywhere (18,000 ft) that was not
      issued ("two three thousand" for "three thousand"): higher, controllers give levels. And
      the issued altitude with one more digit in front and no verb right before it ("squawk
      zero fife two fife, one six thousand feet" for "climb six thousand feet"): the verb was
      heard as a digit.
    - A clearance limit that is no place we know ("cleared to fran" for Prague): the
      recognizer's spelling of the city, not another city (which is corrected); a place found by
      a name with a letter swapped ("Lusseldorf" for Dusseldorf: the said "Lisbon" blended with
      the prompt's city, seed 72; `_misspelt_place`); and without "to"
      before it, another place named bare, or a place named like a phonetic letter the readback
      has to say ("Rome" for the spoken "romeo" of TELOS 8R, with Rome issued and never said),
      or one named in a choice ("Dusseldorf or TELOS or GEDEM": whisper's echo of its prompt).
    - A frequency with fewer than three decimals right before a bare number that would complete
      them ("133.2, 2"), unless together they are the issued one: the recognizer paused inside its
      decimals (`_decimals_go_on`).
    - A holding point or stand: the issued one with its end lost ("holding point whiskey." for
      W4, "tango one for my yankee" for T14), its letter lost (digits only: "holding point one
      three" for B13, "holding point four, one one" for H11), its digits heard as letters
      ("lima, H" for L9), or one digit more at its end, the next word heard as a digit ("victor
      four fife papa nine" for V4, "via" heard "five"; a taxi route's element too: "papa nine
      echo one one with zero seven" for P9 E1; `_one_digit_more`).
    """
    if handler.name in ("callsign", "text"):
        return found
    cut = _GARBLED_BY_VOICE.get(handler.name, lambda _t, _h, _e, _v: False)
    fine = [expected, *voice.acceptable.get(handler.name, [])]
    shown = (lambda h: h.value) if handler.name in ("route", "designator") else (lambda h: t.words[h.index])

    number = handler.name in NUMBER_KINDS
    whole = handler.name in WHOLE_NUMBER_KINDS

    def garbled(h: Hit) -> bool:
        other = not any(handler.equal(a, h.value) for a in fine)
        stray = other and (_stray_after(t, h, voice, handler.name) or _one_way_after(t, h))
        lost = (number and _digit_after(t, h, voice)) or (
            whole and not handler.equal(expected, h.value) and _start_lost(t.words[h.index], expected)
        )
        return stray or lost or cut(t, h, expected, voice)

    return [Hit(h.index, f"{shown(h)}?", garbled=True) if not h.garbled and garbled(h) else h for h in found]


def _stray_after(t: Transcript, hit: Hit, voice: Voice, kind: str = "") -> bool:
    """The word right after the value's (first) word is none the radio uses; for a holding point
    or stand, after its number ("holding point golf one two two nh" for G12: "QNH" heard "two
    nh", the extra digit the recognizer's, held-out seed 23 of the voice bench)."""
    i = hit.index + 1
    if kind == "designator" and t.number(i) is not None:
        i += 1
    return i < len(t.words) and t.words[i].isalpha() and not voice.knows(t.words[i])


def _one_way_after(t: Transcript, hit: Hit) -> bool:
    """The value ends in a "one" said right before "way" and a number: "charlie tree one way tree
    six" is C3 and runway 36 as likely as C31 (the voice bench's seeds 24 and 26 refused a right
    route and holding point so); "one way to five center" too, whisper's "to" for the runway's two
    (seed 55 refused a right holding point so). A "one way" after no number is "runway" already
    (`tokenize`)."""
    digits = re.sub(r"\D", "", hit.value)
    for j in range(hit.index, min(hit.index + 8, len(t.words) - 2)):  # a route runs on over its elements
        said = t.words[j]
        if said.isdigit() and said.endswith("1") and digits.endswith(said) and t.words[j + 1] == "way":
            two = t.words[j + 2] in ("to", "too") and j + 3 < len(t.words)
            return t.number(j + 2) is not None or (two and t.number(j + 3) is not None)
    return False


def _digit_after(t: Transcript, hit: Hit, voice: Voice) -> bool:
    """The word right after the number is none the radio uses but a digit word misspelt by one
    edit: the number may go on there, whatever value it seems to be."""
    i = hit.index + 1
    if i >= len(t.words) or not t.words[i].isalpha() or voice.knows(t.words[i]):
        return False
    return any(Levenshtein.distance(t.words[i], d, score_cutoff=1) <= 1 for d in _LONG_DIGIT_WORDS)


def _decimals_go_on(t: Transcript, hit: Hit, expected: str) -> bool:
    """A frequency with fewer than three decimals right before a bare number as short as the
    decimals it lacks: a pause the recognizer put in its decimals ("decimal two, two, i" of a
    spoken "decimal two two five", held-out seed 75: read 133.2, the issued 133.200, for a said
    133.225). Unless the two together are the issued frequency ("decimal one six, zero" for
    129.160); a longer number is another value ("decimal five five thousand feet")."""
    i = hit.index + 1
    said = t.words[hit.index]
    if "." not in said or i >= len(t.words) or not t.words[i].isdigit():
        return False
    decimals = said.partition(".")[2]
    if len(decimals) + len(t.words[i]) > 3:
        return False
    joined = f"{said}{t.words[i]}"
    return joined.rstrip("0") != expected.rstrip("0")


def _start_lost(said: str, expected: str) -> bool:
    """The number as written (`said`: "1000") is the issued one's last digits, fewer than it
    has: its first words were lost ("one thousand" heard of "climb one one thousand" for
    11,000 ft). A leading zero heard ("zero fife zero" for 250) is a digit misheard, not lost."""
    heard, issued = re.sub(r"\D", "", said), re.sub(r"\D", "", expected).lstrip("0")
    return bool(heard) and len(heard) < len(issued) and issued.endswith(heard)


def _garbled_runway(t: Transcript, hit: Hit, expected: str, voice: Voice) -> bool:
    number, said = expected[:2], t.words[hit.index]
    if len(expected) == 3 and hit.value == number:
        return True  # its side lost
    if len(said) != 1:
        return False
    # one digit where two are said: "runway two. I am center" for 25C; or the issued one said
    # without its zero, right before a word the radio does not use, which may be its lost digit
    # (held-out seed 97: "runway two zero" for 02 written "runway two near", read 02)
    return hit.value[:2] == said.zfill(2) and (said.zfill(2) != number or _stray_after(t, hit, voice))


def _garbled_sid(t: Transcript, hit: Hit, expected: str, voice: Voice) -> bool:
    """`_garbled_procedure`, and a SID named by a word that names no SID of the airport: a pilot
    who reads back another SID reads back one of the airport's, so the name is the recognizer's."""
    name = hit.value.partition(" ")[0].lower()
    return _garbled_procedure(t, hit, expected, voice) or (bool(voice.fixes) and name not in voice.fixes)


def _garbled_procedure(_t: Transcript, hit: Hit, expected: str, _voice: Voice) -> bool:
    name, _, suffix = hit.value.partition(" ")
    exp_name, _, exp_suffix = expected.partition(" ")
    if name == exp_name:
        return suffix != exp_suffix and exp_suffix.startswith(suffix)  # its letter lost: "farun nine and foxtrot"
    return suffix == exp_suffix and fuzz.ratio(name, exp_name) >= MISSPELT_NAME_SCORE


def _garbled_heading(t: Transcript, hit: Hit, expected: str, _voice: Voice) -> bool:
    said = t.words[hit.index]
    if hit.value.isdigit() and int(hit.value) % 5 and hit.value != expected:
        return True  # off the fives: misheard
    return hit.index == len(t.words) - 1 and len(said) < 3 and expected.startswith(said)


def _garbled_frequency(t: Transcript, hit: Hit, expected: str, voice: Voice) -> bool:
    if _decimals_go_on(t, hit, expected) or _decimals_longer_elsewhere(t, hit, voice):
        return True
    if hit.value != expected and not is_channel(hit.value):
        return True
    whole, dot, frac = t.words[hit.index].partition(".")
    if not dot:
        return hit.value != expected  # no decimal word: "one two one four nine zero" for 121.905 ("point" heard "four")
    exp_whole, _, exp_full = expected.partition(".")
    exp_frac = exp_full.rstrip("0")
    if whole[-3:] != exp_whole or frac[:1] != exp_full[:1]:
        return False
    if len(frac) == 2 and frac[1] == "0" and exp_full[1:] == "00":
        return True  # "decimal five zero" for 136.500: no one says it so, a digit was lost (of "five five zero")
    return len(frac) < len(exp_frac)


def _decimals_longer_elsewhere(t: Transcript, hit: Hit, voice: Voice) -> bool:
    """A frequency with fewer than three decimals where another transcript of the same audio has
    more after the decimal word than the best one: digits, or words the radio does not use, up to
    the first radio word (held-out seed 92: 136.550 said, "decimal five." written, read 136.5, the
    issued 136.500; the n-best wrote "decimal time time"). A lost last digit is not a pilot
    leaving out the zeros."""
    whole, dot, decimals = t.words[hit.index].partition(".")
    if not dot or len(decimals) >= 3:
        return False
    heard = _said_after_decimal([decimals, *t.words[hit.index + 1 :]], voice)
    for other in voice.others:
        words = tokenize(other).words
        for j, word in enumerate(words):
            if word == whole and j + 1 < len(words) and words[j + 1] in DECIMAL_WORDS:
                tail = list(words[j + 2 :])
            elif word.startswith(f"{whole}."):
                tail = [word.partition(".")[2], *words[j + 1 :]]
            else:
                continue
            if _said_after_decimal(tail, voice) > heard:
                return True
    return False


def _said_after_decimal(tail: list[str], voice: Voice) -> int:
    """How much is said after a decimal word: a digit each, a word the radio does not use one,
    up to the first radio word."""
    run = 0
    for word in tail:
        if word.isdigit():
            run += len(word)
        elif word.isalpha() and not voice.knows(word):
            run += 1
        else:
            break
    return run


def _one_digit_more(heard: str, issued: str) -> bool:
    """The issued designator with one more digit at its end ("victor four fife papa nine" for V4:
    "via" heard "five"; "hotel one one one my romeo" for H11, "echo one one with zero seven" for
    E1: "runway" heard "one"; "golf one two two an h" for G12: "QNH"). Over the recorded voice
    runs, 20 right readbacks were refused so; the next word was heard as a digit."""
    return len(heard) == len(issued) + 1 and heard.startswith(issued) and heard[-1].isdigit() and issued[-1:].isdigit()


def _garbled_route(_t: Transcript, hit: Hit, expected: str, _voice: Voice) -> bool:
    said, issued = hit.value.split(), expected.split()
    if any(e.isalpha() for e in said) and not any(e.isalpha() for e in issued):
        return True  # a taxiway without its number: "via c air eight" (C for S8 T5), "hotel a" (H A for H8)
    if len(said) == len(issued) and said != issued:  # one element with a digit more: "papa nine echo one one"
        if all(h == e or _one_digit_more(h, e) for h, e in zip(said, issued, strict=True)):
            return True
    if not said or len(said) > len(issued) or said == issued:
        return False
    start_lost = said == issued[-len(said) :]  # "myath whiskey seven, romeo five" for L8 W7 R5
    return start_lost or all(element.startswith(heard) for heard, element in zip(said, issued, strict=False))


def _garbled_altitude(t: Transcript, hit: Hit, expected: str, _voice: Voice) -> bool:
    if not (hit.value.isdigit() and expected.isdigit()):
        return False
    if int(hit.value) > max(TRANSITION_ALTITUDE_MAX_FT, int(expected)):
        return True
    # the issued altitude with one digit more in front and no verb before it: "one six thousand
    # feet" for "climb six thousand feet", the verb heard as a digit (`livefreq load`)
    verb = any(w in ALTITUDE_ANCHORS for w in t.words[max(0, hit.index - 2) : hit.index])  # "climb to ..."
    return not verb and len(hit.value) == len(expected) + 1 and hit.value.endswith(expected) and int(expected) > 0


def _garbled_level(t: Transcript, hit: Hit, expected: str, _voice: Voice) -> bool:
    """The issued flight level's first digits as written, fewer than it has: its last digit lost
    ("flight level three five, we are all ..." for FL350, the "zero" heard as words; seed 32 by
    voice). Read as a level, "three five" is FL035; said so, "zero three five"."""
    heard, issued = re.sub(r"\D", "", t.words[hit.index]), re.sub(r"\D", "", expected)
    return bool(heard) and len(heard) < len(issued) and issued.startswith(heard)


def _garbled_designator(_t: Transcript, hit: Hit, expected: str, _voice: Voice) -> bool:
    value = hit.value
    if value == expected or not value:
        return False
    letter_lost = value.isdigit() and not expected.isdigit()  # "holding point four, one one" for H11
    digits_as_letters = value.isalpha() and not expected.isalpha() and value[0] == expected[0]
    return expected.startswith(value) or letter_lost or digits_as_letters or _one_digit_more(value, expected)


@lru_cache(maxsize=1)
def _place_words() -> frozenset[str]:
    return frozenset(w for place in PLACES for w in place.split())


def _misspelt_place(t: Transcript, hit: Hit, voice: Voice) -> bool:
    """A place found by a name written like one of ours with a letter swapped ("Lusseldorf" for
    Dusseldorf, `airports.NAME_SCORE`): the prompt names the issued city, and a blend of it with
    the city said is written so. Seed 72 by voice: a pilot's "Lisbon" was written "Lusseldorf"
    under a prompt naming Dusseldorf, issued, and accepted. A letter only lost or added is
    whisper's spelling of the name itself: "Dsseldorf" (its "ü" lost, seeds 28, 34, 43),
    "madridh", "tumadrid" ("to" run in). Typed, a misspelt name is the pilot's typo."""
    said = t.words[hit.index]
    if t.letters[hit.index] or said.upper() == hit.value or voice.knows(said) or said in _place_words():
        return False  # a code, spelled or written, or a name as it is spelled
    return not any(
        Indel.distance(said, word) == Levenshtein.distance(said, word) and fuzz.ratio(said, word) >= NAME_SCORE
        for word in voice.session_words
    )


def _in_a_choice(t: Transcript, hit: Hit) -> bool:
    """A place named in a choice, "or" right before or right after its name: whisper echoing the
    names its prompt offers ("by RANOS one November, Dusseldorf or TELOS or GEDEM" for a said
    "cleared to Amsterdam", seed 137 with `--fields destination`: accepted before whisper's own
    rivals were scored). No pilot reads back a choice. Over the replay's 137 recorded runs before
    it, not one verdict changed."""
    i, words = hit.index, t.words
    end = i + 1
    while end < min(i + 3, len(words)) and words[end] != "or" and words[end] in _place_words():
        end += 1  # the rest of its name: "london heathrow or"
    return (i > 0 and words[i - 1] == "or") or (end < len(words) and words[end] == "or")


def _garbled_airport(t: Transcript, hit: Hit, expected: str, voice: Voice) -> bool:
    """A clearance limit that is no place we know ("cleared to fran" for Prague): the recognizer's
    spelling of a city, not another city (which is corrected). Without "to" before it, another
    place (typed: a wrong limit), and a place named like a phonetic letter ("Rome", "romeo") where
    the session has that letter to say: whisper wrote "via TELOS eight Rome" for a spoken "eight
    romeo", under a prompt naming Rome, with the limit never said. With no such letter to say
    ("via COLEM eight victor ... Rome"), no letter was heard as the place. And a name with a
    letter swapped (`_misspelt_place`), or in a choice (`_in_a_choice`)."""
    if _misspelt_place(t, hit, voice) or _in_a_choice(t, hit):
        return True
    said = t.words[hit.index]
    lead = hit.index > 0 and t.words[hit.index - 1] in LIMIT_BEFORE
    bare = airport_code(hit.value) is None  # a place by name no airport of ours has
    like = {_LETTER_OF_WORD[w] for w in _LETTER_WORDS if fuzz.ratio(said, w) >= LETTER_LIKE_SCORE}
    if not lead and (bare or like & voice.letters):
        return True  # another place named bare ("squawk 3553, Dublin") is as likely the recognizer's guess
    words = hit.value.casefold().split()  # the limit runs on to the next words: "zurich lufthansa"
    known = any(" ".join(words[:k]) in PLACES for k in range(1, len(words) + 1))
    return hit.value != expected and not known and hit.value.upper() not in CODES


_GARBLED_BY_VOICE: dict[str, Callable[[Transcript, Hit, str, Voice], bool]] = {
    "airport": _garbled_airport,
    "runway": _garbled_runway,
    "sid": _garbled_sid,
    "star": _garbled_procedure,
    "heading": _garbled_heading,
    "frequency": _garbled_frequency,
    "route": _garbled_route,
    "designator": _garbled_designator,
    "altitude": _garbled_altitude,
    "flight_level": _garbled_level,
}
