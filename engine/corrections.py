"""Turn a failed readback into the controller's correction ("negative, I say again, runway 25R").

The controller repeats only the items that were wrong or missing, each with the word that
introduces it on the radio, in the order the clearance required them.
"""

from __future__ import annotations

from typing import Any

from engine import phraseology
from engine.models import ReadbackResult
from engine.phraseology.instructions import PREFIX as INSTRUCTION_PREFIX

# How each kind of value is introduced when a controller repeats it.
_LEAD: dict[str, str] = {
    "runway": "runway",
    "squawk": "squawk",
    "frequency": "frequency",
    "altitude": "altitude",
    "flight_level": "",
    "heading": "heading",
    "turn": "turn",
    "circuit": "report",
    "facing": "facing",
    "qnh": "QNH",
    "sid": "",
    "star": "",
    "route": "via",
    "designator": "",
    "airport": "cleared to",
    "letter": "information",
    "speed": "speed",
    "callsign": "callsign",
    "wind": "wind",
}
_LEVELS = ("altitude", "flight_level")
_AFTER: dict[str, str] = {"altitude": " feet", "sid": " departure", "speed": " knots", "circuit": " downwind"}


def correction_items(
    required: list[str], variables: dict[str, Any], result: ReadbackResult, *, everything: bool = False
) -> list[str]:
    """The items to repeat: every field of `result` that is not ok (required ones first, then
    issued values the pilot contradicted), or with `everything` all required fields as well."""
    items: list[str] = []
    names = [*required, *(n for n in result.fields if n not in required)]
    given = {w["field"]: w["expected"] for w in result.wrong}
    vertical = _vertical_item(names, variables, given)
    for name in names:
        if result.fields.get(name, "ok") == "ok" and not (everything and name in required):
            continue
        kind = phraseology.kind_for_variable(name)
        if vertical is not None and name in vertical[1]:  # "descend 5000 feet": verb and level, said once
            if vertical[0] not in items:
                items.append(vertical[0])
            continue
        if name.startswith(INSTRUCTION_PREFIX):  # "line up and wait", "cleared to land": as given
            if name in given and given[name] not in items:
                items.append(given[name])
            continue
        value = variables.get(f"{name}_name") if kind == "airport" and variables.get(f"{name}_name") else None
        shown = value or phraseology.display_value(kind, variables.get(name, ""))
        lead = _LEAD.get(kind, name.replace("_", " "))
        if kind == "frequency" and name.endswith("_freq"):
            lead = name.removesuffix("_freq").removeprefix("dest_")
        elif kind == "designator":  # holding point, stand: the variable says which
            lead = name.removeprefix("arrival_").replace("_", " ")
        turn = _turn_item(name, kind, variables, result)
        if turn is not None:  # "turn left heading 070": the whole instruction, said once
            if turn not in items:
                items.append(turn)
            continue
        items.append(f"{lead} {shown}{_AFTER.get(kind, '')}".strip())
    return items


def _turn_item(name: str, kind: str, variables: dict[str, Any], result: ReadbackResult) -> str | None:
    """A wrong direction of turn is repeated with its heading, where the heading's own item
    would stand: "turn left heading 070"; None for any other item."""
    turn_wrong = any(phraseology.kind_for_variable(n) == "turn" and s != "ok" for n, s in result.fields.items())
    if not turn_wrong or kind not in ("turn", "heading") or not variables.get("turn") or not variables.get("heading"):
        return None
    return f"turn {variables['turn']} heading {phraseology.display_value('heading', variables['heading'])}"


def _vertical_item(
    names: list[str], variables: dict[str, Any], given: dict[str, str]
) -> tuple[str, tuple[str, str]] | None:
    """A wrong climb or descend, repeated with its level ("descend 5000 feet", as a controller
    says it) where the level's own item (or, with the level read back right, the verb's) would
    stand: (the item, the two names it stands for); None with no wrong verb or no level to say."""
    verb = given.get(f"{INSTRUCTION_PREFIX}vertical")
    level = next((n for n in names if phraseology.kind_for_variable(n) in _LEVELS and variables.get(n)), None)
    if verb is None or level is None:
        return None
    kind = phraseology.kind_for_variable(level)
    item = f"{verb} {phraseology.display_value(kind, variables[level])}{_AFTER.get(kind, '')}"
    return item, (level, f"{INSTRUCTION_PREFIX}vertical")


def correction_text(
    required: list[str], variables: dict[str, Any], result: ReadbackResult, *, everything: bool = False
) -> str:
    return ", ".join(correction_items(required, variables, result, everything=everything))


def item_name(name: str) -> str:
    """How a controller names an item it asks again for: "squawk", "runway", "tower frequency"."""
    if name.startswith(INSTRUCTION_PREFIX):
        return "your instruction"
    kind = phraseology.kind_for_variable(name)
    if kind == "frequency" and name.endswith("_freq"):
        return f"{name.removesuffix('_freq').removeprefix('dest_').replace('_', ' ')} frequency".strip()
    if kind == "designator":
        return name.removeprefix("arrival_").replace("_", " ")
    if kind == "airport":
        return "clearance limit"
    return {
        "flight_level": "level",
        "turn": "direction of turn",
        "circuit": "circuit direction",
        "facing": "pushback direction",
        "route": "taxi route",
        "letter": "information",
        "sid": "departure",
    }.get(kind, _LEAD.get(kind) or name.replace("_", " "))


def say_again_text(names: list[str]) -> str:
    """ "squawk", "runway and squawk", "heading, runway and squawk"."""
    items = list(dict.fromkeys(item_name(n) for n in names))
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
