"""Digits that sound like words ("too", "to", "for", "oh", "o", whisper's "fall"/"full"/"near"/"free"),
decided by their neighbours: one pass of the number parser (engine/phraseology/numbers.py), in
its own module because every rule is a pilot's or a recognizer's habit found in a transcript, and
they keep coming."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.phraseology.alphabet import WORD_LETTERS
from engine.phraseology.number_passes import BREAK, DECIMAL_WORDS, NUMERIC

__all__ = ["HOMOPHONES", "MISHEARD_SIDES", "resolve_homophones"]

HOMOPHONES: dict[str, int] = {
    "too": 2,
    "to": 2,
    "for": 4,
    "fo": 4,
    "fall": 4,
    "full": 4,
    "oh": 0,
    "o": 0,
    "near": 9,
    "free": 3,
}
# whisper's words for a runway side it misheard (engine/phraseology/runways.py)
MISHEARD_SIDES = frozenset(
    {"lift", "last", "lats", "laughed", "lefts", "light", "lite", "write", "rite", "wright", "bride"}
)
# Words a number comes before: "too left" is runway 2 left.
_UNIT_WORDS = frozenset({"left", "right", "center", "feet", "knots", "degrees"})
_SIDES = frozenset({"left", "right", "center"})
# After a phonetic letter, "to"/"for"/"fo" is the taxiway's digit ("bravo fo, lima fo and golf
# one", "delta to golf two") when a route goes on (another letter, "and") or the transmission
# pauses or ends there; "alfa for runway two five" keeps its preposition. "for" (never "to": "alfa
# to stand bravo one") is the digit before the stand too: "whiskey for stand foxtrot tree two".
_ROUTE_GOES_ON = frozenset({"and", "qnh", "squawk", "wilco", "roger"})  # no object of "to"/"for"
# Keywords "to" never follows as a preposition: "heading to five zero" is heading 250.
_TWO_AFTER = frozenset({"heading", "runway", "squawk", "qnh"})
_FOUR_BEFORE = frozenset({"stand", "gate"})
# Keywords a number follows: "runway too" is runway 2.
_VALUE_WORDS = frozenset(
    {
        "runway",
        "runways",
        "heading",
        "squawk",
        "squawking",
        "code",
        "transponder",
        "level",
        "qnh",
        "altimeter",
        "speed",
        "climb",
        "descend",
        "maintain",
        "altitude",
    }
)
# Phonetic letter words ("tango", "golf"): a "too" after one is the digit of a taxiway or position.
_PHONETIC = frozenset(WORD_LETTERS)


def resolve_homophones(
    words: Sequence[str],
    items: list[tuple[str | None, object]],
    pending: list[int],
    beside: Callable[[int, int], str | None],
    callsign_starts: frozenset[int] = frozenset(),
) -> None:
    """Digits that sound like words, decided by their neighbours until nothing changes, so runs
    resolve ("seven seven oh oh", "oh oh four", "too oh ten"):

    - "too" and "oh" next to a number, right after a value keyword ("runway too", "squawk oh",
      also across "to": "speed to too oh too") or a number's decimal word ("decimal too") or
      "hundred and", or right before a unit ("too left", "too knots");
      "too too" is 22, "too oh oh" 200;
    - "to"/"for"/"fo" (and whisper's "fall"/"full" for four) between two single digits, or after a
      phonetic letter where a route goes on, our callsign follows (`callsign_starts`: its first
      word, "holding point kilo for Egyptair tree two") or the words pause or end ("bravo fo, lima
      fo and golf one", "echo to, QNH ..."; "for", not "to", also before "stand", "gate" or one
      lone digit: "stand kilo for five" is K45, "bravo for one eight left" keeps "for"); "to" right after
      "heading", "runway", "squawk" or "QNH" before a digit ("heading to five zero");
      "for"/"fo"/"fall"/"full" also after a digit before a side ("runway tree fall left");
      and right after a number's decimal word ("one one niner decimal for": nothing but a digit
      follows it there; "point to" stays, whisper's "point zero" as often as "point two");
    - "for"/"fo" (never "to") starting a number right before "thousand" ("descending for thousand
      feet": in every recorded voice run a said "four thousand");
    - "free" (ICAO "tree" as whisper writes it) next to a number, after a value keyword or a
      phonetic letter: "Egyptair free two", "squawk four five free tree", "kilo free";
    - "o" only between two numbers (alone it is also the letter)."""
    changed = True
    while pending and changed:
        changed = False
        for i in list(pending):
            word = words[i]
            prev, nxt = beside(i, -1), beside(i, 1)
            keyword = (i > 0 and words[i - 1] in _VALUE_WORDS) or (i + 1 < len(words) and words[i + 1] in _UNIT_WORDS)
            keyword = keyword or (i > 1 and words[i - 1] in DECIMAL_WORDS and beside(i - 1, -1) in NUMERIC)
            keyword = keyword or (i > 1 and words[i - 1] == "and" and beside(i - 1, -1) == "M")  # "hundred and too"
            keyword = keyword or (i > 1 and words[i - 1] == "to" and words[i - 2] in _VALUE_WORDS)  # "speed to too"
            if word in ("too", "free"):  # "free": ICAO "tree" as whisper writes it ("Egyptair free two")
                after = words[i + 1] if i + 1 < len(words) else ""
                twice = word == "too" and ("too" in (words[i - 1] if i else "", after) or after == "oh")  # 200
                # after a phonetic letter: a taxiway or holding point ("tango too", "golf too", "kilo free")
                lettered = i > 0 and words[i - 1] in _PHONETIC
                digit = prev in NUMERIC or nxt in NUMERIC or keyword or twice or lettered
            elif word in ("to", "for", "fo", "fall", "full"):
                after = words[i + 1] if i + 1 < len(words) else BREAK
                goes_on = after == BREAK or after in _PHONETIC or after in _ROUTE_GOES_ON or i + 1 in callsign_starts
                lone_digit = nxt == "D" and beside(i + 1, 1) not in NUMERIC  # "kilo for five via", not "for one eight"
                goes_on = goes_on or (word != "to" and (after in _FOUR_BEFORE or lone_digit))
                in_route = i > 0 and words[i - 1] in _PHONETIC and goes_on
                sided = (
                    word != "to" and prev == "D" and (after in _SIDES or after in MISHEARD_SIDES)
                )  # "tree fall left"
                keyed = word == "to" and i > 0 and words[i - 1] in _TWO_AFTER and nxt == "D"  # "heading to five zero"
                decimal = word != "to" and i > 1 and words[i - 1] in DECIMAL_WORDS and beside(i - 1, -1) in NUMERIC
                # "maintaining for thousand feet": no preposition goes before "thousand" ("to" does:
                # "descend to [five] thousand" with the digit lost, so "to" stays a word there)
                thousands = word in ("for", "fo") and after == "thousand" and prev not in NUMERIC
                digit = (prev == "D" and nxt == "D") or in_route or sided or keyed or decimal or thousands
            elif word == "near":  # "niner" as a recognizer writes it: "three five near" after two digits
                digit = prev == "D" and beside(i - 1, -1) in ("D", "N")
            elif word == "oh":
                digit = prev in ("D", "N", "T", "X") or nxt in ("D", "N", "M", "T", "X") or keyword
            else:
                digit = prev in ("D", "N") and nxt in ("D", "N")
            if digit:
                items[i] = ("D", HOMOPHONES[word])
                pending.remove(i)
                changed = True
