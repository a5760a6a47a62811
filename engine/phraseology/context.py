"""What an extractor may know beyond the transcript: the issued value and the scenario variables.

Knowing the issued value lets an extractor recognise a garbled name ("maroon" for MARUN) or
read only as many callsign letters as the issued callsign has; it never makes a different value
equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_EMPTY: Mapping[str, Any] = {}


@dataclass(frozen=True, slots=True)
class Context:
    expected: str | None = None  # canonical issued value
    variables: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    name: str | None = None  # variable name being checked, e.g. "tower_freq"
    # a readback the state asks for (True), or an issued value only checked for contradiction:
    # then an extractor reads only what surely names a value of its kind ("cleared to Dublin",
    # not a bare "nice" in "have a nice day")
    required: bool = True


def near(words: tuple[str, ...], i: int, anchors: frozenset[str], before: int) -> bool:
    """True if one of `anchors` is among the `before` words ahead of index i."""
    return any(words[j] in anchors for j in range(max(0, i - before), i))


def other_digits(ctx: Context) -> set[str]:
    """The digits of every scenario value but the one checked, as they run in it ("SWR158" ->
    "158", "121.800" -> "121800"): a number said bare that one of them says is that value (a QNH
    said bare after a squawk), not a second value of the kind checked."""
    return {"".join(c for c in str(v) if c.isdigit()) for name, v in ctx.variables.items() if name != ctx.name}
