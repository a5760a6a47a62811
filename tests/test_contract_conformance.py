"""Seed 000 ("PM Python Runtime Contract") conformance, field by field, against a real server on
loopback: the compatibility endpoints' requests and responses, and the OpenSquawk app's own client
(``app/composables/useRadioBackend.ts``) call by call, in the order ``app/pages/pm.vue`` makes them.

The expected shapes are written down here from the contract text and from the app's TypeScript
types, not from our code, so a drift on either side fails at once.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

# --------------------------------------------------------------------------- the app's types

# useRadioBackend.ts: `interface RadioSessionResponse`
RADIO_SESSION_RESPONSE: dict[str, Any] = {
    "session_id": str,
    "flow_slug": str,
    "current_state": str,
    "variables": dict,
    "flags": "Record<string, boolean>",
}
# useRadioBackend.ts: `interface RadioTransmitResponse` (auto_advanced_states is optional there)
RADIO_TRANSMIT_RESPONSE: dict[str, Any] = {
    "session_id": str,
    "next_state_id": str,
    "controller_say_template": (str, None),
    "controller_say_rendered": (str, None),
    "expected_pilot_template": (str, None),
    "variables": dict,
    "flags": "Record<string, boolean>",
    "trace": "Array<{type: string, message: string}>",
    "fallback_used": bool,
    "fallback_reason": (str, None),
    "auto_advanced_states": "string[]",
}

# --------------------------------------------------------------------------- the contract's shapes

RUNTIME_TOP = {"schema_version": str, "main_flow": str, "flows": dict}
RUNTIME_FLOW = {
    "slug": str, "schema_version": str, "name": str, "description": str, "start_state": str,
    "end_states": "string[]", "variables": dict, "flags": dict, "policies": dict, "hooks": dict,
    "roles": "string[]", "phases": "string[]", "states": dict, "entry_mode": str,
}
RUNTIME_STATE = {
    "role": str, "phase": (str, None), "name": str, "summary": str, "say_tpl": (str, None),
    "utterance_tpl": (str, None), "readback_required": "string[]", "next": list, "ok_next": list,
    "bad_next": list, "timer_next": list, "auto_transitions": list, "triggers": list, "conditions": list,
    "actions": list, "handoff": (dict, None), "frequency": (str, None), "frequencyName": (str, None),
}
DECIDE_OUT = {"decision": dict, "trace": dict, "active_nodes": "string[]", "pilot_intent": (str, None)}
DECISION = {
    "next_state": str, "updates": dict, "flags": dict, "controller_say_tpl": (str, None), "radio_check": bool,
    "activate_flow": (str, None), "resume_previous": bool, "off_schema": bool,
}
DECIDE_TRACE = {"calls": list, "fallback": dict, "candidateTimeline": dict, "autoSelection": (dict, None)}
SAY_OUT = {"audio": str, "mimeType": str}
FREQ = re.compile(r"^1[1-3]\d\.\d{2,3}$")
APP_ORIGIN = "http://localhost:3000"  # the Nuxt dev server the OpenSquawk app runs on


def conforms(value: Any, spec: dict[str, Any], where: str, *, exact: bool = False) -> None:
    """Every field of `spec` is present with its type; `exact`: no other field either."""
    assert isinstance(value, dict), f"{where}: not an object: {value!r}"
    missing = set(spec) - set(value)
    assert not missing, f"{where}: missing {sorted(missing)}"
    if exact:
        assert set(value) == set(spec), f"{where}: extra {sorted(set(value) - set(spec))}"
    for key, kind in spec.items():
        got = value[key]
        if kind == "string[]":
            assert isinstance(got, list) and all(isinstance(x, str) for x in got), f"{where}.{key}: {got!r}"
        elif kind == "Record<string, boolean>":
            assert isinstance(got, dict) and all(isinstance(v, bool) for v in got.values()), f"{where}.{key}: {got!r}"
        elif kind == "Array<{type: string, message: string}>":
            assert isinstance(got, list) and got, f"{where}.{key}: {got!r}"
            for i, step in enumerate(got):
                conforms(step, {"type": str, "message": str}, f"{where}.{key}[{i}]", exact=True)
        elif isinstance(kind, tuple):
            types = tuple(type(None) if k is None else k for k in kind)
            assert isinstance(got, types) and not isinstance(got, bool) or bool in types, f"{where}.{key}: {got!r}"
        else:
            assert isinstance(got, kind) and (kind is bool or not isinstance(got, bool)), f"{where}.{key}: {got!r}"


def render(tpl: str, variables: dict[str, Any]) -> str:
    """The app's renderTpl for the YAML schema: ``{{var}}`` replaced by the variable."""
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: str(variables.get(m.group(1), "")), tpl)


