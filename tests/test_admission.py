"""Admission control (gateway/capacity.py): a node at its voice capacity refuses a new session at
once with `too_many_sessions` and a retry hint, keeps serving the sessions it admitted, frees a
slot when a session leaves, and shows its load and capacity in `/health`.

A real gateway on loopback with a configured capacity of 2 and real WebSocket clients (text
transmissions: the admission is the same whatever the pilot says); the self-test runs the real
recognizer (slow).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.types import ASGIApp
from websockets.sync.client import ClientConnection, connect

from gateway.app import create_app
from gateway.capacity import RETRY_AFTER_S, SELF_TEST_TEXT, TALK_SHARE, SelfTest, VoiceCapacity, run_self_test
from gateway.extras import installed
from gateway.settings import Settings
from gateway.speech.stack import SpeechStack

LIGHT = {"speech_preload": False, "stt_engine": "sphinx", "tts_engine": "espeak", "audio_pacing": False}
WAIT_ROUNDS = 200  # /health polls while a closed socket's slot is given back (never a time limit)


def _ws(base: str) -> ClientConnection:
    # max_queue=None: these pilots read only what they need; with the default high-water mark the
    # controller's unread audio stops the client reading its socket, and its close handshake then
    # waits out close_timeout (10 s a socket) for a close frame it never reads
    return connect(base.replace("http", "ws", 1) + "/v1/radio", open_timeout=10, max_size=None, max_queue=None)


def _until(ws: ClientConnection, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    while True:
        frame = ws.recv(timeout=30)
        if isinstance(frame, str) and match(event := json.loads(frame)):
            return event


def _start(ws: ClientConnection) -> dict[str, Any]:
    """`session.start`; the `session.started` event or the error that refused it."""
    ws.send(json.dumps({"type": "session.start", "flow": "clearance", "seed": 3}))
    return _until(ws, lambda e: e["type"] in ("session.started", "error"))


def _voice(base: str) -> dict[str, Any]:
    response = httpx.get(f"{base}/health", timeout=10)
    assert response.status_code == 200
    voice: dict[str, Any] = response.json()["voice"]
    return voice


def _wait_live(base: str, live: int) -> dict[str, Any]:
    for _ in range(WAIT_ROUNDS):
        voice = _voice(base)
        if voice["live"] == live:
            return voice
        time.sleep(0.05)  # the server closes the socket's session in its own time
    raise AssertionError(f"/health never showed {live} live voice sessions: {voice}")


@pytest.fixture()
def node(serve: Callable[[ASGIApp], str]) -> str:
    return serve(create_app(Settings(**LIGHT, voice_capacity=2)))


@pytest.fixture()
def two_pilots(node: str) -> Iterator[list[ClientConnection]]:
    with _ws(node) as first, _ws(node) as second:
        for ws in (first, second):
            assert _start(ws)["type"] == "session.started"
        yield [first, second]


def test_a_session_past_capacity_is_refused_with_a_retry_hint_and_the_admitted_keep_working(
    node: str, two_pilots: list[ClientConnection]
) -> None:
    assert _voice(node) | {"self_test": None} == {
        "live": 2, "capacity": 2, "accepting": False, "source": "configured", "refused": 0,
        "retry_after_s": RETRY_AFTER_S, "self_test": None, "error": None,
    }
    with _ws(node) as third:
        refused = _start(third)
        assert refused["code"] == "too_many_sessions" and refused["fatal"] is False, refused
        assert refused["retry_after_s"] == RETRY_AFTER_S and "capacity of 2 voice sessions" in refused["message"]
        third.send('{"type": "ping"}')  # refused, not dropped: the socket stays open
        assert _until(third, lambda e: e["type"] in ("pong", "error"))["type"] == "pong"
    for ws in two_pilots:  # the admitted sessions are served as before
        ws.send(json.dumps({"type": "text", "text": "Lufthansa 359, request IFR clearance to Munich"}))
        decision = _until(ws, lambda e: e["type"] in ("decision", "error"))
        assert decision["type"] == "decision", decision
    health = _voice(node)
    assert health["live"] == 2 and health["refused"] == 1


def test_a_session_leaving_frees_its_slot(node: str, two_pilots: list[ClientConnection]) -> None:
    first, _second = two_pilots
    with _ws(node) as third:
        assert _start(third)["code"] == "too_many_sessions"
        first.close()
        voice = _wait_live(node, 1)
        assert voice["accepting"] is True and voice["retry_after_s"] is None
        assert _start(third)["type"] == "session.started"  # the same socket, once a slot is free
        assert _voice(node)["live"] == 2


def test_resume_past_capacity_is_refused_too(node: str) -> None:
    created = httpx.post(f"{node}/api/radio/sessions", json={"flow": "clearance"}, timeout=30)
    assert created.status_code == 201  # an HTTP (text) session holds no voice slot
    body = created.json()
    with _ws(node) as a, _ws(node) as b, _ws(node) as c:
        assert _start(a)["type"] == "session.started" and _start(b)["type"] == "session.started"
        c.send(json.dumps({"type": "session.resume", "session_id": body["session"]["id"], "resume_token": body["resume_token"]}))
        refused = _until(c, lambda e: e["type"] in ("session.started", "error"))
        assert refused["code"] == "too_many_sessions" and refused["retry_after_s"] > 0


def test_a_refused_start_takes_no_slot(serve: Callable[[ASGIApp], str]) -> None:
    base = serve(create_app(Settings(**LIGHT, voice_capacity=1)))
    with _ws(base) as ws:
        ws.send(json.dumps({"type": "session.start", "flow": "no_such_flow"}))
        assert _until(ws, lambda e: e["type"] in ("session.started", "error"))["code"] == "unknown_flow"
        assert _voice(base)["live"] == 0
        assert _start(ws)["type"] == "session.started"
        assert _voice(base) | {"self_test": None} == {
            "live": 1, "capacity": 1, "accepting": False, "source": "configured", "refused": 0,
            "retry_after_s": RETRY_AFTER_S, "self_test": None, "error": None,
        }


@pytest.mark.skipif(not installed("aiortc"), reason="the [webrtc] extra (aiortc) is not installed")
def test_a_webrtc_offer_past_capacity_is_refused_with_503_and_retry_after(node: str, two_pilots: list[ClientConnection]) -> None:
    offer = httpx.post(f"{node}/v1/webrtc/offer", json={"type": "offer", "sdp": "v=0\r\n", "session": {"type": "session.start"}}, timeout=30)
    assert offer.status_code == 503, offer.text
    assert offer.json()["error"]["code"] == "too_many_sessions"
    assert offer.headers["retry-after"] == str(int(RETRY_AFTER_S))


def test_health_without_a_limit(serve: Callable[[ASGIApp], str]) -> None:
    base = serve(create_app(Settings(**LIGHT, voice_capacity="off")))
    with _ws(base) as ws:
        assert _start(ws)["type"] == "session.started"
        assert _voice(base) | {"self_test": None} == {
            "live": 1, "capacity": None, "accepting": True, "source": "off", "refused": 0,
            "retry_after_s": None, "self_test": None, "error": None,
        }
    health = httpx.get(f"{base}/health", timeout=10).json()
    assert health["ready"] is False  # ready stays what it was: the speech models (not preloaded here)


def test_retry_hint_follows_the_sessions_leaving() -> None:
    now = [1000.0]
    capacity = VoiceCapacity(3, "configured", clock=lambda: now[0])
    assert [capacity.try_acquire() for _ in range(4)] == [True, True, True, False]
    assert capacity.retry_after_s() == RETRY_AFTER_S  # nobody left yet
    for _ in range(3):  # a session leaves every 20 s, another takes its slot
        now[0] += 20
        capacity.release()
        assert capacity.try_acquire()
    assert capacity.retry_after_s() == 20.0  # 60 s since the first of three departures
    capacity.release(departed=False)  # a start that failed gives its slot back: no departure
    assert capacity.live == 2 and capacity.retry_after_s() == 20.0


def test_capacity_formula() -> None:
    test = SelfTest(audio_s=5.0, runs=3, decode_cpu_s=0.25, decode_wall_s=0.25, cores=2, transcript="")
    assert test.cpu_per_talk_s == 0.05
    # 0.5 of 2 cores / (0.05 CPU-s per talk-second x 0.27 of the time talking) = 74.07
    assert test.sessions(headroom=0.5) == int(0.5 * 2 / (0.05 * TALK_SHARE))
    assert SelfTest(audio_s=1.0, runs=1, decode_cpu_s=100.0, decode_wall_s=100.0, cores=1, transcript="").sessions() == 1


@pytest.mark.slow
def test_self_test_measures_a_positive_capacity_with_the_real_recognizer() -> None:
    speech = SpeechStack(Settings(speech_preload=False))  # the default engines: whisper, piper
    test = asyncio.run(run_self_test(speech))
    assert test.runs == 3 and 4.0 < test.audio_s < 15.0
    assert test.decode_cpu_s > 0 and test.sessions() >= 1
    # it decoded the utterance, not noise: most of its words, not one chosen word, which a run may
    # lose ("clear for takeoff", "what fansa" were heard on one clean clone, "cleared" on others)
    said = set(re.findall(r"[a-z]+", SELF_TEST_TEXT.lower()))
    heard = set(re.findall(r"[a-z]+", test.transcript.lower()))
    assert len(said & heard) >= 0.6 * len(said), test.transcript
    capacity = VoiceCapacity.from_settings(Settings(speech_preload=False))
    assert capacity.source == "unmeasured" and capacity.accepting
    capacity.measured(test)
    assert capacity.source == "measured" and capacity.capacity == test.sessions()
