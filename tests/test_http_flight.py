"""A whole trip over HTTP against a real uvicorn server, as a new user would script it.

The scripted pilot (tooling/fly.py) answers every pilot turn with the phrase the state expects,
spoken radio-style ("tree", "fife", "niner", "decimal", readback items reordered). The server runs
with time compression so the controller's timed calls come quickly, on the real clock.
"""

from __future__ import annotations

import time

import pytest

from engine.hearing import Hearing
from engine.models import Decision
from gateway.app import create_app
from gateway.service import RadioService
from gateway.settings import Settings
from tooling.fly import HttpPilot, spoken, wrong_value


@pytest.fixture(scope="module")
def fast_server():
    from tests.conftest import run_server

    with run_server(create_app(Settings(time_scale=50.0, tick_interval_s=0.05, speech_preload=False))) as base:
        yield base


@pytest.mark.parametrize("seed", [3, 11])
def test_gate_to_gate_over_http_reaches_the_end(fast_server, seed):
    pilot = HttpPilot(fast_server, seed=seed, poll_s=0.05, wait_timeout_s=60)
    try:
        report = pilot.fly(flow="clearance")
    finally:
        pilot.close()
    assert report.completed, report.states[-5:]
    assert report.unrecognized == []
    flows = {s.split(":")[0] for s in report.states}
    assert {"clearance", "taxi_out", "tower_departure", "departure", "approach", "taxi_in"} <= flows
    assert report.readbacks >= 15


def test_one_wrong_value_in_every_readback_is_caught(fast_server):
    pilot = HttpPilot(fast_server, seed=5, wrong_readbacks=True, poll_s=0.05, wait_timeout_s=60)
    try:
        report = pilot.fly(flow="clearance")
    finally:
        pilot.close()
    assert report.completed
    assert report.misses == []
    # every wrong value sent was caught (a readback a timer overtook is not sent wrong)
    assert report.wrong_sent >= report.readbacks - 2 and report.wrong_caught == report.wrong_sent


@pytest.mark.parametrize(
    ("kind", "value", "wrong"),
    [
        ("runway", "25R", "25L"),
        ("runway", "07", "08"),
        ("frequency", "118.700", "118.750"),
        ("squawk", "4721", "4712"),
        ("altitude", "5000", "6000"),
        ("flight_level", "FL350", "FL370"),
        ("sid", "MARUN 7F", "MARUN 7G"),
        ("route", "N3 U4", "N3 U5"),
        ("heading", "250", "280"),
    ],
)
def test_wrong_values_differ_in_meaning(kind, value, wrong):
    assert wrong_value(kind, value) == wrong


def test_spoken_style_uses_icao_words():
    import random

    text = spoken("Cleared to Munich via MARUN 7F departure, climb 5000 feet, squawk 4721, Lufthansa 359", random.Random(1), True)
    assert "fife" in text and "niner" in text and "4721" not in text


@pytest.fixture(scope="module")
def moderate_server():
    """Compressed less, so the tower's 60 s timer fallback cannot beat the test's telemetry."""
    from tests.conftest import run_server

    with run_server(create_app(Settings(time_scale=10.0, tick_interval_s=0.05, speech_preload=False))) as base:
        yield base


def test_telemetry_over_http_hands_off_from_tower_to_departure(moderate_server):
    import random
    import time

    import httpx

    rng = random.Random(2)
    with httpx.Client(base_url=moderate_server, timeout=10) as client:
        reply = client.post("/api/radio/sessions", json={"flow": "tower_departure", "seed": 2}).json()
        sid = reply["session"]["id"]
        session, expected = reply["session"], reply["expected_pilot"]
        for _ in range(400):
            if session["state"] == "TWR_ROLLING":
                break
            if expected:
                reply = client.post(f"/api/radio/sessions/{sid}/transmissions", json={"text": spoken(expected[0], rng, False)}).json()
                session, expected = reply["session"], reply["expected_pilot"]
            else:  # the controller makes us wait (timer): poll
                time.sleep(0.05)
                view = client.get(f"/api/radio/sessions/{sid}").json()
                session, expected = view["session"], view["expected_pilot"]
        assert session["state"] == "TWR_ROLLING"
        assert client.post(f"/api/radio/sessions/{sid}/telemetry", json={"bogus": 1}).status_code == 422
        first = client.post(f"/api/radio/sessions/{sid}/telemetry", json={"on_ground": False, "altitude_ft": 800}).json()
        assert first["decision"] is None  # the condition must hold for hold_s first
        for _ in range(200):
            view = client.get(f"/api/radio/sessions/{sid}").json()
            if view["session"]["state"] != "TWR_ROLLING":
                break
            time.sleep(0.02)
        assert view["session"]["state"] == "TWR_DEP_RB"
        entries = client.get(f"/api/radio/sessions/{sid}/transcript").json()["entries"]
        # compressed time: silence prompts may already follow the handoff, so look at every call
        handoff = [e for e in entries if e["role"] == "atc" and "contact departure" in e["text"]]
        assert handoff and handoff[0]["state"] in ("TWR_CONTACT_DEP", "TWR_DEP_RB")


