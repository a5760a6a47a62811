"""Directions the controller issues like any other value: a turn, a circuit, a pushback.

A pilot who reads back "right heading 070" for "turn left heading 070" has the heading right and
the aircraft turning the long way round; "report right downwind" for left flies the circuit
against the traffic; "facing west" for east pushes the tail the wrong way. Each direction is its
own kind (`turn`, `circuit`, `facing`), checked whenever said against the one issued
(`engine.readback`).

**Turn.** Only a side said as a turn counts: right after "turn" ("turn left", "turning right"), or right
before "heading" ("left heading 070"). The side of a runway ("runway two five right, heading
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
