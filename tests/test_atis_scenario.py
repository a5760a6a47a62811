"""engine/atis_scenario.py: which ATIS a tuned frequency carries for a session, on which weather."""

from __future__ import annotations

from engine.atis_scenario import (
    atis_message,
    is_broadcast,
    session_report,
    station_atis,
    tuned_station,
)
from engine.models import FlowFrame, FlowMode, Session
from engine.weather import generated_report


def _session(**variables: object) -> Session:
    base = {
        "airport": "EDDF", "airport_name": "Frankfurt", "atis_freq": "118.025", "runway": "25C", "atis_letter": "K",
        "wind": "250/12", "qnh": 1013, "destination": "EDDM", "destination_name": "Munich",
        "dest_atis_freq": "123.130", "arrival_runway": "26R", "arrival_atis_letter": "D",
    }
    return Session(
        session_id="s1", main_flow="clearance", start_flow="clearance",
        active=FlowFrame(flow="clearance", state="CD_INITIAL", mode=FlowMode.MAIN),
        variables={**base, **variables}, seed=7,
    )


def _nothing_listed(icao: str) -> list[str]:
    return []


def test_the_departure_and_arrival_atis_frequencies() -> None:
    session = _session()
    departure = tuned_station(session, "118.025", _nothing_listed)
    arrival = tuned_station(session, "123.13", _nothing_listed)
    assert departure is not None and (departure.icao, departure.name, departure.letter, departure.runway) == ("EDDF", "Frankfurt", "K", "25C")
    assert arrival is not None and (arrival.prefix, arrival.icao, arrival.letter) == ("arrival_", "EDDM", "D")
    assert tuned_station(session, "121.900", _nothing_listed) is None
    assert tuned_station(session, "not a frequency", _nothing_listed) is None


def test_a_frequency_the_airport_data_lists_is_its_atis_too() -> None:
    station = tuned_station(_session(), "118.725", lambda icao: ["118.725"] if icao == "EDDF" else [])
    assert station is not None and station.icao == "EDDF"


def test_without_a_metar_the_weather_is_made_up_again_from_the_scenario() -> None:
    session = _session()
    station = tuned_station(session, "118.025", _nothing_listed)
    assert station is not None and not station.live
    report = session_report(session, station, lambda text, source: None)
    assert report == generated_report("EDDF", 7, wind="250/12", qnh=1013)
    atis = station_atis(station, report, live=False)
    assert atis.letter == "K" and atis.icao == "EDDF" and atis.text


def test_a_repetition_is_a_broadcast_not_a_session_message() -> None:
    session = _session()
    station = tuned_station(session, "118.025", _nothing_listed)
    assert station is not None
    atis = station_atis(station, session_report(session, station, lambda text, source: None), live=False)
    msg = atis_message("s1", atis, "118.025", 2, now=5.0)
    assert (msg.message_id, msg.seq, msg.station, msg.frequency, msg.at) == ("s1-atis-EDDF-K-3", 0, "atis", "118.025", 5.0)
    assert is_broadcast(msg)
