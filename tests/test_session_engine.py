"""The session engine's mechanics on small purpose-built flows: routing, readbacks, flow switching,
timers on a virtual clock, telemetry holds, loop protection and traces."""

from __future__ import annotations

import textwrap

import pytest

from engine.loader import MemoryFlowSource, load_registry
from engine.models import TransitionKind
from engine.session import SessionEngine

VARS = {
    "callsign": "DLH359",
    "callsign_spoken": "Lufthansa 359",
    "airport": "EDDF",
    "airport_name": "Frankfurt",
    "destination": "EDDM",
    "destination_name": "Munich",
    "runway": "25R",
    "squawk": "4721",
    "tower_freq": "118.700",
    "ground_freq": "121.800",
    "departure_freq": "120.150",
    "holding_point": "A12",
    "taxi_route": "N3 U4",
}

FLOWS = {
    "taxi": """
        slug: taxi
        name: Taxi
        station: ground
        start_state: REQ
        end_states: [DONE]
        policies: {max_bad_readbacks: 2, silence_prompt_s: 10, silence_prompts_max: 2}
        states:
          REQ:
            role: pilot
            expect: "{{station_name}}, {{callsign_spoken}}, request taxi"
            transitions:
              - {to: TAXI}
              - {to: PUSH, intent: pushback, utterance_tpl: "{{callsign_spoken}} request pushback", triggers: ["push ?back"]}
          PUSH:
            role: atc
            say: "{{callsign_spoken}}, pushback approved"
            transitions: [{to: REQ}]
          TAXI:
            role: atc
            say: "{{callsign_spoken}}, taxi to holding point {{holding_point}} runway {{runway}} via {{taxi_route}}"
            transitions: [{to: TAXI_RB}]
          TAXI_RB:
            role: pilot
            readback: [runway, holding_point, taxi_route]
            expect: "Taxi to holding point {{holding_point}} runway {{runway}} via {{taxi_route}}, {{callsign_spoken}}"
            transitions:
              - {kind: ok, to: WAIT}
          WAIT:
            role: atc
            say: "{{callsign_spoken}}, hold position, expect departure in one minute"
            transitions:
              - {kind: timer, after_s: 60, to: CONTACT}
          CONTACT:
            role: atc
            say: "{{callsign_spoken}}, contact tower {{tower_freq}}"
            handoff: {to: tower}
            transitions: [{to: CONTACT_RB}]
          CONTACT_RB:
            role: pilot
            readback: [tower_freq]
            expect: "Tower {{tower_freq}}, {{callsign_spoken}}"
            transitions:
              - {kind: ok, flow: tower, mode: main}
          DONE: {role: system}
    """,
    "tower": """
        slug: tower
        name: Tower
        station: tower
        start_state: CALL
        end_states: [GONE]
        states:
          CALL:
            role: pilot
            silence_prompt: false
            expect: "{{station_name}}, {{callsign_spoken}}, holding point {{holding_point}}, ready for departure"
            transitions: [{to: TAKEOFF, triggers: ["ready"]}]
          TAKEOFF:
            role: atc
            say: "{{callsign_spoken}}, runway {{runway}}, cleared for takeoff"
            transitions: [{to: AIRBORNE}]
          AIRBORNE:
            role: pilot
            readback: [runway]
            expect: "Cleared for takeoff runway {{runway}}, {{callsign_spoken}}"
            transitions:
              - {kind: ok, to: CLIMB}
          CLIMB:
            role: pilot
            silence_prompt: false
            expect: "{{callsign_spoken}}, airborne"
            transitions:
              - {kind: auto, to: HANDOFF, triggers: [{telemetry: "not telemetry.on_ground and telemetry.altitude_ft > 400", hold_s: 3}]}
              - {to: HANDOFF, triggers: ["airborne"]}
          HANDOFF:
            role: atc
            say: "{{callsign_spoken}}, contact departure {{departure_freq}}"
            transitions: [{to: GONE}]
          GONE: {role: system}
    """,
    "radio_check": """
        slug: radio_check
        entry_mode: interrupt
        interrupt: {triggers: ["radio check"], priority: 50}
        start_state: RC_REPLY
        end_states: [RC_END]
        states:
          RC_REPLY:
            role: atc
            say: "{{callsign_spoken}}, {{station_name}}, read you five"
            transitions: [{to: RC_END}]
          RC_END: {role: system}
    """,
    "emergency": """
        slug: emergency
        entry_mode: interrupt
        station: tower
        interrupt: {triggers: ["may ?day", "pan ?pan"], priority: 100}
        start_state: ACK
        end_states: [OVER]
        states:
          ACK:
            role: atc
            say: "{{callsign_spoken}}, roger mayday, say intentions"
            transitions: [{to: INTENT}]
          INTENT:
            role: pilot
            expect: "{{callsign_spoken}}, request vectors"
            transitions:
              - {kind: return, triggers: ["cancel (may ?day|pan ?pan)"], utterance_tpl: "cancel mayday"}
              - {to: VECTORS}
          VECTORS:
            role: atc
            say: "{{callsign_spoken}}, turn left heading 180"
            transitions: [{to: INTENT}]
          OVER: {role: system}
    """,
    "looping": """
        slug: looping
        start_state: A
        states:
          A: {role: atc, say: "one", transitions: [{to: B}]}
          B: {role: atc, say: "two", transitions: [{to: A}]}
    """,
}


