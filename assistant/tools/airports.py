"""Airport tools (seed manifest names): data only, each with `filter_profile`, `visualization`,
`airports`, `pretty` and `_tool_type`.

The shipped dataset (gateway/airports/data/airports.json.gz, built by scripts/build_airports.py)
keeps airports with at least one open paved runway of 1500 ft or more, and only their paved
runways: a "paved" filter is applied, and every airport in our data passes it.
"""

from __future__ import annotations

from typing import Any

from assistant import geo
from assistant.tools.base import ToolError

HARD_SURFACES = {"asphalt", "concrete", "paved", "bitumen"}
SUPPORTED_FILTERS = ("has_hard_runway", "min_runway_length_ft", "max_runway_length_ft", "country")
# the seed's filters that our data cannot answer: reported, never silently dropped
UNSUPPORTED_FILTERS = {
    "has_avgas": "AVGAS availability",
    "has_jet_a": "Jet-A availability",
    "point_of_entry": "customs / point of entry",
    "has_procedures": "instrument procedures",
    "max_landing_fee": "landing fees",
}
FT_PER_M = 3.28084


def longest_runway_ft(a: dict[str, Any]) -> int:
    return max((r.get("length_ft") or 0 for r in a.get("runways") or ()), default=0)


def summary(a: dict[str, Any], **extra: Any) -> dict[str, Any]:
    longest = longest_runway_ft(a)
    out = {
        "icao": a["icao"],
        "name": a.get("name"),
        "city": a.get("city"),
        "country": a.get("country"),
        "lat": a["lat"],
        "lon": a["lon"],
        "elevation_ft": a.get("elevation_ft"),
        "longest_runway_ft": longest,
        "longest_runway_m": round(longest / FT_PER_M),
        "has_hard_runway": any((r.get("surface") or "") in HARD_SURFACES for r in a.get("runways") or ()),
    }
    out.update({k: round(v, 1) if isinstance(v, float) else v for k, v in extra.items()})
    return out


def marker(a: dict[str, Any]) -> dict[str, Any]:
    return {"icao": a["icao"], "name": a.get("name"), "lat": a["lat"], "lon": a["lon"]}


