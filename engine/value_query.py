"""The question asked of the audio about a readback value left unsure, before "say again".

By voice, the transcript is the recognizer's best guess, and a guess can lose a value the pilot
said clearly enough ("ground one two one, the sierra" for 121.850). Before the controller asks
again, the gateway may ask the recognizer a narrower question about the same audio: the transcript
with the issued value put in its place (`query`: the words most like it are replaced), scored
word by word (`gateway.speech.stt.whisper_scoring`). How the answer is read, and what it may
confirm, is `engine.value_check`.

Each value is also tried after the whole transcript, with the words that introduce it
("... six zero two qnh one zero two two"): tiny.en often stops writing before the audio ends, or
writes the value too garbled for the words most like it to be its place. Forced there, whisper
reads the audio once more for those words (`Hypothesis.appended`).

A value that ends in a digit has one place more, after it: there no digit may be likelier than
none (`Hypothesis.end`; its margin counts in the check's `margin`). Every place of 118.100, "one
one eight decimal one", is in a pilot's "decimal one five", which only the digit after it tells
apart. A value with all the digits its kind has (a runway's two, a squawk's four) has no such
place: in "runway one eight, one one eight decimal one" the digit after 18 is the frequency's.
Values are tried as pilots say them too: a frequency without its last zero ("decimal eight fife"
for 121.850), a taxi route with "and" before its last taxiway ("romeo one and echo two").

A value is never tried in place of words that say another value the readback check heard
right, or our callsign, as a whole number (`taken_words`): there its digits are in the audio
whatever the pilot said of this value ("runway three six" put over the "three six" of "tower one
three six, decimal five" confirmed a dropped runway, seed 25): the words most like it elsewhere
are its place; nor where a value heard right by a check is (seed 61: a dropped "three thousand"
over the "three fifty" of a heading 360); nor over our callsign's name, written right or garbled
right before its digits (seed 110: a dropped "three thousand" over the "date, hold" written for
"Edelweiss"). Nor are two values tried over one word (`field_places`): a dropped runway 36 would
find the "tree six" of a garbled tower frequency and score as said there. Where the words are
chosen lives in `engine.value_places`; the rivals of a frequency written short and of a
clearance limit in `engine.value_rivals`.

A SID or STAR is checked only where the transcript has its fix name (`is_fix_name`, as the
readback check finds it) and its digit or letter is unsure ("via METRO one halfa"): the name is
no symbol, so only the digit and letter are scored, in place, never after the transcript. An
ATIS letter is tried in place only after "information" or "atis", as the transcript's own reading
finds one (`value_places.letter_anchored`): alone, one word is one symbol, and the word most like
its spelling may be another word (fresh seed 151: a dropped R confirmed over "rome", the pilot's
"roger"); it is tried after the transcript ("... information romeo") all the same.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from difflib import SequenceMatcher
from typing import Any

from pydantic import Field

from engine.hearing import ValueCheck
from engine.models import DomainModel, ReadbackResult
from engine.phraseology import kind_for_variable, speak_text
from engine.phraseology.designators import is_fix_name
from engine.phraseology.handlers import canonical_of, kind
from engine.phraseology.instructions import PREFIX as INSTRUCTION_PREFIX
from engine.phraseology.kinds import PROCEDURE_KINDS
from engine.phraseology.transcript import CORRECTION_WORDS
from engine.value_places import INTRO, callsign_words, field_places, letter_anchored, taken_words
from engine.value_rivals import limit_rivals, place_span, rival_value
from engine.value_words import (
    MOST_DIGITS,
    SYMBOL_OF,
    class_of,
    is_full,
    said_symbols,
    spellings_of,
    spoken_value,
    symbols_in,
    words_of,
)

# Procedures: their fix name is no symbol, so a check confirms only the digit and letter, of a
# name the transcript itself has (`is_fix_name`), in place, never after the transcript.
_NAMED = PROCEDURE_KINDS


class Slot(DomainModel):
    """One place of a value in a hypothesis: its word, and the symbol of its kind said there."""

    word: int
    cls: str  # digit | letter | side: the symbols it is compared with (`SYMBOLS`)
    symbol: str


class Hypothesis(DomainModel):
    """The transcript with one field's issued value in place of the words most like it."""

    field: str
    value: str  # the issued value, canonical ("121.850")
    words: list[str]
    slots: list[Slot]
    appended: bool = False  # after the whole transcript, not in place of words of it
    place: tuple[int, int] = (0, 0)  # the words of `ValueQuery.heard` it replaces (none when appended)
    end: int | None = None  # the word after a value that ends in a digit: no further digit may be said there
    rival: bool = False  # not the issued value but its rival (engine/value_rivals.py): `value` is the rival's
    against: list[str] = Field(default_factory=list)  # a rival's words to score it against (else `heard`)
    # scored, with its `against`, under a prompt that names no place alone (a city rival: under one
    # naming the issued place, the city said starts far behind; engine/value_rivals.py)
    unprompted: bool = False