def _registry(extra: dict[str, str] | None = None):
    texts = {k: textwrap.dedent(v) for k, v in {**FLOWS, **(extra or {})}.items()}
    return load_registry(MemoryFlowSource(texts))


@pytest.fixture(scope="module")
def engine() -> SessionEngine:
    return SessionEngine(_registry())


def start(engine: SessionEngine, flow: str = "taxi"):
    return engine.start(variables=VARS, session_id="s1", flow=flow, now=0.0)


def test_start_rests_at_pilot_turn_with_expected_phrase(engine):
    session, d = start(engine)
    assert session.active.state == "REQ" and d.messages == []
    assert d.expected_pilot[0] == "Frankfurt Ground, Lufthansa 359, request taxi"
    assert "Lufthansa 359 request pushback" in d.expected_pilot


def test_transmission_advances_and_speaks_ordered_messages(engine):
    session, _ = start(engine)
    d = engine.transmit(session, "Frankfurt ground Lufthansa three five niner request taxi", 1.0)
    assert d.recognized and d.to_state == "TAXI_RB"
    assert [m.seq for m in d.messages] == [1]
    msg = d.messages[0]
    assert msg.text == "Lufthansa 359, taxi to holding point A12 runway 25R via N3 U4"
    assert "two" in msg.speech and "right" in msg.speech and "25R" not in msg.speech
    assert msg.station == "ground" and msg.frequency == "121.800"
    assert d.trace.auto_advance == ["taxi:TAXI", "taxi:TAXI_RB"]
    considered = {c.id for c in d.trace.candidates}
    assert {"TAXI", "PUSH", "radio_check:RC_REPLY", "emergency:ACK"} <= considered
    interrupt = next(c for c in d.trace.candidates if c.id == "emergency:ACK")
    assert interrupt.eliminated and "trigger" in interrupt.reason


def test_trigger_route_beats_main_route(engine):
    session, _ = start(engine)
    d = engine.transmit(session, "Lufthansa 359 request pushback", 1.0)
    assert d.messages[0].text == "Lufthansa 359, pushback approved"
    assert session.active.state == "REQ"


def test_callsign_alone_is_not_a_request(engine):
    session, _ = start(engine)
    d = engine.transmit(session, "Lufthansa three five nine", 1.0)
    assert not d.recognized and session.active.state == "REQ"
    assert d.messages[0].text == "Lufthansa 359, say again."


def _at_readback(engine):
    session, _ = start(engine)
    engine.transmit(session, "Frankfurt ground Lufthansa 359 request taxi", 1.0)
    assert session.active.state == "TAXI_RB"
    return session


