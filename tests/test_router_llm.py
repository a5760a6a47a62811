"""The LLM router's contract in the engine (engine/router_llm.py): when a query is made, what it
holds, how answers are judged, and every traced fallback. No model and no I/O here: the answers
are the exchanges a provider would hand back (tests/test_llm_gateway.py asks a real server)."""

from __future__ import annotations

import textwrap

import pytest

from engine.loader import MemoryFlowSource, lint_registry, load_registry
from engine.models import Session
from engine.router_llm import NONE, LlmExchange, RouterQuery, judge
from engine.session import SessionEngine

VARS = {"callsign": "DLH359", "callsign_spoken": "Lufthansa 359", "airport_name": "Frankfurt", "ground_freq": "121.800"}

RAMP = """
    slug: ramp
    name: Ramp
    station: ground
    start_state: REQ
    end_states: [DONE]
    variables: {stand: "V155", pushback_direction: "east", tug_count: 1}
    policies: {llm_updates: [pushback_direction, tug_count]}
    states:
      REQ:
        role: pilot
        summary: the pilot calls ground for startup or pushback
        transitions:
          - {to: STARTUP, intent: request_startup, label: startup, utterance_tpl: "{{callsign_spoken}}, stand {{stand}}, request startup"}
          - {to: PUSH, intent: request_pushback, label: pushback, utterance_tpl: "{{callsign_spoken}}, stand {{stand}}, request pushback"}
      STARTUP:
        role: atc
        say: "{{callsign_spoken}}, startup approved"
        transitions: [{to: DONE}]
      PUSH:
        role: atc
        say: "{{callsign_spoken}}, pushback approved, facing {{pushback_direction}}"
        transitions: [{to: DONE}]
      DONE: {role: system}
"""
FREE_FORM = "Lufthansa 359, we would like to get the engines going"  # no candidate's words: below threshold
NEAR_TIE = "Lufthansa 359, stand V155, request"  # both routes' words, neither's intent: a near tie


def _engine(**kw: object) -> SessionEngine:
    return SessionEngine(load_registry(MemoryFlowSource({"ramp": textwrap.dedent(RAMP)})), **kw)  # type: ignore[arg-type]


def _start(engine: SessionEngine) -> Session:
    session, _ = engine.start(variables=dict(VARS), session_id="s", flow="ramp", now=0.0)
    return session


def _exchange(content: str | None = None, **kw: object) -> LlmExchange:
    return LlmExchange(model="test", content=content, prompt_tokens=120, completion_tokens=8, total_tokens=128, latency_ms=42.0, **kw)  # type: ignore[arg-type]


def _query(engine: SessionEngine, session: Session, text: str = FREE_FORM) -> RouterQuery:
    query = engine.route_query(session, text)
    assert query is not None
    return query


# --------------------------------------------------------------------------- when and what is asked


def test_a_textbook_transmission_is_decided_without_a_query() -> None:
    engine = _engine()
    session = _start(engine)
    assert engine.route_query(session, "Lufthansa 359, stand V155, request pushback") is None
    decision = engine.transmit(session, "Lufthansa 359, stand V155, request pushback", 1.0)
    assert decision.to_state == "DONE" and decision.trace.router["consult"] is None
    assert session.llm.calls == 0


def test_below_threshold_the_query_holds_the_state_words_survivors_and_their_variables() -> None:
    engine = _engine()
    session = _start(engine)
    before = session.model_dump()
    query = _query(engine, session)
    assert session.model_dump() == before  # asking changes nothing
    assert query.reason == "below_threshold" and query.deterministic is None
    assert (query.flow, query.state, query.transcript) == ("ramp", "REQ", FREE_FORM)
    assert query.summary == "the pilot calls ground for startup or pushback"
    assert [(c.id, c.label) for c in query.candidates] == [("STARTUP", "startup"), ("PUSH", "pushback")]
    assert query.candidates[1].expected == ["Lufthansa 359, stand V155, request pushback"]
    assert query.variables["stand"] == "V155" and query.variables["callsign_spoken"] == "Lufthansa 359"
    assert "tug_count" not in query.variables  # only what the state and its routes mention
    assert query.updatable == {"pushback_direction": "string", "tug_count": "integer"}
    schema = query.answer_schema()
    assert schema["properties"]["candidate"]["enum"] == ["STARTUP", "PUSH", NONE]
    assert schema["required"] == ["candidate", "updates"] and schema["additionalProperties"] is False
    assert query.fingerprint and query.fingerprint == _query(engine, session).fingerprint


