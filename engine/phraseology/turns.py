"""The direction of a turn ("turn left heading 070"): a value the controller issues like any other.

A pilot who reads back "right heading 070" for "turn left heading 070" has the heading right and
the aircraft turning the long way round; the readback check hears the direction as its own kind
(`turn`), so it is checked whenever said, against the direction issued (`engine.readback`).

Only a side said as a turn counts: right after "turn" ("turn left", "turning right"), or right
before "heading" ("left heading 070"). The side of a runway ("runway two five right, heading
070": the comma is gone once tokenized) follows "runway" and its number, so it is never a turn;
a flight number before a side ("Lufthansa three five niner, left heading ...") is no runway.
"""

from __future__ import annotations

from typing import Any

from engine.phraseology.context import Context
from engine.phraseology.hits import Found, Hit
from engine.phraseology.transcript import Transcript

SIDES = ("left", "right")
_TURN_WORDS = frozenset({"turn", "turning"})


def canonical(value: Any) -> str | None:
    """ "left", "right" (also "L", "R", any case); anything else is no turn."""
    text = str(value).strip().lower()
    return {"l": "left", "r": "right"}.get(text, text if text in SIDES else None)


def find(t: Transcript, ctx: Context) -> Found:
    """Each side said as a turn: after "turn"/"turning", or before "heading" unless "runway" is
    among the three words before it (then it is that runway's side)."""
    out: Found = []
    for i, word in enumerate(t.words):
        if word not in SIDES:
            continue
        runway_side = any(t.word(j) == "runway" for j in range(max(0, i - 3), i))
        if t.word(i - 1) in _TURN_WORDS or (t.word(i + 1) == "heading" and not runway_side):
            out.append(Hit(i, word))
    return out
