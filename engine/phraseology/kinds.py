"""Which kind of value a scenario variable holds, from its name alone.

Kinds: callsign, airport, runway, frequency, altitude, flight_level, heading, turn (the direction
of one), circuit (its side), facing (a pushback's), squawk, qnh, speed, wind, sid, star, waypoint,
route (taxi route), designator (holding point, stand, gate), letter (ATIS), text (anything else).
A name is looked up whole, then by its trailing parts, so
"arrival_tower_freq", "dest_approach_freq", "arrival_altitude_ft" and "descent_level" need no
entry of their own.
"""

from __future__ import annotations

from functools import lru_cache

KINDS: tuple[str, ...] = (
    "callsign",
    "airport",
    "runway",
    "frequency",
    "altitude",
    "flight_level",
    "heading",
    "turn",
    "circuit",
    "facing",
    "squawk",
    "qnh",
    "speed",
    "wind",
    "sid",
    "star",
    "waypoint",
    "route",
    "designator",
    "letter",
    "text",
)

# Procedures (SID, STAR): a fix's name, a digit and a letter ("MARUN 7F"); the name is no symbol.
PROCEDURE_KINDS = frozenset({"sid", "star"})

_NAMES: dict[str, str] = {
    "callsign": "callsign",
    "callsign_spoken": "callsign",
    "airport": "airport",
    "destination": "airport",
    "origin": "airport",
    "alternate": "airport",
    "runway": "runway",
    "rwy": "runway",
    "freq": "frequency",
    "frequency": "frequency",
    "altitude": "altitude",
    "altitude_ft": "altitude",
    "alt_ft": "altitude",
    "ft": "altitude",
    "level": "flight_level",
    "flight_level": "flight_level",
    "fl": "flight_level",
    "heading": "heading",
    "hdg": "heading",
    "turn": "turn",
    "circuit_direction": "circuit",
    "push_facing": "facing",
    "facing": "facing",
    "squawk": "squawk",
    "transponder": "squawk",
    "qnh": "qnh",
    "altimeter": "qnh",
    "speed": "speed",
    "speed_kt": "speed",
    "kt": "speed",
    "wind": "wind",
    "sid": "sid",
    "star": "star",
    "waypoint": "waypoint",
    "fix": "waypoint",
    "taxi_route": "route",
    "route": "route",
    "holding_point": "designator",
    "stand": "designator",
    "gate": "designator",
    "parking": "designator",
    "atis_letter": "letter",
    "atis": "letter",
    "information": "letter",
    "name": "text",
    "type": "text",
    "approach_type": "text",
}


@lru_cache(maxsize=512)
def kind_for_variable(name: str) -> str:
    """Kind name for a variable ("tower_freq" -> "frequency", "sid" -> "sid"); unknown -> "text"."""
    key = name.strip().lower()
    parts = key.split("_")
    for start in range(len(parts)):
        kind = _NAMES.get("_".join(parts[start:]))
        if kind:
            return kind
    return "text"
