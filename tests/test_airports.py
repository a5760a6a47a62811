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


def _load_build_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "build_airports.py"
    spec = importlib.util.spec_from_file_location("build_airports", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_script_filters_and_maps(tmp_path, capsys) -> None:
    import json

    build = _load_build_script()
    rwy_head = ("id,airport_ref,airport_ident,length_ft,width_ft,surface,lighted,closed,le_ident,"
                "le_latitude_deg,le_longitude_deg,le_elevation_ft,le_heading_degT,le_displaced_threshold_ft,"
                "he_ident,he_latitude_deg,he_longitude_deg,he_elevation_ft,he_heading_degT,he_displaced_threshold_ft\n")
    (tmp_path / "runways.csv").write_text(
        rwy_head
        + "1,1,EDDF,13123,197,ASP,1,0,07C,,,,69.6,,25C,,,,249.6,\n"
        + "2,1,EDDF,9000,150,CON,1,1,07X,,,,69.6,,25X,,,,249.6,\n"  # closed
        + "3,1,EDDF,3000,60,GRS,0,0,09,,,,,,27,,,,,\n"  # grass
        + "4,2,EDFE,1200,50,ASP,0,0,08,,,,,,26,,,,,\n"  # too short: airport dropped
        + "5,3,XXXX,9000,150,ASP,1,0,09,,,,,,27,,,,,\n"  # not in airportsdata
    )
    (tmp_path / "airport-frequencies.csv").write_text(
        "id,airport_ref,airport_ident,type,description,frequency_mhz\n"
        "1,1,EDDF,TWR,Tower,119.905\n2,1,EDDF,CLD,Delivery,121.9\n3,1,EDDF,A/D,LANGEN RADAR,118.45\n"
        "4,1,EDDF,MISC,Frankfurt Apron,121.655\n5,1,EDDF,UNIC,Unicom,122.8\n6,1,EDDF,TWR,Mil,257.8\n"
    )
    (tmp_path / "navaids.csv").write_text(
        "id,filename,ident,name,type,frequency_khz,latitude_deg,longitude_deg,elevation_ft,iso_country\n"
        "1,a,FFM,Frankfurt,VORTAC,114200,50.05,8.63,,DE\n2,b,FW,Frankfurt,NDB,382,50.0,8.5,,DE\n"
        "3,c,FAR,Far Away,VOR,113000,52.0,8.5,,DE\n"
    )
    out = tmp_path / "out.json.gz"
    assert build.main(["--source", str(tmp_path), "--out", str(out)]) == 0
    assert "kept 1 airports, 1 runways" in capsys.readouterr().out
    data = json.loads(gzip.decompress(out.read_bytes()))["airports"]
    assert list(data) == ["EDDF"]
    airport = AirportInfo.model_validate(data["EDDF"])
    assert [r.ident for r in airport.runways] == ["07C/25C"]
    assert airport.runways[0].surface == "asphalt" and airport.runways[0].lighted
    assert airport.frequencies == {
        "delivery": ["121.900"], "tower": ["119.905"], "departure": ["118.450"],
        "approach": ["118.450"], "apron": ["121.655"], "other": ["122.800"],
    }
    assert [(n.ident, n.freq) for n in airport.navaids] == [("FFM", "114.200"), ("FW", "382")]
    # Deterministic output: the same inputs give the same bytes.
    again = tmp_path / "again.json.gz"
    build.main(["--source", str(tmp_path), "--out", str(again)])
    assert again.read_bytes() == out.read_bytes()
