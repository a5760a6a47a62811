"""Bugs the fuzz suites (tests/test_fuzz_http.py, tests/test_fuzz_ws.py) found, each pinned down.

Every test here is one input a fuzzer produced (shrunk), sent to the live gateway, with the
answer the protocol promises.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.websockets import WebSocketDisconnect, WebSocketState
from websockets.sync.client import connect

from engine.models import ControllerMessage
from engine.phraseology import normalize_transcript
from gateway.radio.playout import Playout
from gateway.service import RadioService

from gateway.app import create_app
from gateway.settings import Settings
from gateway.speech.stack import SpeechStack
from gateway.speech.tts.espeak import EspeakTts
from gateway.radio.connection import RadioConnection
from gateway.ws.handler import WebSocketTransport
from tests.conftest import run_server


def _ws_url(base: str) -> str:
    return base.replace("http", "ws", 1) + "/v1/radio"


def _events_until_pong(ws: Any) -> list[dict[str, Any]]:
    ws.send(json.dumps({"type": "ping"}))
    events = []
    while True:
        frame = ws.recv(timeout=10)
        if isinstance(frame, str):
            event = json.loads(frame)
            if event["type"] == "pong":
                return events
            events.append(event)


@pytest.mark.parametrize("kind", [[None], {"a": 1}, ["ping"]])
def test_a_type_that_is_a_list_or_object_is_unknown_type_not_internal(live_server: str, kind: Any) -> None:
    """`{"type": [null]}`: the type was looked up in a set, TypeError (unhashable) -> `internal`."""
    with connect(_ws_url(live_server)) as ws:
        ws.send(json.dumps({"type": kind}))
        events = _events_until_pong(ws)
    assert [(e["type"], e["code"], e["fatal"]) for e in events] == [("error", "unknown_type", False)]


@pytest.mark.parametrize("text", ["\u00b9", "QNH 10\u00b23", "squawk \u2463\u2466\u2461\u2460"])
def test_a_transmission_with_superscript_or_circled_digits_is_answered(live_server: str, text: str) -> None:
    """`{"text": "¹"}`: "¹".isdigit() is true but int("¹") fails, so the number parser raised -> 500."""
    created = httpx.post(f"{live_server}/api/radio/sessions", json={"flow": "clearance", "seed": 2}, timeout=30).json()
    answer = httpx.post(
        f"{live_server}/api/radio/sessions/{created['session']['id']}/transmissions", json={"text": text}, timeout=30
    )
    assert answer.status_code == 200, answer.text


def test_every_digit_reads_as_its_ascii_digit() -> None:
    assert normalize_transcript("QNH 10\u00b23") == "qnh 1023"
    assert normalize_transcript("squawk \u0664\u0667\u0662\u0661") == "squawk 4721"  # Arabic-Indic digits


@pytest.mark.parametrize(
    ("flow", "scenario", "frequency"),
    [
        ("approach", {"approach_freq": 119.2}, "119.2"),
        ("clearance", {"delivery_freq": 121}, "121"),
        ("clearance", {"ground_freq": 121.8}, None),
    ],
)
def test_a_frequency_given_as_a_number_is_used_as_text(
    live_server: str, flow: str, scenario: dict, frequency: str | None
) -> None:
    """`{"scenario": {"approach_freq": 119.2}}` (the schema allows numbers): a controller message's
    frequency must be a string, so building one raised -> 500 on create, or later at the handoff."""
    with httpx.Client(base_url=live_server, timeout=30) as http:
        created = http.post("/api/radio/sessions", json={"flow": flow, "scenario": scenario, "seed": 1})
        assert created.status_code == 201, created.text
        session = created.json()["session"]
        if frequency is not None:
            assert session["frequency"] == frequency
        expected = created.json()["expected_pilot"]
        for _ in range(6):  # fly on, through the handoff to the station whose frequency was a number
            text = expected[0] if expected else "say again"
            answer = http.post(f"/api/radio/sessions/{session['id']}/transmissions", json={"text": text})
            assert answer.status_code == 200, answer.text
            expected = answer.json()["expected_pilot"]
        entries = http.get(f"/api/radio/sessions/{session['id']}/transcript").json()["entries"]
        assert all(e["frequency"] is None or isinstance(e["frequency"], str) for e in entries if e["role"] == "atc")


def test_a_seed_written_as_an_integral_float_is_that_integer(live_server: str) -> None:
    """`{"seed": 3450.0}` is the integer 3450 to JSON (and to the OpenAPI document): it was refused."""
    with httpx.Client(base_url=live_server, timeout=30) as http:
        as_float = http.post("/api/radio/sessions", json={"flow": "clearance", "seed": 3450.0})
        as_int = http.post("/api/radio/sessions", json={"flow": "clearance", "seed": 3450})
        assert as_float.status_code == 201, as_float.text
        assert as_float.json()["session"]["seed"] == 3450
        assert as_float.json()["session"]["variables"] == as_int.json()["session"]["variables"]
        for seed in (3450.5, "3450", True):
            assert http.post("/api/radio/sessions", json={"seed": seed}).status_code == 422


@pytest.mark.parametrize(
    "body", ['{"altitude_ft": true}', '{"ias_kt": "160"}', '{"on_ground": "no"}', '{"on_ground": 0}', '{"altitude_ft": NaN}']
)
def test_telemetry_of_the_wrong_type_is_refused_not_coerced(live_server: str, body: str) -> None:
    """`{"altitude_ft": true}` was stored as an altitude of 1 ft (pydantic's lax coercion), though the
    protocol and the OpenAPI document say number; NaN came through as a value."""
    with httpx.Client(base_url=live_server, timeout=30) as http:
        session_id = http.post("/api/radio/sessions", json={"flow": "clearance", "seed": 1}).json()["session"]["id"]
        refused = http.post(
            f"/api/radio/sessions/{session_id}/telemetry", content=body, headers={"content-type": "application/json"}
        )
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["code"] == "validation_error"
        accepted = http.post(f"/api/radio/sessions/{session_id}/telemetry", json={"altitude_ft": 1200, "on_ground": False})
        assert accepted.status_code == 200, accepted.text
    with connect(_ws_url(live_server)) as ws:
        ws.send(json.dumps({"type": "session.start", "flow": "clearance", "seed": 1}))
        ws.send(json.dumps({"type": "telemetry", "on_ground": "yes"}))
        errors = [e for e in _events_until_pong(ws) if e["type"] == "error"]
    assert [(e["code"], e["fatal"]) for e in errors] == [("bad_message", False)]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/atc/say", {"text": "radio check", "level": True}, "level"),
        ("/api/atc/say", {"text": "radio check", "level": "3"}, "level"),
        ("/api/atc/say", {"text": "radio check", "speed": True}, "speed"),
        ("/api/atc/say", {"text": "radio check", "preNormalized": "yes"}, "preNormalized"),
        ("/api/atc/ptt", {"audio": "UklGRg==", "expected": {"phrase": 7}}, "expected.phrase"),
        ("/api/radio/sessions", {"flow": 7}, "flow"),
    ],
)
def test_http_bodies_of_the_wrong_json_type_are_refused_not_coerced(
    live_server: str, path: str, body: Any, field: str
) -> None:
    """`{"level": true}` on /api/atc/say was spoken at readability 1 (pydantic's lax mode made
    true the integer 1) though the OpenAPI document says integer: every body is strict now."""
    with httpx.Client(base_url=live_server, timeout=30) as http:
        refused = http.post(path, json=body)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert (error["code"], error["field"]) == ("validation_error", field)


def test_ws_messages_of_the_wrong_json_type_are_refused_not_coerced(live_server: str) -> None:
    """`session.start` with `"seed": "7"` or `"radio_level": true` was coerced; now a typed error."""
    with connect(_ws_url(live_server)) as ws:
        ws.send(json.dumps({"type": "session.start", "flow": "clearance", "seed": "7"}))
        ws.send(json.dumps({"type": "session.start", "flow": "clearance", "radio_level": True}))
        ws.send(json.dumps({"type": "session.start", "flow": "clearance", "seed": 7.0}))
        events = _events_until_pong(ws)
    kinds = [(e["type"], e.get("code")) for e in events]
    assert kinds[:2] == [("error", "bad_message"), ("error", "bad_message")]
    assert ("session.started", None) in kinds[2:]


# --------------------------------------------------------------------------- with the speech stack


@pytest.fixture(scope="module")
def radio() -> Iterator[str]:
    """A gateway with the light speech engines loaded (ptt.down opens a recognizer stream)."""
    settings = Settings(speech_preload=False, stt_engine="sphinx", tts_engine="espeak", audio_pacing=False)
    stack = SpeechStack(settings)
    asyncio.run(stack.load())
    with run_server(create_app(settings, speech=stack)) as base:
        yield base


def test_typed_text_while_keyed_does_not_release_the_key(radio: str) -> None:
    """ptt.down, then a typed `text`: the typed transmission keyed and released the frequency, so
    the controller's answer went on air while the pilot still held the key. It waits for ptt.up."""
    with connect(_ws_url(radio), max_queue=None) as ws:
        ws.send(json.dumps({"type": "session.start", "flow": "clearance", "seed": 5}))
        ws.send(json.dumps({"type": "ptt.down"}))
        _events_until_pong(ws)
        ws.send(json.dumps({"type": "text", "text": "request IFR clearance"}))
        keyed = _events_until(ws, "state")  # the decision is made and its reply is queued
        keyed += _events_until_pong(ws)
        assert "decision" in [e["type"] for e in keyed]
        assert "atc.message" not in [e["type"] for e in keyed]
        ws.send(json.dumps({"type": "ptt.up"}))
        released = _events_until(ws, "atc.message")
    assert released[-1]["text"]


def _events_until(ws: Any, kind: str) -> list[dict[str, Any]]:
    events = []
    while True:
        frame = ws.recv(timeout=20)
        if isinstance(frame, str):
            events.append(json.loads(frame))
            if events[-1]["type"] == kind:
                return events


def test_a_controller_message_waits_when_the_pilot_keys_again_right_after_releasing() -> None:
    """ptt.up then ptt.down in one read: unkey() woke the frequency, key() cleared it again before
    the frequency task ran, and the task went on air anyway (the wake-up was not re-checked)."""

    async def scenario() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        ended = asyncio.Event()

        async def send_json(event: dict[str, Any]) -> None:
            sent.append(event)
            if event.type == "atc.message.end":
                ended.set()

        async def send_bytes(pcm: bytes) -> None:
            return None

        frequency = Playout(send_json, send_bytes, EspeakTts(), pace=False)
        frequency.start()
        frequency.key()
        frequency.enqueue([ControllerMessage(message_id="m1", seq=1, template="t", text="go ahead", speech="go ahead")])
        for _ in range(5):
            await asyncio.sleep(0)  # the frequency task waits for the pilot to release
        frequency.unkey()
        frequency.key()  # keyed again before the woken task ran
        for _ in range(5):
            await asyncio.sleep(0)
        keyed = list(sent)
        frequency.unkey()
        await asyncio.wait_for(ended.wait(), 30)
        await frequency.close()
        return keyed

    assert asyncio.run(scenario()) == []


class _HungUp:
    """A socket whose pilot has gone: a send fails the way Starlette reports it (1006)."""

    application_state = WebSocketState.CONNECTED

    async def send_text(self, data: str) -> None:
        self.application_state = WebSocketState.DISCONNECTED
        raise WebSocketDisconnect(code=1006)

    async def send_bytes(self, data: bytes) -> None:
        await self.send_text("")


def test_a_pilot_hanging_up_while_the_controller_talks_logs_no_error(caplog: pytest.LogCaptureFixture) -> None:
    """The fuzzer's reconnect step: the frequency's next send raised WebSocketDisconnect and was
    logged as an ERROR with its traceback ("transmitting ... failed") for an ordinary hang-up."""
    settings = Settings(speech_preload=False, stt_engine="sphinx", tts_engine="espeak")
    connection = RadioConnection(WebSocketTransport(_HungUp()), RadioService(settings), SpeechStack(settings), settings)  # type: ignore[arg-type]

    async def scenario() -> None:
        connection.open()  # sends leave through the connection's outbox (gateway/radio/outbox.py)
        frequency = Playout(connection.send, connection.send_audio, EspeakTts(), pace=False)
        frequency.start()
        frequency.enqueue([ControllerMessage(message_id="m1", seq=1, template="t", text="go ahead", speech="go ahead")])
        await asyncio.wait_for(frequency.idle(), 10)
        await frequency.close()
        assert connection._closed  # the writer saw the hang-up: nothing more is queued for nobody

    with caplog.at_level(logging.ERROR):
        asyncio.run(scenario())
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


def test_bounded_integers_are_bounded_in_the_openapi_document() -> None:
    """`Annotated[JsonInt, Field(ge=0, le=...)]` was checked by the server but written into the JSON
    schema as the unknown keywords ge/le, so the document allowed any integer and the HTTP fuzzer's
    "valid" seed 4415981953116041384034304 was refused (ST202)."""
    from gateway.api.openapi import openapi_document
    from gateway.service import MAX_SEED

    document = openapi_document(RadioService(Settings(speech_preload=False)))
    schemas = document["components"]["schemas"]
    text = json.dumps(document)
    assert '"ge"' not in text and '"le"' not in text
    seed = schemas["CreateSessionRequest"]["properties"]["seed"]["anyOf"][0]
    assert (seed["minimum"], seed["maximum"]) == (0, MAX_SEED)
    level = schemas["SayRequest"]["properties"]["level"]["anyOf"][0]
    assert (level["minimum"], level["maximum"]) == (1, 5)


def test_a_body_of_blanks_is_no_json(live_server: str) -> None:
    """An optional body may be absent, but b" " is not a JSON document: the HTTP fuzzer's
    "invalid syntax" body created a session (ST201)."""
    for body in (b" ", b"\n\t "):
        answer = httpx.post(f"{live_server}/api/radio/sessions", content=body, headers={"content-type": "application/json"})
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_json", answer.text
    assert httpx.post(f"{live_server}/api/radio/sessions", content=b"", timeout=30).status_code == 201
