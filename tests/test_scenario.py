"""Scenario variable resolution: complete, reproducible, realistic, and given values win."""

from __future__ import annotations

import math
import re

import pytest

from engine.airport import AirportInfo
from engine.phraseology.callsigns import AIRLINES, callsign_telephony
from engine.scenario import (
    DERIVED_VARIABLES,
    DESTINATIONS,
    RESERVED_SQUAWKS,
    SCENARIO_VARIABLES,
    resolve_airports,
    resolve_scenario,
)
from gateway.airports import AirportRepository

FREQ = re.compile(r"^\d{3}\.\d{3}$")
STATION_FREQS = ("delivery_freq", "ground_freq", "tower_freq", "departure_freq", "approach_freq", "center_freq")
CHANNEL_ENDINGS = {0, 5, 10, 15, 25, 30, 35, 40, 50, 55, 60, 65, 75, 80, 85, 90}


@pytest.fixture(scope="module")
def repo() -> AirportRepository:
    return AirportRepository()


def scenario(repo: AirportRepository, given: dict | None = None, seed: int = 1) -> dict:
    given = given or {}
    dep, dest = resolve_airports(given, seed)
    return resolve_scenario(given, airport=repo.get(dep), destination=repo.get(dest), seed=seed)


def headwind(wind: str, runway_heading: float) -> float:
    return math.cos(math.radians(int(wind[:3]) - runway_heading))


def test_every_variable_is_filled(repo: AirportRepository) -> None:
    s = scenario(repo)
    for name in SCENARIO_VARIABLES + DERIVED_VARIABLES:
        assert s.get(name) not in (None, ""), name
    assert s["airport"] == "EDDF" and s["airport_name"] == "Frankfurt"
    assert s["approach_type"] == "ILS"
    assert re.fullmatch(r"FL(2[89]|3\d)0", s["cruise_level"])
    assert re.fullmatch(r"\d{3}/\d{2}", s["wind"])
    assert re.fullmatch(r"\d{3}", s["heading"])
    assert re.fullmatch(r"[A-Z]{5} [1-9][A-Z]", s["sid"])
    assert re.fullmatch(r"[A-Z]\d( [A-Z]\d){1,2}", s["taxi_route"])
    assert re.fullmatch(r"[A-Z]\d{1,2}", s["holding_point"])
    assert re.fullmatch(r"[A-Z]\d{1,3}", s["stand"])
    assert re.fullmatch(r"[A-Z]", s["atis_letter"])
    assert s["cleared_altitude_ft"] > s["initial_altitude_ft"] >= 4000


def test_same_seed_same_scenario_and_seeds_differ(repo: AirportRepository) -> None:
    assert scenario(repo, {"callsign": "DLH359"}, seed=42) == scenario(repo, {"callsign": "DLH359"}, seed=42)
    runs = [scenario(repo, seed=seed) for seed in range(12)]
    assert len({r["callsign"] for r in runs}) > 6
    assert len({r["squawk"] for r in runs}) > 6
    assert len({(r["destination"], r["runway"], r["sid"]) for r in runs}) > 6


def test_given_values_win(repo: AirportRepository) -> None:
    given = {"runway": "07C", "squawk": "4721", "callsign": "DLH359", "qnh": 1021, "sid": "TOBAK 5Q",
             "tower_freq": "118.775", "custom": "kept", "stand": None}
    s = scenario(repo, given, seed=3)
    for key, value in given.items():
        if value is not None:
            assert s[key] == value
    assert s["stand"]  # None counts as unset
    assert s["callsign_spoken"] == callsign_telephony("DLH359")
    assert headwind(s["wind"], 69.6) > 0.6  # wind made to fit the given runway
    assert s["heading"] == "070"


def test_giving_one_value_does_not_reshuffle_the_others(repo: AirportRepository) -> None:
    base = scenario(repo, seed=9)
    pinned = scenario(repo, {"runway": "18"}, seed=9)
    for name in ("callsign", "squawk", "qnh", "stand", "destination", "tower_freq"):
        assert pinned[name] == base[name], name


@pytest.mark.parametrize(("wind", "prefix"), [("250/12", "25"), ("070/10", "07"), ("25012KT", "25")])
def test_runway_follows_given_wind(repo: AirportRepository, wind: str, prefix: str) -> None:
    for seed in range(20):
        s = scenario(repo, {"airport": "EDDF", "wind": wind}, seed=seed)
        assert s["runway"].startswith(prefix)
        assert s["runway"] in {"07C", "07L", "07R", "25C", "25L", "25R"}
        assert s["wind"] == wind


