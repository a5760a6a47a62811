"""The ATC stations and the names each goes by on the radio: one table for the words the
controller says (`engine.messages`: "Munich Radar" for the centre) and the words a pilot's
readback is heard by (`frequencies`: "contact radar 131.4" for the centre, approach or departure)."""

from __future__ import annotations

from typing import NamedTuple


class Station(NamedTuple):
    title: str  # how the controller names the station on the radio ("Radar" for the centre)
    also: frozenset[str] = frozenset()  # other words pilots call it by (lower case)


STATIONS: dict[str, Station] = {
    "delivery": Station("Delivery"),
    "ground": Station("Ground"),
    "apron": Station("Apron"),
    "tower": Station("Tower"),
    "departure": Station("Departure", frozenset({"radar"})),
    "approach": Station("Approach", frozenset({"radar", "director"})),
    "director": Station("Director", frozenset({"approach", "radar"})),
    "center": Station("Radar"),
    "radar": Station("Radar"),
    "atis": Station("Information"),
    "info": Station("Information"),
}

# station key -> its name on the radio, for clients that label frequencies (session.started)
STATION_TITLES: dict[str, str] = {key: station.title for key, station in STATIONS.items()}


def station_title(station: str) -> str:
    """The station's name on the radio ("Radar" for "center"); an unknown one title-cased."""
    known = STATIONS.get(station)
    return known.title if known else station.title()


def radio_names(station: str) -> frozenset[str]:
    """Every word the station goes by on the radio: its key, its title and what pilots also call it."""
    known = STATIONS.get(station)
    if known is None:
        return frozenset({station})
    return frozenset({station, known.title.lower(), *known.also})