class ValueQuery(DomainModel):
    """What the gateway asks the recognizer: the transcript as heard (`heard`, the words every
    hypothesis is measured against) and one or more hypotheses per field."""

    heard: list[str]
    hypotheses: list[Hypothesis] = Field(default_factory=list)


def expected_values(
    rb: ReadbackResult,
    variables: Mapping[str, Any],
    issued: Mapping[str, Any],
    statuses: tuple[str, ...] = ("unsure", "missing"),
) -> dict[str, tuple[str, str]]:
    """Field -> (kind, canonical issued value) for the fields of `rb` of `statuses`: by default
    those not heard right (unsure or missing), the ones a check may confirm; never one the best
    transcript heard as another value (`rb.contradicted`)."""
    names = [name for name, status in rb.fields.items() if status in statuses and name not in rb.contradicted]
    return issued_values(names, variables, issued)


def issued_values(
    names: Iterable[str], variables: Mapping[str, Any], issued: Mapping[str, Any]
) -> dict[str, tuple[str, str]]:
    """Field -> (kind, canonical issued value) for the fields `names` that have an issued value."""
    out: dict[str, tuple[str, str]] = {}
    for name in names:
        if name.startswith(INSTRUCTION_PREFIX):
            continue  # "climb", "line up": words, not a value to score digit by digit
        handler = kind(kind_for_variable(name))
        raw = variables.get(name, issued.get(name))
        value = canonical_of(handler, raw) if raw not in (None, "") else None
        if value is not None:
            out[name] = (handler.name, value)
    return out


