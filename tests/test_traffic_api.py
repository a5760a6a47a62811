"""Nearby traffic over the wire: `traffic` in the HTTP session body, `session.start` and telemetry,
and `/api/atc/ptt` `context.callsigns`; bad lists get a typed error and the server keeps going."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from websockets.sync.client import connect

from gateway.api import speech as speech_api
from gateway.api.errors import ApiError, api_error, http_error
from gateway.settings import Settings
from gateway.speech.stack import SpeechStack, stt_context, traffic_vocabulary
from gateway.speech.stt.base import SttContext
from tests.conftest import run_server

STATION_CALLING = "Station calling Frankfurt Delivery, say again your callsign."
BAD_LISTS: list[Any] = [["not a callsign!"], "DLH359", [1], ["DLH359"] * 51 + ["x"], [""]]


@pytest.fixture(scope="module")
def client(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=30.0) as c:
        yield c


def _error(r: httpx.Response, field_prefix: str) -> dict[str, Any]:
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "validation_error" and (error["field"] or "").startswith(field_prefix), error
    return error


def test_http_session_traffic_is_kept_and_never_applied(client: httpx.Client) -> None:
    created = client.post("/api/radio/sessions", json={"flow": "clearance", "seed": 7, "traffic": ["dlh 359", "Condor 12"]})
    assert created.status_code == 201, created.text
    session = created.json()["session"]
    assert session["traffic"] == ["DLH359", "CFG12"] and session["variables"]["callsign"] == "SAS372"
    sid = session["id"]
    said = client.post(f"/api/radio/sessions/{sid}/transmissions", json={"text": "frankfurt delivery lufthansa 359 request IFR clearance"})
    body = said.json()
    assert body["session"]["state"] == "CD_INITIAL" and [m["text"] for m in body["messages"]] == [STATION_CALLING]
    assert body["decision"]["intent"] == "station_calling" and body["decision"]["recognized"] is False
    # telemetry replaces the list ([] clears it)
    tele = client.post(f"/api/radio/sessions/{sid}/telemetry", json={"on_ground": True, "traffic": ["Speedbird 7"]})
    assert tele.status_code == 200, tele.text
    assert tele.json()["session"]["traffic"] == ["BAW7"]
    assert client.get(f"/api/radio/sessions/{sid}").json()["session"]["traffic"] == ["BAW7"]
    assert client.post(f"/api/radio/sessions/{sid}/telemetry", json={"traffic": []}).json()["session"]["traffic"] == []


def test_http_bad_traffic_is_a_typed_error(client: httpx.Client) -> None:
    for bad in BAD_LISTS:
        _error(client.post("/api/radio/sessions", json={"flow": "clearance", "traffic": bad}), "traffic")
    # the session's own callsign is no traffic
    own = client.post("/api/radio/sessions", json={"flow": "clearance", "seed": 7, "traffic": ["SAS372"]})
    assert "own callsign" in _error(own, "traffic")["message"]
    sid = client.post("/api/radio/sessions", json={"flow": "clearance", "seed": 7}).json()["session"]["id"]
    for bad in BAD_LISTS:
        _error(client.post(f"/api/radio/sessions/{sid}/telemetry", json={"traffic": bad}), "traffic")
    _error(client.post(f"/api/radio/sessions/{sid}/telemetry", json={"traffic": ["Scandinavian 372"]}), "traffic")
    assert client.get(f"/api/radio/sessions/{sid}").json()["session"]["traffic"] == []
    assert client.get("/health").json()["ok"] is True


def _ws_until(ws: Any, kind: str) -> dict[str, Any]:
    while True:
        event = json.loads(ws.recv(timeout=15))
        if event["type"] in (kind, "error"):
            return event


def test_ws_session_start_and_telemetry_traffic(live_server: str, client: httpx.Client) -> None:
    url = live_server.replace("http", "ws", 1) + "/v1/radio"
    with connect(url, open_timeout=10) as ws:
        for bad in BAD_LISTS:
            ws.send(json.dumps({"type": "session.start", "flow": "clearance", "traffic": bad}))
            error = _ws_until(ws, "session.started")
            assert error["type"] == "error" and error["code"] == "bad_message" and "traffic" in error["message"]
            assert error["fatal"] is False
        ws.send(json.dumps({"type": "session.start", "flow": "clearance", "seed": 7, "traffic": ["SAS372"]}))
        error = _ws_until(ws, "session.started")
        assert error["type"] == "error" and error["code"] == "validation_error" and "own callsign" in error["message"]
        ws.send(json.dumps({"type": "session.start", "flow": "clearance", "seed": 7, "traffic": ["DLH359"]}))
        started = _ws_until(ws, "session.started")
        assert started["type"] == "session.started", started
        sid = started["session_id"]
        assert client.get(f"/api/radio/sessions/{sid}").json()["session"]["traffic"] == ["DLH359"]
        ws.send(json.dumps({"type": "text", "text": "frankfurt delivery lufthansa tree fife niner request IFR clearance"}))
        decision = _ws_until(ws, "decision")
        assert decision["intent"] == "station_calling" and decision["to_state"] == "CD_INITIAL"
        assert any(s["step"] == "callsign" and s["data"]["traffic"] for s in decision["trace"]["steps"])
        ws.send(json.dumps({"type": "telemetry", "traffic": ["not a callsign!"]}))
        error = _ws_until(ws, "pong")
        assert error["type"] == "error" and error["code"] == "bad_message"
        ws.send(json.dumps({"type": "telemetry", "traffic": ["EZY12AB", "D-EABC"]}))
        ws.send(json.dumps({"type": "ping"}))
        assert _ws_until(ws, "pong")["type"] == "pong"
        assert client.get(f"/api/radio/sessions/{sid}").json()["session"]["traffic"] == ["EZY12AB", "D-EABC"]


# --------------------------------------------------------------------------- the recognizer


class _Stream:
    def __init__(self) -> None:
        self.pcm = b""

    def feed(self, pcm: bytes) -> None:
        self.pcm += pcm

    async def final(self) -> str:
        return "lufthansa tree fife niner request taxi"

    async def aclose(self) -> None:
        return None


class RecordingStt:
    """Hears one sentence, and remembers what it was told to expect."""

    name = "recording"
    streaming = False

    def __init__(self) -> None:
        self.contexts: list[SttContext] = []

    def load(self) -> None:
        return None

    def open(self, context: SttContext) -> _Stream:
        self.contexts.append(context)
        return _Stream()


class SilentTts:
    name = "silent"
    voice = "none"
    sample_rate = 16000

    async def load(self) -> None:
        return None

    async def synthesize(self, text: str) -> bytes:
        return b"\x00\x00" * 160


def test_ptt_context_callsigns_bias_the_recognizer(tmp_path: Any) -> None:
    import wave

    settings = Settings(max_transmission_s=8.0)
    stt = RecordingStt()
    stack = SpeechStack(settings, stt=stt, tts=SilentTts())  # type: ignore[arg-type]
    stack.ready = True
    async def health(request: Request) -> JSONResponse:  # what `run_server` waits for
        return JSONResponse({"ok": True})

    routes = [Route("/health", health, methods=["GET"]), *speech_api.routes(stack, settings)]
    app = Starlette(routes=routes, exception_handlers={ApiError: api_error, HTTPException: http_error})
    path = tmp_path / "clip.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"\x00\x00" * 8000)
    import base64

    audio = base64.b64encode(path.read_bytes()).decode()
    with run_server(app) as base, httpx.Client(base_url=base, timeout=30.0) as http:
        ok = http.post("/api/atc/ptt", json={"audio": audio, "format": "wav", "context": {"callsigns": ["DLH359", "D-EABC", "BAW12"], "lessonId": "x"}})
        assert ok.status_code == 200, ok.text
        assert ok.json()["transcription"] == "lufthansa tree fife niner request taxi"
        assert stt.contexts[-1].vocabulary == ["Lufthansa", "Speedbird"]
        plain = http.post("/api/atc/ptt", json={"audio": audio, "format": "wav", "context": {"moduleId": 3}})
        assert plain.status_code == 200 and stt.contexts[-1].vocabulary == []
        for bad in BAD_LISTS:
            r = http.post("/api/atc/ptt", json={"audio": audio, "format": "wav", "context": {"callsigns": bad}})
            _error(r, "context.callsigns")


def test_session_stt_context_names_the_traffic_telephony() -> None:
    from engine.models import FlowFrame, Session

    session = Session(
        session_id="s", main_flow="clearance", active=FlowFrame(flow="clearance", state="CD_INITIAL"),
        variables={"callsign": "SAS372", "callsign_spoken": "Scandinavian 372"}, traffic=["DLH359", "DLH12", "EZY12AB", "D-EABC"],
    )
    vocabulary = stt_context(session, []).vocabulary
    assert vocabulary[0] == "Scandinavian 372" and vocabulary[-2:] == ["Lufthansa", "Easy"]
    assert traffic_vocabulary(["XYZ123"]) == []  # no telephony known: spelled, ICAO words already
