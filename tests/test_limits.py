"""Limits with typed errors: message and audio rates per connection, sessions per key and in all,
HTTP body sizes on every route, and the bounded send queue of a client that stops reading.

Units run the token buckets on a fake clock and the outbox without a socket; the rest runs a
real gateway on loopback with small limits and real clients (a raw TCP socket with a tiny receive
buffer plays the reader that stops reading).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.types import ASGIApp
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from gateway import metrics
from gateway.api.openapi import OPERATIONS
from gateway.app import create_app
from gateway.settings import Settings
from gateway.webrtc.signaling import OFFER_BODY_BYTES
from gateway.radio.limits import ConnectionLimits, TokenBucket, Verdict
from gateway.radio.outbox import Outbox, SlowConsumer

LIGHT = {"speech_preload": False, "stt_engine": "sphinx", "tts_engine": "espeak"}
KEY_A = "alpha-key-0123456789abcdef"
KEY_B = "bravo-key-0123456789abcdef"


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


# --------------------------------------------------------------------------- token buckets


def test_token_bucket_spends_and_refills() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=2.0, capacity=3, clock=clock)
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    clock.now += 0.5  # one token back
    assert bucket.take() and not bucket.take()
    clock.now += 100  # never more than the capacity
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    assert not bucket.take(10)  # a cost above the capacity never fits


def test_connection_limits_policy() -> None:
    clock = FakeClock()
    settings = Settings(ws_messages_per_s=1, ws_messages_burst=2, ws_audio_bytes_per_s=100,
                        ws_audio_burst_bytes=1000, ws_abuse_drops=3)
    limits = ConnectionLimits(settings, clock)
    assert limits.admit(None) is limits.admit(None) is Verdict.ACCEPT
    assert limits.admit(1000) is Verdict.ACCEPT  # audio has its own bucket
    assert limits.admit(None) is Verdict.DROP_NOTIFY  # told once...
    assert limits.admit(1) is Verdict.DROP  # ...not for every frame
    clock.now += 1.0  # a second later: a message fits again, and a drop is told again
    assert limits.admit(None) is Verdict.ACCEPT
    assert limits.admit(None) is Verdict.DROP_NOTIFY
    assert limits.admit(None) is Verdict.DROP  # the fourth drop: the tolerance of 3, +1 forgiven a second later
    assert limits.admit(None) is Verdict.ABUSE  # the fifth: close the socket
    assert limits.dropped == 5


# --------------------------------------------------------------------------- the outbox


def test_outbox_drops_hints_first_and_never_controller_messages() -> None:
    box = Outbox(max_bytes=100, max_droppable=2)
    assert box.put("p1", droppable=True) and box.put("p2", droppable=True)
    assert box.put("p3", droppable=True)  # a third hint pushes out the oldest
    assert box.put("a" * 60)  # must-deliver
    assert box.put("b" * 30)  # fits with the hints (4 + 60 + 30 = 94)
    assert box.put("c" * 8)  # does not fit (102): the hints go, must-deliver stays
    assert box.droppable == 0 and box.dropped == 3
    assert not box.put("hint", droppable=True)  # no room for hints now (98 + 4 > 100)
    with pytest.raises(SlowConsumer):
        box.put("d" * 10)  # must-deliver that cannot fit: the client is too slow
    assert box.bytes == 98 and box.peak_bytes <= 100

    async def drain() -> list[str | bytes | None]:
        return [(await box.get()).data for _ in range(len(box))]

    assert asyncio.run(drain()) == ["a" * 60, "b" * 30, "c" * 8]  # in order, nothing lost
    assert box.put("e" * 100)  # room again


def test_outbox_last_words_and_close_go_past_the_bound() -> None:
    box = Outbox(max_bytes=10, max_droppable=0)
    box.put(b"0123456789")
    assert not box.put("hint", droppable=True)
    box.put('{"type":"error"}', force=True)
    box.close(1008)

    async def drain() -> list[Any]:
        return [await box.get() for _ in range(3)]

    frames = asyncio.run(drain())
    assert [f.data for f in frames[:2]] == [b"0123456789", '{"type":"error"}']
    assert frames[2].data is None and frames[2].close_code == 1008


# --------------------------------------------------------------------------- a live gateway


def _ws(base: str, **kwargs: Any) -> ClientConnection:
    return connect(base.replace("http", "ws", 1) + "/v1/radio", open_timeout=10, max_size=None, **kwargs)


def _events(ws: ClientConnection, until: Callable[[dict[str, Any]], bool], timeout: float = 30) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while True:
        frame = ws.recv(timeout=timeout)
        if isinstance(frame, str):
            out.append(json.loads(frame))
            if until(out[-1]):
                return out


def _pong_eventually(ws: ClientConnection, attempts: int = 50) -> None:
    """Pings until one is answered: dropped ones get no reply (rate limits refill with time)."""
    for _ in range(attempts):
        ws.send('{"type": "ping"}')
        try:
            while True:
                frame = ws.recv(timeout=0.5)
                if isinstance(frame, str) and json.loads(frame)["type"] == "pong":
                    return
        except TimeoutError:
            continue
    raise AssertionError("no pong: the socket is not served any more")


def test_message_flood_is_dropped_with_one_error_and_the_socket_stays(serve: Callable[[ASGIApp], str]) -> None:
    base = serve(create_app(Settings(**LIGHT, ws_messages_per_s=5, ws_messages_burst=5, ws_abuse_drops=1000)))
    with _ws(base) as ws:
        for _ in range(40):
            ws.send('{"type": "ping"}')
        ws.send('{"type": "text", "text": "x"}')  # dropped too, or `no_session`: either way not a pong
        events = _events(ws, lambda e: e["type"] == "error" and e["code"] == "rate_limited")
        pongs = [e for e in events if e["type"] == "pong"]
        assert 5 <= len(pongs) < 40, len(pongs)  # the burst, then drops (a pong per refill at most)
        assert events[-1]["fatal"] is False
        _pong_eventually(ws)  # still open and served once the bucket refills


def test_audio_flood_is_dropped_too(serve: Callable[[ASGIApp], str]) -> None:
    base = serve(create_app(Settings(**LIGHT, ws_audio_bytes_per_s=1000, ws_audio_burst_bytes=4000)))
    with _ws(base) as ws:
        ws.send(json.dumps({"type": "session.start", "flow": "clearance"}))
        _events(ws, lambda e: e["type"] == "session.started")
        ws.send('{"type": "ptt.down"}')
        for _ in range(20):
            ws.send(bytes(1000))
        errors = _events(ws, lambda e: e["type"] == "error")
        assert errors[-1]["code"] == "rate_limited" and "audio" in errors[-1]["message"]
        _pong_eventually(ws)


def test_a_persistent_flood_closes_the_socket(serve: Callable[[ASGIApp], str]) -> None:
    base = serve(create_app(Settings(**LIGHT, ws_messages_per_s=1, ws_messages_burst=1, ws_abuse_drops=5)))
    with _ws(base) as ws:
        with contextlib.suppress(ConnectionClosed):  # the server may hang up before the last ping leaves
            for _ in range(30):
                ws.send('{"type": "ping"}')
        events: list[dict[str, Any]] = []
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                events.append(json.loads(ws.recv(timeout=10)))
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        assert events[-1]["type"] == "error" and events[-1]["code"] == "rate_limited" and events[-1]["fatal"]
        kinds = [e["type"] if e["type"] == "pong" else e["code"] for e in events[:-1]]
        assert kinds[:2] == ["pong", "rate_limited"] and set(kinds) == {"pong", "rate_limited"}, kinds
        assert len(kinds) < 10  # the burst of 1 and a notice (a second's refill on a slow machine), not 30 answers


def _error(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code


def test_sessions_in_all_and_per_key(serve: Callable[[ASGIApp], str]) -> None:
    base = serve(create_app(Settings(**LIGHT, max_sessions=3, max_sessions_per_key=2, api_keys=[KEY_A, KEY_B],
                                     auth_secret="s" * 32)))
    a, b = {"authorization": f"Bearer {KEY_A}"}, {"authorization": f"Bearer {KEY_B}"}
    made = [httpx.post(f"{base}/api/radio/sessions", json={}, headers=a, timeout=30) for _ in range(2)]
    assert [r.status_code for r in made] == [201, 201]
    _error(httpx.post(f"{base}/api/radio/sessions", json={}, headers=a, timeout=30), 429, "too_many_sessions")
    with _ws(base, additional_headers=a) as ws:  # the same limit over the socket, which stays open
        ws.send(json.dumps({"type": "session.start"}))
        error = _events(ws, lambda e: e["type"] == "error")[-1]
        assert error["code"] == "too_many_sessions" and error["fatal"] is False
        _pong_eventually(ws)
    assert httpx.post(f"{base}/api/radio/sessions", json={}, headers=b, timeout=30).status_code == 201
    _error(httpx.post(f"{base}/api/radio/sessions", json={}, headers=b, timeout=30), 503, "too_many_sessions")
    first = made[0].json()["session"]["id"]
    assert httpx.delete(f"{base}/api/radio/sessions/{first}", headers=a, timeout=10).status_code == 200
    assert httpx.post(f"{base}/api/radio/sessions", json={}, headers=a, timeout=30).status_code == 201


@pytest.fixture(scope="module")
def small_bodies() -> Any:
    from tests.conftest import run_server

    settings = Settings(**LIGHT, max_body_bytes=2000, max_audio_body_bytes=20_000)
    with run_server(create_app(settings)) as base:
        yield base, settings


def _chunks(size: int):  # a body without Content-Length (chunked), so the limit must hold while reading
    sent = 0
    while sent < size:
        yield b" " * 1000
        sent += 1000


@pytest.mark.parametrize("op", [op for op in OPERATIONS if op.method == "post"], ids=lambda op: op.operation_id)
def test_every_route_limits_its_body(op: Any, small_bodies: tuple[str, Settings]) -> None:
    base, settings = small_bodies
    session = httpx.post(f"{base}/api/radio/sessions", json={}, timeout=30).json()["session"]["id"]
    url = base + op.path.replace("{session_id}", session)
    limit = settings.max_audio_body_bytes if op.tag == "speech" else settings.max_body_bytes
    if op.operation_id == "webrtcOffer":  # an SDP offer has its own bound (gateway/webrtc/signaling.py)
        limit = OFFER_BODY_BYTES
    if op.body is None:  # reset reads no body: one sent anyway is ignored, not buffered
        assert httpx.post(url, content=b" " * (limit * 10), timeout=30).status_code == 200
        return
    over = b'{"text": "' + b"a" * limit + b'"}'
    _error(httpx.post(url, content=over, headers={"content-type": "application/json"}, timeout=30), 413,
           "payload_too_large")
    _error(httpx.post(url, content=_chunks(limit + 1000), timeout=30), 413, "payload_too_large")


# --------------------------------------------------------------------------- the slow reader


def _errors_counted(code: str) -> float:
    return metrics.ERRORS.labels("ws", code)._value.get()  # noqa: SLF001 - the process's own counter


def _wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """For a state change inside the server thread that no client can observe without reading."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.05)


