#!/usr/bin/env python3
"""Build the compact airport dataset shipped in ``gateway/airports/data/airports.json.gz``.

Why a build step: OurAirports (public domain CSVs: runways, frequencies, navaids) holds the
operational detail and the ``airportsdata`` package holds clean names, cities and positions. The
gateway needs both, joined and trimmed to airports a trainee would fly an airliner from, in one
small file that ships with the package (no network, no CSV parsing at start-up).

Kept: airports with an ICAO code in ``airportsdata`` and at least one open paved runway of
>= 1500 ft. Output is deterministic (sorted keys, gzip mtime 0) so a rebuild of the same inputs
gives the same bytes.

Usage: python scripts/build_airports.py [--source DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

import airportsdata

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO.parent / "shared" / "data" / "ourairports"
DEFAULT_OUT = REPO / "gateway" / "airports" / "data" / "airports.json.gz"

MIN_RUNWAY_FT = 1500
NAVAID_RADIUS_NM = 40.0
MAX_NAVAIDS = 8
NAVAID_TYPES = {"VOR", "VOR-DME", "VORTAC", "DME", "NDB", "NDB-DME"}
NAVAID_RANK = {"VOR": 0, "VOR-DME": 0, "VORTAC": 0, "DME": 1, "NDB-DME": 2, "NDB": 2}

# First token of an OurAirports surface code -> our surface word; anything else is unpaved.
PAVED_SURFACES = {
    "ASP": "asphalt", "ASPH": "asphalt", "ASPHALT": "asphalt", "ASF": "asphalt",
    "CON": "concrete", "CONC": "concrete", "CONCRETE": "concrete", "COP": "concrete",
    "BIT": "bitumen", "BITUMEN": "bitumen", "BITUMINOUS": "bitumen", "TAR": "bitumen",
    "TARMAC": "bitumen", "MAC": "bitumen", "PEM": "paved", "PAVED": "paved", "PAV": "paved",
}

# Frequency type (first word of OurAirports' `type`) -> our station names.
TYPE_STATIONS: dict[str, tuple[str, ...]] = {
    "CLD": ("delivery",), "DEL": ("delivery",), "CLNC": ("delivery",), "CLR": ("delivery",),
    "GND": ("ground",), "GROUND": ("ground",),
    "TWR": ("tower",), "TOWER": ("tower",),
    "DEP": ("departure",),
    "APP": ("approach",), "ARR": ("approach",), "DIR": ("approach",),
    "A/D": ("approach", "departure"), "APP/DEP": ("approach", "departure"),
    "CTR": ("center",), "CNTR": ("center",), "ACC": ("center",), "ARTC": ("center",),
    "ATIS": ("atis",),
    "RMP": ("apron",), "APRON": ("apron",),
    "UNIC": ("other",), "UNICOM": ("other",), "CTAF": ("other",), "INFO": ("other",),
    "AFIS": ("other",), "FIS": ("other",), "A/G": ("other",), "MF": ("other",), "ATF": ("other",),
}
# For vague types (MISC, RDO, RADAR...), the description decides; first match wins.
DESCRIPTION_STATIONS: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (re.compile(r"\bATIS\b"), ("atis",)),
    (re.compile(r"DELIVERY|\bCLNC\b|CLEARANCE"), ("delivery",)),
    (re.compile(r"APRON"), ("apron",)),
    (re.compile(r"GROUND|\bGND\b"), ("ground",)),
    (re.compile(r"TOWER|\bTWR\b"), ("tower",)),
    (re.compile(r"APP\s*/\s*DEP"), ("approach", "departure")),
    (re.compile(r"DEPARTURE|\bDEP\b"), ("departure",)),
    (re.compile(r"APPROACH|\bAPP\b|ARRIVAL|DIRECTOR"), ("approach",)),
    (re.compile(r"CENTER|CENTRE|\bCNTR\b|\bACC\b"), ("center",)),
]
STATION_ORDER = ("delivery", "ground", "tower", "departure", "approach", "center", "atis", "apron", "other")


def read_csv(path: Path) -> Iterable[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        yield from csv.DictReader(fh)


def num(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def paved_surface(code: str) -> str | None:
    first = re.split(r"[-/ ,]+", code.strip().upper(), maxsplit=1)[0]
    return PAVED_SURFACES.get(first)


def runway_end(ident: str, heading: str, lat: str = "", lon: str = "") -> dict[str, Any] | None:
    ident = ident.strip().upper()
    if not ident:
        return None
    hdg = num(heading)
    end: dict[str, Any] = {"ident": ident, "heading_deg": round(hdg % 360 or 360.0, 1) if hdg is not None else None}
    la, lo = num(lat), num(lon)
    if la is not None and lo is not None:  # the threshold's position (the briefing assistant's runway layout)
        end.update({"lat": round(la, 5), "lon": round(lo, 5)})
    return end


def load_runways(source: Path, keep: set[str]) -> dict[str, list[dict[str, Any]]]:
    runways: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in read_csv(source / "runways.csv"):
        icao = row["airport_ident"].strip().upper()
        if icao not in keep or row["closed"].strip() == "1":
            continue
        length = num(row["length_ft"])
        surface = paved_surface(row["surface"])
        if surface is None or length is None or length < MIN_RUNWAY_FT:
            continue
        ends = [e for e in (runway_end(row["le_ident"], row["le_heading_degT"], row["le_latitude_deg"], row["le_longitude_deg"]),
                            runway_end(row["he_ident"], row["he_heading_degT"], row["he_latitude_deg"], row["he_longitude_deg"])) if e]
        if not ends:
            continue
        width = num(row["width_ft"])
        runways[icao].append({
            "ends": ends,
            "length_ft": int(length),
            "width_ft": int(width) if width else None,
            "surface": surface,
            "lighted": row["lighted"].strip() == "1",
        })
    for rwys in runways.values():
        rwys.sort(key=lambda r: (-r["length_ft"], r["ends"][0]["ident"]))
    return runways


def stations_for(ftype: str, description: str) -> tuple[str, ...]:
    ftype = ftype.strip().upper()
    mapped = TYPE_STATIONS.get(ftype) or TYPE_STATIONS.get(ftype.split(" ")[0] if ftype else "")
    if mapped:
        return mapped
    desc = description.upper()
    for pattern, stations in DESCRIPTION_STATIONS:
        if pattern.search(desc):
            return stations
    return ()


def in_band(station: str, mhz: float) -> bool:
    """VHF airband only (ATIS may also sit on a VOR, 108-117.95)."""
    low = 108.0 if station == "atis" else 118.0
    return low <= mhz <= 136.975


def load_frequencies(source: Path, keep: set[str]) -> dict[str, dict[str, list[str]]]:
    freqs: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for row in read_csv(source / "airport-frequencies.csv"):
        icao = row["airport_ident"].strip().upper()
        mhz = num(row["frequency_mhz"])
        if icao not in keep or mhz is None:
            continue
        for station in stations_for(row["type"], row["description"] or ""):
            if not in_band(station, mhz):
                continue
            value = f"{mhz:.3f}"
            bucket = freqs[icao].setdefault(station, [])
            if value not in bucket:
                bucket.append(value)
    return {icao: {s: by[s] for s in STATION_ORDER if s in by} for icao, by in freqs.items()}


def distance_nm(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 3440.065 * math.asin(min(1.0, math.sqrt(a)))


class NavaidGrid:
    """1-degree buckets so each airport only measures navaids in neighbouring cells."""

    def __init__(self, source: Path) -> None:
        self.cells: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
        for row in read_csv(source / "navaids.csv"):
            kind = row["type"].strip().upper()
            lat, lon = num(row["latitude_deg"]), num(row["longitude_deg"])
            if kind not in NAVAID_TYPES or lat is None or lon is None or not row["ident"].strip():
                continue
            khz = num(row["frequency_khz"])
            freq = None
            if khz:
                freq = f"{khz / 1000:.3f}" if khz >= 100_000 else f"{khz:g}"
            self.cells[(math.floor(lat), math.floor(lon))].append({
                "ident": row["ident"].strip().upper(),
                "name": (row["name"] or "").strip(),
                "type": kind,
                "freq": freq,
                "lat": lat,
                "lon": lon,
            })

    def near(self, lat: float, lon: float) -> list[dict[str, Any]]:
        dlon = math.ceil(NAVAID_RADIUS_NM / 60 / max(0.05, math.cos(math.radians(lat)))) + 1
        found = []
        for ilat in range(math.floor(lat) - 1, math.floor(lat) + 2):
            for ilon in range(math.floor(lon) - dlon, math.floor(lon) + dlon + 1):
                wrapped = (ilon + 180) % 360 - 180
                for nav in self.cells.get((ilat, wrapped), ()):
                    d = distance_nm(lat, lon, nav["lat"], nav["lon"])
                    if d <= NAVAID_RADIUS_NM:
                        found.append((d, nav))
        # VOR-type beacons first: SIDs are mostly named after them (then DME, then NDB).
        found.sort(key=lambda item: (NAVAID_RANK.get(item[1]["type"], 3), item[0], item[1]["ident"]))
        out, seen = [], set()
        for d, nav in found:
            key = (nav["ident"], nav["type"])
            if key in seen:
                continue
            seen.add(key)
            out.append({k: nav[k] for k in ("ident", "name", "type", "freq")} | {"distance_nm": round(d, 1)})
            if len(out) == MAX_NAVAIDS:
                break
        return out


def build(source: Path) -> dict[str, Any]:
    meta = airportsdata.load("ICAO")
    keep = {icao.upper() for icao in meta}
    print(f"airportsdata: {len(meta)} ICAO airports", file=sys.stderr)
    runways = load_runways(source, keep)
    print(f"runways.csv: {len(runways)} airports with an open paved runway >= {MIN_RUNWAY_FT} ft", file=sys.stderr)
    freqs = load_frequencies(source, set(runways))
    print(f"airport-frequencies.csv: frequencies for {len(freqs)} of them", file=sys.stderr)
    grid = NavaidGrid(source)
    print("navaids.csv: indexed", file=sys.stderr)
    airports: dict[str, Any] = {}
    for icao in sorted(runways):
        m = meta[icao]
        airports[icao] = {
            "icao": icao,
            "iata": m.get("iata") or None,
            "name": m["name"],
            "city": m.get("city") or "",
            "country": m.get("country") or "",
            "lat": round(float(m["lat"]), 4),
            "lon": round(float(m["lon"]), 4),
            "elevation_ft": int(round(float(m.get("elevation") or 0))),
            "runways": runways[icao],
            "frequencies": freqs.get(icao, {}),
            "navaids": grid.near(float(m["lat"]), float(m["lon"])),
        }
    return {"version": 1, "source": "OurAirports (public domain) + airportsdata (MIT)", "airports": airports}


def write(data: dict[str, Any], out: Path) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode("utf-8")
    with out.open("wb") as fh, gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    return out.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="OurAirports CSV folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="gzipped JSON to write")
    args = parser.parse_args(argv)
    for name in ("runways.csv", "airport-frequencies.csv", "navaids.csv"):
        if not (args.source / name).is_file():
            parser.error(f"{args.source / name} not found")
    data = build(args.source)
    size = write(data, args.out)
    airports = data["airports"].values()
    n_rwy = sum(len(a["runways"]) for a in airports)
    n_freq = sum(len(v) for a in airports for v in a["frequencies"].values())
    print(f"kept {len(data['airports'])} airports, {n_rwy} runways, {n_freq} frequencies; "
          f"wrote {args.out} ({size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
