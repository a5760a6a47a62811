"""RadioService on a virtual clock: timers through `tick_all`, expiry, tokens, input checks."""

from __future__ import annotations

import pytest

from gateway.service import BadInput, RadioService, SessionNotFound, UnknownFlowError
from gateway.settings import Settings
from gateway.store import MemorySessionRepository

TTL = 600.0


class Clock:
    def __init__(self, t: float = 1_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def registry():  # loading the flows once keeps the module fast
    return RadioService(Settings()).registry


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def service(registry, clock: Clock) -> RadioService:
    return RadioService(Settings(session_ttl_s=TTL), registry=registry, clock=clock, repository=MemorySessionRepository())


def test_timer_messages_come_from_tick_all_and_reach_the_transcript(service: RadioService, clock: Clock) -> None:
    session, opening, _ = service.create(flow="clearance", scenario={"clearance_delay": True, "squawk": "4721"}, seed=2)
    assert service.tick_all() == []
    sid = session.session_id
    first = service.transmit(sid, opening.expected_pilot[0])
    assert "expect clearance" in first.messages[0].text
    standby = service.transmit(sid, first.expected_pilot[0])
    assert not standby.messages and service.get(sid).active.state == "CD_WAIT"

    clock.t += 60
    assert service.tick_all() == []  # nothing due yet
    clock.t += 60
    fired = service.tick_all()
    assert [s for s, _ in fired] == [sid]
    decision = fired[0][1]
    assert decision.cause == "tick" and "squawk 4721" in decision.messages[0].text
    assert service.get(sid).active.state == "CD_READBACK"
    assert service.tick_all() == []  # each timer fires once

    last = service.transcript(sid)[-1]
    assert last["role"] == "atc" and last["cause"] == "tick" and last["at"] == clock.t
    assert last["seq"] == decision.messages[0].seq


def test_idle_sessions_expire(service: RadioService, clock: Clock) -> None:
    session, _, token = service.create(flow="clearance", seed=1)
    sid = session.session_id
    assert service.check_token(sid, token) and not service.check_token(sid, token + "x")
    clock.t += TTL - 1
    service.transmit(sid, "request IFR clearance")  # activity keeps it alive
    clock.t += TTL - 1
    service.tick_all()
    assert service.get(sid).session_id == sid
    clock.t += 2
    service.tick_all()
    assert sid not in service.session_ids()
    with pytest.raises(SessionNotFound):
        service.get(sid)
    assert not service.check_token(sid, token)


def test_input_checks(service: RadioService) -> None:
    with pytest.raises(UnknownFlowError, match="no_such"):
        service.create(flow="no_such")
    with pytest.raises(BadInput, match="allowed: .*callsign") as bad:
        service.create(scenario={"callsing": "DLH1"})
    assert bad.value.field == "scenario.callsing"
    with pytest.raises(BadInput):
        service.create(scenario={"callsign": {"icao": "DLH1"}})
    with pytest.raises(BadInput):
        service.create(seed=True)  # type: ignore[arg-type]
    session, _, _ = service.create(flow="clearance", seed=1)
    for text in ("", "  ", "x" * 501):
        with pytest.raises(BadInput) as err:
            service.transmit(session.session_id, text)
        assert err.value.field == "text"
    with pytest.raises(SessionNotFound):
        service.transmit("missing", "hello")


def test_store_hands_out_copies(service: RadioService) -> None:
    session, _, _ = service.create(flow="clearance", seed=4)
    session.variables["squawk"] = "7700"  # the caller's copy, not the stored session
    assert service.get(session.session_id).variables["squawk"] != "7700"


def test_likely_reply_is_the_reply_to_the_expected_phrase_and_changes_nothing(service: RadioService) -> None:
    session, opening, _ = service.create(flow="clearance", seed=5)
    sid = session.session_id
    before, transcript = service.get(sid), service.transcript(sid)
    predicted = service.likely_reply(sid)
    assert predicted and service.get(sid) == before and service.transcript(sid) == transcript
    actual = service.transmit(sid, opening.expected_pilot[0])
    assert predicted == [m.speech for m in actual.messages]  # the clearance, word for word
    readback = service.likely_reply(sid)
    assert readback == [m.speech for m in service.transmit(sid, actual.expected_pilot[0]).messages]
    with pytest.raises(SessionNotFound):
        service.get("nope")
    assert service.likely_reply("nope") == []


def test_a_voice_transmission_passes_its_hearing_to_the_engine_and_the_trace(service: RadioService) -> None:
    from engine.hearing import Hearing

    session, _decision, _token = service.create(flow="clearance", seed=7)
    seen: list[tuple[str, Hearing | None]] = []
    transmit = service.engine.transmit

    def spy(session, text, now, llm=None, *, hearing=None):
        seen.append((text, hearing))
        return transmit(session, text, now, llm, hearing=hearing)

    service.engine.transmit = spy  # type: ignore[method-assign]
    hearing = Hearing(alternatives=["??? clearance"], cut_off=True, confidence=0.4)
    decision = service.transmit(session.session_id, "request clearance", hearing=hearing)
    step = next(s for s in decision.trace.steps if s.step == "hearing")
    assert step.data == hearing.model_dump() and "cut off" in step.detail
    # speech without a recognized word reaches the engine (a voice transmission may be empty)
    unsure = Hearing(confidence=0.0)
    service.transmit(session.session_id, "", hearing=unsure)
    assert seen == [("request clearance", hearing), ("", unsure)]
    with pytest.raises(BadInput):  # typed text still may not be empty
        service.transmit(session.session_id, "  ")


def test_the_trace_says_which_hearing_wrote_the_transcript_and_each_alternative(service: RadioService) -> None:
    """A transcript by whisper base with alternatives of three hearings: the `hearing` step counts
    each hearing's; one hearing alone adds nothing to the detail."""
    from engine.hearing import Hearing

    session, _decision, _token = service.create(flow="clearance", seed=7)
    heard_by = {"request clearance please": "second", "request clarence": "confirming"}
    hearing = Hearing(alternatives=["request clarence", "request clearance please", "??? clearance"], by="third", heard_by=heard_by)
    decision = service.transmit(session.session_id, "request clearance", hearing=hearing)
    step = next(s for s in decision.trace.steps if s.step == "hearing")
    assert step.data["heard_by"] == heard_by and step.data["by"] == "third"
    assert "transcript by the third hearing (whisper base)" in step.detail
    assert "1 by the confirming hearing (whisper base), 1 by the second hearing" in step.detail
    assert "1 by the first hearing" in step.detail
    plain = service.transmit(session.session_id, "say again", hearing=Hearing(alternatives=["say a gain"]))
    assert "by the" not in next(s for s in plain.trace.steps if s.step == "hearing").detail
