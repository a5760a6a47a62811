"""One table of the stations' names on the radio (engine/phraseology/stations.py): the controller
says the centre as "Radar", and a pilot who reads back "radar" names the centre's frequency."""

from __future__ import annotations

from engine.phraseology.stations import STATION_TITLES, STATIONS, radio_names, station_title
from engine.readback import ReadbackEvaluator
from tooling.flow_scripts import SCRIPT_SCENARIO


def test_the_controllers_title_of_a_station_is_a_name_it_is_heard_by():
    for key, station in STATIONS.items():
        assert STATION_TITLES[key] == station_title(key) == station.title
        assert {key, station.title.lower()} <= radio_names(key)
    assert station_title("center") == "Radar" and station_title("oceanic") == "Oceanic"
    assert radio_names("oceanic") == {"oceanic"}
    assert radio_names("approach") == {"approach", "radar", "director"}


def test_a_frequency_said_after_the_stations_radio_name_wins_over_another_stations():
    """ "contact radar 131.400, tower 118.700": the centre's frequency is the one said after
    "radar" (its title on the radio), whatever comes after another station's name."""
    variables = {**SCRIPT_SCENARIO, "center_freq": "131.400"}
    said = "Lufthansa three five niner, contact radar one three one decimal four, tower one one eight decimal seven"
    assert ReadbackEvaluator().evaluate(["center_freq"], variables, said).ok
    wrong = said.replace("one three one decimal four", "one three one decimal six")
    assert ReadbackEvaluator().evaluate(["center_freq"], variables, wrong).fields["center_freq"] == "wrong"
