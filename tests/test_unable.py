"""A pilot who says "unable" where a readback is due declines the clearance: no readback, whatever
values were said. The controller asks to be told when able (`policies.unable_tpl`), the clearance
stands, and the state waits for its readback; a distress call with "unable" in it is still one."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.loader import load_registry
from engine.models import Session
from engine.session import SessionEngine
from gateway.flows_source import DirectoryFlowSource
from tooling.flow_scripts import SCRIPT_SCENARIO

FLOWS_DIR = Path(__file__).resolve().parents[1] / "flows"


@pytest.fixture(scope="module")
def engine() -> SessionEngine:
    return SessionEngine(load_registry(DirectoryFlowSource(FLOWS_DIR)))


def _at_descent_readback(engine: SessionEngine) -> tuple[Session, float]:
    session, _ = engine.start(variables={**SCRIPT_SCENARIO, "arrival_qnh": 1004}, session_id="s1", flow="approach")
    now = 1.0
    while session.active.state != "APP_DESCEND_RB":
        engine.transmit(session, engine.expected_pilot(session)[0], now)
        now += 1.0
    return session, now


def test_unable_with_every_value_right_is_no_readback(engine: SessionEngine) -> None:
    session, now = _at_descent_readback(engine)
    d = engine.transmit(session, "Unable descend 4000 feet, QNH 1004, Lufthansa 359", now)
    assert d.intent == "unable" and d.readback is None and session.active.state == "APP_DESCEND_RB"
    assert d.messages and "advise when able" in d.messages[0].text and "359" in d.messages[0].text
    assert session.bad_readbacks == 0 and any("unable" in s.detail for s in d.trace.steps)
    # the clearance stands: read back when able, it is accepted and the state moves on
    d = engine.transmit(session, "Descend 4000 feet, QNH 1004, Lufthansa 359", now + 1)
    assert d.readback is not None and d.readback.ok and session.active.state != "APP_DESCEND_RB"


def test_a_wrong_value_said_with_unable_is_not_corrected_either(engine: SessionEngine) -> None:
    session, now = _at_descent_readback(engine)
    d = engine.transmit(session, "Lufthansa 359, unable 3000 feet", now)
    assert d.intent == "unable" and session.active.state == "APP_DESCEND_RB" and "negative" not in d.messages[0].text


def test_a_mayday_saying_unable_is_a_mayday(engine: SessionEngine) -> None:
    session, now = _at_descent_readback(engine)
    d = engine.transmit(session, "Mayday mayday mayday, Lufthansa 359, engine failure, unable to maintain altitude", now)
    assert d.intent != "unable" and session.active.flow == "emergency"