def query(
    transcript: str,
    fields: Mapping[str, tuple[str, str]],
    heard_right: Mapping[str, tuple[str, str]] | None = None,
    callsign: str = "",
    heard_other: Mapping[str, tuple[str, str]] | None = None,
    by_check: Collection[str] = (),
    rivals: Mapping[str, str] | None = None,
    rivalled: Collection[str] = (),
    told: Mapping[str, tuple[str, ...]] | None = None,
) -> ValueQuery | None:
    """The question about `fields` (field -> (kind, issued value)); None when no field's kind
    can be checked. Each field is tried in both spellings (and the two mixed as written), in
    place of the words of the transcript most like its ICAO one (or inserted at the end of an
    empty transcript), and after the whole transcript with the words that introduce it
    (`appended`). `heard_right` (the fields heard right, by their words or a check) and
    `callsign` (our own, as spoken) say words no field is tried in place of (`taken_words`; for
    a value heard right only `by_check` and spelled in no words, the words most like it): the
    words most like it elsewhere are. The fields checked, and those the best transcript heard as
    another value (`heard_other`, never checked), each have their own place (`field_places`): no two
    values are tried over one word. A frequency of `rivals` (field -> a transcript that wrote it
    short, `value_rivals`) is also tried in place in that transcript with its last decimal said
    twice (`Hypothesis.rival`), against the same with it said once; of those `rivalled` (heard
    right, only written short: `ReadbackResult.rivalled`) only the rival is asked. A clearance
    limit of `told` (field -> the names the issued place goes by; `value_rivals.told_places`) is
    tried as each other city of `LIMIT_RIVALS` in place of its name in the transcript, against the
    transcript as written, under a prompt naming no place alone (`Hypothesis.unprompted`)."""
    heard = words_of(transcript)
    own = callsign_words(heard, callsign, taken_words(heard, [callsign_symbols(callsign)]))
    taken = set(own)
    # a value's spelling inside our callsign is the callsign's ("heading two eight seven" beside
    # "egyptair two eight seven"): there the value is spelled in no words of its own
    spelled = {name: taken_words(heard, [said_symbols(*value)]) - own for name, value in (heard_right or {}).items()}
    taken.update(*spelled.values())
    unspelled = {name: value for name, value in (heard_right or {}).items() if name in by_check and not spelled[name]}
    for start, end in field_places(heard, unspelled, taken).values():  # `field_places` claims on a copy
        taken.update(range(start, end))
    hypotheses: list[Hypothesis] = []
    windows = field_places(heard, {**(heard_other or {}), **fields}, taken)
    for name, (kind_name, value) in fields.items():
        spoken = spoken_value(kind_name, value)
        if spoken is None or name in rivalled:
            continue
        start, end = windows[name]
        if kind_name in _NAMED and not any(is_fix_name(w, spoken[0]) for w in heard[start:end]):
            continue
        # in place in both spellings; after the transcript in the ICAO one only (an appended check's
        # margin scores every form of a symbol: on seeds 15-16 it confirmed as many, 1/4 less decoding)
        places: list[tuple[int, int, tuple[str, ...], list[list[str]]]] = []
        if kind_name != "letter" or letter_anchored(heard, start):  # a lone letter's place is a guess
            places.append((start, end, (), spellings_of(kind_name, spoken, heard[start:end])))
        if heard and kind_name not in _NAMED:
            places.append((len(heard), len(heard), INTRO.get(kind_name, ()), [spoken]))
        for at, until, intro, spellings in places:
            for spelling in spellings:
                words = [*heard[:at], *intro, *spelling, *heard[until:]]
                slots = [
                    Slot(word=at + len(intro) + i, cls=cls, symbol=symbol)
                    for i, w in enumerate(spelling)
                    if (found := SYMBOL_OF.get(w)) is not None
                    for cls, symbol in [found]
                ]
                if slots:
                    appended = bool(heard) and at == len(heard)
                    after = at + len(intro) + len(spelling)
                    last_digit = class_of(spelling[-1]) == "digit" and not is_full(kind_name, spelling)
                    hypotheses.append(
                        Hypothesis(
                            field=name,
                            value=value,
                            words=words,
                            slots=slots,
                            appended=appended,
                            place=(at, until),
                            end=after if last_digit else None,
                        )
                    )
    for name, names in (told or {}).items():
        hypotheses += _other_places(name, heard, names) if name in fields else []
    for name, transcript in (rivals or {}).items():
        # the value said once, in the words of the hearing that wrote it short; said twice against it
        written = query(transcript, {name: fields[name]}, heard_right, callsign, heard_other, by_check)
        in_place = [h for h in (written.hypotheses if written else []) if not h.appended and h.end]
        if in_place:
            hypotheses.append(_said_twice(_as_written(in_place, words_of(transcript))))
    return ValueQuery(heard=heard, hypotheses=hypotheses) if hypotheses else None


def _other_places(name: str, heard: list[str], names: tuple[str, ...]) -> list[Hypothesis]:
    """The transcript with each city of `LIMIT_RIVALS` but the issued place (`names`) in place of
    the words that name it, each against the transcript as written (`value_rivals`); none where
    the transcript's words name it nowhere."""
    span = place_span(heard, names)
    if span is None:
        return []
    start, end = span
    # names as whisper writes them, capitalized: in lower case a long name ("dusseldorf") is many
    # rare tokens, a short one ("rome") one common token, and a right "Dusseldorf" lost to Rome by 8.8
    written = [*heard[:start], *(w.capitalize() for w in heard[start:end]), *heard[end:]]
    return [
        Hypothesis(
            field=name,
            value=city,
            words=[*heard[:start], *city.split(), *heard[end:]],
            slots=[],
            place=span,
            rival=True,
            against=written,
            unprompted=True,
        )
        for city in limit_rivals(names)
    ]