def test_correct_readback_any_word_order(engine):
    session = _at_readback(engine)
    d = engine.transmit(session, "via november three uniform four, runway two five right, holding point alfa one two, lufthansa 359", 2.0)
    assert d.readback.ok and d.to_state == "WAIT"
    assert d.messages[-1].text.endswith("expect departure in one minute")


def test_wrong_readback_is_corrected_and_counted(engine):
    session = _at_readback(engine)
    d = engine.transmit(session, "taxi holding point A12 runway 25L via N3 U4 Lufthansa 359", 2.0)
    assert not d.readback.ok
    assert d.readback.fields["runway"] == "wrong"
    assert d.readback.wrong[0]["field"] == "runway"
    assert session.active.state == "TAXI_RB"
    assert "runway 25R" in d.messages[0].text and "negative" in d.messages[0].text
    bad = [c for c in d.trace.candidates if c.kind == TransitionKind.OK.value]
    assert bad and bad[0].eliminated and bad[0].reason == "readback not correct"
    # second bad readback reaches max_bad_readbacks=2: the controller repeats every item and the
    # state is kept (a wrong or missing value never moves it on); a correct readback then does
    d2 = engine.transmit(session, "holding point A12 via N3 U4 Lufthansa 359", 3.0)
    assert d2.readback.fields["runway"] == "missing"
    assert any(s.step == "policy" for s in d2.trace.steps)
    assert session.active.state == "TAXI_RB"
    assert "runway 25R" in d2.messages[0].text and "A12" in d2.messages[0].text
    d3 = engine.transmit(session, "holding point A12 runway 25R via N3 U4 Lufthansa 359", 4.0)
    assert d3.readback.ok and session.active.state == "WAIT"


def test_say_again_repeats_last_message_with_new_seq(engine):
    session = _at_readback(engine)
    last = session.message_history[-1]
    d = engine.transmit(session, "say again", 2.0)
    assert d.intent == "say_again" and session.active.state == "TAXI_RB"
    assert d.messages[0].text == last.text and d.messages[0].seq == last.seq + 1


def test_radio_check_interrupts_and_resumes(engine):
    session = _at_readback(engine)
    d = engine.transmit(session, "Frankfurt ground Lufthansa 359 radio check", 2.0)
    assert d.messages[0].text == "Lufthansa 359, Frankfurt Ground, read you five"
    assert d.readback is None and d.trace.readback is not None  # not a readback; still explained
    assert session.active.flow == "taxi" and session.active.state == "TAXI_RB"
    assert session.flow_stack == []
    d = engine.transmit(session, "runway 25R holding point A12 via N3 U4 Lufthansa 359", 3.0)
    assert d.readback.ok


def test_mayday_stacks_flow_and_cancel_returns(engine):
    session = _at_readback(engine)
    d = engine.transmit(session, "mayday mayday mayday Lufthansa 359 engine failure", 2.0)
    assert session.active.flow == "emergency" and session.active.state == "INTENT"
    assert [f.flow for f in session.flow_stack] == ["taxi"]
    assert d.messages[0].text.startswith("Lufthansa 359, roger mayday")
    d = engine.transmit(session, "Lufthansa 359 request vectors", 3.0)
    assert d.messages[0].text.endswith("heading 180") and session.active.state == "INTENT"
    d = engine.transmit(session, "Lufthansa 359 cancel mayday", 4.0)
    assert session.active.flow == "taxi" and session.active.state == "TAXI_RB" and not session.flow_stack


def test_timer_fires_exactly_once_on_virtual_clock(engine):
    session = _at_readback(engine)
    engine.transmit(session, "runway 25R holding point A12 via N3 U4 Lufthansa 359", 10.0)
    assert session.active.state == "WAIT"
    assert engine.next_wakeup(session) == 70.0
    assert engine.tick(session, 69.9) == []
    fired = engine.tick(session, 70.0)
    assert len(fired) == 1 and fired[0].to_state == "CONTACT_RB"
    assert fired[0].messages[0].text == "Lufthansa 359, contact tower 118.700"
    assert session.station == "tower" and session.frequency == "118.700"
    assert engine.tick(session, 70.0) == [] and engine.tick(session, 71.0) == []
    timer = next(t for t in session.timers if t.kind == "transition")
    assert timer.consumed