@pytest.fixture(scope="module")
def client(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=60.0) as c:
        yield c


@pytest.fixture(scope="module")
def runtime(client: httpx.Client) -> dict[str, Any]:
    r = client.get("/api/decision-flows/runtime")
    assert r.status_code == 200, r.text
    return r.json()


# --------------------------------------------------------------------------- the OpenSquawk app


def test_the_opensquawk_app_four_calls_in_its_order(client: httpx.Client) -> None:
    # 1. createSession(flowSlug)
    r = client.post("/api/radio/session", json={"flow_slug": "clearance"}, headers={"origin": APP_ORIGIN})
    assert r.status_code in (200, 201), r.text
    assert r.headers["access-control-allow-origin"] in ("*", APP_ORIGIN)
    created = r.json()
    conforms(created, RADIO_SESSION_RESPONSE, "RadioSessionResponse", exact=True)
    assert created["flow_slug"] == "clearance" and created["current_state"] == "CD_INITIAL"
    sid = created["session_id"]

    # 2. fetchFlows(): the cursor syncs to current_state, which must be in the tree
    flows = client.get("/api/decision-flows/runtime").json()
    state = flows["flows"][created["flow_slug"]]["states"][created["current_state"]]
    assert state["role"] == "pilot" and state["utterance_tpl"]

    # 3. transmit(sessionId, pilotUtterance): the expected first call, rendered as the app does
    first_call = render(state["utterance_tpl"], created["variables"])
    r = client.post(f"/api/radio/session/{sid}/transmissions", json={"pilot_utterance": first_call})
    assert r.status_code == 200, r.text
    out = r.json()
    conforms(out, RADIO_TRANSMIT_RESPONSE, "RadioTransmitResponse")
    assert set(out) - set(RADIO_TRANSMIT_RESPONSE) <= {"flow_slug"}  # the one documented addition
    assert out["session_id"] == sid and out["fallback_used"] is False and out["fallback_reason"] is None
    assert out["next_state_id"] in flows["flows"][out["flow_slug"]]["states"]
    assert out["controller_say_rendered"] and "{{" not in out["controller_say_rendered"]
    assert out["controller_say_template"] and "{{" in out["controller_say_template"]

    # ... and the readback it asks for (several exchanges may come first: ATIS, delay)
    for _ in range(4):
        if out["next_state_id"] == "CD_READBACK":
            break
        out = client.post(
            f"/api/radio/session/{sid}/transmissions",
            json={"pilot_utterance": render(out["expected_pilot_template"], out["variables"])},
        ).json()
    assert out["next_state_id"] == "CD_READBACK", out
    readback = render(out["expected_pilot_template"], out["variables"])
    out = client.post(f"/api/radio/session/{sid}/transmissions", json={"pilot_utterance": readback}).json()
    conforms(out, RADIO_TRANSMIT_RESPONSE, "RadioTransmitResponse")
    # the states it went through, without the one it stopped in
    assert out["auto_advanced_states"] == ["CD_RB_CORRECT"] and out["next_state_id"] == "CD_GROUND_RB", out
    # the ground frequency's readback ends the clearance flow: through the handoff into the next flow
    ground = render(out["expected_pilot_template"], out["variables"])
    out = client.post(f"/api/radio/session/{sid}/transmissions", json={"pilot_utterance": ground}).json()
    conforms(out, RADIO_TRANSMIT_RESPONSE, "RadioTransmitResponse")
    assert out["auto_advanced_states"][0] == "CD_HANDOFF", out
    assert out["next_state_id"] not in out["auto_advanced_states"]
    assert out["flow_slug"] == "startup_pushback"
    assert out["next_state_id"] in flows["flows"]["startup_pushback"]["states"]
    assert any(step["type"] == "readback" for step in out["trace"])

    # 4. deleteSession(sessionId)
    r = client.delete(f"/api/radio/session/{sid}", headers={"origin": APP_ORIGIN})
    assert r.status_code in (200, 204)
    gone = client.post(f"/api/radio/session/{sid}/transmissions", json={"pilot_utterance": "radio check"})
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "unknown_session"


