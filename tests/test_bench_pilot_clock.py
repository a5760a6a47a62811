"""The router benchmark's scenario clock (tooling/bench/pilot_clock.py): the controller's waits
take no time, and the pilot's turns run at wall speed, so a timer that waits tens of scenario
seconds for a silent pilot never beats a scripted pilot who answers in milliseconds."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gateway.service import RadioService
from gateway.settings import Settings
from tooling.bench.pilot_clock import PilotPacedService


@pytest.fixture()
def service() -> PilotPacedService:
    return PilotPacedService(Settings(store="memory", speech_preload=False, time_scale=1000.0))


def fly_to(service: RadioService, state: str, scenario: dict[str, Any] | None = None) -> str:
    """A tower session answered with the expected phrases until it stands at `state`."""
    session, _, _ = asyncio.run(service.start(flow="tower_departure", seed=0, scenario=scenario))
    for _ in range(10):
        if session.active.state == state:
            return session.session_id
        service.transmit(session.session_id, service.expected_pilot(session)[0])
        session = service.get(session.session_id)
    raise AssertionError(f"never reached {state}: at {session.active.state}")


def test_its_scenario_time_runs_at_wall_speed_whatever_the_settings_say(service: PilotPacedService) -> None:
    assert service.settings.time_scale == 1.0 and service.skipped_s == 0.0


def test_the_clock_never_skips_ahead_on_the_pilots_turn(service: PilotPacedService) -> None:
    """TWR_LINED_UP: tower clears for takeoff by itself after 30 s, a fallback for a silent pilot."""
    sid = fly_to(service, "TWR_LINED_UP")
    assert service.engine.next_wakeup(service.get(sid)) is not None  # the 30 s timer is pending
    assert service.tick_all() == []
    assert service.skipped_s == 0.0 and service.get(sid).active.state == "TWR_LINED_UP"


def test_a_controller_wait_is_skipped_to_the_moment_its_timer_is_due(service: PilotPacedService) -> None:
    """TWR_HOLD_WAIT (departure_delay): no pilot phrase is expected; tower comes back after 60 s."""
    sid = fly_to(service, "TWR_HOLD_WAIT", {"departure_delay": True})
    assert service.expected_pilot(service.get(sid)) == []
    due = service.engine.next_wakeup(service.get(sid))
    assert due is not None
    fired = service.tick_all()  # one round of the background clock
    assert [(d.from_state, d.to_state) for _, d in fired] == [("TWR_HOLD_WAIT", "TWR_LINEUP_RB")]
    assert 0.0 < service.skipped_s <= 60.0 and due <= fired[0][1].at  # the wait, at most, and no more
    assert service.tick_all() == [] and service.get(sid).active.state == "TWR_LINEUP_RB"  # the pilot's turn again
