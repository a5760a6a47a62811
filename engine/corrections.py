"""Turn a failed readback into the controller's correction ("negative, I say again, runway 25R").

The controller repeats only the items that were wrong or missing, each with the word that
introduces it on the radio, in the order the clearance required them.
"""

from __future__ import annotations

from typing import Any

from engine import phraseology
from engine.models import ReadbackResult

# How each kind of value is introduced when a controller repeats it.
_LEAD: dict[str, str] = {
    "runway": "runway",
    "squawk": "squawk",
    "frequency": "frequency",
    "altitude": "altitude",
    "flight_level": "",
    "heading": "heading",
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
_AFTER: dict[str, str] = {"altitude": " feet", "sid": " departure", "speed": " knots"}


def correction_items(required: list[str], variables: dict[str, Any], result: ReadbackResult) -> list[str]:
    items: list[str] = []
    for name in required:
        if result.fields.get(name, "ok") == "ok":
            continue
        kind = phraseology.kind_for_variable(name)
        value = variables.get(f"{name}_name") if kind == "airport" and variables.get(f"{name}_name") else None
        shown = value or phraseology.display_value(kind, variables.get(name, ""))
        lead = _LEAD.get(kind, name.replace("_", " "))
        if kind == "frequency" and name.endswith("_freq"):
            lead = name.removesuffix("_freq").removeprefix("dest_")
        elif kind == "designator":  # holding point, stand: the variable says which
            lead = name.removeprefix("arrival_").replace("_", " ")
        items.append(f"{lead} {shown}{_AFTER.get(kind, '')}".strip())
    return items


def correction_text(required: list[str], variables: dict[str, Any], result: ReadbackResult) -> str:
    return ", ".join(correction_items(required, variables, result))
