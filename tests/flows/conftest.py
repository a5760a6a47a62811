"""Fixtures for the curriculum scripts: the real `flows/` directory and one fixed scenario."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.loader import load_registry
from engine.registry import FlowRegistry
from gateway.flows_source import DirectoryFlowSource

FLOWS_DIR = Path(__file__).resolve().parents[2] / "flows"


# One realistic Frankfurt -> Munich scenario; every script runs against it (plus its own overrides).
VARS: dict[str, Any] = {
    "callsign": "DLH359",
    "callsign_spoken": "Lufthansa 359",
    "airport": "EDDF",
    "airport_name": "Frankfurt",
    "destination": "EDDM",
    "destination_name": "Munich",
    "runway": "25R",
    "sid": "MARUN 7F",
    "initial_altitude_ft": 5000,
    "squawk": "4721",
    "stand": "V155",
    "taxi_route": "N3 U4",
    "holding_point": "A12",
    "qnh": 1013,
    "atis_letter": "K",
    "wind": "250/12",
    "delivery_freq": "121.900",
    "ground_freq": "121.800",
    "tower_freq": "118.700",
    "departure_freq": "120.150",
    "approach_freq": "119.000",
    "center_freq": "127.275",
    "dest_approach_freq": "127.950",
    "dest_tower_freq": "118.700",
    "dest_ground_freq": "121.975",
    "arrival_runway": "26L",
    "arrival_holding_point": "A5",
    "arrival_taxi_route": "A B",
    "arrival_stand": "G12",
    "arrival_altitude_ft": 4000,
    "arrival_qnh": 1009,
    "approach_type": "ILS",
    "cruise_level": "FL350",
    "heading": 250,
    "cleared_altitude_ft": 11000,
    "elevation_ft": 364,
    "dest_elevation_ft": 1487,
}


@pytest.fixture(scope="session")
def registry() -> FlowRegistry:
    return load_registry(DirectoryFlowSource(FLOWS_DIR))


@pytest.fixture(scope="session")
def scenario_vars() -> dict[str, Any]:
    return dict(VARS)
