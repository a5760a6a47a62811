"""The shipped airport dataset, its repository and the engine's runway logic."""

from __future__ import annotations

import gzip
import random
import re

import pytest

from engine.airport import AirportInfo, Runway, RunwayEnd, best_runway_for_wind, runway_ends, short_name
from gateway.airports import AirportRepository
from gateway.airports.repository import DATA_FILE

FREQ = re.compile(r"^\d{3}\.\d{3}$")


@pytest.fixture(scope="module")
def repo() -> AirportRepository:
    return AirportRepository()


def test_dataset_is_shipped_and_small() -> None:
    assert DATA_FILE.is_file()
    assert DATA_FILE.stat().st_size < 3 * 1024 * 1024
    with gzip.open(DATA_FILE, "rb") as fh:
        assert fh.read(1) == b"{"


def test_dataset_loads(repo: AirportRepository) -> None:
    assert len(repo) > 5000
    for icao in ("EDDF", "EDDM", "KJFK", "EGLL", "LFPG"):
        assert icao in repo


def test_eddf_runways_and_frequencies(repo: AirportRepository) -> None:
    eddf = repo.get("eddf")
    assert eddf is not None and eddf.icao == "EDDF"
    assert eddf.iata == "FRA" and eddf.country == "DE"
    assert {r.ident for r in eddf.runways} == {"07C/25C", "07L/25R", "07R/25L", "18/36"}
    ends = dict(runway_ends(eddf))
    assert ends["25C"] == pytest.approx(249.6, abs=1)
    assert ends["18"] == pytest.approx(180, abs=1)
    assert all(r.length_ft and r.length_ft >= 1500 for r in eddf.runways)
    towers = repo.frequencies("EDDF")["tower"]
    assert "119.905" in towers
    assert repo.frequencies("EDDF")["ground"] == ["121.805"]
    assert 0 < len(eddf.navaids) <= 8
    assert any(n.ident == "FFM" for n in eddf.navaids)
    assert all(n.distance_nm is not None and n.distance_nm <= 40 for n in eddf.navaids)


def test_major_airports_have_tower_and_names(repo: AirportRepository) -> None:
    for icao in ("KJFK", "EGLL"):
        airport = repo.get(icao)
        assert airport is not None and airport.runways
        assert airport.frequencies["tower"]
    assert short_name(repo.get("EDDF")) == "Frankfurt"
    assert short_name(repo.get("EDDM")) == "Munich"
    assert {e for e, _ in runway_ends(repo.get("EGLL"))} >= {"09L", "27R", "09R", "27L"}


def test_all_frequencies_are_formatted_airband(repo: AirportRepository) -> None:
    for airport in (repo.get(i) for i in ("EDDF", "KJFK", "EGLL", "EHAM", "LSZH")):
        for station, values in airport.frequencies.items():
            for value in values:
                assert FREQ.match(value), value
                assert 108.0 <= float(value) <= 136.975


def test_unknown_and_search(repo: AirportRepository) -> None:
    assert repo.get("ZZZZ") is None
    assert repo.get("") is None
    assert repo.frequencies("ZZZZ") == {}
    assert repo.get("EDDF") is repo.get("eddf")  # cached model
    assert [a.icao for a in repo.search("EDD")][:3] == ["EDDB", "EDDC", "EDDE"]
    assert repo.search("FRA")[0].icao == "EDDF"  # IATA code
    assert "EDDF" in [a.icao for a in repo.search("frankfurt")]
    assert len(repo.search("K", limit=5)) == 5
    assert repo.search("") == []


@pytest.mark.parametrize(
    ("wind", "prefix"), [(250, "25"), (70, "07"), (180, "18"), (360, "36"), (None, "25")]
)
def test_best_runway_for_wind_at_eddf(repo: AirportRepository, wind: int | None, prefix: str) -> None:
    eddf = repo.get("EDDF")
    seen = {best_runway_for_wind(eddf, wind, random.Random(seed))[0] for seed in range(30)}
    assert all(ident.startswith(prefix) for ident in seen), seen


def test_parallel_runways_are_a_seeded_choice(repo: AirportRepository) -> None:
    eddf = repo.get("EDDF")
    seen = {best_runway_for_wind(eddf, 250, random.Random(seed))[0] for seed in range(40)}
    assert seen == {"25C", "25L", "25R"}
    first = best_runway_for_wind(eddf, 250, random.Random(7))
    assert best_runway_for_wind(eddf, 250, random.Random(7)) == first


def test_short_runways_are_not_chosen() -> None:
    airport = AirportInfo(
        icao="XXXX", name="Test Field", lat=0, lon=0,
        runways=[
            Runway(ends=[RunwayEnd(ident="09"), RunwayEnd(ident="27")], length_ft=10000),
            Runway(ends=[RunwayEnd(ident="18"), RunwayEnd(ident="36")], length_ft=2000),
        ],
    )
    # Straight crosswind for 09/27, but 18/36 is a short strip an airliner would not use.
    assert best_runway_for_wind(airport, 180, random.Random(1))[0] in {"09", "27"}
    assert best_runway_for_wind(airport, 260, random.Random(1)) == ("27", 270.0)
    assert best_runway_for_wind(AirportInfo(icao="YYYY", name="No Runway", lat=0, lon=0), 90, random.Random(1)) is None
