"""Seed 000 compatibility endpoints against a real uvicorn server.

`/api/decision-flows/runtime` must serve the legacy shape (transitions in `next`/`ok_next`/...
lists); `/api/llm/decide` must only ever answer with a candidate the request offered, or mark the
answer as an explicit fallback (`off_schema`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

FLOW_KEYS = {
    "slug", "schema_version", "name", "description", "start_state", "end_states", "variables", "flags",
    "policies", "hooks", "roles", "phases", "states", "entry_mode",
}
STATE_KEYS = {
    "role", "phase", "name", "summary", "say_tpl", "utterance_tpl", "readback_required", "next", "ok_next",
    "bad_next", "timer_next", "auto_transitions", "triggers", "conditions", "actions", "handoff", "frequency",
    "frequencyName",
}
DECISION_KEYS = {
    "next_state", "updates", "flags", "controller_say_tpl", "radio_check", "activate_flow", "resume_previous",
    "off_schema",
}


@pytest.fixture(scope="module")
def client(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=10.0) as c:
        yield c


@pytest.fixture(scope="module")
def context(client: httpx.Client) -> dict[str, Any]:
    """Variables and textbook phrases of one clearance scenario, taken from a live session."""
    created = client.post(
        "/api/radio/sessions", json={"flow": "clearance", "scenario": {"squawk": "4721"}, "seed": 5}
    ).json()
    sid = created["session"]["id"]
    first_call = created["expected_pilot"][0]
    issued = client.post(f"/api/radio/sessions/{sid}/transmissions", json={"text": first_call}).json()
    return {
        "variables": issued["session"]["variables"],
        "first_call": first_call,
        "readback": issued["expected_pilot"][0],
    }


def decide(client: httpx.Client, **body: Any) -> dict[str, Any]:
    r = client.post("/api/llm/decide", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert set(out) >= {"decision", "trace", "active_nodes", "pilot_intent"}
    assert set(out["decision"]) == DECISION_KEYS
    assert set(out["trace"]) >= {"calls", "fallback", "candidateTimeline", "autoSelection"}
    assert isinstance(out["trace"]["candidateTimeline"]["steps"], list)
    offered = [c["id"] for c in body.get("candidates", [])]
    decision = out["decision"]
    if decision["off_schema"]:
        assert out["trace"]["fallback"]["used"] is True and out["trace"]["fallback"]["reason"]
        assert decision["next_state"] in offered + [body["state_id"]]
    else:
        assert out["trace"]["fallback"]["used"] is False
        in_place = decision["next_state"] == body["state_id"]  # radio check or readback correction
        assert decision["next_state"] in offered or in_place
    return out


def cands(*ids: str) -> list[dict[str, Any]]:
    return [{"id": i, "flow": "clearance", "state": {}} for i in ids]


def test_runtime_shape(client: httpx.Client) -> None:
    runtime = client.get("/api/decision-flows/runtime").json()
    assert set(runtime) == {"schema_version", "main_flow", "flows", "airport"}
    assert runtime["airport"]["icao"] == "EDDF" and runtime["airport"]["destination"]["icao"] == "EDDM"
    assert runtime["main_flow"] in runtime["flows"]
    clearance = runtime["flows"]["clearance"]
    assert FLOW_KEYS <= set(clearance)
    assert clearance["slug"] == "clearance" and clearance["start_state"] == "CD_INITIAL"
    assert clearance["entry_mode"] == "main" and "clearance" in clearance["phases"]
    assert set(clearance["roles"]) == {"pilot", "atc", "system"}
    for state in clearance["states"].values():
        assert STATE_KEYS <= set(state)
    readback = clearance["states"]["CD_READBACK"]
    assert readback["readback_required"] == ["destination", "sid", "initial_altitude_ft", "squawk"]
    assert [t["to"] for t in readback["ok_next"]] == ["CD_RB_CORRECT"]
    assert [t["to"] for t in readback["next"]] == ["CD_NOT_READY"]
    assert set(readback["next"][0]) >= {"to", "label", "guard"}
    assert clearance["states"]["CD_DELAY_ACK"]["timer_next"][0] == {"to": "CD_ISSUE", "after_s": 120.0, "label": None, "guard": None}
    assert clearance["states"]["CD_SEQUENCE"]["next"][0]["guard"] == "clearance_delay"
    issue = clearance["states"]["CD_ISSUE"]
    assert issue["role"] == "atc" and "{{squawk}}" in issue["say_tpl"]
    assert issue["frequency_tpl"] == "{{delivery_freq}}" and issue["frequencyName"] == "Delivery"
    assert issue["frequency"] == runtime["airport"]["frequencies"]["delivery_freq"]["value"] == "122.035"  # EDDF's
    handoff = clearance["states"]["CD_HANDOFF"]
    assert handoff["handoff"]["to"] == "ground"
    assert handoff["next"][0]["flow"] == "startup_pushback"
    assert handoff["next"][0]["to"] == runtime["flows"]["startup_pushback"]["start_state"]


def test_decide_follows_the_engine_among_offered_candidates(client: httpx.Client, context: dict[str, Any]) -> None:
    out = decide(
        client,
        state_id="CD_INITIAL",
        state={},
        candidates=cands("CD_SEQUENCE"),
        variables=context["variables"],
        flags={},
        pilot_utterance=context["first_call"],
        flow_slug="clearance",
    )
    d = out["decision"]
    assert d["next_state"] == "CD_SEQUENCE" and d["off_schema"] is False
    assert d["radio_check"] is False and d["activate_flow"] is None and d["resume_previous"] is False
    assert "4721" in d["controller_say_tpl"]  # delivery's clearance, rendered
    assert out["pilot_intent"] == "request_clearance"
    assert out["trace"]["autoSelection"]["id"] == "CD_SEQUENCE"
    assert out["active_nodes"][0] == "CD_SEQUENCE"


def test_decide_readbacks(client: httpx.Client, context: dict[str, Any]) -> None:
    base = {
        "state_id": "CD_READBACK",
        "candidates": cands("CD_RB_CORRECT", "CD_NOT_READY"),
        "variables": context["variables"],
        "flow_slug": "clearance",
    }
    good = decide(client, **base, pilot_utterance=context["readback"])["decision"]
    assert good["next_state"] == "CD_RB_CORRECT" and good["off_schema"] is False

    wrong = decide(client, **base, pilot_utterance=context["readback"].replace("4721", "4712"))
    d = wrong["decision"]
    # the engine stays to correct the readback: a correction, not a fallback
    assert d["off_schema"] is False and d["next_state"] == "CD_READBACK"
    assert "4721" in d["controller_say_tpl"]
    assert "readback correction" in wrong["trace"]["autoSelection"]["reason"]
    assert wrong["trace"]["readback"]["ok"] is False and wrong["trace"]["fallback"] == {"used": False}
    assert "CD_RB_CORRECT" not in wrong["active_nodes"]


def test_decide_never_answers_a_candidate_that_was_not_offered(client: httpx.Client, context: dict[str, Any]) -> None:
    # the engine would take CD_NOT_READY ("standby"); the request offers only the readback route
    out = decide(
        client,
        state_id="CD_READBACK",
        candidates=cands("CD_RB_CORRECT"),
        variables=context["variables"],
        pilot_utterance="standby",
        flow_slug="clearance",
    )
    d = out["decision"]
    assert d["off_schema"] is True and d["next_state"] in ("CD_RB_CORRECT", "CD_READBACK")
    assert "CD_NOT_READY" in out["trace"]["fallback"]["reason"]
    assert d["updates"] == {} and d["activate_flow"] is None
    assert out["pilot_intent"] == "standby"

    nothing = decide(client, state_id="CD_READBACK", candidates=[], variables=context["variables"],
                     pilot_utterance="standby", flow_slug="clearance")
    assert nothing["decision"]["off_schema"] is True and nothing["decision"]["next_state"] == "CD_READBACK"


def test_decide_answers_a_radio_check_in_place(client: httpx.Client, context: dict[str, Any]) -> None:
    out = decide(client, state_id="CD_READBACK", candidates=cands("CD_RB_CORRECT", "CD_NOT_READY"),
                 variables=context["variables"], pilot_utterance="radio check", flow_slug="clearance")
    d = out["decision"]
    assert d["radio_check"] is True and d["off_schema"] is False
    assert d["next_state"] == "CD_READBACK" and d["activate_flow"] is None
    assert "read you" in d["controller_say_tpl"]


def test_decide_unrecognized_and_odd_input(client: httpx.Client, context: dict[str, Any]) -> None:
    out = decide(client, state_id="CD_INITIAL", candidates=cands("CD_SEQUENCE"), variables=context["variables"],
                 pilot_utterance="banana pancakes", flow_slug="clearance")
    assert out["decision"]["off_schema"] is True and out["decision"]["next_state"] == "CD_INITIAL"

    # the flow is found from the state when flow_slug is missing; odd variables never cause a 500
    odd = decide(client, state_id="CD_INITIAL", candidates=cands("CD_SEQUENCE"),
                 variables={"callsign": ["not", "a", "string"], "squawk": {"x": 1}}, pilot_utterance="request IFR clearance")
    assert odd["decision"]["next_state"] in ("CD_SEQUENCE", "CD_INITIAL")


def test_decide_errors(client: httpx.Client) -> None:
    def error(body: Any) -> dict[str, Any]:
        r = client.post("/api/llm/decide", json=body)
        assert r.status_code == 422, r.text
        return r.json()["error"]

    e = error({"state_id": "CD_INITIAL", "flow_slug": "no_such_flow", "pilot_utterance": "hi"})
    assert e["code"] == "unknown_flow" and e["field"] == "flow_slug"
    e = error({"state_id": "NOPE", "flow_slug": "clearance", "pilot_utterance": "hi"})
    assert e["code"] == "unknown_state" and e["field"] == "state_id"
    e = error({"state_id": "NOPE", "pilot_utterance": "hi"})
    assert e["field"] == "state_id"
    e = error({"pilot_utterance": "hi"})
    assert e["code"] == "validation_error" and e["field"] == "state_id"
    e = error({"state_id": "CD_INITIAL", "candidates": "CD_SEQUENCE"})
    assert e["field"] == "candidates"
    r = client.post("/api/llm/decide", content=b"{", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_json"