def test_the_app_api_errors_and_cors_preflight(client: httpx.Client) -> None:
    pre = client.options(
        "/api/radio/session",
        headers={"origin": APP_ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "content-type"},
    )
    assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] in ("*", APP_ORIGIN)
    pre = client.options(
        "/api/radio/session/x", headers={"origin": APP_ORIGIN, "access-control-request-method": "DELETE"}
    )
    assert pre.status_code == 200 and "DELETE" in pre.headers["access-control-allow-methods"]

    def error(r: httpx.Response, status: int, code: str, field: str | None) -> None:
        assert r.status_code == status, r.text
        assert r.json()["error"]["code"] == code and r.json()["error"]["field"] == field

    error(client.post("/api/radio/session", json={"flow_slug": "nope"}), 422, "unknown_flow", "flow_slug")
    error(client.post("/api/radio/session", json={"flow_slug": "radio_check"}), 422, "validation_error", "flow_slug")
    error(client.post("/api/radio/session", json={"flowSlug": "clearance"}), 422, "validation_error", "flowSlug")
    sid = client.post("/api/radio/session", json={"flow_slug": "clearance"}).json()["session_id"]
    error(client.post(f"/api/radio/session/{sid}/transmissions", json={"pilot_utterance": " "}), 422, "validation_error", "pilot_utterance")
    error(client.post(f"/api/radio/session/{sid}/transmissions", json={"text": "hi"}), 422, "validation_error", "pilot_utterance")
    # gibberish (with our callsign, so it is not a "station calling") is no route: the controller
    # asks to say again, and the app is told it was a fallback
    taxi = client.post("/api/radio/session", json={"flow_slug": "taxi_out"}).json()
    gibberish = f"{taxi['variables']['callsign_spoken']}, banana pancakes"
    out = client.post(f"/api/radio/session/{taxi['session_id']}/transmissions", json={"pilot_utterance": gibberish}).json()
    assert out["fallback_used"] is True and "say again" in out["fallback_reason"], out
    assert out["next_state_id"] == taxi["current_state"] and "uncertain" in out["fallback_reason"]
    client.delete(f"/api/radio/session/{taxi['session_id']}")
    # the same session is ours too (plural API)
    assert client.get(f"/api/radio/sessions/{sid}").json()["session"]["state"] == "CD_INITIAL"
    error(client.delete("/api/radio/session/nope"), 404, "unknown_session", "session_id")
    client.delete(f"/api/radio/session/{sid}")


# --------------------------------------------------------------------------- GET /api/decision-flows/runtime


def test_runtime_shape_field_by_field(runtime: dict[str, Any]) -> None:
    conforms(runtime, RUNTIME_TOP, "runtime")
    assert runtime["main_flow"] in runtime["flows"]
    for slug, flow in runtime["flows"].items():
        conforms(flow, RUNTIME_FLOW, f"flows.{slug}")
        assert flow["slug"] == slug and flow["start_state"] in flow["states"]
        assert flow["entry_mode"] in ("main", "linear", "parallel", "interrupt")
        assert set(flow["roles"]) <= {"pilot", "atc", "system"}
        for sid, state in flow["states"].items():
            conforms(state, RUNTIME_STATE, f"flows.{slug}.states.{sid}")
            assert state["role"] in ("pilot", "atc", "system")
            for key in ("next", "ok_next", "bad_next", "timer_next", "auto_transitions"):
                for i, entry in enumerate(state[key]):
                    assert "to" in entry, f"{slug}.{sid}.{key}[{i}]"
                    if entry["to"] is None:  # only a return leg, and it says what it means
                        assert entry.get("kind") == "return" and entry.get("resume_previous") is True, entry
                    else:
                        target = runtime["flows"][entry.get("flow") or slug]["states"]
                        assert entry["to"] in target, f"{slug}.{sid}.{key}[{i}] -> {entry['to']}"
            for entry in state["timer_next"]:
                assert isinstance(entry["after_s"], (int, float))
            if state["handoff"] is not None:
                assert set(state["handoff"]) >= {"to", "freq"}