def test_a_near_tie_is_ambiguous_and_names_the_deterministic_choice() -> None:
    engine = _engine()
    query = _query(engine, _start(engine), NEAR_TIE)
    assert query.reason == "ambiguous" and query.deterministic == "STARTUP"


def test_without_a_verdict_the_deterministic_result_stands_and_is_traced() -> None:
    engine = _engine()
    session = _start(engine)
    decision = engine.transmit(session, NEAR_TIE, 1.0)
    assert decision.to_state == "DONE" and decision.intent == "request_startup"
    assert decision.trace.router["consult"] == "ambiguous" and decision.trace.router["llm"] is None
    assert any(s.step == "llm" and "no LLM router asked" in s.detail for s in decision.trace.steps)


# --------------------------------------------------------------------------- a usable answer


def test_a_valid_choice_is_taken_with_its_updates_traced_and_counted() -> None:
    engine = _engine()
    session = _start(engine)
    query = _query(engine, session)
    verdict = judge(query, _exchange('{"candidate": "PUSH", "updates": {"pushback_direction": "west", "tug_count": null}}'))
    assert verdict.outcome == "chosen" and verdict.updates == {"pushback_direction": "west"}
    decision = engine.transmit(session, FREE_FORM, 1.0, llm=verdict)
    assert decision.intent == "request_pushback" and decision.to_state == "DONE"
    assert [m.text for m in decision.messages] == ["Lufthansa 359, pushback approved, facing west"]
    assert decision.updates["pushback_direction"] == "west" and session.variables["tug_count"] == 1
    router = decision.trace.router
    assert router["name"] == "llm" and router["fallback"] is None
    llm = router["llm"]
    assert llm["outcome"] == "chosen" and llm["choice"] == "PUSH" and llm["consulted_because"] == "below_threshold"
    assert llm["response"].startswith('{"candidate": "PUSH"')
    assert llm["latency_ms"] == 42.0 and llm["tokens"] == {"prompt": 120, "completion": 8, "total": 128}
    assert session.llm.model_dump() == {"calls": 1, "prompt_tokens": 120, "completion_tokens": 8, "total_tokens": 128, "fallbacks": 0}


@pytest.mark.parametrize(
    ("alternatives", "taken"),
    [
        ([], True),  # typed, or one transcript
        (["Lufthansa 359, we would like to get the engine going"], True),  # heard alike
        (["Lufthansa 359"], False),  # the other transcript has none of the LLM's words
        (["Lufthansa 359, stand V155, standing by"], False),
        (["Lufthansa 359, we would like to get the pushback going"], False),  # one word differs: not the same words
    ],
)
def test_by_voice_the_llms_choice_stands_where_another_transcript_gives_it_as_much_evidence(
    alternatives: list[str], taken: bool
) -> None:
    """A route other than the readback's needs a second transcript by voice (engine/routing.py);
    for the LLM's choice, one with the words the LLM read (`LLM_SAME_WORDS`). Otherwise "say
    again"."""
    from engine.hearing import Hearing

    engine = _engine()
    session = _start(engine)
    verdict = judge(_query(engine, session), _exchange('{"candidate": "PUSH", "updates": {}}'))
    hearing = Hearing(alternatives=alternatives) if alternatives else None
    decision = engine.transmit(session, FREE_FORM, 1.0, llm=verdict, hearing=hearing)
    assert (decision.intent == "request_pushback") is taken, [s.detail for s in decision.trace.steps]
    assert (decision.to_state == "DONE") is taken


def test_none_means_say_again() -> None:
    engine = _engine()
    session = _start(engine)
    verdict = judge(_query(engine, session), _exchange('{"candidate": "none"}'))
    assert verdict.outcome == "none" and verdict.used
    decision = engine.transmit(session, FREE_FORM, 1.0, llm=verdict)
    assert not decision.recognized and decision.to_state == "REQ"
    assert decision.messages[0].text == "Lufthansa 359, say again."
    assert decision.trace.router["fallback"] is None and session.llm.fallbacks == 0


def test_token_usage_is_summed_over_the_session() -> None:
    engine = _engine()
    session = _start(engine)
    for _ in range(2):
        engine.transmit(session, FREE_FORM, 1.0, llm=judge(_query(engine, session), _exchange("nonsense")))
    assert session.llm.calls == 2 and session.llm.total_tokens == 256 and session.llm.fallbacks == 2


# --------------------------------------------------------------------------- unusable answers


