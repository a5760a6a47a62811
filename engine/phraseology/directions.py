"""Directions the controller issues like any other value: a turn, a circuit, a pushback.

A pilot who reads back "right heading 070" for "turn left heading 070" has the heading right and
the aircraft turning the long way round; "report right downwind" for left flies the circuit
against the traffic; "facing west" for east pushes the tail the wrong way. Each direction is its
own kind (`turn`, `circuit`, `facing`), checked whenever said against the one issued
(`engine.readback`).

**Turn.** Only a side said as a turn counts: right after "turn" ("turn left", "turning right"), right
before "heading" ("left heading 070"), or right before the three digits of a heading said without
its word ("left zero seven zero"). The side of a runway ("runway two five right, heading
070": the comma is gone once tokenized) follows "runway" and its number, so it is never a turn;
a flight number before a side ("Lufthansa three five niner, left heading ...") is no runway.

**Circuit.** A side right before a leg of the circuit or "hand" ("left downwind", "right hand
circuit"). **Facing.** A compass point right after "facing".
"""

from __future__ import annotations

from typing import Any

from engine.phraseology.context import Context
from engine.phraseology.hits import Found, Hit
from engine.phraseology.transcript import Transcript

SIDES = ("left", "right")
_TURN_WORDS = frozenset({"turn", "turning"})


def canonical(value: Any) -> str | None:
    """ "left", "right" (also "L", "R", any case); anything else is no side."""
    text = str(value).strip().lower()
    return {"l": "left", "r": "right"}.get(text, text if text in SIDES else None)


def find(t: Transcript, ctx: Context) -> Found:
    """Each side said as a turn (`is_turn`)."""
    return [Hit(i, word) for i, word in enumerate(t.words) if is_turn(t, i)]


def is_turn(t: Transcript, i: int) -> bool:
    """Whether the word at i is a side said as a turn: after "turn"/"turning"; before "heading"
    unless "runway" is among the three words before it; before a heading said without its word
    ("left three six zero", `numeric.heading_find`) unless it follows "runway" and its number."""
    if t.word(i) not in SIDES:
        return False
    if t.word(i - 1) in _TURN_WORDS:
        return True
    runway_side = any(t.word(j) == "runway" for j in range(max(0, i - 3), i))
    if t.word(i + 1) == "heading":
        return not runway_side
    number = t.integer(i + 1)
    return number is not None and len(number) == 3 and 0 < int(number) <= 360 and not runway_side


_CIRCUIT_AFTER = frozenset({"downwind", "base", "crosswind", "hand", "circuit", "traffic"})


def circuit_find(t: Transcript, ctx: Context) -> Found:
    """Each side said of the circuit: right before a leg, "hand", "circuit" or "traffic"."""
    return [Hit(i, w) for i, w in enumerate(t.words) if w in SIDES and t.word(i + 1) in _CIRCUIT_AFTER]


POINTS = ("north", "south", "east", "west")


def facing_canonical(value: Any) -> str | None:
    """ "east", "East", "E" -> "east"; anything else is no compass point."""
    text = str(value).strip().lower()
    return {p[0]: p for p in POINTS}.get(text, text if text in POINTS else None)


def facing_find(t: Transcript, ctx: Context) -> Found:
    """Each compass point said right after "facing" ("pushback approved, facing east")."""
    return [Hit(i, w) for i, w in enumerate(t.words) if w in POINTS and t.word(i - 1) == "facing"]
