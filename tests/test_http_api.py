"""The session HTTP API against a real uvicorn server (protocol-v1.md, "HTTP").

The clearance flow is driven with the phrases the server itself offers (`expected_pilot`), so the
test follows flows/clearance.yaml without copying its wording; the wrong readback swaps two digits
of the squawk and must be caught.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

SCENARIO = {
    "callsign": "DLH359",
    "airport": "EDDF",
    "destination": "EDDM",
    "squawk": "4721",
    "initial_altitude_ft": 5000,
    "atis_letter": "K",
    "stand": "V155",
}
MESSAGE_KEYS = {"message_id", "seq", "role", "station", "frequency", "template", "text", "speech"}
SESSION_KEYS = {
    "id", "flow", "state", "phase", "variables", "flags", "flow_stack", "parallel_flows",
    "station", "frequency", "completed",
}


@pytest.fixture(scope="module")
def client(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=10.0) as c:
        yield c


def create(client: httpx.Client, **body: Any) -> dict[str, Any]:
    r = client.post("/api/radio/sessions", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def transmit(client: httpx.Client, session_id: str, text: str) -> dict[str, Any]:
    r = client.post(f"/api/radio/sessions/{session_id}/transmissions", json={"text": text})
    assert r.status_code == 200, r.text
    return r.json()


def assert_error(r: httpx.Response, status: int, code: str, field: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert set(error) == {"code", "message", "field"}
    assert error["code"] == code and error["message"]
    if field is not None:
        assert error["field"] == field
    return error


def test_health(serve) -> None:
    # a server of its own (the session's shared one may have loaded its speech models for another
    # test): it does not preload the speech models, serves text, and says voice is not ready
    from gateway.app import create_app
    from gateway.settings import Settings

    body = httpx.get(serve(create_app(Settings(speech_preload=False))) + "/health", timeout=10).json()
    assert body["ok"] is True and body["ready"] is False
    assert body["speech"] == {"stt": "whisper", "tts": "piper", "voice": "en_US-joe-medium", "ready": False, "error": None}
    assert body["flows"] >= 1 and isinstance(body["sessions"], int) and body["version"]


def test_clearance_flow_catches_a_wrong_readback(client: httpx.Client) -> None:
    created = create(client, flow="clearance", scenario=SCENARIO, seed=7)
    assert created["resume_token"]
    session = created["session"]
    assert SESSION_KEYS <= set(session)
    assert session["flow"] == "clearance" and session["state"] == "CD_INITIAL"
    assert session["variables"]["callsign"] == "DLH359" and session["variables"]["squawk"] == "4721"
    assert session["completed"] is False
    sid = session["id"]
    first_call = created["expected_pilot"][0]
    assert "information" in first_call.lower() and "Munich" in first_call

    issued = transmit(client, sid, first_call)
    assert issued["decision"]["recognized"] is True
    assert issued["decision"]["from_state"] == "CD_INITIAL"
    assert issued["session"]["state"] == "CD_READBACK"
    assert issued["readback"] == {"ok": True, "fields": {"atis_letter": "ok"}, "missing": [], "wrong": [], "unsure": []}  # the ATIS letter
    clearance = issued["messages"][0]
    assert set(clearance) == MESSAGE_KEYS
    assert clearance["role"] == "atc" and clearance["station"] == "delivery"
    assert "squawk 4721" in clearance["text"] and clearance["speech"] != clearance["text"]
    correct = issued["expected_pilot"][0]
    assert "4721" in correct

    wrong = transmit(client, sid, correct.replace("4721", "4712"))
    rb = wrong["readback"]
    assert rb["ok"] is False and rb["fields"]["squawk"] == "wrong"
    assert [w["field"] for w in rb["wrong"]] == ["squawk"] and rb["wrong"][0]["expected"] == "4721"
    assert rb["fields"]["destination"] == "ok" and rb["missing"] == []
    assert wrong["session"]["state"] == "CD_READBACK"  # no progress on a wrong readback
    assert wrong["messages"] and "4721" in wrong["messages"][0]["text"]  # the controller corrects

    good = transmit(client, sid, correct)
    assert good["readback"]["ok"] is True and set(good["readback"]["fields"].values()) == {"ok"}
    assert good["decision"]["to_state"] == "CD_GROUND_RB"
    assert "ground" in good["messages"][0]["text"].lower()
    seqs = [m["seq"] for m in issued["messages"] + wrong["messages"] + good["messages"]]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # one sequence, no gaps

    state = client.get(f"/api/radio/sessions/{sid}").json()
    assert state["session"]["state"] == "CD_GROUND_RB" and state["session"]["phase"] == "clearance"
    assert state["expected_pilot"] == good["expected_pilot"]

    transcript = client.get(f"/api/radio/sessions/{sid}/transcript").json()["entries"]
    roles = [e["role"] for e in transcript]
    assert roles == ["pilot", "atc", "pilot", "atc", "pilot", "atc"]
    pilots = [e for e in transcript if e["role"] == "pilot"]
    assert [p["text"] for p in pilots] == [first_call, correct.replace("4721", "4712"), correct]
    assert [p["state"] for p in pilots] == ["CD_INITIAL", "CD_READBACK", "CD_READBACK"]
    assert pilots[0]["readback"]["fields"] == {"atis_letter": "ok"}
    assert pilots[1]["readback"]["ok"] is False and pilots[2]["readback"]["ok"] is True
    atcs = [e for e in transcript if e["role"] == "atc"]
    assert [a["seq"] for a in atcs] == seqs
    assert all(e["flow"] == "clearance" for e in transcript)
    times = [e["at"] for e in transcript]
    assert times == sorted(times)


def test_reset_and_delete(client: httpx.Client) -> None:
    created = create(client, flow="clearance", scenario=SCENARIO, seed=3)
    sid = created["session"]["id"]
    moved = transmit(client, sid, created["expected_pilot"][0])
    assert moved["session"]["state"] == "CD_READBACK"

    reset = client.post(f"/api/radio/sessions/{sid}/reset")
    assert reset.status_code == 200, reset.text
    body = reset.json()
    assert body["session"]["state"] == "CD_INITIAL"
    assert body["session"]["variables"]["squawk"] == "4721"  # same scenario
    assert body["expected_pilot"] == created["expected_pilot"]

    deleted = client.delete(f"/api/radio/sessions/{sid}")
    assert deleted.status_code == 200 and deleted.json()["ok"] is True
    assert_error(client.get(f"/api/radio/sessions/{sid}"), 404, "unknown_session")
    assert_error(client.delete(f"/api/radio/sessions/{sid}"), 404, "unknown_session")
    assert_error(client.post(f"/api/radio/sessions/{sid}/transmissions", json={"text": "hello"}), 404, "unknown_session")


def test_scenario_is_filled_and_reproducible(client: httpx.Client) -> None:
    a = create(client, flow="clearance", seed=11)["session"]["variables"]
    b = create(client, flow="clearance", seed=11)["session"]["variables"]
    assert a == b
    for name in ("callsign", "callsign_spoken", "runway", "sid", "squawk", "delivery_freq", "ground_freq"):
        assert a[name] not in (None, ""), name
    default = create(client)["session"]
    assert default["flow"] and default["seed"] is not None  # main flow, random seed kept


def test_unknown_session_and_route(client: httpx.Client) -> None:
    assert_error(client.get("/api/radio/sessions/nope"), 404, "unknown_session")
    assert_error(client.get("/api/radio/sessions/nope/transcript"), 404, "unknown_session")
    assert_error(client.post("/api/radio/sessions/nope/reset"), 404, "unknown_session")
    assert_error(client.get("/api/no/such/route"), 404, "not_found")
    assert_error(client.put("/api/radio/sessions"), 405, "method_not_allowed")


def test_bad_bodies(client: httpx.Client) -> None:
    headers = {"content-type": "application/json"}
    assert_error(client.post("/api/radio/sessions", content=b'{"flow": "clearance",', headers=headers), 400, "bad_json")
    sid = create(client, flow="clearance", seed=1)["session"]["id"]
    url = f"/api/radio/sessions/{sid}/transmissions"
    assert_error(client.post(url, content=b"not json", headers=headers), 400, "bad_json")
    assert_error(client.post(url, json={}), 422, "validation_error", "text")
    assert_error(client.post(url, json={"txt": "hello"}), 422, "validation_error")
    assert_error(client.post(url, json={"text": 5}), 422, "validation_error", "text")
    assert_error(client.post(url, json={"text": "   "}), 422, "validation_error", "text")
    assert_error(client.post(url, json={"text": "x" * 501}), 422, "validation_error", "text")
    assert_error(client.post(url, json=["text"]), 422, "validation_error")
    assert_error(client.post("/api/radio/sessions", json={"seed": "seven"}), 422, "validation_error", "seed")
    assert_error(client.post("/api/radio/sessions", json={"scenario": {"callsign": ["DLH"]}}), 422, "validation_error")


def test_oversize_body_is_refused(client: httpx.Client) -> None:
    big = {"flow": "clearance", "scenario": {"callsign": "X" * 70_000}}
    assert_error(client.post("/api/radio/sessions", json=big), 413, "payload_too_large")

    def chunks() -> Iterator[bytes]:  # no content-length: the limit holds while reading
        yield b'{"text": "'
        for _ in range(80):
            yield b"a" * 1024
        yield b'"}'

    sid = create(client, flow="clearance", seed=1)["session"]["id"]
    r = client.post(f"/api/radio/sessions/{sid}/transmissions", content=chunks(), headers={"content-type": "application/json"})
    assert_error(r, 413, "payload_too_large")


def test_unknown_flow_and_scenario_variable(client: httpx.Client) -> None:
    error = assert_error(client.post("/api/radio/sessions", json={"flow": "no_such_flow"}), 422, "unknown_flow", "flow")
    assert "clearance" in error["message"]  # names the known flows
    error = assert_error(
        client.post("/api/radio/sessions", json={"scenario": {"callsing": "DLH1"}}), 422, "validation_error", "scenario.callsing"
    )
    assert "callsing" in error["message"] and "callsign" in error["message"]  # lists the allowed names


def test_interrupt_flows_cannot_start_a_session(client: httpx.Client) -> None:
    assert_error(client.post("/api/radio/sessions", json={"flow": "radio_check"}), 422, "validation_error", "flow")


def test_radio_check_interrupts_and_resumes(client: httpx.Client) -> None:
    sid = create(client, flow="clearance", scenario=SCENARIO, seed=7)["session"]["id"]
    reply = transmit(client, sid, "radio check")
    assert reply["decision"]["intent"] == "radio_check" and "read you" in reply["messages"][0]["text"]
    assert reply["session"]["state"] == "CD_INITIAL" and reply["session"]["flow_stack"] == []


def test_unexpected_errors_are_json_500_without_traceback(serve: Callable[[Any], str]) -> None:
    from gateway.app import create_app
    from gateway.service import RadioService

    class Broken(RadioService):
        def transcript(self, session_id: str) -> list[dict[str, Any]]:
            raise RuntimeError("secret internals")

    base = serve(create_app(service=Broken()))
    r = httpx.get(f"{base}/api/radio/sessions/x/transcript", timeout=10.0)
    error = assert_error(r, 500, "internal")
    assert "secret" not in r.text and "Traceback" not in r.text and error["message"] == "internal server error"


def test_airports(client: httpx.Client) -> None:
    eddf = client.get("/api/airports/eddf").json()
    assert eddf["icao"] == "EDDF" and eddf["runways"]
    freqs = client.get("/api/airports/EDDF/frequencies").json()
    assert freqs["icao"] == "EDDF" and freqs["frequencies"]
    assert_error(client.get("/api/airports/ZZZZ"), 404, "not_found", "icao")
    assert_error(client.get("/api/airports/ZZZZ/frequencies"), 404, "not_found")


def test_home_page(client: httpx.Client) -> None:
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")


def test_a_gateway_stopped_during_the_assistants_warm_up_stops_without_waiting_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The assistant builds its indexes for seconds after start-up. A gateway stopped meanwhile
    (Ctrl-C right after `make run`, every short-lived test server) stops now: the warm-up runs on
    a daemon thread, not in the loop's executor, which the stopping server would join."""
    import threading

    import uvicorn

    from assistant.context import AssistantContext
    from gateway.app import create_app
    from gateway.settings import Settings

    release, started = threading.Event(), threading.Event()

    def warm(self: AssistantContext) -> None:  # a warm-up that lasts until the test lets it go
        started.set()
        release.wait(120)

    monkeypatch.setattr(AssistantContext, "warm", warm)
    server = uvicorn.Server(uvicorn.Config(create_app(Settings(speech_preload=False)), port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        assert started.wait(60), "the warm-up never started"
        server.should_exit = True
        thread.join(60)
        assert not thread.is_alive(), "the server waited for the assistant's warm-up"
        assert not release.is_set()
    finally:
        release.set()
        server.should_exit = True
