"""The parts behind `SessionEngine`, each on its own: the orchestrator, the readback policy, timing,
speaking, routing and the LLM consultation, on small purpose-built flows and real engine objects.

tests/test_session_engine.py covers the same behaviour through the facade; these tests pin each
part's own contract, so a part can change (or be reused) without going through a whole session.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from engine import timers
from engine.candidates import Candidate
from engine.consult import LlmConsultation
from engine.guards import parse_retrying
from engine.hearing import Hearing
from engine.loader import MemoryFlowSource, load_registry
from engine.models import Decision, FlowMode, ReadbackResult, Session, State, Transition, TransitionKind
from engine.orchestrator import FlowOrchestrator
from engine.readback_policy import BadReadback, ReadbackPolicy, exchange_words, noise_words, unheard
from engine.registry import FlowRegistry
from engine.router_llm import LlmExchange, judge
from engine.routing import RouteChooser, is_say_again
from engine.session import SessionEngine
from engine.speaking import Speaker
from engine.timing import Timing, locate

VARS = {
    "callsign": "DLH359",
    "callsign_spoken": "Lufthansa 359",
    "airport": "EDDF",
    "airport_name": "Frankfurt",
    "runway": "25R",
    "holding_point": "A12",
    "ground_freq": "121.800",
    "tower_freq": "118.700",
}

FLOWS = {
    "ground": """
        slug: ground
        name: Ground
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
              - {to: PUSH, triggers: ["push ?back"], guard: "flags.push_allowed"}
          PUSH:
            role: atc
            say: "{{callsign_spoken}}, pushback approved"
            transitions: [{to: REQ}]
          TAXI:
            role: atc
            say: "{{callsign_spoken}}, taxi to holding point {{holding_point}} runway {{runway}}"
            transitions: [{to: TAXI_RB}]
          TAXI_RB:
            role: pilot
            readback: [runway, holding_point]
            expect: "Holding point {{holding_point}} runway {{runway}}, {{callsign_spoken}}"
            transitions:
              - {kind: ok, to: WAIT}
          WAIT:
            role: atc
            say: "{{callsign_spoken}}, hold position"
            transitions:
              - {kind: timer, after_s: 30, to: DONE}
              - {kind: auto, to: DONE, triggers: [{telemetry: "telemetry.altitude_ft > 400", hold_s: 3}]}
          DONE: {role: system}
    """,
    "briefing": """
        slug: briefing
        name: Briefing
        station: ground
        entry_mode: linear
        start_state: NOTE
        end_states: [OVER]
        states:
          NOTE:
            role: atc
            say: "{{callsign_spoken}}, expect a short delay"
            transitions: [{to: OVER}]
          OVER: {role: system}
    """,
    "strict": """
        slug: strict
        name: Strict
        station: tower
        start_state: CLR
        end_states: [END]
        policies: {max_bad_readbacks: 1, on_max_bad: end}
        states:
          CLR:
            role: atc
            say: "{{callsign_spoken}}, runway {{runway}}, cleared for takeoff"
            transitions: [{to: CLR_RB}]
          CLR_RB:
            role: pilot
            readback: [runway]
            expect: "Cleared for takeoff runway {{runway}}, {{callsign_spoken}}"
            transitions:
              - {kind: ok, to: END}
              - {kind: bad, to: CLR_RB, label: "explicit correction"}
          END: {role: system}
    """,
}


@pytest.fixture(scope="module")
def registry() -> FlowRegistry:
    return load_registry(MemoryFlowSource({k: textwrap.dedent(v) for k, v in FLOWS.items()}), main_flow="ground")


def _decision(session: Session, now: float = 0.0) -> Decision:
    return Decision(cause="transmit", from_flow=session.active.flow, from_state=session.active.state, at=now)


def _started(orch: FlowOrchestrator, flow: str = "ground") -> tuple[Session, Decision]:
    session = orch.open(session_id="s1", flow=flow, variables=VARS, now=0.0, seed=None)
    d = _decision(session)
    orch.restart(session, d, 0.0)
    return session, d


# --------------------------------------------------------------------------- orchestrator


def test_orchestrator_opens_a_session_and_rests_at_the_first_pilot_turn(registry: FlowRegistry) -> None:
    orch = FlowOrchestrator(registry)
    session, d = _started(orch)
    assert (session.active.flow, session.active.state) == ("ground", "REQ")
    assert session.start_flow == "ground" and session.station == "ground" and session.frequency == "121.800"
    assert d.trace.auto_advance == ["ground:REQ"] and d.messages == []


def test_orchestrator_takes_a_transition_and_auto_advances_to_the_next_pilot_turn(registry: FlowRegistry) -> None:
    orch = FlowOrchestrator(registry)
    session, _ = _started(orch)
    req = registry.get("ground").states["REQ"]
    d = _decision(session, 1.0)
    orch.take(session, d, "ground", req.transitions[0], 1.0, "active")
    assert session.active.state == "TAXI_RB"
    assert d.trace.auto_advance == ["ground:TAXI", "ground:TAXI_RB"]
    assert [m.text for m in d.messages] == ["Lufthansa 359, taxi to holding point A12 runway 25R"]
    assert session.issued["ground"]  # what was said is what the readback is checked against


def test_orchestrator_arms_the_timers_of_the_state_it_enters_and_cancels_those_it_leaves(
    registry: FlowRegistry,
) -> None:
    orch = FlowOrchestrator(registry)
    session, _ = _started(orch)
    rb = registry.get("ground").states["TAXI_RB"]
    session.active.state = "TAXI_RB"  # test setup: put the session at the readback state
    d = _decision(session, 5.0)
    orch.take(session, d, "ground", rb.transitions[0], 5.0, "active")
    assert session.active.state == "WAIT"
    wait_timers = [t for t in timers.pending(session) if t.state == "WAIT"]
    assert [(t.kind, t.due) for t in wait_timers] == [("transition", 35.0)]
    orch.take(session, _decision(session, 6.0), "ground", Transition(to="DONE"), 6.0, "active")
    assert not [t for t in timers.pending(session) if t.state == "WAIT"]
    assert session.completed


def test_orchestrator_stacks_a_linear_flow_and_resumes_without_speaking_again(registry: FlowRegistry) -> None:
    orch = FlowOrchestrator(registry)
    session, _ = _started(orch)
    d = _decision(session, 2.0)
    change = orch.enter(session, "briefing", None, None)
    assert (change.op, change.flow, change.state) == ("enter", "briefing", "NOTE")
    assert [f.flow for f in session.flow_stack] == ["ground"] and session.active.mode is FlowMode.LINEAR
    orch.after_change(session, d, change, 2.0)
    assert (session.active.flow, session.active.state) == ("ground", "REQ") and not session.flow_stack
    assert [m.text for m in d.messages] == ["Lufthansa 359, expect a short delay"]
    assert "resumed ground:REQ" in [s.detail for s in d.trace.steps]


def test_orchestrator_completes_the_session_when_the_last_flow_ends(registry: FlowRegistry) -> None:
    orch = FlowOrchestrator(registry)
    session, _ = _started(orch)
    change = orch.finish(session)
    assert change.op == "complete" and session.completed


def test_orchestrator_runs_parallel_frames_beside_the_active_one(registry: FlowRegistry) -> None:
    orch = FlowOrchestrator(registry)
    session, _ = _started(orch)
    change = orch.enter(session, "briefing", None, FlowMode.PARALLEL)
    assert change.op == "parallel" and [f.flow for f in session.parallel_flows] == ["briefing"]
    assert session.active.flow == "ground"  # the active frame is untouched
    assert orch.frame(session, "briefing") is session.parallel_flows[0]
    orch.end_parallel(session, "briefing")
    assert session.parallel_flows == []


def test_orchestrator_rewind_goes_back_to_the_first_flow_and_keeps_the_variables(registry: FlowRegistry) -> None:
    orch = FlowOrchestrator(registry)
    session, _ = _started(orch)
    orch.enter(session, "briefing", None, None)
    session.flags["x"] = True
    orch.rewind(session)
    assert (session.active.flow, session.active.state) == ("ground", "REQ")
    assert session.flow_stack == [] and session.flags == {} and not session.completed
    assert session.variables["runway"] == "25R"


def test_orchestrator_reports_a_loop_instead_of_hanging(registry: FlowRegistry) -> None:
    orch = FlowOrchestrator(registry, max_hops=1)
    session = orch.open(session_id="s1", flow="strict", variables=VARS, now=0.0, seed=None)
    d = _decision(session)
    orch.restart(session, d, 0.0)
    assert "auto_advance_loop" in d.trace.errors


FLOW_FIELDS = frozenset({"active", "main_flow", "start_flow", "completed", "flow_stack", "parallel_flows"})
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear"})


def _flow_writes(source: str) -> list[int]:
    """Lines that change a session's flow or state: `session.<flow field> = ...`, `frame.state =
    ...`, `session.active.<x> = ...` and in-place changes of the flow stack or parallel frames."""
    lines: list[int] = []
    for node in ast.walk(parse_retrying(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            for t in node.targets:
                targets += list(t.elts) if isinstance(t, ast.Tuple) else [t]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for t in targets:
            if not isinstance(t, ast.Attribute):
                continue
            owner = t.value
            if isinstance(owner, ast.Name) and (
                (owner.id == "session" and t.attr in FLOW_FIELDS) or (owner.id == "frame" and t.attr == "state")
            ):
                lines.append(t.lineno)
            elif isinstance(owner, ast.Attribute) and owner.attr == "active":
                lines.append(t.lineno)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr in ("flow_stack", "parallel_flows")
        ):
            lines.append(node.lineno)
    return lines


def test_the_orchestrator_is_the_only_engine_module_that_changes_the_flow() -> None:
    engine_dir = Path(__file__).resolve().parents[1] / "engine"
    writes = {
        str(p.relative_to(engine_dir)): found
        for p in sorted(engine_dir.rglob("*.py"))
        if (found := _flow_writes(p.read_text(encoding="utf-8")))
    }
    assert set(writes) == {"orchestrator.py"}, f"flow or state changed outside the orchestrator: {writes}"


# --------------------------------------------------------------------------- readback policy


def _state(registry: FlowRegistry, flow: str, state: str) -> State:
    return registry.get(flow).states[state]


def test_unheard_tells_a_readback_never_heard_from_one_without_values(registry: FlowRegistry) -> None:
    state = _state(registry, "ground", "TAXI_RB")
    nothing = ReadbackResult(ok=False, fields={"runway": "missing", "holding_point": "missing"})
    ctx = dict(VARS, station_name="Frankfurt Ground")
    noise = noise_words(ctx)
    expected = exchange_words(["Holding point A12 runway 25R, Lufthansa 359"], noise)
    assert unheard(state, nothing, "", None, expected, noise)  # empty transcript
    assert unheard(state, nothing, "holding", Hearing(cut_off=True), expected, noise)  # key released early
    assert unheard(state, nothing, "something", Hearing(), expected, noise)  # by voice: nothing of it heard
    assert not unheard(state, nothing, "wilco, Lufthansa 359", None, expected, noise)  # typed, no values
    assert unheard(state, nothing, "Lufthansa 359, banana pancakes", None, expected, noise)
    some = ReadbackResult(ok=False, fields={"runway": "ok", "holding_point": "missing"})
    assert not unheard(state, some, "runway 25R", None, expected, noise)
    assert not unheard(_state(registry, "ground", "REQ"), nothing, "", None, expected, noise)  # nothing required


def test_exchange_words_leave_out_who_is_talking() -> None:
    noise = noise_words({"callsign_spoken": "Lufthansa 359", "station_name": "Frankfurt Ground", "runway": "25R"})
    assert {"lufthansa", "frankfurt", "ground"} <= noise
    words = exchange_words(["Frankfurt Ground, Lufthansa 359, request taxi"], noise)
    assert {"request", "taxi", "wilco", "roger"} <= words and not words & {"lufthansa", "frankfurt", "ground"}


def _rb_candidates(registry: FlowRegistry, flow: str, state_id: str) -> list[Candidate]:
    state = _state(registry, flow, state_id)
    return [Candidate(t, flow, state_id, "active", flow, t.to or state_id) for t in state.transitions]


def test_readback_check_scores_the_ok_route_and_adds_the_implicit_correction(registry: FlowRegistry) -> None:
    policy = ReadbackPolicy()
    orch = FlowOrchestrator(registry)
    session, _ = _started(orch)
    session.active.state = "TAXI_RB"  # test setup
    state = _state(registry, "ground", "TAXI_RB")
    ctx = orch.speaker.render_ctx(session, registry.get("ground"), state)

    cands = _rb_candidates(registry, "ground", "TAXI_RB")
    d = _decision(session)
    rb = policy.check(session, d, registry.get("ground"), state, "holding point A12 runway 25R", cands, ctx)
    assert rb is not None and rb.ok and d.readback is rb
    assert [c.score for c in cands] == [100.0] and len(cands) == 1

    cands = _rb_candidates(registry, "ground", "TAXI_RB")
    rb = policy.check(
        session, _decision(session), registry.get("ground"), state, "holding point A12 runway 07", cands, ctx
    )
    assert rb is not None and rb.fields["runway"] == "wrong"
    assert cands[0].eliminated and cands[0].reason == "readback not correct"
    implicit = cands[-1]
    assert implicit.transition.kind is TransitionKind.BAD and implicit.transition.label == "controller correction"


def test_bad_readback_policy_outcomes(registry: FlowRegistry) -> None:
    orch = FlowOrchestrator(registry)
    session, _ = _started(orch)
    ground, taxi_rb = registry.get("ground"), _state(registry, "ground", "TAXI_RB")
    wrong = ReadbackResult(
        ok=False,
        fields={"runway": "wrong", "holding_point": "ok"},
        wrong=[{"field": "runway", "expected": "25R", "heard": "07"}],
    )
    implicit = Candidate(
        Transition(kind=TransitionKind.BAD, to="TAXI_RB", label="controller correction"),
        "ground",
        "TAXI_RB",
        "active",
        "ground",
        "TAXI_RB",
    )
    d = _decision(session)
    assert ReadbackPolicy.bad_readback(session, d, ground, taxi_rb, wrong, implicit) is BadReadback.CORRECT
    assert session.bad_readbacks == 1 and session.variables["corrections"]
    # the second bad readback reaches max_bad_readbacks (2): correct_and_continue keeps the state
    assert ReadbackPolicy.bad_readback(session, d, ground, taxi_rb, wrong, implicit) is BadReadback.CORRECT
    assert session.bad_readbacks == 0 and any(s.step == "policy" for s in d.trace.steps)

    unsure = ReadbackResult(ok=False, fields={"runway": "unsure", "holding_point": "ok"}, unsure=["runway"])
    assert ReadbackPolicy.bad_readback(session, d, ground, taxi_rb, unsure, implicit) is BadReadback.SAY_AGAIN_ITEMS
    assert session.bad_readbacks == 0 and d.intent == "say_again_items" and session.variables["say_again_items"]

    strict, clr_rb = registry.get("strict"), _state(registry, "strict", "CLR_RB")
    explicit = _rb_candidates(registry, "strict", "CLR_RB")[1]
    wrong_rwy = ReadbackResult(
        ok=False, fields={"runway": "wrong"}, wrong=[{"field": "runway", "expected": "25R", "heard": "07"}]
    )
    # max_bad_readbacks 1 with on_max_bad=end: the first bad readback ends the flow
    assert ReadbackPolicy.bad_readback(session, d, strict, clr_rb, wrong_rwy, explicit) is BadReadback.END
    assert session.readback_state is None


def test_an_explicit_bad_route_below_the_maximum_is_the_flows_own(registry: FlowRegistry) -> None:
    orch = FlowOrchestrator(registry)
    session, _ = _started(orch)
    strict = registry.get("strict").model_copy(deep=True)
    strict.policies.max_bad_readbacks = 3
    explicit = _rb_candidates(registry, "strict", "CLR_RB")[1]
    wrong = ReadbackResult(
        ok=False, fields={"runway": "wrong"}, wrong=[{"field": "runway", "expected": "25R", "heard": "07"}]
    )
    outcome = ReadbackPolicy.bad_readback(session, _decision(session), strict, strict.states["CLR_RB"], wrong, explicit)
    assert outcome is BadReadback.FLOW_ROUTE and session.bad_readbacks == 1


# --------------------------------------------------------------------------- timing


def test_timing_arms_defers_and_reports_the_silence_clock(registry: FlowRegistry) -> None:
    timing = Timing(registry)
    session = FlowOrchestrator(registry).open(session_id="s1", flow="ground", variables=VARS, now=0.0, seed=None)
    ground, req = registry.get("ground"), _state(registry, "ground", "REQ")
    timing.arm_silence(session, ground, req, 0.0, force=False)
    assert timers.pending(session) == []  # nobody spoke and nothing forces it: no prompt
    timing.arm_silence(session, ground, req, 0.0, force=False, after_atc=True)
    assert [(t.kind, t.due) for t in timers.pending(session)] == [("silence", 10.0)]
    assert timing.next_wakeup(session) == 10.0
    assert timing.defer_silence(session, 4.0) and timing.next_wakeup(session) == 14.0
    assert not timing.defer_silence(session, 4.0)  # already due then
    timing.pilot_spoke(session)
    assert timers.pending(session) == [] and timing.next_wakeup(session) is None
    assert locate(session, "ground", "REQ") == ("active", session.active) and locate(session, "ground", "WAIT") is None


def test_timing_reports_a_telemetry_condition_once_it_held_long_enough(registry: FlowRegistry) -> None:
    timing = Timing(registry)
    session = FlowOrchestrator(registry).open(session_id="s1", flow="ground", variables=VARS, now=0.0, seed=None)
    session.active.state = "WAIT"  # test setup
    session.telemetry["altitude_ft"] = 600
    assert timing.held_condition(session, 10.0) is None  # the hold starts now
    assert timing.next_wakeup(session) == 13.0
    held = timing.held_condition(session, 13.0)
    assert held is not None and held.transition.to == "DONE" and held.origin == "active"
    assert "held 3s" in held.detail and session.telemetry_since == {}
    session.telemetry["altitude_ft"] = 100
    assert timing.held_condition(session, 20.0) is None and session.telemetry_since == {}


# --------------------------------------------------------------------------- speaking


def test_speaker_numbers_messages_and_repeats_the_last_on_say_again(registry: FlowRegistry) -> None:
    speaker = Speaker(registry)
    session = FlowOrchestrator(registry).open(session_id="s1", flow="ground", variables=VARS, now=0.0, seed=None)
    ground, req = registry.get("ground"), _state(registry, "ground", "REQ")
    d = _decision(session)
    speaker.say_again(session, d, 1.0)  # nothing said yet
    assert [m.text for m in d.messages] == ["Lufthansa 359, Frankfurt Ground, go ahead."]
    d = _decision(session)
    speaker.say(session, d, ground, req, "{{callsign_spoken}}, runway {{runway}}", 2.0)
    first = d.messages[0]
    assert session.issued["ground"]["runway"]  # recorded for later readbacks
    d = _decision(session)
    speaker.say_again(session, d, 3.0)
    again = d.messages[0]
    assert again.text == first.text and again.seq == first.seq + 1 and again.message_id != first.message_id
    assert [t.kind for t in timers.pending(session)] == ["silence"]  # the pilot's turn again
    assert speaker.expected_pilot(session) == ["Frankfurt Ground, Lufthansa 359, request taxi"]


def test_speaker_reports_a_template_variable_without_value(registry: FlowRegistry) -> None:
    speaker = Speaker(registry)
    session = FlowOrchestrator(registry).open(session_id="s1", flow="ground", variables=VARS, now=0.0, seed=None)
    d = _decision(session)
    speaker.say(session, d, registry.get("ground"), None, "squawk {{squawk}}", 0.0)
    assert d.trace.errors == ["missing_variables:squawk"] and len(session.message_history) == 1


# --------------------------------------------------------------------------- routing


def test_routing_eliminates_by_guard_and_settles_a_wrong_readback_as_correction(registry: FlowRegistry) -> None:
    routing = RouteChooser(registry)
    session = FlowOrchestrator(registry).open(session_id="s1", flow="ground", variables=VARS, now=0.0, seed=None)
    ground, req = registry.get("ground"), _state(registry, "ground", "REQ")
    d = _decision(session)
    cands, rb, result, _ctx = routing.route(
        session, d, ground, req, "Lufthansa 359 request pushback", "lufthansa 359 request pushback"
    )
    push = next(c for c in cands if c.transition.to == "PUSH")
    assert push.eliminated and push.reason == "guard false: flags.push_allowed" and rb is None
    session.flags["push_allowed"] = True
    cands, _rb, result, _ctx = routing.route(
        session, _decision(session), ground, req, "Lufthansa 359 request pushback", "lufthansa 359 request pushback"
    )
    assert result.chosen is not None and result.chosen.transition.to == "PUSH"

    session.active.state = "TAXI_RB"  # test setup: the controller issued the taxi clearance
    session.issued["ground"] = {}
    taxi_rb = _state(registry, "ground", "TAXI_RB")
    text = "holding point A12 runway 07, Lufthansa 359"
    d = _decision(session)
    cands, rb, result, ctx = routing.route(session, d, ground, taxi_rb, text, text.lower())
    chosen = routing.settle(session, d, taxi_rb, text, cands, rb, result, ctx)
    assert rb is not None and rb.wrong and chosen is not None and chosen.transition.kind is TransitionKind.BAD


def test_say_again_is_a_short_request() -> None:
    assert is_say_again("say again")
    assert not is_say_again("say again the squawk and the runway and the holding point and the taxi route please")


# --------------------------------------------------------------------------- LLM consultation


def test_consultation_applies_a_valid_choice_and_falls_back_on_a_stale_one(registry: FlowRegistry) -> None:
    engine = SessionEngine(registry)
    session, _ = engine.start(variables=VARS, session_id="s1")
    session.flags["push_allowed"] = True
    text = "Lufthansa 359, could we maybe get going somehow"
    query = engine.route_query(session, text)
    assert query is not None
    consult = LlmConsultation("say_again")
    flow, state = registry.get("ground"), _state(registry, "ground", "REQ")
    d = _decision(session)
    cands, _rb, result, _ctx = engine.routing.route(session, d, flow, state, text, query.normalized)
    exchange = LlmExchange(model="test", content='{"candidate": "TAXI"}', total_tokens=10)
    chosen = consult.consult(session, d, query, result, cands, judge(query, exchange))
    assert chosen.router == "llm" and chosen.chosen is not None and chosen.chosen.transition.to == "TAXI"

    stale = judge(query.model_copy(update={"fingerprint": "another question"}), exchange)
    fell = consult.consult(session, d, query, result, cands, stale)
    assert fell.chosen is None and fell.router == "fallback" and session.llm.fallbacks == 1
    kept = LlmConsultation("deterministic").consult(session, d, query, result, cands, stale)
    assert kept.chosen is result.chosen and kept.fallback is not None and session.llm.fallbacks == 2

    no_llm = consult.consult(session, d, query, result, cands, None)
    assert no_llm is result


def test_consultation_counts_tokens_and_unused_answers(registry: FlowRegistry) -> None:
    engine = SessionEngine(registry)
    session, _ = engine.start(variables=VARS, session_id="s1")
    query = engine.route_query(session, "Lufthansa 359, could we maybe get going somehow")
    assert query is not None
    verdict = judge(query, LlmExchange(model="test", content='{"candidate": "none"}', prompt_tokens=7, total_tokens=9))
    LlmConsultation.count(session, verdict)
    LlmConsultation.unused(session, _decision(session), verdict, "the pilot asked to say again")
    assert (session.llm.calls, session.llm.prompt_tokens, session.llm.total_tokens, session.llm.fallbacks) == (
        1,
        7,
        9,
        1,
    )


def test_the_facades_configuration_is_its_parts_own(registry: FlowRegistry) -> None:
    """The facade's configuration attributes are its parts' own (callers set them on the engine)."""
    engine = SessionEngine(registry, llm_fallback="deterministic", max_hops=7)
    assert engine.llm_fallback == "deterministic" and engine.consultation.fallback_policy == "deterministic"
    assert engine.max_hops == 7 and engine.orchestrator.max_hops == 7
    assert engine.router is engine.routing.router and engine.readback is engine.routing.readback.evaluator
    engine.llm_fallback = "say_again"
    assert engine.consultation.fallback_policy == "say_again"
