"""Instructions said in words, not numbers: climb or descend; line up, take off, land, cross.

A readback that turns "descend FL100" into "climb FL100", or "line up and wait" into "cleared for
takeoff", has every value right and the aircraft doing what it was never cleared to: the classic
runway incursion starts with such a readback. These words are checked like the values
(`engine.readback`): what the controller said is recorded per group as it is said
(`record_instructions`, from the message's own words), and in a readback a member of a group
that the controller's latest instruction of that group did not give is wrong.

- **vertical**: climb, descend, said with the altitude or level after it. Checked once the
  controller has given either.
- **runway**: line up, take off, land, touch and go, cross a runway; hold short and go around.
  Checked in every readback, given or not: a runway clearance nobody gave is wrong anywhere
  ("taxi to holding point T14 ..., cleared for takeoff"). A takeoff clearance includes lining up.
  Holding short and going around, said by a pilot, are never wrong: they are never less safe
  than what was cleared, and a pilot may always go around. "Follow the published missed
  approach" is a go-around given: the landing clearance before it no longer stands.

A word the pilot asks for ("request climb", "requesting line up") is no readback of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.phraseology.transcript import tokenize

GROUPS: dict[str, dict[str, tuple[tuple[str, ...], ...]]] = {
    "vertical": {
        "climb": (("climb",), ("climbing",)),
        "descend": (("descend",), ("descending",)),
    },
    "runway": {
        "line_up": (("line", "up"), ("lining", "up")),
        "takeoff": (
            ("cleared", "for", "takeoff"),
            ("cleared", "for", "take", "off"),
            ("cleared", "takeoff"),
            ("cleared", "to", "take", "off"),
        ),
        "land": (("cleared", "to", "land"), ("cleared", "land")),
        "touch_and_go": (("touch", "and", "go"),),
        "cross": (("cross", "runway"), ("crossing", "runway")),
        "hold_short": (("hold", "short"), ("holding", "short")),
        "go_around": (("go", "around"), ("going", "around"), ("missed", "approach")),
    },
}
# How the controller says each again in a correction.
SAID: dict[str, str] = {
    "climb": "climb",
    "descend": "descend",
    "line_up": "line up and wait",
    "takeoff": "cleared for takeoff",
    "land": "cleared to land",
    "touch_and_go": "cleared touch and go",
    "cross": "cleared to cross",
    "hold_short": "hold short",
    "go_around": "go around",
}
ALWAYS_CHECKED = frozenset({"runway"})  # checked in a readback even before the controller gave one
NEVER_WRONG = frozenset({"hold_short", "go_around"})  # a pilot may always hold short, go around
IMPLIES = {"takeoff": frozenset({"line_up"})}
_ASKED = frozenset({"request", "requesting", "requests"})
# A climb or descent is read back with its altitude or level: the member counts only when a
# number follows it, over these words. By voice, whisper writes "climb tap, approach one two
# zero" for "contact approach" and "climbing storm" for "China Eastern".
_BEFORE_VALUE = frozenset({"to", "and", "maintain", "altitude", "flight", "level", "now"})
_WITH_VALUE = frozenset({"vertical"})
PREFIX = "instruction:"  # the key of a group in `Session.issued`: "instruction:vertical"


def find(words: tuple[str, ...], group: str) -> list[tuple[int, str]]:
    """(index, member) of each member of `group` said in `words` (tokenized), not asked for."""
    out: list[tuple[int, str]] = []
    for i in range(len(words)):
        if any(words[j] in _ASKED for j in range(max(0, i - 2), i)):
            continue
        for member, forms in GROUPS[group].items():
            form = next((f for f in forms if words[i : i + len(f)] == f), None)
            if form is not None and (group not in _WITH_VALUE or _value_after(words, i + len(form))):
                out.append((i, member))
                break
    return out


def _value_after(words: tuple[str, ...], i: int) -> bool:
    while i < len(words) and words[i] in _BEFORE_VALUE:
        i += 1
    return i < len(words) and words[i][:1].isdigit()


def record_instructions(issued: dict[str, Any], message: str) -> None:
    """Remember the instructions of each group a controller message gives: the latest message
    naming any member of a group replaces what was given of that group before."""
    words = tokenize(message).words
    for group in GROUPS:
        given = sorted({member for _i, member in find(words, group)})
        if given:
            issued.pop(PREFIX + group, None)
            issued[PREFIX + group] = " ".join(given)


def contradictions(
    words: tuple[str, ...], issued: Mapping[str, Any], correction: int = -1
) -> dict[str, tuple[str, str]]:
    """Group key -> (what was given, as the controller says it again; what the pilot said
    instead) for each group whose member in `words` the controller did not give. After a
    "correction" (index `correction`), members said after it replace those said before it."""
    out: dict[str, tuple[str, str]] = {}
    for group in GROUPS:
        key = PREFIX + group
        if key not in issued and group not in ALWAYS_CHECKED:
            continue
        given = set(str(issued.get(key, "")).split())
        allowed = given | {m for g in given for m in IMPLIES.get(g, ())} | NEVER_WRONG
        found = find(words, group)
        found = [f for f in found if f[0] > correction] or found
        said = [member for _i, member in found if member not in allowed]
        if said:
            shown = " and ".join(SAID[m] for m in sorted(given)) if given else f"not {SAID[said[0]]}"
            out[key] = (shown, SAID[said[0]])
    return out