def test_runtime_frequencies_are_the_airports_real_ones(client: httpx.Client) -> None:
    eddf = client.get("/api/decision-flows/runtime", params={"airport": "EDDF"}).json()
    assert eddf["airport"]["icao"] == "EDDF" and eddf["airport"]["destination"]["icao"] == "EDDM"
    real = {
        f
        for icao in ("EDDF", "EDDM")
        for freqs in client.get(f"/api/airports/{icao}/frequencies").json()["frequencies"].values()
        for f in freqs
    }
    seen = 0
    for slug, flow in eddf["flows"].items():
        for sid, state in flow["states"].items():
            for value in (state["frequency"], (state["handoff"] or {}).get("freq")):
                if value is None:
                    continue
                seen += 1
                assert "{" not in value, f"{slug}.{sid}: template {value!r}"
                assert FREQ.match(value) and value in real, f"{slug}.{sid}: {value!r} is no EDDF/EDDM frequency"
    assert seen > 50
    sources = {v["source"] for v in eddf["airport"]["frequencies"].values()}
    assert sources == {"airport_data"}
    # another airport: its own frequencies, and the answer says which airport they belong to
    eddm = client.get("/api/decision-flows/runtime", params={"airport": "EDDM", "destination": "EDDF"}).json()
    assert eddm["airport"]["icao"] == "EDDM"
    assert eddm["flows"]["clearance"]["states"]["CD_ISSUE"]["frequency"] == "121.730"  # EDDM delivery
    assert eddf["flows"]["clearance"]["states"]["CD_ISSUE"]["frequency"] == "122.035"  # EDDF delivery
    r = client.get("/api/decision-flows/runtime", params={"airport": "ZZZZ"})
    assert r.status_code == 404 and r.json()["error"] == {"code": "unknown_airport", "message": r.json()["error"]["message"], "field": "airport"}


# --------------------------------------------------------------------------- POST /api/llm/decide