def test_silence_prompts_stop_after_max(engine):
    session = _at_readback(engine)  # ATC spoke at t=1, silence_prompt_s=10
    first = engine.tick(session, 11.0)
    assert [d.intent for d in first] == ["silence_prompt"]
    assert first[0].messages[0].text == "Lufthansa 359, Frankfurt Ground, how do you read?"
    assert len(engine.tick(session, 21.0)) == 1
    assert engine.tick(session, 100.0) == []  # silence_prompts_max = 2
    # a transmission cancels pending prompts
    session2 = _at_readback(engine)
    engine.transmit(session2, "say again", 5.0)
    assert [d.intent for d in engine.tick(session2, 14.0)] == []
    assert [d.intent for d in engine.tick(session2, 15.0)] == ["silence_prompt"]


def test_silence_clock_restarts_when_the_controller_stops_talking(engine):
    session = _at_readback(engine)  # ATC call decided at t=1; prompt due at 11
    assert engine.next_wakeup(session) == 11.0
    assert engine.defer_silence(session, 6.0)  # its audio ended at t=6
    assert engine.tick(session, 11.0) == []
    assert [d.intent for d in engine.tick(session, 16.0)] == ["silence_prompt"]
    assert not engine.defer_silence(_at_readback(engine), 1.0)  # nothing to move


def test_main_flow_switch_and_telemetry_hold(engine):
    session = _at_readback(engine)
    engine.transmit(session, "runway 25R holding point A12 via N3 U4 Lufthansa 359", 10.0)
    engine.tick(session, 70.0)
    d = engine.transmit(session, "tower one one eight decimal seven Lufthansa 359", 71.0)
    assert d.readback.ok and session.active.flow == "tower" and session.main_flow == "tower"
    engine.transmit(session, "Frankfurt tower Lufthansa 359 holding point A12 ready for departure", 72.0)
    d = engine.transmit(session, "cleared for takeoff runway 25R Lufthansa 359", 73.0)
    assert session.active.state == "CLIMB"
    assert engine.telemetry(session, {"on_ground": False, "altitude_ft": 800}, 80.0) is None
    assert engine.next_wakeup(session) == 83.0
    assert engine.telemetry(session, {"on_ground": True, "altitude_ft": 0}, 81.0) is None  # noise resets the hold
    assert engine.telemetry(session, {"on_ground": False, "altitude_ft": 900}, 82.0) is None
    assert engine.tick(session, 84.0) == []
    fired = engine.tick(session, 85.0)
    assert len(fired) == 1 and fired[0].cause == "tick"
    assert fired[0].messages[0].text == "Lufthansa 359, contact departure 120.150"
    assert session.completed and fired[0].completed


def test_loop_is_a_traced_error_not_a_hang(engine):
    session, d = start(engine, "looping")
    assert "auto_advance_loop" in d.trace.errors
    assert [m.text for m in d.messages] == ["one", "two"]


