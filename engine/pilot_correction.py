"""A pilot's own "correction" inside one transmission: which words it replaces.

ICAO phraseology: "correction" means an error was made, and the correct version follows. A pilot
says it two ways:

- **with the item's keyword again**: "runway two five right, correction, runway two five left".
  Or with a value whose form names its kind: "correction two five left" (a runway side),
  "correction five thousand feet". The readback check's finders hear a value of that kind after
  the correction, and it replaces the values of its kind heard before (`engine.readback._heard`);
- **bare**: "squawk three five five three, correction, three five three five"; "heading zero seven
  zero, correction zero eight zero"; "via yankee five hotel seven, correction hotel eight". No
  finder hears a value after the correction, since its keyword was not said again. The correct
  version replaces the last value said before the correction.

`splice_bare` rewrites a transcript of the second kind into what the pilot meant ("squawk 3535"),
so that every finder reads the corrected version, and the value said after the correction is the
one checked. Before it, the bare value was no value of any kind, the first one stood, and a wrong
squawk read back after a correction was accepted. A correction with nothing after it takes the
value it calls an error away all the same ("squawk 3535, correction": no squawk read back).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from engine.phraseology.transcript import CORRECTION_WORDS, Transcript, last_correction

__all__ = ["CORRECTION_WORDS", "corrections", "last_correction", "splice_bare"]

# Words that are part of a spoken value besides numerals and letters: a runway's side.
_VALUE_WORDS = frozenset({"left", "right", "center"})


def corrections(t: Transcript) -> list[int]:
    """Indexes of every "correction" in the transcript, last first: splicing one (`splice_bare`)
    removes only words before it and itself, so the indexes of those before it still hold."""
    return [i for i in range(len(t.words) - 1, -1, -1) if t.words[i] in CORRECTION_WORDS]


def splice_bare(t: Transcript, correction: int, masked: Iterable[int], hits: Iterable[int]) -> Transcript | None:
    """The transcript as corrected, for a bare correction at `correction`, else None.

    The correction's value is the first value word after it (a numeral, a letter, a runway side;
    not a callsign's, `masked`). It is bare when no finder's hit (`hits`: where each value heard
    starts) starts between the correction and that word: no keyword, and no form that names its
    kind. Then the words from the start of the last run of value words before the correction, up
    to the correction itself, give way to the words after it: "squawk 3553 correction 3535" ->
    "squawk 3535", "climb 6000 feet correction 7000, squawk 3553" -> "climb 7000, squawk 3553",
    "via y 5 h 7 correction h 8" -> "via h 8". Every value in the result is checked as usual, so a
    wrong one said after the correction is always caught, and a value said before the corrected
    one stays where it was. With no value after it ("squawk 3535, correction", the rest cut off
    or lost by the recognizer, or only our callsign after it), the value the pilot called an
    error goes all the same: "squawk 3535, correction" -> "squawk", a readback still to be made."""
    hidden = frozenset(masked)
    if not 0 <= correction < len(t.words) or t.words[correction] not in CORRECTION_WORDS:
        return None  # gone with a later correction's splice ("6000 correction correction 7000")
    value = next((i for i in range(correction + 1, len(t.words)) if i not in hidden and _is_value(t, i)), -1)
    if any(correction < h <= (value if value >= 0 else len(t.words)) for h in hits):
        return None
    end = next((i for i in range(correction - 1, -1, -1) if i not in hidden and _is_value(t, i)), -1)
    if end < 0:
        return None
    start = end
    while start > 0 and start - 1 not in hidden and _is_value(t, start - 1):
        start -= 1
    return _without(t, start, correction + 1)


def _without(t: Transcript, start: int, stop: int) -> Transcript:
    """`t` without its words `start` to `stop` (exclusive)."""
    cut = stop - start
    return Transcript(
        t.words[:start] + t.words[stop:],
        frozenset(i for i in t.multiplied if i < start) | frozenset(i - cut for i in t.multiplied if i >= stop),
        t.letters[:start] + t.letters[stop:],
        t.doubted,
    )


def _is_value(t: Transcript, i: int) -> bool:
    return t.number(i) is not None or t.letter(i) is not None or t.word(i) in _VALUE_WORDS


def corrected_elsewhere(
    best: Mapping[str, tuple[str, str, str]], cut: Sequence[Mapping[str, tuple[str, str, str]]], corrected: bool
) -> set[str]:
    """By voice, the fields of `best` (field -> (status, expected, heard), the best transcript's
    verdicts) that another hearing may have the pilot correct: every one where another hearing has
    him say "correction" and the best none (`corrected`: `value_query.checks_from` is None); else
    each that a hearing the best transcript is the first words of (`cut`: the best cut before the
    rest) heard otherwise. Fresh seed 168, with self-corrections: "heading, zero seven zero." beside
    "... zero seven zero correction. having zero five zero" (four wrong readbacks accepted so,
    three by the best transcript's own words), and "runway zero seven left." beside "... left.
    Carmack should runway zero seven right." (07L confirmed by a check in place)."""
    if corrected:
        return set(best)
    missing = ("missing", "", "")
    return {
        name
        for name, (status, _e, _h) in best.items()
        if any(c.get(name, missing)[0] not in (status, "missing") for c in cut)
    }