def _as_written(hypotheses: list[Hypothesis], written: list[str]) -> Hypothesis:
    """The hypothesis whose words are most like the transcript's own (`written`): its rival is
    weighed against the value said once as the recognizer wrote it. Said once in another spelling
    (ICAO "fife" for a written "five"), that transcript is unlikely itself, and a digit said twice
    costs little more there: held-out seed 106's "decimal seven, All Nippon", right, scored its
    rival +2.2 in the likeliest of three spellings, -7.9 as written."""
    return max(hypotheses, key=lambda h: SequenceMatcher(None, h.words, written, autojunk=False).ratio())


def _said_twice(hypothesis: Hypothesis) -> Hypothesis:
    """`hypothesis` (a frequency in place, written short) with its last digit said twice: the
    rival value the transcript would write as it (`value_rivals`), scored against it."""
    last = hypothesis.slots[-1]
    words = [*hypothesis.words[: last.word + 1], hypothesis.words[last.word], *hypothesis.words[last.word + 1 :]]
    decimals = len(hypothesis.slots) - len(hypothesis.value.partition(".")[0])
    return hypothesis.model_copy(
        update={
            "value": rival_value(hypothesis.value, decimals),
            "words": words,
            "slots": [*hypothesis.slots, last.model_copy(update={"word": last.word + 1})],
            "end": None if hypothesis.end is None else hypothesis.end + 1,
            "rival": True,
            "against": hypothesis.words,
        }
    )


LOOP_MIN_WORDS = 3  # a block this long said again to the end is whisper's loop, not the pilot