def test_linear_and_parallel_flows():
    extra = {
        "main": """
            slug: main
            start_state: M1
            end_states: [M_END]
            states:
              M1:
                role: pilot
                expect: "request info"
                transitions: [{flow: info, mode: linear, return_to: M2}]
              M2:
                role: atc
                say: "back in main"
                transitions: [{to: M3}, {flow: traffic, mode: parallel}]
              M3:
                role: pilot
                expect: "request landing"
                transitions: [{to: M_END}]
              M_END: {role: system}
        """,
        "info": """
            slug: info
            entry_mode: linear
            start_state: I1
            end_states: [I_END]
            states:
              I1: {role: atc, say: "information given", transitions: [{to: I_END}]}
              I_END: {role: system}
        """,
        "traffic": """
            slug: traffic
            entry_mode: parallel
            start_state: T1
            end_states: [T_END]
            states:
              T1: {role: atc, say: "traffic twelve o'clock", transitions: [{to: T2}]}
              T2:
                role: pilot
                expect: "traffic in sight"
                transitions: [{to: T3, triggers: ["traffic (in )?sight"]}]
              T3: {role: atc, say: "roger", transitions: [{to: T_END}]}
              T_END: {role: system}
        """,
    }
    eng = SessionEngine(_registry(extra))
    session, _ = eng.start(variables=VARS, session_id="p", flow="main", now=0)
    d = eng.transmit(session, "request info", 1)
    assert [m.text for m in d.messages] == ["information given", "back in main", "traffic twelve o'clock"]
    assert session.active.flow == "main" and session.active.state == "M3"
    assert [f.flow for f in session.parallel_flows] == ["traffic"]
    d = eng.transmit(session, "traffic in sight", 2)
    assert [m.text for m in d.messages] == ["roger"] and session.parallel_flows == []
    assert session.active.state == "M3"
    d = eng.transmit(session, "request landing", 3)
    assert session.completed


def test_guard_eliminates_candidate_with_reason():
    extra = {
        "guarded": """
            slug: guarded
            start_state: G1
            end_states: [G_END]
            flags: {cleared: false}
            states:
              G1:
                role: pilot
                expect: "request takeoff"
                transitions:
                  - {to: G_OK, guard: "flags.cleared"}
                  - {to: G_NO}
              G_OK: {role: atc, say: "cleared", transitions: [{to: G_END}]}
              G_NO: {role: atc, say: "not yet", transitions: [{to: G1}]}
              G_END: {role: system}
        """
    }
    eng = SessionEngine(_registry(extra))
    session, _ = eng.start(variables=VARS, session_id="g", flow="guarded", now=0)
    d = eng.transmit(session, "request takeoff", 1)
    g_ok = next(c for c in d.trace.candidates if c.id == "G_OK")
    assert g_ok.eliminated and g_ok.reason == "guard false: flags.cleared"
    assert d.messages[0].text == "not yet"


def test_hold_time_from_a_session_variable_and_new_aircraft_state() -> None:
    """A trigger's hold may come from a scenario variable (a noisier simulator sets more); the
    aircraft state has on_runway, gs_kt and vs_fpm beside the older fields; unknown keys are not
    kept."""
    flow = """
        slug: vacate
        station: tower
        start_state: ROLL
        end_states: [CLEAR]
        variables: {vacate_hold_s: 2}
        states:
          ROLL:
            role: pilot
            silence_prompt: false
            transitions:
              - kind: auto
                to: CLEAR
                triggers: [{telemetry: "telemetry.on_runway == False and telemetry.gs_kt < 30 and telemetry.vs_fpm == 0", hold_s: "{{vacate_hold_s}}"}]
          CLEAR: {role: system}
    """
    registry = load_registry(MemoryFlowSource({"vacate": textwrap.dedent(flow)}))
    engine = SessionEngine(registry)
    vacated = {"on_runway": False, "gs_kt": 12, "vs_fpm": 0, "flaps": 3}
    for given, hold in (({}, 2.0), ({"vacate_hold_s": 5}, 5.0), ({"vacate_hold_s": "0.5"}, 0.5)):
        session, _ = engine.start(flow="vacate", variables={**VARS, **given}, session_id="s", now=0.0)
        assert engine.telemetry(session, vacated, 10.0) is None
        assert "flaps" not in session.telemetry and session.telemetry["on_runway"] is False
        assert engine.next_wakeup(session) == 10.0 + hold
        assert engine.tick(session, 10.0 + hold - 0.1) == [] and not session.completed
        engine.tick(session, 10.0 + hold)
        assert session.completed, given
    # a value that is no number of seconds holds 0 s: the state is left at once
    session, _ = engine.start(flow="vacate", variables={**VARS, "vacate_hold_s": True}, session_id="s", now=0.0)
    assert engine.telemetry(session, vacated, 10.0) is not None and session.completed