def test_generated_wind_fits_generated_runway(repo: AirportRepository) -> None:
    eddf = repo.get("EDDF")
    headings = {end.ident: end.heading_deg for rwy in eddf.runways for end in rwy.ends}
    for seed in range(60):
        s = scenario(repo, {"airport": "EDDF"}, seed=seed)
        assert s["runway"] in headings
        assert headwind(s["wind"], headings[s["runway"]]) > 0.6


def test_squawk_is_a_valid_assignable_code(repo: AirportRepository) -> None:
    for seed in range(200):
        squawk = scenario(repo, seed=seed)["squawk"]
        assert re.fullmatch(r"[0-7]{4}", squawk), squawk
        assert squawk not in RESERVED_SQUAWKS


def test_real_frequencies_at_eddf(repo: AirportRepository) -> None:
    s = scenario(repo, {"airport": "EDDF", "destination": "EDDM"}, seed=5)
    eddf, eddm = repo.get("EDDF").frequencies, repo.get("EDDM").frequencies
    assert s["tower_freq"] in eddf["tower"]
    assert s["ground_freq"] in eddf["ground"]
    assert s["delivery_freq"] in eddf["delivery"]
    assert s["approach_freq"] in eddm["approach"]  # the arrival approach
    assert s["dest_tower_freq"] in eddm["tower"]
    assert s["destination_name"] == "Munich"
    assert s["arrival_runway"][:2] in {"08", "26"}


def test_frequencies_formatted_in_range_and_distinct_when_generated(repo: AirportRepository) -> None:
    for seed in range(50):
        s = resolve_scenario({"airport": "ZZZZ", "destination": "ZZZY"}, airport=None, destination=None, seed=seed)
        values = [s[name] for name in STATION_FREQS]
        assert len(set(values)) == len(values)
        for value in values + [s["atis_freq"]]:
            assert FREQ.match(value), value
            assert 118.0 <= float(value) <= 136.975
            assert int(value[-2:]) in CHANNEL_ENDINGS
    for seed in range(20):
        s = scenario(repo, seed=seed)
        for name in STATION_FREQS:
            assert FREQ.match(s[name]) and 118.0 <= float(s[name]) <= 136.975


def test_unknown_airport_still_gives_a_full_scenario() -> None:
    s = resolve_scenario({"airport": "zzzz", "wind": "130/08"}, airport=None, destination=None, seed=11)
    for name in SCENARIO_VARIABLES + DERIVED_VARIABLES:
        assert s.get(name) not in (None, ""), name
    assert s["airport"] == "ZZZZ" and s["airport_name"] == "ZZZZ"
    assert s["runway"] == "13" and s["heading"] == "130"


def test_callsign_comes_from_the_airline_table(repo: AirportRepository) -> None:
    for seed in range(30):
        s = scenario(repo, seed=seed)
        match = re.fullmatch(r"([A-Z]{3})([1-9]\d{1,3})", s["callsign"])
        assert match and match.group(1) in AIRLINES
        assert s["callsign_spoken"] == callsign_telephony(s["callsign"])


def test_spoken_callsign_alone_gives_the_icao_one() -> None:
    code, (telephony, _) = sorted(AIRLINES.items())[0]
    s = resolve_scenario({"callsign_spoken": f"{telephony} 42"}, airport=None, destination=None, seed=1)
    assert s["callsign"] == f"{code}42"
    assert s["callsign_spoken"] == f"{telephony} 42"


def test_resolve_airports() -> None:
    assert resolve_airports({}) == ("EDDF", "EDDM")
    assert resolve_airports({"airport": "egll", "destination": "kjfk"}, 4) == ("EGLL", "KJFK")
    picks = {resolve_airports({}, seed)[1] for seed in range(40)}
    assert picks <= set(DESTINATIONS) and len(picks) > 5
    assert all(resolve_airports({"airport": d}, s)[1] != d for d in DESTINATIONS[:5] for s in range(10))
    assert resolve_airports({}, 8) == resolve_airports({}, 8)


def test_scenario_from_a_given_airport_model() -> None:
    field = AirportInfo(icao="XTST", name="Testville Regional Airport", city="Testville", lat=0, lon=0,
                        elevation_ft=5400)
    s = resolve_scenario({}, airport=field, destination=None, seed=2)
    assert s["airport"] == "XTST" and s["airport_name"] == "Testville"
    assert s["initial_altitude_ft"] >= 8000  # high field: the climb clears it


def test_generated_frequencies_avoid_given_ones() -> None:
    taken = {"center_freq": "121.800", "approach_freq": "121.825", "atis_freq": "121.850"}
    for seed in range(30):
        s = resolve_scenario(dict(taken), airport=None, destination=None, seed=seed)
        generated = [s[n] for n in ("delivery_freq", "ground_freq", "tower_freq", "departure_freq")]
        assert not set(generated) & set(taken.values())
