"""Where in a transcript an issued value is tried by a check in the audio (`engine.value_query`).

A value is put in place of the words most like it (`window`), each field in its own words
(`field_places`), never over words that say another value heard right or our callsign (`taken_words`,
`callsign_words`), or after the whole transcript with the words that introduce it (`INTRO`).
Kept apart from the question (`engine.value_query`) and the verdict (`engine.value_check`): the check scores what is
put where, so every placement rule is a safety rule, and each says the held-out seed it comes from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from rapidfuzz.distance import Levenshtein

from engine.phraseology import speak_text
from engine.phraseology.designators import LETTER_ANCHORS
from engine.value_words import RADIO_WORDS, SYMBOL_OF, class_of, spoken_value, words_of

# The words that introduce a value tried after the whole transcript.
INTRO: dict[str, tuple[str, ...]] = {
    "runway": ("runway",),
    "heading": ("heading",),
    "flight_level": ("flight", "level"),
    "squawk": ("squawk",),
    "qnh": ("qnh",),
    "letter": ("information",),
}
WINDOW_EXTRA_WORDS = 3  # the words replaced may be up to this many more than the value has
ANCHOR_REACH = 2  # an ATIS letter's anchor is one of the words this close before its place

INSIDE_NUMBERS = frozenset({"decimal", "point", "hundred", "thousand"})


def field_places(
    heard: list[str], fields: Mapping[str, tuple[str, str]], taken: set[int]
) -> dict[str, tuple[int, int]]:
    """Each field's place in `heard` (`window`), the longest value's first: no word is the place
    of two values. A value said with some of another's digits would otherwise be tried over them:
    a dropped runway 36 over the "tree six" of the tower's 136.5 that the recognizer garbled (an
    unsure frequency, whose words `taken_words` does not know), and confirmed by the audio there.
    The longer value has the more telling place; the shorter one is tried at the words most like
    it elsewhere, or after the transcript."""
    spoken = {name: spoken_value(kind_name, value) for name, (kind_name, value) in fields.items()}
    order = sorted((name for name in fields if spoken[name]), key=lambda name: (-len(spoken[name] or ()), name))
    claimed = set(taken)
    out: dict[str, tuple[int, int]] = {}
    for name in order:
        out[name] = start, end = window(heard, spoken[name] or [], claimed)
        claimed.update(range(start, end))
    return out


def callsign_words(heard: list[str], callsign: str, digits: set[int]) -> set[int]:
    """`digits` (where our callsign's symbols are said) with the words of its name right before
    them ("wizz air" of "wizz air niner fife"): a heading 295 written "sixty nine five" was else
    tried over "wizz air", the words most like "two niner fife" left to it (a hypothesis draw).
    Where the digits are said once and the name is not written before them, the words the
    recognizer wrote for it are (`_garbled_name`); digits said twice may be a value's too
    ("heading sixty niner fife" beside "wizz air niner fife", a hypothesis draw)."""
    name = [w for w in words_of(speak_text(callsign)) if w not in SYMBOL_OF and not w.isdigit()] if callsign else []
    out = set(digits)
    for start in sorted(digits):
        at = start - 1
        while at >= 0 and at not in out and heard[at] in name:
            out.add(at)
            at -= 1
    starts = [i for i in sorted(digits) if i - 1 not in digits]
    if len(starts) == 1 and out == digits:  # said once, its name not written right before them
        out.update(_garbled_name(heard, starts[0], sum(_syllables(w) for w in name), out))
    return out


# Going back from our callsign's digits, a garbled name ends at a word said before a callsign.
_BEFORE_NAME = frozenset(
    {*RADIO_WORDS, *(w for words in INTRO.values() for w in words), *INSIDE_NUMBERS, "feet", "via", "to", "and"}
)


def _garbled_name(heard: list[str], start: int, syllables: int, taken: set[int]) -> list[int]:
    """The words right before our callsign's digits at `start` that say its name garbled, about
    as long as it (`syllables`): held-out seed 110 by the radio channel, "Edelweiss seven zero
    four" written "date, hold five seven zero four"; a dropped "three thousand" was tried over
    "date, hold", the words most like it, and at 0.83x passed by 6.5. They end at a word said
    before a callsign (`_BEFORE_NAME`) and at a symbol's word, but for one right before the
    digits ("weiss" written "five"), and are only taken with a word of no symbol among them: a
    value said right before a callsign whose name was lost ("heading zero seven zero, three two")
    keeps its words."""
    span: list[int] = []
    at = start - 1
    while at >= 0 and syllables > 0 and at not in taken and heard[at] not in _BEFORE_NAME:
        if heard[at] in SYMBOL_OF and span:
            break
        span.append(at)
        syllables -= _syllables(heard[at])
        at -= 1
    return span if any(heard[i] not in SYMBOL_OF for i in span) else []


def _syllables(word: str) -> int:
    """About how many syllables `word` has (its vowel groups, a silent final "e" not counted):
    enough to say how many written words a garbled name may take."""
    groups = len(re.findall(r"[aeiouy]+", word))
    if word.endswith("e") and not word.endswith(("le", "ee")) and groups > 1:
        groups -= 1
    return max(1, groups)


def taken_words(heard: list[str], said: Iterable[str]) -> set[int]:
    """The indices of the words of `heard` that say one of the symbol strings `said`, symbol for
    symbol ("one three six decimal five" for 136.5): another value's words, or our callsign's.
    Tried in their place, a value said with some of the same digits scores as if said ("runway
    three six" over the "three six" of the tower's 136.5 confirmed a dropped runway 36, seed 25
    by voice; "runway two eight" would over "Egyptair two eight seven"). Where the value is said
    as a whole number (no symbol of the same kind right before or after it), only there: the
    "three six" of "runway three six, tower one three six" is the frequency's as well as the
    runway's. Where it is run together with others ("... way one eight one three six decimal
    five", seed 27), wherever it is. Values of one symbol ("fife thousand") are left out: any
    "five" of the transcript says it."""
    taken: set[int] = set()
    for target in said:
        if len(target) < 2:
            continue
        whole: set[int] = set()
        inside: set[int] = set()  # matches run together with other symbols
        for start in range(len(heard)):
            got, end = "", start
            while end < len(heard) and len(got) < len(target):
                word = heard[end]
                if word in SYMBOL_OF or word.isdigit():  # whisper writes digits too ("qnh 102 four")
                    got += SYMBOL_OF[word][1] if word in SYMBOL_OF else word
                elif word not in INSIDE_NUMBERS or end == start:
                    break
                end += 1
            if got != target:
                continue
            runs_on = start > 0 and class_of(heard[start - 1]) == class_of(heard[start])
            runs_on = runs_on or (end < len(heard) and class_of(heard[end]) == class_of(heard[end - 1]))
            (inside if runs_on else whole).update(range(start, end))
        taken |= whole or inside
    return taken


def window(heard: list[str], spoken: list[str], taken: set[int] | frozenset[int] = frozenset()) -> tuple[int, int]:
    """The words of `heard` most like `spoken` (characters, normalized edit distance), as a
    slice: where the recognizer wrote the value, however garbled; never over a word of `taken`
    (another value's, `taken_words`)."""
    target = " ".join(spoken)
    best = (2.0, len(heard), len(heard))
    for start in range(len(heard) + 1):
        for end in range(start, min(len(heard), start + len(spoken) + WINDOW_EXTRA_WORDS) + 1):
            if end > start and end - 1 in taken:  # a longer window holds it too
                break
            distance = Levenshtein.normalized_distance(" ".join(heard[start:end]), target)
            if distance < best[0]:
                best = (distance, start, end)
    return best[1], best[2]


def letter_anchored(heard: list[str], start: int) -> bool:
    """Whether an ATIS letter tried at `start` follows "information" or "atis" within
    `ANCHOR_REACH` words ("information, uh, romeo"), as the transcript's own reading needs an
    anchor (`designators.letter_find`); or the transcript is empty. Without one, the letter's place
    is only the word most like its spelling anywhere, and one word is one symbol: fresh seed 151
    #165, a dropped letter R tried over "rome" (the pilot's "roger") and confirmed there (margin
    4.3, the audio likelier as written by 2.3 nats). The reading's looser anchors, "have" and
    "with", are common words ("with air" for "Wizz Air"), so they place no letter. Such a letter
    is tried after the transcript only ("... information romeo")."""
    return not heard or any(word in LETTER_ANCHORS for word in heard[max(0, start - ANCHOR_REACH) : start])