def decide(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/llm/decide", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    conforms(out, DECIDE_OUT, "decide")
    conforms(out["decision"], DECISION, "decide.decision", exact=True)
    conforms(out["trace"], DECIDE_TRACE, "decide.trace")
    assert isinstance(out["trace"]["candidateTimeline"]["steps"], list)
    assert isinstance(out["trace"]["fallback"]["used"], bool)
    return out


def test_the_contracts_decide_example_uses_the_frontends_state(client: httpx.Client, runtime: dict[str, Any]) -> None:
    # the contract's example, with real ids: the state object is the frontend's copy of TX_REQUEST,
    # whose expected phrase the frontend words its own way
    state = dict(runtime["flows"]["taxi_out"]["states"]["TX_REQUEST"])
    state["utterance_tpl"] = "{{callsign_spoken}} ready for taxi"
    body = {
        "state_id": "TX_REQUEST",
        "state": state,
        "candidates": [{"id": "TX_ISSUE", "flow": "taxi_out", "state": runtime["flows"]["taxi_out"]["states"]["TX_ISSUE"]}],
        "variables": {"callsign": "DLH359"},
        "flags": {},
        "pilot_utterance": "Lufthansa 359 ready for taxi",
        "flow_slug": "taxi_out",
    }
    out = decide(client, body)
    assert out["decision"]["next_state"] == "TX_ISSUE" and out["decision"]["off_schema"] is False
    assert out["trace"]["state"]["source"] == "request"
    assert out["trace"]["state"]["used"] == {"utterance_tpl": "{{callsign_spoken}} ready for taxi"}
    assert "frequency" in out["trace"]["state"]["not_used"]
    assert out["trace"]["rule"] == "single_remaining"
    # a wording only the frontend's state knows: placed with it, not without it (the backend's own
    # phrase leaves the words uncertain: say again, an explicit fallback)
    own = {**body, "pilot_utterance": "Lufthansa 359 good to go to the runway"}
    own["state"] = {**state, "utterance_tpl": "{{callsign_spoken}} good to go to the runway"}
    assert decide(client, own)["decision"]["next_state"] == "TX_ISSUE"
    backend = decide(client, {**own, "state": {}})
    assert backend["trace"]["state"]["used"] == {}
    assert backend["decision"]["off_schema"] is True and backend["trace"]["rule"] == "uncertain"


def test_decide_refuses_a_context_it_cannot_reconcile(client: httpx.Client, runtime: dict[str, Any]) -> None:
    base = {"state_id": "TX_REQUEST", "flow_slug": "taxi_out", "pilot_utterance": "request taxi", "variables": {"callsign": "DLH359"}}

    def error(body: dict[str, Any], code: str, field: str) -> None:
        r = client.post("/api/llm/decide", json={**base, **body})
        assert r.status_code == 422, r.text
        assert r.json()["error"]["code"] == code and r.json()["error"]["field"] == field, r.json()

    error({"candidates": [{"id": "TWR_READY", "flow": "tower_departure"}]}, "unreachable_candidate", "candidates[0].id")
    error({"candidates": [{"id": "TX_ISSUE"}, {"id": "NOPE"}]}, "unknown_state", "candidates[1].id")
    error({"candidates": [{"id": "TX_ISSUE", "flow": "nope"}]}, "unknown_flow", "candidates[0].flow")
    error({"candidates": [{"id": "TX_ISSUE", "state": {"role": "pilot"}}]}, "state_mismatch", "candidates[0].state.role")
    error({"state": {"role": "atc"}}, "state_mismatch", "state.role")
    error({"state": {"id": "TX_ISSUE"}}, "state_mismatch", "state.id")
    error({"state": {"readback_required": ["callsign", "no_such_thing"]}}, "unknown_variable", "state.readback_required[1]")
    error({"state": {"next": [{"to": "TWR_READY"}]}}, "unreconcilable_route", "state.next[0].to")


def test_decide_reports_corrections_flow_switches_and_no_internals(client: httpx.Client) -> None:
    created = client.post("/api/radio/sessions", json={"flow": "clearance", "scenario": {"squawk": "4721"}, "seed": 5}).json()
    sid = created["session"]["id"]
    issued = client.post(f"/api/radio/sessions/{sid}/transmissions", json={"text": created["expected_pilot"][0]}).json()
    variables, readback = issued["session"]["variables"], issued["expected_pilot"][0]
    base = {"state_id": "CD_READBACK", "flow_slug": "clearance", "variables": variables,
            "candidates": [{"id": "CD_RB_CORRECT", "flow": "clearance", "state": {}}]}

    good = decide(client, {**base, "pilot_utterance": readback})
    assert good["decision"]["next_state"] == "CD_RB_CORRECT" and good["decision"]["activate_flow"] is None
    assert good["active_nodes"] == ["CD_RB_CORRECT", "CD_GROUND_RB"]
    # the ground frequency's readback: auto-advance leaves clearance for startup_pushback, a flow activation
    ground = f"ground {variables['ground_freq']}, {variables['callsign_spoken']}"
    switch = decide(client, {**base, "state_id": "CD_GROUND_RB", "pilot_utterance": ground,
                             "candidates": [{"id": "CD_HANDOFF", "flow": "clearance", "state": {}}]})
    assert switch["decision"]["next_state"] == "CD_HANDOFF" and switch["decision"]["off_schema"] is False
    assert switch["decision"]["activate_flow"] == "startup_pushback"
    assert switch["active_nodes"][0] == "CD_HANDOFF"
    assert any(n.startswith("startup_pushback:") for n in switch["active_nodes"])  # qualified: another flow
    assert switch["trace"]["activeNodes"][-1]["flow"] == "startup_pushback"

    wrong = decide(client, {**base, "pilot_utterance": readback.replace("4721", "4712")})
    assert wrong["decision"]["off_schema"] is False and wrong["decision"]["next_state"] == "CD_READBACK"
    assert "4721" in wrong["decision"]["controller_say_tpl"]
    assert wrong["trace"]["readback"]["wrong"] and "readback correction" in wrong["trace"]["autoSelection"]["reason"]

    check = decide(client, {**base, "pilot_utterance": "radio check"})
    assert check["decision"]["radio_check"] is True and check["decision"]["next_state"] == "CD_READBACK"
    assert check["decision"]["updates"] == {} and check["decision"]["resume_previous"] is False
    assert "interrupt_intent" not in check["decision"]["updates"]
    client.delete(f"/api/radio/sessions/{sid}")


# --------------------------------------------------------------------------- speech


def test_say_answers_the_contracts_example_in_mpeg(client: httpx.Client) -> None:
    body = {"text": "Lufthansa tree fife niner, contact tower wun wun eight decimal seven", "voice": "string"}
    r = client.post("/api/atc/say", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    conforms(out, SAY_OUT, "say")
    assert out["mimeType"] == "audio/mpeg"
    audio = base64.b64decode(out["audio"])
    assert audio[:3] == b"ID3" or audio[0] == 0xFF  # an MP3 stream: ID3 tag or frame sync
    assert out["voice"] and any("'string'" in n for n in out["notes"])  # the voice that spoke, and why


def test_ptt_answers_in_the_error_shape_before_any_model_loads(client: httpx.Client) -> None:
    r = client.post("/api/atc/ptt", json={"audio": "not base64!"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "bad_audio" and r.json()["error"]["field"] == "audio"
