"""ICAO digit pronunciation, and the parser that folds spoken numbers back into digits.

Speaking: digits are spoken one by one with `DIGIT_WORDS`. Our choice of spellings is
"zero one two tree four fife six seven eight niner": the three ICAO forms that change the sound
("tree", "fife", "niner") and are what a trainee must hear, and plain English for the rest, because
text-to-speech engines mispronounce "wun", "too", "fower" and "ait". Whole hundreds and thousands
of altitudes are spoken with "hundred"/"thousand" (ICAO Annex 10, 5.2.1.4): 4500 -> "four
thousand five hundred", 10000 -> "one zero thousand".

Parsing accepts all of: numerals ("4721", "121.8"), English words ("three", "twenty",
"fifteen"), ICAO words ("tree", "fife", "niner", "wun", "fower", "ait", "tousand", "dayseemal"),
"hundred" and "thousand", "decimal"/"point"/"dot" between numbers, and the homophones a
recognizer writes for digits, but only where they cannot be ordinary words (the rules, in full, in
engine/phraseology/homophones.py):

- "too" next to a number ("runway too fife right"), right after a value keyword ("runway
  too"), a number's decimal word ("decimal too") or "hundred and", or right before a unit or
  side ("too left", "too knots"); and "too too" is 22;
- "to" and "for" between two single digits ("squawk four seven to one" -> 4721);
- "oh" after a number, before a number or "thousand"/"hundred" ("one oh one three" -> 1013,
  "seven seven oh oh" -> 7700, "two oh thousand"), or where "too" would be ("squawk oh, oh");
  "o" only between two numbers (alone it is the letter).

A neighbour is looked for past one pause ("ze-ro, too"), and runs are decided together ("oh oh
four", "too oh ten").

Two word passes run before the parser (fillers are dropped between them): syllables joined into
number words ("ze-ro", "tou sand") and "double"/"triple" expanded; engine/phraseology/number_passes.py
says how.

Adjacent digit groups join into one number ("one twenty one decimal eight" -> 121.8, "three
fifty nine" -> 359, "one twenty one eight five" -> 12185, "4 7 2 1" -> 4721) unless both groups
are numerals of three or more digits ("4721 5000" stays two numbers). After "hundred"/"thousand"
the following words add up instead ("four thousand five hundred" -> 4500, "one hundred twenty"
-> 120). A `BREAK` (punctuation: a pause) ends a number, except between single digits said one
by one ("4, 7, 2, 1" -> 4721): it joins two digits only when the group on its left is itself one
spoken digit, so "one five eight, one four thousand" stays 158 and 14000. When the tokenizer
knows the callsign it tells `collapse_numbers` where its flight number starts (`flights`): the
number then ends right after the flight number's digits, so "swiss one five eight one four
thousand" is 158 and 14000.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from engine.phraseology.homophones import HOMOPHONES as _HOMOPHONES
from engine.phraseology.homophones import MISHEARD_SIDES as MISHEARD_SIDES  # re-exported
from engine.phraseology.homophones import resolve_homophones
from engine.phraseology.number_passes import BREAK as BREAK  # re-exported
from engine.phraseology.number_passes import DECIMAL_WORDS as _DECIMAL_WORDS
from engine.phraseology.number_passes import DIGITS as _DIGITS
from engine.phraseology.number_passes import NUMERIC as _NUMERIC
from engine.phraseology.number_passes import REPEATS as _REPEATS
from engine.phraseology.number_passes import expand_repeats as expand_repeats  # re-exported
from engine.phraseology.number_passes import join_syllables as join_syllables  # re-exported

DIGIT_WORDS: tuple[str, ...] = ("zero", "one", "two", "tree", "four", "fife", "six", "seven", "eight", "niner")
DECIMAL_WORD = "decimal"

_TEENS: dict[str, int] = {
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS: dict[str, int] = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fourty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_MULTIPLIERS: dict[str, int] = {"hundred": 100, "thousand": 1000}
MAX_DECIMALS = 3  # the most decimals a spoken value has (a frequency: 118.705)


def speak_digits(text: str) -> str:
    """ "118.705" -> "one one eight decimal seven zero fife"; other characters are dropped."""
    words = []
    for ch in text:
        if ch.isdigit():
            words.append(DIGIT_WORDS[int(ch)])
        elif ch == ".":
            words.append(DECIMAL_WORD)
    return " ".join(words)


def speak_whole(number: int) -> str:
    """ICAO form of an altitude-like number: whole hundreds/thousands with the words, else digits."""
    if number >= 1000 and number % 100 == 0:
        thousands, rest = divmod(number, 1000)
        words = [speak_digits(str(thousands)), "thousand"]
        if rest:
            words += [DIGIT_WORDS[rest // 100], "hundred"]
        return " ".join(words)
    if 100 <= number < 1000 and number % 100 == 0:
        return f"{DIGIT_WORDS[number // 100]} hundred"
    return speak_digits(str(number))


_WORD_CLASSES: dict[str, tuple[str, int]] = {
    **{w: ("D", n) for w, n in _DIGITS.items()},
    **{w: ("T", n) for w, n in _TEENS.items()},
    **{w: ("X", n) for w, n in _TENS.items()},
    **{w: ("M", n) for w, n in _MULTIPLIERS.items()},
}
_NONE: tuple[None, None] = (None, None)
# Every word that may be (part of) a number; the callsign matcher never takes one for a name.
NUMBER_WORDS: frozenset[str] = frozenset(_WORD_CLASSES) | frozenset(_HOMOPHONES) | _DECIMAL_WORDS | frozenset(_REPEATS)


# Words whose meaning depends on their neighbours (homophones, decimal words, "and", breaks).
_CONTEXT_WORDS = frozenset(_HOMOPHONES) | frozenset({"and", BREAK}) | _DECIMAL_WORDS


def _classify(word: str) -> tuple[str | None, object]:
    known = _WORD_CLASSES.get(word)
    if known is not None:
        return known
    if word[:1].isdigit():
        if word.isdigit():
            return ("D", int(word)) if len(word) == 1 else ("N", word)
        head, _, tail = word.partition(".")
        if head.isdigit() and tail.isdigit():
            return "N", word
    return _NONE


def _resolve(
    words: Sequence[str], flights: Sequence[tuple[int, str]] = ()
) -> tuple[list[tuple[str | None, object]], set[int]]:
    """Classify every word, then decide homophones, decimal words, 'and' and breaks by context.
    Also returns where each flight number ends (see `_flight_ends`)."""
    items = [_classify(w) for w in words]
    context = [i for i, w in enumerate(words) if w in _CONTEXT_WORDS]
    if not context:
        return items, _flight_ends(words, items, flights) if flights else set()
    n = len(items)

    def cls(i: int) -> str | None:
        return items[i][0] if 0 <= i < n else None

    def beside(i: int, step: int) -> str | None:
        """The class of the neighbour, looking past one pause ("ze-ro, too")."""
        j = i + step
        return cls(j + step) if 0 <= j < n and words[j] == BREAK else cls(j)

    callsign_starts = frozenset(start - k for start, _ in flights for k in (1, 2))
    resolve_homophones(words, items, [i for i in context if words[i] in _HOMOPHONES], beside, callsign_starts)
    ends = _flight_ends(words, items, flights) if flights else set()
    for i in context:
        if items[i][0] is not None:
            continue
        word = words[i]
        prev, nxt = cls(i - 1), cls(i + 1)
        if word in _DECIMAL_WORDS and beside(i, -1) in _NUMERIC and beside(i, 1) in ("D", "N", "T", "X"):
            # also after a pause: "one two zero, decimal five three" is 120.53, and before one:
            # "one two zero decimal, five three"
            items[i] = ("P", None)
            if nxt is None and words[i + 1] == BREAK:
                items[i + 1] = ("A", None)
        elif (
            word == BREAK
            and prev in _NUMERIC
            and i + 2 < n
            and words[i + 1] in _DECIMAL_WORDS
            and cls(i + 2) in ("D", "N", "T", "X")
        ):
            items[i] = ("A", None)
        elif word == "and" and prev == "M" and nxt in ("D", "T", "X"):
            items[i] = ("A", None)
        elif (
            word == BREAK
            and prev == "D"
            and nxt == "D"
            and (i < 2 or _group_start(words[i - 2], cls(i - 2), i - 2 in ends))
            and cls(i + 2) not in (_NUMERIC - {"M"}) | {"P"}
            and (i + 2 >= n or words[i + 2] not in _DECIMAL_WORDS)
        ) or (word == BREAK and prev == "D" and nxt == "M"):
            # a recognizer writes pauses as commas: "one, two thousand" is 12000, "five, thousand" 5000
            # "4, 7, 2, 1": a pause between single spoken digits does not end the number; after
            # or before a whole group ("one five eight, one four thousand", "delta fife, one two
            # one decimal eight") it does.
            items[i] = ("A", None)
    return items, ends


def _bare_multipliers(
    words: Sequence[str], items: list[tuple[str | None, object]], ends: Collection[int] = ()
) -> list[tuple[str | None, object]]:
    """ "climbing in thousand" (whisper's "nine" lost): "hundred"/"thousand" with no number
    before it (past one pause), and not "a thousand", counts nothing and stays a word, so no
    altitude of 1000 is read from a lost digit. Nor right after our flight number (`ends`):
    "Jetblue four three eight, thousand feet" has lost the altitude's digit, its "eight" is the
    callsign's (fresh seed 54 refused a right 5000 ft read so, as 1000)."""
    for i, (kind_, _value) in enumerate(items):
        if kind_ != "M":
            continue
        j = i - 1 if i == 0 or words[i - 1] != BREAK else i - 2
        if j < 0 or (items[j][0] is None and words[j] not in ("a", "and")) or j in ends:
            items[i] = _NONE
    return items


def _group_start(word: str, kind: str | None, flight_end: bool) -> bool:
    """True if a digit after this word begins a group: after a pause, a word, or a flight number."""
    return word == BREAK or kind is None or flight_end


class _Builder:
    """Accumulates one run of number items into number strings (see module docstring)."""

    __slots__ = ("out", "buf", "acc", "frac", "pending", "last", "long")

    def __init__(self) -> None:
        self.out: list[tuple[str, bool]] = []
        self._reset()

    def _reset(self) -> None:
        self.buf = ""  # digits of the integer part being concatenated
        self.acc: int | None = None  # additive total once "hundred"/"thousand" was heard
        self.frac: str | None = None  # digits after the decimal point
        self.pending = False  # last item was a tens word: a unit digit fills its zero
        self.last: str | None = None
        self.long = False  # a numeral of 3+ digits (or with decimals) ended: words do not extend it

    def _current(self) -> str:
        if self.acc is None and not self.buf and self.frac is None:
            return ""
        whole = str(self.acc + int(self.buf or 0)) if self.acc is not None else self.buf
        return f"{whole or '0'}.{self.frac}" if self.frac else whole

    def flush(self) -> None:
        text = self._current()
        whole, dot, frac = text.partition(".")
        if dot and self.acc is None and len(whole) > 3 and 108 <= int(whole[-3:]) <= 136:
            # "runway three six one one niner decimal niner zero fife": digits said before a
            # frequency without a pause are another number (36, then 119.905)
            self.out.append((whole[:-3], False))
            text = f"{whole[-3:]}.{frac}"
        if text:
            self.out.append((text, self.acc is not None))
        self._reset()

    def peek(self) -> list[str]:
        """The numbers so far, as `flush` would leave them."""
        text = self._current()
        return [t for t, _ in self.out] + ([text] if text else [])

    def feed(self, kind: str, value: object) -> None:
        if kind in ("D", "T", "X"):
            self.word(kind, value)  # type: ignore[arg-type]
        elif kind == "N":
            self.numeral(value)  # type: ignore[arg-type]
        elif kind == "M":
            self.multiplier(value)  # type: ignore[arg-type]
        elif kind == "P":
            self.decimal()

    def _append(self, digits: str, tens: bool) -> None:
        if self.frac is not None:
            if self.pending and digits != "0" and len(digits) == 1:
                self.frac = self.frac[:-1] + digits
            else:
                self.frac += digits
        elif self.pending and len(digits) == 1 and digits != "0":
            self.buf = self.buf[:-1] + digits
        else:
            self.buf += digits
        self.pending = tens

    def word(self, kind: str, value: int) -> None:
        if self.long or (self.frac is not None and len(self.frac) >= MAX_DECIMALS and not self.pending):
            self.flush()  # a frequency has at most three decimals: "... decimal one seven fife four thousand"
        if self.acc is not None and self.frac is None and self.last in ("D", "T") and not self.pending:
            # "five thousand four seven": after a multiplier, digit after digit starts a new number
            self.out.append((str(self.acc), True))
            self.acc = None
        self._append(str(value), kind == "X")
        self.last = kind

    def numeral(self, text: str) -> None:
        head, _, tail = text.partition(".")
        if self.frac is not None:
            if tail or len(self.frac) + len(head) > MAX_DECIMALS:
                self.flush()
            else:
                self.frac += head
                self.last = "N"
                return
        if self.acc is not None or (self.buf and len(head) > 2):
            # a written group of three or more digits is a number of its own: "runway three six
            # 119.905", "h 7 121.91" (digits said before it belong to another value)
            self.flush()
        self.buf += head
        self.pending = False
        self.long = len(head) > 2 or bool(tail)
        if tail:
            self.frac = tail
        self.last = "N"

    def multiplier(self, value: int) -> None:
        if self.frac is not None:
            # "approach one two five decimal zero six three thousand feet": no decimal is
            # multiplied, so the digit (or tens word) before the multiplier starts the altitude
            keep = 2 if self.last in ("T", "X") else 1
            if self.acc is not None or self.last not in ("D", "T", "X") or len(self.frac) < keep:
                self.flush()
                return
            head, self.frac = self.frac[-keep:], self.frac[:-keep]
            self.flush()
            self.buf = head
        if value == 1000 and self.acc is None and len(self.buf) > 2:
            # "tree fife niner fife thousand" (no pause after a callsign): thousands are counted
            # with one digit, or one teen/tens word; the digits before are another number.
            keep = 2 if self.last in ("T", "X") else 1
            self.out.append((self.buf[:-keep], False))
            self.buf = self.buf[-keep:]
        base = int(self.buf) if self.buf else None
        if value == 100:
            self.acc = (self.acc or 0) + (1 if base is None else base) * 100
        elif self.acc is not None and self.acc < 1000:
            self.acc = (self.acc + (base or 0)) * 1000  # "two hundred fifty thousand"
        else:
            self.acc = (self.acc or 0) + (1 if base is None else base) * 1000
        self.buf, self.pending, self.long, self.last = "", False, False, "M"

    def decimal(self) -> None:
        if self.frac is None and (self.buf or self.acc is not None):
            self.frac = ""
            self.pending = False
            self.long = False
        else:
            self.flush()
        self.last = "P"


def _flight_ends(
    words: Sequence[str], items: list[tuple[str | None, object]], flights: Sequence[tuple[int, str]]
) -> set[int]:
    """Index of the last word of each flight number: the shortest run of number words from its
    start that reads exactly as its digits ("one fifty eight" for 158, "one, five, eight")."""
    ends: set[int] = set()
    for start, digits in flights:
        builder = _Builder()
        for j in range(start, len(items)):
            kind, value = items[j]
            if words[j] == BREAK:
                continue
            if kind is None:
                break
            builder.feed(kind, value)
            if kind != "A" and builder.peek() == [digits]:
                ends.add(j)
                break
    return ends


def collapse_numbers(words: Sequence[str], flights: Sequence[tuple[int, str]] = ()) -> tuple[list[str], frozenset[int]]:
    """Replace spoken numbers in a word list by digit strings.

    Returns the new words and the indexes of numbers that were said with "hundred"/"thousand"
    (altitude-like). `BREAK` markers separate numbers and are dropped from the output.
    `flights` are (word index, digits) of a callsign's flight number: the number ends after them.
    """
    items, ends = _resolve(words, flights)
    items = _bare_multipliers(words, items, ends)
    out: list[str] = []
    multiplied: set[int] = set()
    builder: _Builder | None = None

    def close() -> None:
        nonlocal builder
        if builder is None:
            return
        builder.flush()
        for text, mult in builder.out:
            if mult:
                multiplied.add(len(out))
            out.append(text)
        builder = None

    for i, (word, (kind, value)) in enumerate(zip(words, items, strict=True)):
        if kind is None:
            close()
            if word != BREAK:
                out.append(word)
            continue
        if builder is None:
            builder = _Builder()
        builder.feed(kind, value)
        if i in ends:
            close()
    close()
    return out, frozenset(multiplied)
