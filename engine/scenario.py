"""Scenario variables: fill every value a flow may use from the airport data and a seed.

A session starts from whatever the client gave (``callsign``, ``runway``...). Everything unset is
made up here, realistically and reproducibly: the same ``given`` and ``seed`` always give the same
scenario. Each variable draws from its own random stream (``Random(f"{seed}:{name}")``), so giving
one value (say, the runway) never changes unrelated ones (the squawk, the callsign).

Where each value comes from:
- airport/destination: given, else EDDF and a seeded pick among big European airports
  (`resolve_airports`; EDDM when no seed is used).
- runway and wind agree: a given runway gets a wind from ahead of it; a given wind picks the runway
  with most headwind (`engine.airport.best_runway_for_wind`); with neither, a seeded wind picks the
  runway and the reported wind is then drawn within 40 degrees of it.
- frequencies: the airport's real ones where known (a seeded pick when it has several), otherwise
  valid 8.33/25 kHz channel names in the station's usual band, distinct from every other one.
  delivery/ground/tower/departure/atis belong to the departure airport; ``approach_freq`` and the
  ``arrival_*`` values to the destination (the approach a flight talks to is the arrival one);
  ``center_freq`` is the departure airport's listed centre, else the destination's (the en-route
  controller a flight between them talks to; OurAirports lists centres for few airports, none
  for EDDF), else generated.
- callsign: a seeded airline from `engine.phraseology.callsigns.AIRLINES` and flight number.
- weather: with a report of the airport's real weather (`engine.weather.WeatherReport`, fetched
  and parsed by the gateway), the wind, QNH, ATIS letter and METAR are today's and the runway is
  the one that wind puts in use (`engine.weather.runway_in_use`), the same for every session at
  the airport; without one, the seeded wind, runway and QNH above stand and a METAR is generated
  to agree with them (`weather_source` says which). The destination's report sets the
  ``arrival_*`` values the same way.

Given values always win and are returned verbatim (airport codes upper-cased). The result holds
plain strings and ints only.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from engine import scenario_values as draw
from engine.airport import AirportInfo, RunwayEnd, best_runway_for_wind, end_heading, name_aliases, short_name
from engine.phraseology.callsigns import AIRLINES, callsign_telephony, parse_callsign
from engine.scenario_values import FIXES as FIXES  # callers read the tables here
from engine.scenario_values import RESERVED_SQUAWKS as RESERVED_SQUAWKS
from engine.scenario_values import SID_LETTERS as SID_LETTERS
from engine.weather import WeatherReport, generated_report, weather_variables

# Names from ARCHITECTURE.md "Scenario variables".
SCENARIO_VARIABLES: tuple[str, ...] = (
    "callsign",
    "callsign_spoken",
    "airport",
    "destination",
    "runway",
    "sid",
    "initial_altitude_ft",
    "squawk",
    "stand",
    "taxi_route",
    "holding_point",
    "qnh",
    "atis_letter",
    "wind",
    "delivery_freq",
    "ground_freq",
    "tower_freq",
    "departure_freq",
    "approach_freq",
    "center_freq",
)
# Filled as well, for flows that go beyond the departure.
DERIVED_VARIABLES: tuple[str, ...] = (
    "airport_name",
    "airport_aliases",
    "sid_fixes",
    "destination_name",
    "destination_aliases",
    "atis_freq",
    "heading",
    "turn",
    "cleared_altitude_ft",
    "cruise_level",
    "approach_type",
    "arrival_runway",
    "arrival_wind",
    "arrival_qnh",
    "arrival_altitude_ft",
    "arrival_stand",
    "arrival_taxi_route",
    "arrival_holding_point",
    "dest_approach_freq",
    "dest_tower_freq",
    "dest_ground_freq",
    "elevation_ft",
    "dest_elevation_ft",
    "metar",
    "weather_source",
    "arrival_metar",
    "arrival_atis_letter",
    "dest_atis_freq",
)
# Set from a filed flight plan when a session starts from one (gateway/vatsim); absent otherwise.
FLIGHT_PLAN_VARIABLES: tuple[str, ...] = ("filed_route", "aircraft_type", "flight_rules")

DEFAULT_AIRPORT = "EDDF"
DEFAULT_DESTINATION = "EDDM"
# Seeded destinations when none is given: busy European airports with full data in the dataset.
DESTINATIONS: tuple[str, ...] = (
    "EDDM",
    "EDDH",
    "EDDB",
    "EDDL",
    "EGLL",
    "EGKK",
    "LFPG",
    "EHAM",
    "LSZH",
    "LOWW",
    "EKCH",
    "ENGM",
    "ESSA",
    "EFHK",
    "EPWA",
    "LKPR",
    "EBBR",
    "LEMD",
    "LEBL",
    "LIRF",
    "LPPT",
    "EIDW",
)


def resolve_airports(given: dict[str, Any], seed: int | None = None) -> tuple[str, str]:
    """(departure ICAO, destination ICAO) before the airports are looked up.

    Unset departure: EDDF. Unset destination: EDDM without a seed, else a seeded pick from
    `DESTINATIONS` other than the departure airport.
    """
    airport = _code(given.get("airport")) or DEFAULT_AIRPORT
    destination = _code(given.get("destination"))
    if destination:
        return airport, destination
    if seed is None:
        return airport, DEFAULT_DESTINATION if airport != DEFAULT_DESTINATION else DEFAULT_AIRPORT
    choices = [icao for icao in DESTINATIONS if icao != airport]
    return airport, _rng(seed, "destination").choice(choices)


def resolve_scenario(
    given: dict[str, Any],
    *,
    airport: AirportInfo | None,
    destination: AirportInfo | None,
    seed: int,
    weather: WeatherReport | None = None,
    arrival_weather: WeatherReport | None = None,
    observed_at: datetime | None = None,
) -> dict[str, Any]:
    """Every scenario variable (`SCENARIO_VARIABLES` + `DERIVED_VARIABLES`) plus all given keys.

    `airport`/`destination` are the looked-up airports (None when unknown: then runways,
    frequencies and names are generated). `weather`/`arrival_weather`: the airports' real weather
    when known (see the module docstring); `observed_at`: the time a generated METAR gives
    (default: drawn from the seed). Same arguments -> the same dict.
    """
    g = {k: v for k, v in given.items() if v is not None and v != ""}
    dep_code, dest_code = resolve_airports(
        {
            "airport": g.get("airport") or (airport.icao if airport else None),
            "destination": g.get("destination") or (destination.icao if destination else None),
        },
        seed,
    )
    out: dict[str, Any] = {"airport": dep_code, "destination": dest_code}
    out["airport_name"] = short_name(airport) if airport else dep_code
    out["destination_name"] = short_name(destination) if destination else dest_code
    # the airport's own names a pilot may read back for it ("cleared to Heathrow" for London)
    out["airport_aliases"] = name_aliases(airport) if airport else []
    out["destination_aliases"] = name_aliases(destination) if destination else []

    out["callsign"], out["callsign_spoken"] = _callsign(g, seed)

    live = _live_weather(weather, airport, g, arrival=False)
    runway, wind = _runway_and_wind(
        airport, g.get("runway") or live.get("runway"), g.get("wind") or live.get("wind"), _rng(seed, "runway")
    )
    out["runway"], out["wind"] = runway, wind
    out["heading"] = _radar_heading(runway, airport)
    out["turn"] = _rng(seed, "turn").choice(("left", "right"))  # which way the radar heading turns
    airport_sids = list(draw.sid_fixes(airport))
    out["sid"] = draw.sid(airport_sids, _rng(seed, "sid"))
    out["sid_fixes"] = airport_sids
    elevation = airport.elevation_ft if airport else 0
    out["elevation_ft"] = elevation  # field elevation: telemetry triggers compare altitude_ft with it
    initial = draw.altitude(_rng(seed, "initial_altitude_ft"), (4000, 5000, 6000, 7000), elevation + 2500)
    out["initial_altitude_ft"] = initial
    climb_from = _int(g.get("initial_altitude_ft"), initial)
    out["cleared_altitude_ft"] = climb_from + 1000 * _rng(seed, "cleared_altitude_ft").randint(3, 9)
    out["cruise_level"] = f"FL{_rng(seed, 'cruise_level').randrange(280, 400, 10)}"
    out["squawk"] = draw.squawk(_rng(seed, "squawk"))
    out["stand"] = draw.stand(_rng(seed, "stand"))
    out["taxi_route"] = draw.taxi_route(_rng(seed, "taxi_route"))
    out["holding_point"] = draw.taxiway(_rng(seed, "holding_point"))
    out["qnh"] = live.get("qnh", draw.qnh(_rng(seed, "qnh")))
    out["atis_letter"] = live.get("atis_letter") or _rng(seed, "atis_letter").choice(string.ascii_uppercase)
    out["weather_source"] = weather.source if weather is not None else "generated"
    out["metar"] = (
        live.get("metar")
        or generated_report(
            dep_code,
            seed,
            wind=str(g.get("wind", wind)),
            qnh=_int(g.get("qnh"), out["qnh"]),
            letter=out["atis_letter"],
            observed_at=observed_at,
        ).raw
    )

    used = {str(g[k]) for k in g if k.endswith("_freq")}  # generated ones never clash with these
    center_source = next((a for a in (airport, destination) if a and a.frequencies.get("center")), None)
    for var, station, source in (
        ("delivery_freq", "delivery", airport),
        ("ground_freq", "ground", airport),
        ("tower_freq", "tower", airport),
        ("departure_freq", "departure", airport),
        ("atis_freq", "atis", airport),
        ("approach_freq", "approach", destination),
        ("center_freq", "center", center_source),
        ("dest_tower_freq", "tower", destination),
        ("dest_ground_freq", "ground", destination),
        ("dest_atis_freq", "atis", destination),
    ):
        out[var] = g.get(var) or draw.frequency(source, station, used, _rng(seed, var))
        used.add(str(out[var]))
    # arrival flows name the destination's stations `dest_<station>_freq` (engine.messages)
    out["dest_approach_freq"] = g.get("dest_approach_freq") or out["approach_freq"]

    arrival_live = _live_weather(arrival_weather, destination, g, arrival=True)
    arrival_runway, arrival_wind = _runway_and_wind(
        destination,
        g.get("arrival_runway") or arrival_live.get("arrival_runway"),
        g.get("arrival_wind") or arrival_live.get("arrival_wind"),
        _rng(seed, "arrival_runway"),
    )
    out["arrival_runway"], out["arrival_wind"] = arrival_runway, arrival_wind
    out["approach_type"] = "ILS"
    dest_elevation = destination.elevation_ft if destination else 0
    out["dest_elevation_ft"] = dest_elevation
    out["arrival_altitude_ft"] = draw.altitude(
        _rng(seed, "arrival_altitude_ft"), (3000, 4000, 5000), dest_elevation + 2000
    )
    out["arrival_qnh"] = arrival_live.get("arrival_qnh", draw.qnh(_rng(seed, "arrival_qnh")))
    out["arrival_atis_letter"] = arrival_live.get("arrival_atis_letter") or _rng(seed, "arrival_atis_letter").choice(
        string.ascii_uppercase
    )
    out["arrival_metar"] = (
        arrival_live.get("arrival_metar")
        or generated_report(
            dest_code,
            f"{seed}:arrival",
            wind=str(g.get("arrival_wind", arrival_wind)),
            qnh=_int(g.get("arrival_qnh"), out["arrival_qnh"]),
            letter=out["arrival_atis_letter"],
            observed_at=observed_at,
        ).raw
    )
    out["arrival_stand"] = draw.stand(_rng(seed, "arrival_stand"))
    out["arrival_taxi_route"] = draw.taxi_route(_rng(seed, "arrival_taxi_route"))
    out["arrival_holding_point"] = draw.taxiway(_rng(seed, "arrival_holding_point"))

    out.update(g)
    out["airport"], out["destination"] = dep_code, dest_code
    listed = out["sid_fixes"] if isinstance(out.get("sid_fixes"), list) else airport_sids  # a given non-list
    fix = str(out.get("sid") or "").split(" ")[0].upper()  # a SID given that the list lacks joins it
    out["sid_fixes"] = sorted({*(str(f) for f in listed), *([fix] if fix else [])})
    return out


# --------------------------------------------------------------------------- helpers


def _live_weather(
    report: WeatherReport | None, airport: AirportInfo | None, given: dict[str, Any], *, arrival: bool
) -> dict[str, Any]:
    """The variables a real report sets (`engine.weather.weather_variables`); a wind the client
    gave keeps the runway its own (chosen for that wind), not the one the report puts in use."""
    if report is None:
        return {}
    values = weather_variables(report, airport, arrival=arrival)
    prefix = "arrival_" if arrival else ""
    if f"{prefix}wind" in given:
        values.pop(f"{prefix}runway", None)
    return values


def _rng(seed: Any, name: str) -> random.Random:
    """An independent, reproducible stream per variable (str seeds hash stably across runs)."""
    return random.Random(f"{seed}:{name}")


def _code(value: Any) -> str | None:
    text = str(value).strip().upper() if value else ""
    return text or None


def _int(value: Any, default: int) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


def _callsign(g: dict[str, Any], seed: int) -> tuple[str, str]:
    """ICAO callsign and its spoken form, consistent with whichever of the two was given."""
    if "callsign" in g:
        callsign = str(g["callsign"])
        return callsign, str(g.get("callsign_spoken") or callsign_telephony(callsign))
    if "callsign_spoken" in g:
        spoken = str(g["callsign_spoken"])
        parsed = parse_callsign(spoken)  # "Lufthansa 359" -> DLH359
        return (parsed.code if parsed else spoken.replace(" ", "").upper()), spoken
    rng = _rng(seed, "callsign")
    code = rng.choice(sorted(AIRLINES))
    digits = rng.choice((2, 3, 3, 3, 4))
    number = str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(digits - 1))
    callsign = f"{code}{number}"
    return callsign, callsign_telephony(callsign)


def _parse_wind(value: Any) -> tuple[int | None, int] | None:
    """ "250/12", "25012KT", "250 12", "VRB/03" -> (direction or None for variable, speed)."""
    if value is None:
        return None
    match = re.match(r"\s*(\d{3}|VRB)\s*/?\s*(\d{1,3})", str(value).upper())
    if not match:
        return None
    direction = None if match.group(1) == "VRB" else int(match.group(1)) % 360
    return direction, int(match.group(2))


def _format_wind(direction: int, speed: int) -> str:
    return f"{(direction % 360) or 360:03d}/{speed:02d}"


def _ident_heading(ident: str, airport: AirportInfo | None) -> float | None:
    """Heading of a runway end: from the airport data when it has that end, else from its number."""
    if airport:
        for rwy in airport.runways:
            for end in rwy.ends:
                if end.ident.upper() == ident.upper():
                    return end_heading(end)
    return end_heading(RunwayEnd(ident=ident))


def _runway_and_wind(
    airport: AirportInfo | None, given_runway: Any, given_wind: Any, rng: random.Random
) -> tuple[str, str]:
    """A runway end and a "DDD/SS" wind that agree with each other (see module docstring)."""
    parsed = _parse_wind(given_wind)
    speed = rng.randint(3, 16)
    if given_runway:
        runway = str(given_runway)
        if given_wind:
            return runway, str(given_wind)
        heading = _ident_heading(runway, airport)
        direction = rng.randrange(360) if heading is None else heading + rng.randint(-40, 40)
        return runway, _format_wind(_round10(direction), speed)
    if parsed is not None:
        wind_dir: float | None = parsed[0]
    else:
        wind_dir = rng.randrange(0, 360, 10)
    chosen = best_runway_for_wind(airport, wind_dir, rng) if airport else None
    if chosen is None:
        direction = wind_dir if wind_dir is not None else rng.randrange(0, 360, 10)
        number = round(direction / 10) % 36 or 36
        chosen = (f"{number:02d}", float(number * 10))
    runway, heading = chosen
    if given_wind:
        return runway, str(given_wind)
    if heading is None:
        return runway, _format_wind(_round10(wind_dir or 0), speed)
    return runway, _format_wind(_round10(heading + rng.randint(-40, 40)), speed)


def _round10(degrees: float) -> int:
    return int(round(degrees / 10.0)) * 10 % 360 or 360


def _radar_heading(runway: str, airport: AirportInfo | None) -> str:
    """Runway heading as a radar heading "070": the runway number is already magnetic."""
    digits = re.match(r"\d{1,2}", runway)
    if digits:
        return f"{int(digits.group()) * 10 % 360 or 360:03d}"
    heading = _ident_heading(runway, airport)
    return f"{int(5 * round((heading or 360) / 5)) % 360 or 360:03d}"


# --------------------------------------------------------------------------- flight plans


def cruise_level_of(altitude: Any) -> str | None:
    """A filed cruising altitude as a flight level: "FL360", "F360", "36000", "360" -> "FL360".

    Feet below 1000 are read as a level already (pilots file "350" for FL350); anything that is
    not a number, or above FL600, is no level (None).
    """
    text = str(altitude or "").strip().upper().removeprefix("FL").removeprefix("F")
    if not text.isdigit():
        return None
    value = int(text)
    level = value // 100 if value >= 1000 else value
    return f"FL{level:03d}" if 0 < level <= 600 else None


def flight_plan_variables(plan: Mapping[str, Any]) -> dict[str, Any]:
    """Scenario values from a filed flight plan (keys as the VATSIM feed names them: callsign,
    departure, arrival, route, altitude, aircraft, flight_rules), so the session flies the trip
    the pilot filed. Empty fields set nothing."""
    out: dict[str, Any] = {}
    for key, var in (
        ("callsign", "callsign"),
        ("departure", "airport"),
        ("arrival", "destination"),
        ("route", "filed_route"),
        ("aircraft", "aircraft_type"),
        ("flight_rules", "flight_rules"),
    ):
        value = " ".join(str(plan.get(key) or "").split())
        if value:
            out[var] = value.upper() if var != "filed_route" else value
    level = cruise_level_of(plan.get("altitude"))
    if level:
        out["cruise_level"] = level
    return out