def apply_filters(airports: list[dict[str, Any]], filters: dict[str, Any] | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Keep the airports passing the supported filters; the profile says what was applied and what
    could not be."""
    filters = dict(filters or {})
    profile: dict[str, Any] = {}
    unsupported = [k for k in filters if k in UNSUPPORTED_FILTERS or k not in SUPPORTED_FILTERS]
    out = airports
    if filters.get("has_hard_runway"):
        out = [a for a in out if any((r.get("surface") or "") in HARD_SURFACES for r in a.get("runways") or ())]
        profile["has_hard_runway"] = True
    if filters.get("min_runway_length_ft"):
        n = float(filters["min_runway_length_ft"])
        out = [a for a in out if longest_runway_ft(a) >= n]
        profile["min_runway_length_ft"] = round(n)
    if filters.get("max_runway_length_ft"):
        n = float(filters["max_runway_length_ft"])
        out = [a for a in out if 0 < longest_runway_ft(a) <= n]
        profile["max_runway_length_ft"] = round(n)
    if filters.get("country"):
        c = str(filters["country"]).upper()
        out = [a for a in out if (a.get("country") or "").upper() == c]
        profile["country"] = c
    if unsupported:
        profile["unsupported"] = [{"filter": k, "what": UNSUPPORTED_FILTERS.get(k, k)} for k in unsupported]
    return out, profile


def _airport(ctx: Any, icao: str | None) -> dict[str, Any]:
    code = (icao or "").strip().upper()
    a = ctx.airports.get(code) if code else None
    if a is None:
        raise ToolError(f"I do not know an airport with the ICAO code {code or '(none given)'!r} in our data.")
    return a


def _place(ctx: Any, name: str | None) -> geo.Place:
    place = ctx.places.resolve(name or "")
    if place is None:
        raise ToolError(f"I could not find a place called {name!r} (an ICAO code, an airport or a city name works).")
    return place


def search_airports(ctx: Any, query: str | None = None, filters: dict[str, Any] | None = None, max_results: int = 20) -> dict[str, Any]:
    q = geo.fold(query or "").strip()
    pool = list(ctx.iter_airports())
    if q:
        pool = [
            a for a in pool
            if a["icao"].casefold() == q or (a.get("iata") or "").casefold() == q
            or q in geo.fold(a.get("name") or "") or q in geo.fold(a.get("city") or "")
        ]
    found, profile = apply_filters(pool, filters)
    found.sort(key=lambda a: (-longest_runway_ft(a), a["icao"]))
    total = len(found)
    shown = found[:max_results]
    return {
        "_tool_type": "search",
        "query": query,
        "count": total,
        "airports": [summary(a) for a in shown],
        "filter_profile": profile,
        "visualization": {"type": "markers", "markers": [marker(a) for a in shown]},
        "pretty": f"{total} airport(s) found" + (f" for {query!r}" if query else "") + (f", showing {len(shown)}" if total > len(shown) else ""),
    }


def find_airports_near_location(
    ctx: Any, location: str, max_distance_nm: float = 25.0, filters: dict[str, Any] | None = None, max_results: int = 20
) -> dict[str, Any]:
    place = _place(ctx, location)
    near = geo.near_point(ctx.iter_airports(), place.lat, place.lon, float(max_distance_nm))
    near = [(d, a) for d, a in near if a["icao"] != place.icao]
    kept, profile = apply_filters([a for _, a in near], filters)
    keep = {a["icao"] for a in kept}
    rows = [summary(a, distance_nm=d) for d, a in near if a["icao"] in keep][:max_results]
    return {
        "_tool_type": "near_location",
        "location": {"name": place.name, "lat": place.lat, "lon": place.lon, "kind": place.kind, "country": place.country},
        "max_distance_nm": float(max_distance_nm),
        "count": len(keep),
        "airports": rows,
        "filter_profile": profile,
        "visualization": {
            "type": "point_with_markers",
            "point": {"name": place.name, "lat": place.lat, "lon": place.lon},
            "markers": [marker(r) for r in rows],
        },
        "pretty": f"{len(keep)} airport(s) within {max_distance_nm:g} nm of {place.name}",
    }


def find_airports_near_route(
    ctx: Any, from_location: str, to_location: str, max_distance_nm: float = 20.0,
    filters: dict[str, Any] | None = None, max_results: int = 40,
) -> dict[str, Any]:
    start, end = _place(ctx, from_location), _place(ctx, to_location)
    length, along = geo.near_route(ctx.iter_airports(), (start.lat, start.lon), (end.lat, end.lon), float(max_distance_nm))
    ends = {start.icao, end.icao}
    along = [t for t in along if t[2]["icao"] not in ends]
    kept, profile = apply_filters([a for _, _, a in along], filters)
    keep = {a["icao"] for a in kept}
    rows = [summary(a, along_track_nm=at, distance_from_route_nm=xt) for at, xt, a in along if a["icao"] in keep]
    total = len(rows)
    if len(rows) > max_results:  # spread the shown ones along the whole route
        step = len(rows) / max_results
        rows = [rows[int(i * step)] for i in range(max_results)]

    def end_point(p: geo.Place) -> dict[str, Any]:
        return {"icao": p.icao, "name": p.name, "lat": p.lat, "lon": p.lon}

    return {
        "_tool_type": "route",
        "from": end_point(start),
        "to": end_point(end),
        "route_length_nm": round(length, 1),
        "max_distance_nm": float(max_distance_nm),
        "count": total,
        "airports": rows,
        "filter_profile": profile,
        "visualization": {
            "type": "route_with_markers",
            "route": {"from": end_point(start), "to": end_point(end)},
            "markers": [marker(r) for r in rows],
        },
        "pretty": f"{total} airport(s) within {max_distance_nm:g} nm of the {length:.0f} nm route {start.name} - {end.name}",
    }


def runway_end_positions(a: dict[str, Any], r: dict[str, Any]) -> list[dict[str, Any]]:
    """Both thresholds' lat/lon (OurAirports, via the gateway's dataset); where the data has none,
    estimated from the reference point, the heading and the length (`estimated: true`)."""
    ends = list(r.get("ends") or ())
    if len(ends) == 2 and all(e.get("lat") is not None and e.get("lon") is not None for e in ends):
        return [{"ident": e["ident"], "lat": e["lat"], "lon": e["lon"], "estimated": False} for e in ends]
    hdg = next((e.get("heading_deg") for e in ends if e.get("heading_deg") is not None), None)
    if hdg is None and ends:
        digits = "".join(ch for ch in ends[0].get("ident", "") if ch.isdigit())
        hdg = int(digits) * 10.0 if digits else None
    if hdg is None or not r.get("length_ft"):
        return []
    half_nm = r["length_ft"] / FT_PER_M / 1852.0 / 2
    out = []
    for i, e in enumerate(ends[:2]):
        lat, lon = geo.destination(a["lat"], a["lon"], (hdg + 180.0) % 360 if i == 0 else hdg, half_nm)
        out.append({"ident": e.get("ident"), "lat": round(lat, 5), "lon": round(lon, 5), "estimated": True})
    return out


STATION_ORDER = ("atis", "delivery", "ground", "apron", "tower", "departure", "approach", "center", "other")


def get_airport_details(ctx: Any, icao_code: str, topic: str | None = None) -> dict[str, Any]:
    a = _airport(ctx, icao_code)
    freqs = a.get("frequencies") or {}
    ordered = {k: list(freqs[k]) for k in sorted(freqs, key=lambda k: STATION_ORDER.index(k) if k in STATION_ORDER else 99)}
    runways = [
        {
            "ends": [e.get("ident") for e in r.get("ends") or ()],
            "end_positions": runway_end_positions(a, r),
            "length_ft": r.get("length_ft"),
            "length_m": round((r.get("length_ft") or 0) / FT_PER_M),
            "width_ft": r.get("width_ft"),
            "surface": r.get("surface"),
            "lighted": r.get("lighted"),
        }
        for r in a.get("runways") or ()
    ]
    detail = summary(a, iata=a.get("iata"))
    detail.update({"runways": runways, "frequencies": ordered, "navaids": list(a.get("navaids") or [])[:4]})
    return {
        "_tool_type": "airport",
        "icao": a["icao"],
        "topic": topic,
        "airport": detail,
        "airports": [summary(a)],
        "filter_profile": {},
        "visualization": {"type": "marker_with_details", "marker": {**marker(a), "details": detail}},
        "pretty": f"{a['name']} ({a['icao']}), {a.get('city') or ''} {a.get('country') or ''}".strip(),
    }


def get_notification_for_airport(ctx: Any, icao_code: str) -> dict[str, Any]:
    a = _airport(ctx, icao_code)
    country = (a.get("country") or "").upper()
    rules = ctx.rules
    entries = []
    if country in rules.countries:
        for _, q in rules.search_bm25("PPR prior permission required airfield notice customs international arrival", k=6):
            ans = q.answer(country)
            if ans and ans["answer"]:
                entries.append(ans)
    return {
        "_tool_type": "notification",
        "icao": a["icao"],
        "country": country,
        "airport": summary(a),
        "airports": [summary(a)],
        "country_rules": entries[:6],
        "airport_specific": None,
        "note": "Airport-specific notice periods (PPR, customs notice hours) are not in our data; check the AIP or the airfield.",
        "filter_profile": {},
        "visualization": {"type": "marker_with_details", "marker": marker(a)},
        "pretty": f"{len(entries)} country rule(s) on permission and notice for {country or 'an unknown country'}",
    }