class TimersFireRightAfterEachDecision(RadioService):
    """The background clock at its worst moment: as soon as a transmission is decided, before the
    response reads the session back, scenario time jumps a minute and every due timer fires.

    The scenario clock is this service's own (`now`), and the app's clock never ticks on its own
    (the test sets a tick interval of an hour), so the timers fire there and only there."""

    JUMP_S = 61.0  # past the tower's 60 s "handoff without telemetry" and 30 s "cleared for takeoff"

    def __init__(self, settings: Settings) -> None:
        self.now = time.time()
        super().__init__(settings, clock=lambda: self.now)

    async def transmit_async(self, session_id: str, text: str, *, hearing: Hearing | None = None) -> Decision:
        decision = await super().transmit_async(session_id, text, hearing=hearing)
        self.now += self.JUMP_S
        self.tick_all()
        return decision


@pytest.fixture
def late_timer_server():
    from tests.conftest import run_server

    settings = Settings(store="memory", tick_interval_s=3600.0, speech_preload=False)
    with run_server(create_app(settings, service=TimersFireRightAfterEachDecision(settings))) as base:
        yield base


@pytest.mark.parametrize("wrong", [False, True])
def test_a_timer_firing_between_decision_and_response_never_pairs_a_state_with_the_old_phrase(late_timer_server, wrong):
    """The flake of `livefreq bench router` ("correct readback rejected at TWR_DEP_RB: ..., airborne"):
    the takeoff readback moved the session to TWR_ROLLING, the 60 s handoff timer took it on to
    TWR_DEP_RB before the response was built, and the response paired the new state with the
    phrase TWR_ROLLING expected. The response's state and phrase now come from one snapshot."""
    import httpx

    pilot = HttpPilot(late_timer_server, seed=0, wrong_readbacks=wrong, wait_timeout_s=5.0)
    try:
        report = pilot.fly(flow="tower_departure", max_turns=5)  # up to the departure controller's first call
    finally:
        pilot.close()
    # the timers always won: the pilot never had TWR_ROLLING's (or TWR_LINED_UP's) turn, it answered
    # the state the session was in, and every correct readback was accepted (fly raises otherwise)
    assert report.states == [
        "tower_departure:TWR_READY",
        "tower_departure:TWR_LINEUP_RB",
        "tower_departure:TWR_TAKEOFF_RB",
        "tower_departure:TWR_DEP_RB",
        "departure:DEP_INITIAL",
    ]
    assert report.log == [] and report.misses == [] and report.wrong_caught == report.wrong_sent == (3 if wrong else 0)
    # any transmission's response is the session as a read right after it shows it
    with httpx.Client(base_url=late_timer_server, timeout=10) as client:
        said = client.post(f"/api/radio/sessions/{report.session_id}/transmissions", json={"text": "say again"}).json()
        view = client.get(f"/api/radio/sessions/{report.session_id}").json()
    assert said["expected_pilot"] and (said["session"]["state"], said["expected_pilot"]) == (
        view["session"]["state"],
        view["expected_pilot"],
    )


def test_the_opensquawk_transmit_response_pairs_next_state_with_its_own_phrase(late_timer_server):
    """The same race on the OpenSquawk app's endpoint: ``next_state_id`` is where the transmission
    took the session, and ``expected_pilot_template`` must be that state's phrase, even when a
    timer has moved the session on before the response is built (the app shows that phrase)."""
    import httpx

    from engine.models import Role

    registry = RadioService(Settings(speech_preload=False)).registry

    def template(flow: str, state_id: str) -> str | None:
        state = registry.get(flow).states[state_id]
        if state.role is not Role.PILOT:
            return None
        return state.utterance_tpl or next((t.utterance_tpl for t in state.transitions if t.utterance_tpl), None)

    def render(tpl: str, variables: dict) -> str:
        for key, value in variables.items():
            tpl = tpl.replace("{{" + key + "}}", str(value))
        return tpl

    moved_on = 0
    with httpx.Client(base_url=late_timer_server, timeout=10) as client:
        created = client.post("/api/radio/session", json={"flow_slug": "tower_departure"}).json()
        sid, phrase = created["session_id"], template("tower_departure", created["current_state"])
        variables = created["variables"]
        for _ in range(4):
            assert phrase is not None
            out = client.post(f"/api/radio/session/{sid}/transmissions", json={"pilot_utterance": render(phrase, variables)}).json()
            assert out["expected_pilot_template"] == template(out["flow_slug"], out["next_state_id"]), out
            now = client.get(f"/api/radio/sessions/{sid}").json()["session"]["state"]
            moved_on += now != out["next_state_id"]
            phrase, variables = out["expected_pilot_template"], out["variables"]
            if phrase is None:
                break
    assert moved_on  # the timer did fire between a decision and its response
