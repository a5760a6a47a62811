"""Airport domain model and the pure runway logic a scenario needs.

The gateway loads airports from its shipped dataset (``gateway.airports``) and hands the engine
these models; the engine never reads files. Runway choice lives here because it is aviation logic
(headwind, runway length), not storage.
"""

from __future__ import annotations

import math
import random
import re

from pydantic import BaseModel, ConfigDict, Field

# Stations a frequency can belong to; "other" collects unicom/CTAF/information services.
STATIONS: tuple[str, ...] = (
    "delivery",
    "ground",
    "tower",
    "departure",
    "approach",
    "center",
    "atis",
    "apron",
    "other",
)

# With no wind given, the end facing this true direction wins: the prevailing wind at most of the
# world's busy airports (mid-latitudes) is westerly, so e.g. Frankfurt's default is the 25s.
PREVAILING_WIND_DEG = 260.0

# A runway shorter than this share of the airport's longest is a crosswind/GA strip: never chosen
# for an airliner departure when a longer one exists.
MIN_LENGTH_SHARE = 0.6

# Ends whose headwind share (cosine) is within this of the best count as equally good, so parallel
# runways (07L/07C/07R) are a seeded choice rather than always the first in the list.
HEADWIND_TIE = 0.02


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunwayEnd(_Model):
    ident: str  # "07L", "25R", "18"
    heading_deg: float | None = None  # true heading from the data, when known
    lat: float | None = None  # the threshold's position, when the data has it
    lon: float | None = None


class Runway(_Model):
    """One physical runway: its one or two usable ends and its surface data."""

    ends: list[RunwayEnd]
    length_ft: int | None = None
    width_ft: int | None = None
    surface: str = "paved"
    lighted: bool = False

    @property
    def ident(self) -> str:
        """Both ends, as charts name a runway: "07C/25C"."""
        return "/".join(end.ident for end in self.ends)

    @property
    def heading_deg(self) -> float | None:
        return end_heading(self.ends[0]) if self.ends else None


class Navaid(_Model):
    ident: str  # "FFM"
    name: str  # "Frankfurt"
    type: str  # VOR, VOR-DME, VORTAC, DME, NDB, NDB-DME
    freq: str | None = None  # VOR/DME in MHz "114.200", NDB in kHz "382"
    distance_nm: float | None = None


class AirportInfo(_Model):
    icao: str
    iata: str | None = None
    name: str
    city: str = ""
    country: str = ""
    lat: float
    lon: float
    elevation_ft: int = 0
    runways: list[Runway] = Field(default_factory=list)
    frequencies: dict[str, list[str]] = Field(default_factory=dict)  # station -> ["121.800", ...]
    navaids: list[Navaid] = Field(default_factory=list)


def end_heading(end: RunwayEnd) -> float | None:
    """The end's true heading, or its number x 10 (magnetic, close enough) when the data has none."""
    if end.heading_deg is not None:
        return end.heading_deg
    digits = re.match(r"\d{1,2}", end.ident)
    if not digits:
        return None
    return float(int(digits.group()) * 10 or 360)


def runway_ends(airport: AirportInfo) -> list[tuple[str, float | None]]:
    """Every usable runway end as (ident, heading in degrees), longest runways first."""
    return [(end.ident, end_heading(end)) for rwy in airport.runways for end in rwy.ends]


def short_name(airport: AirportInfo) -> str:
    """The name a controller station uses: "Frankfurt" (from "Frankfurt am Main"), "Istanbul".

    airportsdata cities sometimes carry a district ("Arnavutköy, Istanbul") or a German river
    suffix; station calls use the plain city. Without a city, the airport name minus "Airport".
    """
    city = airport.city.split(",")[-1].strip()
    city = re.split(r"\s\((?:.*)|\s(?:am|an der|im|bei|ob der)\s", city)[0].strip()
    if city:
        return city
    name = re.sub(r"\b(International|Regional|Municipal|Airport|Airfield|Air Base)\b", "", airport.name)
    return " ".join(name.split()) or airport.icao


_GENERIC_WORDS = re.compile(r"\b(International|Intl|Regional|Municipal|Airport|Airfield|Air Base)\b", re.IGNORECASE)
_JOINERS = frozenset({"de", "da", "am", "of", "the", "and"})  # never a name's first or last word


def name_aliases(airport: AirportInfo) -> list[str]:
    """The names an airport goes by besides its city: its own name without the city's words and
    the generic ones, each part in brackets on its own ("Heathrow", "Schiphol", "Charles de
    Gaulle", "Leonardo Da Vinci", "Fiumicino"). A pilot cleared to London reads back "cleared to
    Heathrow"; it is the issued limit, not another one."""
    home = {w.lower() for w in re.split(r"[\s\-/,()]+", f"{airport.city} {short_name(airport)}") if w}
    out: list[str] = []
    for part in re.split(r"[()]", airport.name):
        words = [w for w in re.split(r"[\s\-/,]+", _GENERIC_WORDS.sub(" ", part)) if w and w.lower() not in home]
        while words and words[0].lower() in _JOINERS:
            words.pop(0)
        while words and words[-1].lower() in _JOINERS:
            words.pop()
        name = " ".join(words)
        if len(name) >= 4 and name not in out:
            out.append(name)
    return out


def headwind(wind_dir_deg: float, runway_heading_deg: float) -> float:
    """Share of the wind blowing straight down the runway against the aircraft (-1..1)."""
    return math.cos(math.radians(wind_dir_deg - runway_heading_deg))


def best_runway_for_wind(
    airport: AirportInfo, wind_dir_deg: float | None, rng: random.Random
) -> tuple[str, float | None] | None:
    """The runway end an airliner would use, as (ident, heading); None when there is no runway.

    Only runways of at least `MIN_LENGTH_SHARE` of the longest are candidates. With a wind
    direction, the end with the largest headwind component wins; equally good ends (parallels)
    are a seeded choice. With no wind (calm or unknown), the longest runway(s) are used and the
    end facing the prevailing westerlies (`PREVAILING_WIND_DEG`) wins.
    """
    longest = max((r.length_ft or 0 for r in airport.runways), default=0)
    candidates = [
        (end.ident, end_heading(end))
        for rwy in airport.runways
        if (rwy.length_ft or 0) >= MIN_LENGTH_SHARE * longest
        for end in rwy.ends
    ]
    if not candidates:
        return None
    known = [(ident, hdg) for ident, hdg in candidates if hdg is not None]
    if not known:
        return rng.choice(candidates)
    if wind_dir_deg is None:
        lengths = {end.ident: rwy.length_ft or 0 for rwy in airport.runways for end in rwy.ends}
        top = max(lengths[ident] for ident, _ in known)
        known = [(ident, hdg) for ident, hdg in known if lengths[ident] == top]
        wind_dir_deg = PREVAILING_WIND_DEG
    scored = [(headwind(wind_dir_deg, hdg), ident, hdg) for ident, hdg in known if hdg is not None]
    best = max(score for score, _, _ in scored)
    ties = [(ident, hdg) for score, ident, hdg in scored if score >= best - HEADWIND_TIE]
    return rng.choice(ties)