def said_twice(transcript: str) -> bool:
    """Whether the transcript is one block of words said again to its end (whisper's loop: "All
    Nippon six zero two. Departure one one eight point four. All Nippon six zero two. Departure
    one one eight point four."): the second copy is not in the audio, so a value put into either
    copy is scored beside words the pilot never said there (held-out seed 96: 118.400 read back
    for 118.450, written so; "five" put after the first "four" passed by 2.8). A check of such a
    transcript confirms nothing, and none is asked for. So where the loop starts later and wears
    out (a block said again right after itself, anywhere): fresh seed 164 #193, "contact approach
    one two zero decimal four three, Japanair one one one three" written "... decimal fife three
    japanair one one one three japanair one one one three japanair one one three japanair one",
    120.53 for 120.43, read as the issued 120.530 written short and heard right by its rival.
    A block of one word said again and again ("hotel one one one one one one") is left to the
    other rules: a digit said more than once is stretched so, and there the replay's recorded
    checks were placed over words a narrower question would not use (seed 151 #39)."""
    words = words_of(transcript)
    n = len(words)
    if any(all(words[i] == words[i % k] for i in range(n)) for k in range(LOOP_MIN_WORDS, n // 2 + 1)):
        return True
    return any(
        words[i : i + k] == words[i + k : i + 2 * k] and len(set(words[i : i + k])) > 1
        for k in range(LOOP_MIN_WORDS, n // 2 + 1)
        for i in range(n - 2 * k + 1)
    )


# "correction" as whisper writes it too (`CORRECTION_WORDS`), and its "correct" ("QNH one zero zero
# four. Correct. QNH one zero zero one"): here a word missed costs a value said wrong after it.
_CORRECTED = CORRECTION_WORDS | {"correct"}


def checks_from(transcript: str, alternatives: Iterable[str]) -> int | None:
    """The first word of `transcript` a check in the audio may stand on: 0 where no hearing has
    the pilot correct himself; after the best transcript's last correction where it has one; None
    (no check counts, none is asked) where only another hearing has it, the best one cut before it.

    The audio holds the value the pilot called an error as well as the one he said after it, and
    a check of the issued value finds it wherever he said it: `livefreq bench readback
    --corrections 0.3`, seed 165, accepted 11 of 30 issued values corrected into wrong ones, 10 of
    them so ("climb to three thousand, correction, maintain two thousand": 3000 checked over the
    words before the correction, margin 6.2; a best transcript cut before the correction, "runway
    three six.", confirmed the same way beside n-best hypotheses that heard it, "... direction
    runway three five"). Where a check stands after the correction it weighs what the pilot said
    last, as any check does."""
    words = words_of(transcript)
    last = max((i for i, w in enumerate(words) if w in _CORRECTED), default=-1)
    if last >= 0:
        return last + 1
    return None if any(_CORRECTED & set(words_of(t)) for t in alternatives) else 0


def counted_checks(checks: Iterable[ValueCheck], start: int | None) -> list[ValueCheck]:
    """The `checks` placed at or after word `start` (`checks_from`); all of them at 0, none at None."""
    if start is None:
        return []
    return [c for c in checks if start == 0 or (c.place is not None and c.place[0] >= start)]


QNH_DIGITS = frozenset({3, 4})  # hectopascals: "niner niner eight" and "one zero one three"


def said_again_otherwise(
    transcript: str, checks: Iterable[ValueCheck], fields: Mapping[str, tuple[str, str]], accounted: Iterable[str]
) -> list[ValueCheck]:
    """The in-place `checks` of `fields` (field -> (kind, issued value)) after whose place the
    best transcript says another run of as many digits as a value of its kind (a QNH three or
    four, `QNH_DIGITS`), which no value of `accounted` (the symbols of every issued value and of
    our callsign) says: the pilot said a second value of that kind after the one checked, and
    which he meant is not for a check of the first to decide. The correction word that would say
    so is often lost (fresh seed 165 #261: "QNH one zero one four, correction, QNH one zero one
    six" written "the nh one, zero one four, three, chance, the nh one, zero one six", its keyword
    and correction word lost in every hearing; a check of 1014 over the first four digits passed
    by 3.2)."""
    words = words_of(transcript)
    known = set(accounted)
    out: list[ValueCheck] = []
    for check in checks:
        kind_name, value = fields.get(check.field, ("", ""))
        said = said_symbols(kind_name, value) if kind_name in MOST_DIGITS else ""
        if check.place is None or check.rival or not said.isdigit():
            continue
        lengths = QNH_DIGITS if kind_name == "qnh" else {len(said)}
        later = _digit_runs(words[check.place[1] :])
        if any(len(run) in lengths and run != said and run not in known for run in later):
            out.append(check)
    return out


def run_on(transcript: str, checks: Iterable[ValueCheck], fields: Mapping[str, tuple[str, str]]) -> list[ValueCheck]:
    """The in-place `checks`, at another tempo than as recorded, of a value of digits whose place
    in the best transcript comes right after a digit word that no other value tried in its own
    place says: the question says the value run on from another digit ("seven nine thousand",
    "flight level one one zero zero"), and heard faster or slower, the recognizer may score the
    issued digits against audio that says the one before them. Fresh seed 167 #123: a dropped
    "nine thousand" tried over "niropore", our callsign's "zero four" garbled right after its
    "seven" ("Wilcoeville waste seven niropore"), passed by 5.0 at 1.25x only; fresh seed 168
    #265: FL110 said, written "flight level one one one zero", FL100 tried over its last three
    words passed by 2.7 at 1.25x only. Taken on both sides and at every tempo, the replay asked 76
    more right readbacks again and moved the question of seven answers; so, 12 (stop 64)."""
    words = words_of(transcript)
    in_place = [(c, c.place) for c in checks if c.place is not None and not c.rival]
    out: list[ValueCheck] = []
    for check, (start, _) in in_place:
        kind_name, value = fields.get(check.field, ("", ""))
        if check.tempo == 1.0 or not any(s.isdigit() for s in said_symbols(kind_name, value)):
            continue
        before = start - 1
        # a digit in another value's own place is that value's, not run on
        theirs = any(o.field != check.field and at <= before < end for o, (at, end) in in_place)
        if before >= 0 and class_of(words[before]) == "digit" and not theirs:
            out.append(check)
    return out


def _digit_runs(words: list[str]) -> list[str]:
    """The runs of digits `words` say one after another ("one zero one six" -> "1016"; numerals
    as written count their digits), each ended by any other word."""
    runs: list[str] = [""]
    for word in words:
        digits = word if word.isdigit() else SYMBOL_OF[word][1] if class_of(word) == "digit" else ""
        if digits:
            runs[-1] += digits
        elif runs[-1]:
            runs.append("")
    return [run for run in runs if run]


def callsign_symbols(callsign: str) -> str:
    """The symbols our callsign says, as spoken ("China Eastern 74" -> "74"), digits written as
    digits too (read as words alone, "74" gave none: no word of a callsign was protected)."""
    return symbols_in(words_of(speak_text(callsign))) if callsign else ""