@pytest.mark.parametrize(
    ("content", "outcome"),
    [
        ('{"candidate": "TAXI_TO_MARS"}', "unknown_candidate"),
        ('{"candidate": "PUSH"', "malformed_json"),  # cut off
        ("The pilot wants PUSH.", "malformed_json"),  # prose, even with an id in it
        ('Sure! {"candidate": "PUSH"}', "malformed_json"),  # JSON is not fished out of prose
        ('["PUSH"]', "malformed_json"),
        ("{\"candidate\": " + "9" * 5000 + "}", "malformed_json"),  # past Python's int digit limit
        ("[" * 100_000 + "]" * 100_000, "malformed_json"),  # nesting past the recursion limit
        ('{"candidate": "PUSH", "confidence": 0.9}', "malformed_json"),
        ('{"candidate": 2}', "malformed_json"),
        ('{"candidate": "PUSH", "updates": {"stand": "A1"}}', "invalid_updates"),  # not in llm_updates
        ('{"candidate": "PUSH", "updates": {"tug_count": "two"}}', "invalid_updates"),  # wrong type
        ('{"candidate": "PUSH", "updates": {"tug_count": true}}', "invalid_updates"),
        ('{"candidate": "PUSH", "updates": ["west"]}', "invalid_updates"),
    ],
)
def test_an_invalid_answer_is_a_traced_say_again(content: str, outcome: str) -> None:
    engine = _engine()
    session = _start(engine)
    verdict = judge(_query(engine, session), _exchange(content))
    assert verdict.outcome == outcome and not verdict.used
    decision = engine.transmit(session, FREE_FORM, 1.0, llm=verdict)
    assert not decision.recognized and decision.to_state == "REQ"  # stays: no invented state
    assert decision.messages[0].text == "Lufthansa 359, say again."
    assert session.variables["pushback_direction"] == "east" and session.variables["stand"] == "V155"
    router = decision.trace.router
    assert router["name"] == "fallback" and router["fallback"]["reason"] == outcome
    assert router["fallback"]["policy"] == "say_again" and router["llm"]["response"] == content
    assert any(s.step == "llm" and outcome in s.detail for s in decision.trace.steps)
    assert session.llm.fallbacks == 1


@pytest.mark.parametrize("error", ["timeout", "http_error", "transport_error", "bad_response"])
def test_a_failed_call_is_a_traced_fallback(error: str) -> None:
    engine = _engine()
    session = _start(engine)
    verdict = judge(_query(engine, session), LlmExchange(error=error, detail=f"the {error}"))  # type: ignore[arg-type]
    decision = engine.transmit(session, FREE_FORM, 1.0, llm=verdict)
    assert not decision.recognized and decision.to_state == "REQ"
    assert decision.trace.router["fallback"] == {"reason": error, "detail": f"the {error}", "policy": "say_again"}


def test_the_deterministic_fallback_policy_takes_the_declaration_order_winner() -> None:
    engine = _engine(llm_fallback="deterministic")
    session = _start(engine)
    verdict = judge(_query(engine, session, NEAR_TIE), LlmExchange(error="timeout", detail="slow"))
    decision = engine.transmit(session, NEAR_TIE, 1.0, llm=verdict)
    assert decision.intent == "request_startup" and decision.recognized
    assert decision.trace.router["fallback"]["policy"] == "deterministic"
    # below the threshold there is no deterministic choice: not understood
    session = _start(engine)
    verdict = judge(_query(engine, session), LlmExchange(error="timeout", detail="slow"))
    assert not engine.transmit(session, FREE_FORM, 1.0, llm=verdict).recognized


def test_a_verdict_for_a_question_no_longer_asked_is_stale() -> None:
    engine = _engine()
    session = _start(engine)
    verdict = judge(_query(engine, session), _exchange('{"candidate": "PUSH"}'))
    # the words changed (another transmission): the verdict does not answer this one
    decision = engine.transmit(session, "Lufthansa 359, we need a minute", 1.0, llm=verdict)
    assert decision.trace.router["fallback"]["reason"] == "stale" and not decision.recognized
    # the session moved on meanwhile: the deterministic router decides, the answer is unused
    engine.transmit(session, "Lufthansa 359, stand V155, request startup", 2.0)
    assert session.completed
    late = engine.transmit(session, FREE_FORM, 3.0, llm=verdict)
    assert any(s.step == "llm" and "not used" in s.detail for s in late.trace.steps)
    assert session.llm.fallbacks == 2 and session.llm.calls == 2


def test_llm_updates_must_name_declared_variables() -> None:
    bad = textwrap.dedent(RAMP).replace("llm_updates: [pushback_direction, tug_count]", "llm_updates: [runway]")
    issues = lint_registry(load_registry(MemoryFlowSource({"ramp": bad})))
    assert [(i.severity, i.field) for i in issues if "llm_updates" in (i.field or "")] == [("error", "policies.llm_updates[0]")]
