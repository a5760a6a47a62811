"""The Redis store's own behaviour, and the relay that carries decisions between gateway nodes.

Everything runs against a real redis-server on loopback (tests/support/redis_server.py); the
store's shared contract with the other stores is in tests/test_persistence.py, as is the test of
two `livefreq serve` nodes with one killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from engine.models import Decision
from gateway.app import create_app
from gateway.clock import scaled_clock
from gateway.hub import DecisionHub
from gateway.relay import DecisionRelay
from gateway.service import RadioService
from gateway.settings import Settings
from gateway.store import AtcEntry, MemorySessionRepository, StoredSession, StoreUnavailable
from gateway.store.redis import RedisSessionRepository
from tests.support.redis_server import RedisServer, ReplyCutter, require_redis_server

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = {"airport": "EDDF", "callsign": "DLH359"}


def _decisions() -> tuple[StoredSession, list[Decision]]:
    """A real session and four real decisions about it (start, then three transmissions)."""
    service = RadioService(Settings(store="memory"), repository=MemorySessionRepository())
    session, opening, _ = service.create(flow="clearance", scenario=SCENARIO, seed=7)
    decisions = [opening]
    for text in (opening.expected_pilot[0], "say again", "say again"):
        decisions.append(service.transmit(session.session_id, text))
    record = service.repository.get(session.session_id)
    assert record is not None
    return record, decisions


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --------------------------------------------------------------------------- the store


def test_a_save_whose_reply_was_lost_is_not_applied_twice(redis_url: str, redis_server: RedisServer) -> None:
    record, decisions = _decisions()
    cutter = ReplyCutter(redis_server.port)
    store = RedisSessionRepository(cutter.url, prefix="cut:")
    try:
        store.save(record, [], expect=0)  # the save script is now cached on the server
        lines = [AtcEntry(at=m.at, flow=m.flow, state=m.state, cause="transmit", seq=m.seq, message_id=m.message_id,
                          text=m.text, speech=m.speech) for m in decisions[1].messages]
        cutter.cut_next()  # the script runs, its reply is lost, redis-py reconnects and sends it again
        assert store.save(record, lines, expect=1) == 2  # recognised as done: no conflict
        assert cutter.cuts == 1
        assert store.read(record.session.session_id)[1] == 2
        assert store.transcript(record.session.session_id) == lines  # once, not twice
    finally:
        store.close()
        cutter.close()


def test_nodes_share_one_scenario_clock(redis_url: str) -> None:
    wall = [100.0]
    a, b = RedisSessionRepository(redis_url), RedisSessionRepository(redis_url)
    clock_a = scaled_clock(10, base=lambda: wall[0], anchor=a.clock_anchor(10, wall[0]))
    wall[0] = 105.0  # the second node starts later: it reads the same scenario time
    clock_b = scaled_clock(10, base=lambda: wall[0], anchor=b.clock_anchor(10, wall[0]))
    assert clock_a() == clock_b() == 150.0
    a.close()
    b.close()


def test_a_redis_that_does_not_answer_is_store_unavailable(tmp_path: Path) -> None:
    server = RedisServer(require_redis_server())
    store = RedisSessionRepository(server.url, timeout_s=0.5)
    store.put(_decisions()[0])
    server.stop()
    with pytest.raises(StoreUnavailable, match="did not answer"):
        store.ids()
    store.close()
    with pytest.raises(StoreUnavailable, match=f"redis://127.0.0.1:{server.port}/0"):
        RedisSessionRepository(server.url)  # at start-up: with the URL (password hidden)

    # `livefreq serve` says so and exits, instead of serving without its sessions
    env = {**os.environ, "LIVEFREQ_STORE": "redis", "LIVEFREQ_REDIS_URL": f"redis://:secret@127.0.0.1:{server.port}/0",
           "LIVEFREQ_SPEECH_PRELOAD": "false"}
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "livefreq"), "serve", "--port", str(_free_port())],
                          env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode != 0
    assert "did not answer" in done.stderr and "secret" not in done.stderr


# --------------------------------------------------------------------------- the app on Redis


def test_the_app_reports_its_store_and_answers_503_when_redis_is_gone(serve) -> None:
    server = RedisServer(require_redis_server())
    try:
        settings = Settings(store="redis", redis_url=server.url, node_id="node-7", speech_preload=False)
        base = serve(create_app(settings))
        health = httpx.get(f"{base}/health").json()
        assert health["store"] == {"kind": "redis", "node": "node-7"} and health["sessions"] == 0
        created = httpx.post(f"{base}/api/radio/sessions", json={"flow": "clearance", "scenario": SCENARIO})
        assert created.status_code == 201
        server.stop()
        for answer in (httpx.get(f"{base}/health"), httpx.post(f"{base}/api/radio/sessions", json={})):
            assert answer.status_code == 503
            assert answer.json()["error"]["code"] == "store_unavailable"
    finally:
        server.stop()


def test_the_radio_socket_says_store_unavailable_and_stays_open_when_redis_is_gone(serve) -> None:
    """Over the WebSocket a store that does not answer is its own typed error (not `internal`),
    and the connection keeps serving: the pilot can send again once the store is back."""
    from gateway.client.ws import RadioClient

    server = RedisServer(require_redis_server())
    try:
        settings = Settings(store="redis", redis_url=server.url, speech_preload=False, stt_engine="sphinx", tts_engine="espeak")
        base = serve(create_app(settings))

        async def run() -> None:
            client = await RadioClient.connect(base)
            try:
                await client.send({"type": "session.start", "flow": "clearance", "scenario": SCENARIO})
                await client.wait_type("session.started", 30)
                server.stop()
                mark = client.mark()
                await client.send({"type": "text", "text": "radio check"})
                error = await client.wait_type("error", 30, start=mark)
                assert error["code"] == "store_unavailable" and not error["fatal"]
                mark = client.mark()
                await client.send({"type": "ping"})
                await client.wait_type("pong", 30, start=mark)  # the socket still serves
                assert not client.closed
            finally:
                await client.close()

        asyncio.run(run())
    finally:
        server.stop()


# --------------------------------------------------------------------------- the relay


def test_the_relay_delivers_each_decision_once_on_every_node(redis_url: str) -> None:
    _, (d1, d2, d3, d4) = _decisions()

    async def run() -> None:
        hub_a, hub_b = DecisionHub(), DecisionHub()
        relay_a = DecisionRelay(hub_a, redis_url, "t:decisions", "node-a")
        relay_b = DecisionRelay(hub_b, redis_url, "t:decisions", "node-b")
        await relay_a.start()
        await relay_b.start()
        try:
            on_a, on_b, elsewhere = hub_a.subscribe("s1"), hub_b.subscribe("s1"), hub_b.subscribe("s2")
            hub_a.publish("s1", d1)  # decided on a
            hub_a.publish("s1", d2)
            await relay_a.flush()  # published: a's own copies now come back before anything later
            assert [await asyncio.wait_for(on_b.get(), 10) for _ in range(2)] == [d1, d2]  # in order

            hub_b.publish("s1", d3)  # decided on b
            await relay_b.flush()
            assert [on_a.get_nowait(), on_a.get_nowait()] == [d1, d2]  # a's listener had its own at once
            assert await asyncio.wait_for(on_a.get(), 10) == d3
            assert on_a.empty()  # a's own two came back before d3, and were dropped

            assert on_b.get_nowait() == d3
            await relay_a._publisher.publish("t:decisions", b"not a decision")  # the channel is not ours alone
            await relay_a._publisher.publish("t:decisions", b"node-x\ns1\n{broken")
            hub_a.publish("s1", d4)
            assert await asyncio.wait_for(on_b.get(), 10) == d4
            assert on_b.empty() and elsewhere.empty()  # b's own d3 came back before d4: dropped
            assert (relay_a.relayed_in, relay_b.relayed_in, relay_a.dropped, relay_b.dropped) == (1, 3, 0, 0)
        finally:
            await relay_a.stop()
            await relay_b.stop()
        assert hub_a.relay is None and hub_b.relay is None

    asyncio.run(run())


def test_the_relay_carries_on_after_redis_restarts() -> None:
    binary = require_redis_server()
    _, (d1, d2, _, _) = _decisions()
    server = RedisServer(binary)
    servers = [server]

    async def run() -> None:
        hub_a, hub_b = DecisionHub(), DecisionHub()
        relay_a = DecisionRelay(hub_a, server.url, "t:decisions", "node-a")
        relay_b = DecisionRelay(hub_b, server.url, "t:decisions", "node-b")
        await relay_a.start()
        await relay_b.start()
        on_b = hub_b.subscribe("s1")
        try:
            server.stop()  # Redis goes away and comes back on the same port
            hub_a.publish("s1", d1)  # relayed while down: lost live (it is in the store)
            await relay_a.flush()
            assert relay_a.dropped == 1
            servers.append(RedisServer(binary, port=server.port))
            for _ in range(60):  # until b has subscribed again (redis-py reconnects on its next read)
                hub_a.publish("s1", d2)
                await relay_a.flush()
                with contextlib.suppress(TimeoutError):
                    assert await asyncio.wait_for(on_b.get(), 0.5) == d2
                    break
            else:
                raise AssertionError("the relay did not reconnect")
        finally:
            await relay_a.stop()
            await relay_b.stop()

    try:
        asyncio.run(run())
    finally:
        for s in servers:
            s.stop()


def test_without_redis_server_the_tests_skip_outside_ci_and_fail_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="install-system-deps.sh"):
        require_redis_server()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must have it"):
        require_redis_server()
