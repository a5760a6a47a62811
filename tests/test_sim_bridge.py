"""The flight-simulator bridge example (examples/sim_bridge.py) against a real gateway.

A simulated telemetry feed of a takeoff and climb, in SimConnect and in X-Plane variable names,
goes through the bridge (unit conversion, change thresholds, rate limit, `tune` on COM1) to a
gateway on loopback (uvicorn, light speech engines, the clock compressed tenfold and the feed
replayed tenfold). Nobody speaks: the session starts at tower's holding point and ends on the
departure frequency in the departure flow, and its transcript holds controller calls only.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import io
import json
import os
import subprocess
import sys

import httpx
import pytest

from gateway.app import create_app
from gateway.settings import REPO_ROOT, Settings
from tests.conftest import run_server

BRIDGE = REPO_ROOT / "examples" / "sim_bridge.py"
_spec = importlib.util.spec_from_file_location("sim_bridge", BRIDGE)
assert _spec is not None and _spec.loader is not None
sim_bridge = importlib.util.module_from_spec(_spec)
sys.modules["sim_bridge"] = sim_bridge  # its dataclasses look their module up
_spec.loader.exec_module(sim_bridge)


@pytest.fixture(scope="module")
def gateway():
    settings = Settings(speech_preload=False, stt_engine="sphinx", tts_engine="espeak", time_scale=10)
    with run_server(create_app(settings)) as base:
        yield base


def test_simulator_variables_become_aircraft_state() -> None:
    xplane = sim_bridge.to_aircraft_state(
        {
            "sim/flightmodel/failures/onground_any": 0,
            "sim/flightmodel/position/elevation": 250.0,  # metres
            "sim/flightmodel/position/groundspeed": 80.0,  # m/s
            "sim/flightmodel/position/vh_ind_fpm": 1800.0,
            "sim/cockpit2/radios/actuators/com1_frequency_hz_833": 127275,  # kHz
            "sim/cockpit/radios/transponder_code": 421,
            "sim/some/other/dataref": 1,
        },
        "xplane",
    )
    assert xplane == {"on_ground": False, "altitude_ft": pytest.approx(820.21, abs=0.01), "gs_kt": pytest.approx(155.51, abs=0.01),
                      "vs_fpm": 1800.0, "com1": "127.275", "squawk": "0421"}
    simconnect = sim_bridge.to_aircraft_state(
        {"SIM ON GROUND": 1, "ON ANY RUNWAY": 0.0, "PLANE ALTITUDE": 364, "COM ACTIVE FREQUENCY:1": 121.8}, "simconnect"
    )
    assert simconnect == {"on_ground": True, "on_runway": False, "altitude_ft": 364.0, "com1": "121.800"}


def _session(base: str, session_id: str) -> tuple[dict, list[dict]]:
    session = httpx.get(f"{base}/api/radio/sessions/{session_id}", timeout=10).json()["session"]
    entries = httpx.get(f"{base}/api/radio/sessions/{session_id}/transcript", timeout=10).json()["entries"]
    return session, entries


def _assert_handed_to_departure(base: str, summary: dict) -> None:
    assert summary["errors"] == []
    assert (summary["flow"], summary["state"], summary["station"]) == ("departure", "DEP_INITIAL", "departure")
    session, entries = _session(base, summary["session_id"])
    departure = session["variables"]["departure_freq"]
    assert summary["frequency"] == session["frequency"] == departure
    assert summary["tunes"][-1] == departure
    assert [e["role"] for e in entries] == ["atc"]  # no pilot transmission: telemetry alone
    assert f"contact departure {departure}" in entries[0]["text"]
    assert summary["telemetry_messages"] > 5


def test_a_takeoff_in_simconnect_names_hands_over_to_departure(gateway: str) -> None:
    """The bridge as a user runs it: a process, its JSON summary on stdout."""
    done = subprocess.run(
        [sys.executable, str(BRIDGE), "--url", gateway, "--sim", "simconnect", "--simulate", "takeoff",
         "--speed", "10", "--airport", "EDDF", "--json"],
        capture_output=True, text=True, timeout=120, cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    _assert_handed_to_departure(gateway, summary)
    assert ": tower_departure:TWR_READY -> tower_departure:TWR_DEP_RB" in done.stderr  # by a telemetry message or the clock
    assert "departure:DEP_INITIAL" in done.stderr.splitlines()[-1]


def test_a_takeoff_in_xplane_datarefs_over_webrtc(gateway: str) -> None:
    """The same feed in X-Plane's names and units, on the WebRTC transport (the data channel)."""
    args = argparse.Namespace(
        url=gateway, sim="xplane", simulate="takeoff", speed=10.0, rate=4.0, transport="webrtc", flow="tower_departure",
        seed=3, airport="EDDM", callsign=None, resume=None, token=None,
    )
    log = io.StringIO()
    summary = asyncio.run(asyncio.wait_for(sim_bridge.run(args, log), 120))
    _assert_handed_to_departure(gateway, summary)
    assert "ATC:" in log.getvalue()