def test_a_client_that_stops_reading_is_disconnected_and_costs_a_bounded_queue(
    serve: Callable[[ASGIApp], str],
) -> None:
    """The pilot asks for a clearance at 48 kHz output and then reads nothing: the controller's
    answer (about 0.8 MB of audio) does not fit the 128 KiB queue, so the connection ends with
    `slow_consumer` instead of waiting for the reader (or holding its audio), and the server
    serves another pilot meanwhile."""
    settings = Settings(**LIGHT, audio_pacing=False, ws_send_queue_bytes=128 * 1024)
    app = create_app(settings)
    assert isinstance(app, Starlette)
    base = serve(app)
    service = app.state.service
    before = _errors_counted("slow_consumer")

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a reader that holds almost nothing
    host, port = base.removeprefix("http://").split(":")
    sock.connect((host, int(port)))
    with connect(f"ws://{host}:{port}/v1/radio", sock=sock, open_timeout=10, max_size=None, max_queue=1) as slow:
        slow.send(json.dumps({"type": "session.start", "flow": "clearance", "seed": 4,
                              "output_audio": {"format": "pcm_s16le", "sample_rate": 48000, "channels": 1}}))
        _wait_until(lambda: len(service.session_ids()) == 1, 30, "the session started")
        session_id = service.session_ids()[0]
        slow.send(json.dumps({"type": "text", "text": "request IFR clearance"}))
        _wait_until(lambda: _errors_counted("slow_consumer") > before, 60, "the server gave up on the reader")
        _wait_until(lambda: service.hub.listeners(session_id) == 0, 30, "the connection let go of the session")

        with _ws(base) as other:  # everyone else is served all along
            other.send(json.dumps({"type": "session.start", "flow": "clearance"}))
            other.send(json.dumps({"type": "text", "text": "request IFR clearance"}))
            assert _events(other, lambda e: e["type"] == "decision")[-1]["to_state"]

        # the slow pilot reads at last: what was on the wire, then the end of the connection
        received: list[Any] = []
        with pytest.raises(ConnectionClosed):
            while True:
                received.append(slow.recv(timeout=30))
        events = [json.loads(f) for f in received if isinstance(f, str)]
        assert events[0]["type"] == "session.started"
        errors = [e for e in events if e["type"] == "error"]  # the last words, if they could still leave
        assert all(e["code"] == "slow_consumer" and e["fatal"] for e in errors), errors
        assert service.get(session_id).transmissions == 1  # the session itself is intact: resumable
