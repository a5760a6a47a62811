"""Persistence: the session stores, and a gateway killed with SIGKILL that resumes with nothing lost.

The repository tests run on every store (one protocol: memory, SQLite, and Redis on a real
redis-server on loopback); the SQLite ones also reopen the file. The service tests restart a
`RadioService` on the same file with a virtual clock. The kill tests run the real `livefreq serve`
as subprocesses and drive a session over HTTP into an interrupt flow with a silence prompt
pending: one gateway on SQLite is killed with SIGKILL and started again on the same database; two
gateways on one Redis share the session, one is killed and the other carries on. Each checks the
session, the transcript, `session.resume` over the WebSocket and that the timer fires once.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from engine.models import ControllerMessage, FlowFrame, Session
from gateway.clock import scaled_clock
from gateway.service import RadioService, SessionNotFound, TooManySessions
from gateway.settings import Settings
from gateway.store import (
    AtcEntry,
    MemorySessionRepository,
    PilotEntry,
    SessionRepository,
    SqliteSessionRepository,
    StoredSession,
    StoreError,
    VersionConflict,
)
from gateway.store.redis import RedisSessionRepository
from gateway.store.sqlite import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]
LIVEFREQ = ROOT / ".venv" / "bin" / "livefreq"
SCENARIO = {"airport": "EDDF", "callsign": "DLH359"}
MAYDAY = "Mayday mayday mayday, Lufthansa 359, engine failure"
PROMPT = "how do you read?"
T = TypeVar("T")


# --------------------------------------------------------------------------- helpers


def _record(session_id: str = "s1", *, state: str = "A", token: str = "tok", touched: float = 10.0) -> StoredSession:
    session = Session(
        session_id=session_id,
        main_flow="clearance",
        active=FlowFrame(flow="clearance", state=state),
        flow_stack=[FlowFrame(flow="taxi_out", state="TX_HOLD")],
        variables={"callsign": "DLH359", "squawk": "4721", "qnh": 1013},
        flags={"cleared": True},
        message_history=[
            ControllerMessage(message_id=f"{session_id}-m1", seq=1, template="t", text="hello", speech="hello")
        ],
    )
    return StoredSession(session=session, resume_token=token, touched_at=touched)


def _atc(seq: int, text: str = "roger") -> AtcEntry:
    return AtcEntry(at=float(seq), flow="clearance", state="A", cause="transmit", seq=seq, message_id=f"m{seq}",
                    text=text, speech=text)


def _pilot(text: str) -> PilotEntry:
    return PilotEntry(at=1.0, flow="clearance", state="A", text=text, transmission_id="s1-x1", intent="request")


def _open(kind: str, request: pytest.FixtureRequest, tmp_path: Path, **options: Any) -> SessionRepository:
    if kind == "memory":
        return MemorySessionRepository(**options)
    if kind == "sqlite":
        return SqliteSessionRepository(tmp_path / f"s{len(list(tmp_path.iterdir()))}.sqlite3", **options)
    return RedisSessionRepository(request.getfixturevalue("redis_url"), prefix=f"t{len(options)}:", **options)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionRepository]:
    store = _open(request.param, request, tmp_path)
    yield store
    store.close()


# --------------------------------------------------------------------------- repositories


def test_round_trip_returns_an_equal_copy(repo: SessionRepository) -> None:
    record = _record()
    repo.put(record)
    got = repo.get("s1")
    assert got == record
    got.session.variables["squawk"] = "7700"  # a copy: the store does not change until put
    assert repo.get("s1").session.variables["squawk"] == "4721"
    assert repo.get("nope") is None


def test_put_replaces_and_ids_lists_every_session(repo: SessionRepository) -> None:
    repo.put(_record("a"))
    repo.put(_record("b"))
    repo.put(_record("a", state="B", token="new", touched=20.0))
    assert sorted(repo.ids()) == ["a", "b"]
    got = repo.get("a")
    assert (got.session.active.state, got.resume_token, got.touched_at) == ("B", "new", 20.0)


def test_owners_are_stored_and_counted(repo: SessionRepository) -> None:
    """`StoredSession.owner` (the API key that created the session) round-trips, and `owned`
    counts a key's sessions for the sessions-per-key limit, on every store."""
    for sid, owner in (("a", "school-1"), ("b", "school-1"), ("c", "school-2"), ("d", None)):
        repo.save(_record(sid).model_copy(update={"owner": owner}), [], expect=0)
    assert repo.get("a").owner == "school-1" and repo.get("d").owner is None
    assert (repo.owned("school-1"), repo.owned("school-2"), repo.owned("nobody")) == (2, 1, 0)
    repo.save(_record("a", state="B").model_copy(update={"owner": "school-1"}), [])  # a later decision
    assert repo.owned("school-1") == 2
    assert repo.delete("b")
    assert repo.owned("school-1") == 1


def test_transcript_keeps_the_order_of_appends(repo: SessionRepository) -> None:
    repo.put(_record())
    repo.save(_record(), [_pilot("request clearance"), _atc(1, "cleared")])
    repo.append_transcript("s1", [_pilot("readback"), _atc(2, "correct")])
    repo.append_transcript("s1", [])
    lines = repo.transcript("s1")
    assert [type(e) for e in lines] == [PilotEntry, AtcEntry, PilotEntry, AtcEntry]
    assert [e.text for e in lines] == ["request clearance", "cleared", "readback", "correct"]
    assert lines[1] == _atc(1, "cleared")
    assert repo.transcript("other") == []


def test_delete_drops_the_session_and_its_transcript(repo: SessionRepository) -> None:
    repo.save(_record("a"), [_atc(1)])
    repo.save(_record("b"), [_atc(1)])
    assert repo.delete("a") is True
    assert repo.delete("a") is False
    assert repo.get("a") is None and repo.transcript("a") == []
    assert repo.ids() == ["b"] and len(repo.transcript("b")) == 1


def test_delivered_seq_only_moves_forward(repo: SessionRepository) -> None:
    repo.put(_record())
    repo.set_delivered("s1", 5)
    repo.set_delivered("s1", 3)
    assert repo.get("s1").delivered_seq == 5
    repo.put(_record())  # a copy loaded before the delivery, put back, does not un-deliver
    assert repo.get("s1").delivered_seq == 5
    repo.set_delivered("unknown", 9)
    assert repo.get("unknown") is None


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
def test_long_transcripts_keep_the_newest_lines(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    store = _open(kind, request, tmp_path, max_transcript=3)
    store.put(_record())
    store.append_transcript("s1", [_atc(1), _atc(2)])
    store.append_transcript("s1", [_atc(3), _atc(4), _atc(5)])
    assert [e.seq for e in store.transcript("s1")] == [3, 4, 5]
    store.save(_record(), [_atc(6), _atc(7)])  # save trims too
    assert [e.seq for e in store.transcript("s1")] == [5, 6, 7]
    store.close()


def test_save_checks_the_version_it_was_given(repo: SessionRepository) -> None:
    assert repo.read("s1") is None
    assert repo.save(_record(state="A"), [_atc(1)], expect=0) == 1  # 0: must not exist yet
    record, version = repo.read("s1")
    assert (record.session.active.state, version) == ("A", 1)
    assert repo.save(_record(state="B"), [_atc(2)], expect=version) == 2
    # a writer that read version 1 is too late: nothing of its write is stored
    with pytest.raises(VersionConflict):
        repo.save(_record(state="C"), [_atc(3)], expect=version)
    with pytest.raises(VersionConflict):
        repo.save(_record(state="C"), [_atc(3)], expect=0)
    assert repo.read("s1")[0].session.active.state == "B"
    assert [e.seq for e in repo.transcript("s1")] == [1, 2]
    repo.put(_record(state="D"))  # no expectation: last writer wins, the version still moves
    assert (repo.get("s1").session.active.state, repo.read("s1")[1]) == ("D", 3)
    assert repo.read("s1")[0] == repo.get("s1")


def test_due_sessions_are_leased_to_one_holder(repo: SessionRepository) -> None:
    repo.save(_record("a"), [], wake_at=5.0)
    repo.save(_record("b"), [], wake_at=10.0)
    repo.save(_record("c"), [])  # nothing scheduled
    assert repo.due(4.9, "n1", 30) == []
    assert repo.due(7.0, "n1", 30) == ["a"]
    assert repo.due(7.0, "n2", 30) == []  # n1 is ticking it
    repo.release("a", "n2")  # not n2's lease: nothing happens
    assert repo.due(7.0, "n2", 30) == []
    repo.release("a", "n1")
    assert repo.due(10.0, "n2", 30) == ["a", "b"]  # earliest first
    assert repo.due(10.0, "n1", 30) == []
    repo.release("a", "n2")
    repo.save(_record("a"), [], wake_at=None)  # its timers fired: unscheduled
    assert repo.due(100.0, "n1", 30) == []  # b is still n2's
    repo.release("b", "n2")
    assert repo.due(100.0, "n1", 30, limit=1) == ["b"]
    assert repo.delete("b") and repo.due(100.0, "n2", 30) == []


def test_an_expired_lease_can_be_taken(repo: SessionRepository) -> None:
    repo.save(_record("a"), [], wake_at=1.0)
    assert repo.due(2.0, "dead-node", 0.05) == ["a"]  # claimed by a node that then died
    assert poll(lambda: repo.due(2.0, "n2", 30) or None, 10, "the lease to run out") == ["a"]


def test_idle_lists_sessions_touched_before_a_time(repo: SessionRepository) -> None:
    repo.save(_record("a", touched=10.0), [])
    repo.save(_record("b", touched=20.0), [])
    assert repo.idle(10.0) == []  # strictly before
    assert repo.idle(15.0) == ["a"]
    assert sorted(repo.idle(25.0)) == ["a", "b"]
    repo.save(_record("a", touched=30.0), [])
    assert repo.idle(25.0) == ["b"]
    repo.delete("b")
    assert repo.idle(25.0) == [] and len(repo) == 1


def test_sqlite_reopens_what_it_stored(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "livefreq.sqlite3"  # directories are created
    with SqliteSessionRepository(path) as store:
        store.save(_record("a"), [_pilot("one"), _atc(1)])
        store.save(_record("b"), [])
        store.set_delivered("a", 1)
    with SqliteSessionRepository(path) as store:
        assert store.ids() == ["a", "b"]
        assert store.get("a") == _record("a").model_copy(update={"delivered_seq": 1})
        assert [e.text for e in store.transcript("a")] == ["one", "roger"]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_sqlite_save_is_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SqliteSessionRepository(tmp_path / "s.sqlite3")
    store.save(_record(state="A"), [_atc(1)])

    def broken(session_id: str, lines: list[str]) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(store, "_append", broken)
    with pytest.raises(sqlite3.OperationalError):
        store.save(_record(state="B"), [_atc(2)])
    monkeypatch.undo()
    assert store.get("s1").session.active.state == "A"  # neither the session nor the line
    assert [e.seq for e in store.transcript("s1")] == [1]
    store.save(_record(state="C"), [_atc(3)])  # and the store still works
    assert store.get("s1").session.active.state == "C"
    store.close()


def test_sqlite_admits_one_process_per_file_and_refuses_newer_schemas(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    first = SqliteSessionRepository(path)
    with pytest.raises(StoreError, match="another livefreq process"):
        SqliteSessionRepository(path)
    first.close()
    SqliteSessionRepository(path).close()  # the lock went with the first store
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="schema version"):
        SqliteSessionRepository(path)
    SqliteSessionRepository(tmp_path / "other.sqlite3").close()  # a failed open left no lock behind


# The schema of livefreq's first SQLite files (version 1), as that release created them.
_SCHEMA_V1 = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, session TEXT NOT NULL, resume_token TEXT NOT NULL,
    touched_at REAL NOT NULL, delivered_seq INTEGER NOT NULL DEFAULT 0, updated REAL NOT NULL);
CREATE TABLE transcript (n INTEGER PRIMARY KEY, session_id TEXT NOT NULL, entry TEXT NOT NULL);
CREATE INDEX transcript_session ON transcript (session_id, n);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
PRAGMA user_version = 1;
"""


def test_sqlite_upgrades_a_version_1_file_to_owners(tmp_path: Path) -> None:
    """Sessions gained an owner (the API key that created them, schema 3): an old file opens, its
    sessions and transcripts intact and ownerless, and new owners are stored."""
    path = tmp_path / "old.sqlite3"
    old = _record("old")
    with sqlite3.connect(path) as db:
        db.executescript(_SCHEMA_V1)
        db.execute(
            "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
            ("old", old.session.model_dump_json(), old.resume_token, old.touched_at, 2, 1.0),
        )
        db.execute("INSERT INTO transcript (session_id, entry) VALUES (?, ?)", ("old", _atc(1).model_dump_json()))
    with SqliteSessionRepository(path) as store:
        assert store.get("old") == old.model_copy(update={"delivered_seq": 2, "owner": None})
        assert [e.seq for e in store.transcript("old")] == [1]
        store.save(_record("new").model_copy(update={"owner": "school-1"}), [])
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    with SqliteSessionRepository(path) as store:  # reopening a current file changes nothing
        assert store.get("new").owner == "school-1" and store.get("old").owner is None


def test_owners_survive_a_restart_and_count_per_key(tmp_path: Path) -> None:
    settings = Settings(sqlite_path=tmp_path / "s.sqlite3", max_sessions_per_key=2)
    with SqliteSessionRepository(settings.sqlite_path) as store:
        service = RadioService(settings, repository=store)
        for _ in range(2):
            service.create(flow="clearance", owner="school-1")
        ids = service.session_ids()
    with SqliteSessionRepository(settings.sqlite_path) as store:
        service = RadioService(settings, repository=store)  # counted in the file
        assert {service.owner_of(sid) for sid in ids} == {"school-1"}
        with pytest.raises(TooManySessions) as refused:
            service.create(flow="clearance", owner="school-1")
        assert refused.value.status == 429
        service.create(flow="clearance", owner="school-2")


def test_scenario_clock_continues_across_restarts(tmp_path: Path) -> None:
    wall = [100.0]
    path = tmp_path / "s.sqlite3"
    with SqliteSessionRepository(path) as store:
        clock = scaled_clock(10, base=lambda: wall[0], anchor=store.clock_anchor(10, wall[0]))
        wall[0] = 110.0
        assert clock() == 200.0
    wall[0] = 120.0  # 10 s down: compressed like any other wait
    with SqliteSessionRepository(path) as store:
        clock = scaled_clock(10, base=lambda: wall[0], anchor=store.clock_anchor(10, wall[0]))
        assert clock() == 300.0  # a fresh clock would read 120: every stored timer held back
    wall[0] = 130.0
    with SqliteSessionRepository(path) as store:  # another scale: continues from where it is
        clock = scaled_clock(1, base=lambda: wall[0], anchor=store.clock_anchor(1, wall[0]))
        assert clock() == 400.0
        wall[0] = 131.0
        assert clock() == 401.0


# --------------------------------------------------------------------------- the service on SQLite


class Clock:
    def __init__(self, t: float = 1_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def registry():
    return RadioService(Settings(store="memory")).registry


def _service(registry: Any, path: Path, clock: Clock, ttl: float = 7200.0) -> RadioService:
    return RadioService(
        Settings(session_ttl_s=ttl), registry=registry, clock=clock, repository=SqliteSessionRepository(path)
    )


def _prompts(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e["role"] == "atc" and e["cause"] == "tick" and PROMPT in e["text"]]


def test_a_timer_due_while_the_service_was_down_fires_once_after_restart(registry: Any, tmp_path: Path) -> None:
    path, clock = tmp_path / "s.sqlite3", Clock()
    service = _service(registry, path, clock)
    session, opening, token = service.create(flow="clearance", scenario=SCENARIO, seed=7)
    sid = session.session_id
    service.transmit(sid, opening.expected_pilot[0])  # the clearance: the pilot's readback is due
    clock.t += 16
    assert [d.intent for _, d in service.tick_all()] == ["silence_prompt"]
    before, stored = service.transcript(sid), service.get(sid)
    service.repository.close()  # the process ends

    clock.t += 30  # the second prompt fell due while nothing ran
    again = _service(registry, path, clock)
    assert again.check_token(sid, token)
    assert again.transcript(sid) == before
    assert again.get(sid) == stored  # state, variables, flags, stack, timers: all of it
    fired = again.tick_all()
    assert [(s, d.intent) for s, d in fired] == [(sid, "silence_prompt")]  # the pending one, once
    assert again.tick_all() == []
    after = again.transcript(sid)
    assert after[: len(before)] == before and len(after) == len(before) + 1
    assert len(_prompts(after)) == 2
    again.repository.close()


def test_delivered_messages_survive_a_restart(registry: Any, tmp_path: Path) -> None:
    path, clock = tmp_path / "s.sqlite3", Clock()
    service = _service(registry, path, clock)
    session, opening, _ = service.create(flow="clearance", scenario=SCENARIO, seed=7)
    reply = service.transmit(session.session_id, opening.expected_pilot[0])
    delivered = reply.messages[-1].seq  # an HTTP caller got it in the response
    assert service.delivered_seq(session.session_id) == delivered
    clock.t += 16
    service.tick_all()  # nobody listened: the prompt stays undelivered
    service.repository.close()
    again = _service(registry, path, clock)
    assert again.delivered_seq(session.session_id) == delivered
    again.mark_delivered(session.session_id, delivered + 1)
    again.repository.close()
    assert _service(registry, path, clock).delivered_seq(session.session_id) == delivered + 1


def test_expiry_deletes_from_sqlite_also_after_a_restart(registry: Any, tmp_path: Path) -> None:
    path, clock = tmp_path / "s.sqlite3", Clock()
    service = _service(registry, path, clock, ttl=60)
    old, _, _ = service.create(flow="clearance", scenario=SCENARIO, seed=1)
    clock.t += 61
    service.tick_all()
    assert service.repository.ids() == [] and service.repository.transcript(old.session_id) == []

    service.create(flow="clearance", scenario=SCENARIO, seed=2)
    service.create(flow="clearance", scenario=SCENARIO, seed=3)
    service.repository.close()
    clock.t += 61  # both expired while nothing ran
    again = _service(registry, path, clock, ttl=60)
    assert len(again.repository.ids()) == 2
    again.tick_all()
    assert again.repository.ids() == []
    again.repository.close()


def test_a_schema_1_file_is_migrated_and_its_timers_still_fire(registry: Any, tmp_path: Path) -> None:
    path, clock = tmp_path / "s.sqlite3", Clock()
    service = _service(registry, path, clock)
    session, opening, _ = service.create(flow="clearance", scenario=SCENARIO, seed=7)
    service.transmit(session.session_id, opening.expected_pilot[0])  # a silence prompt is armed
    service.repository.close()
    with sqlite3.connect(path) as db:  # what livefreq wrote before the version, wake-up and owner columns
        for statement in ("DROP INDEX sessions_owner", "ALTER TABLE sessions DROP COLUMN owner",
                          "DROP INDEX sessions_wake", "DROP INDEX sessions_touched",
                          "ALTER TABLE sessions DROP COLUMN wake_at", "ALTER TABLE sessions DROP COLUMN version",
                          "PRAGMA user_version = 1"):
            db.execute(statement)
    db.close()

    clock.t += 16
    again = _service(registry, path, clock)
    assert again.repository.read(session.session_id)[1] == 0
    assert [d.intent for _, d in again.tick_all()] == ["silence_prompt"]  # visited, and re-indexed
    assert again.tick_all() == []
    clock.t += 16
    assert [d.intent for _, d in again.tick_all()] == ["silence_prompt"]
    again.repository.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()


# --------------------------------------------------------------------------- two services on one Redis


def _node(registry: Any, url: str, clock: Clock, name: str, ttl: float = 7200.0) -> RadioService:
    """A `RadioService` as one gateway node runs it on the Redis store."""
    return RadioService(
        Settings(session_ttl_s=ttl, node_id=name), registry=registry, clock=clock,
        repository=RedisSessionRepository(url, prefix="nodes:"),
    )


def test_session_limits_hold_for_all_nodes_together(registry: Any, redis_url: str) -> None:
    """Sessions per API key and in all are counted in the shared store, not per node."""
    settings = Settings(max_sessions=3, max_sessions_per_key=2)
    a, b = (
        RadioService(settings.model_copy(update={"node_id": name}), registry=registry, clock=Clock(),
                     repository=RedisSessionRepository(redis_url, prefix="limits:"))
        for name in ("a", "b")
    )
    a.create(flow="clearance", owner="school-1")
    b.create(flow="clearance", owner="school-1")
    with pytest.raises(TooManySessions) as per_key:
        a.create(flow="clearance", owner="school-1")
    assert per_key.value.status == 429
    b.create(flow="clearance", owner="school-2")
    with pytest.raises(TooManySessions) as full:
        a.create(flow="clearance", owner="school-3")
    assert full.value.status == 503
    for node in (a, b):
        node.repository.close()


def test_two_nodes_share_sessions_and_fire_each_timer_once(registry: Any, redis_url: str) -> None:
    clock = Clock()
    a, b = _node(registry, redis_url, clock, "a"), _node(registry, redis_url, clock, "b")
    session, opening, token = a.create(flow="clearance", scenario=SCENARIO, seed=7)
    sid = session.session_id
    assert b.check_token(sid, token) and b.get(sid) == a.get(sid)
    b.transmit(sid, opening.expected_pilot[0])  # decided on b, seen on a
    assert a.get(sid).active.state == "CD_READBACK" and a.transcript(sid) == b.transcript(sid)

    clock.t += 16  # the silence prompt is due; a is ticking it when b's clock runs
    assert a.repository.due(clock.t, a.node, 30) == [sid]
    assert b.tick_all() == []
    a.repository.release(sid, a.node)
    fired = b.tick_all() + a.tick_all()  # both clocks run: one of them fires it
    assert [(s, d.intent) for s, d in fired] == [(sid, "silence_prompt")]
    assert a.tick_all() == [] and b.tick_all() == []
    assert len(_prompts(a.transcript(sid))) == 1

    b.mark_delivered(sid, 4)  # delivery, made on b, is known on a
    assert a.delivered_seq(sid) == 4
    for node in (a, b):
        node.repository.close()


def test_a_decision_interrupted_by_another_node_is_decided_again(registry: Any, redis_url: str) -> None:
    clock = Clock()
    a, b = _node(registry, redis_url, clock, "a"), _node(registry, redis_url, clock, "b")
    session, opening, _ = a.create(flow="clearance", scenario=SCENARIO, seed=7)
    sid, request = session.session_id, opening.expected_pilot[0]
    seen: list[str] = []

    def racing(s: Session, now: float) -> Any:
        seen.append(s.active.state)
        if len(seen) == 1:  # while a decides, b stores the same transmission first
            b.transmit(sid, request)
        return a.engine.transmit(s, "say again", now)

    decision = a._act(sid, racing)
    # a's first decision was made on a stale copy: refused by the store, decided again on b's
    assert seen == [opening.to_state, "CD_READBACK"]
    assert decision.from_state == "CD_READBACK"
    pilot = [e["text"] for e in a.transcript(sid) if e["role"] == "pilot"]
    assert pilot == [request, "say again"]  # each once, in the order they were stored
    for node in (a, b):
        node.repository.close()


def test_expiry_on_one_node_is_expiry_on_all(registry: Any, redis_url: str) -> None:
    clock = Clock()
    a, b = _node(registry, redis_url, clock, "a", ttl=60), _node(registry, redis_url, clock, "b", ttl=60)
    old, _, _ = a.create(flow="clearance", scenario=SCENARIO, seed=1)
    clock.t += 30
    kept, _, _ = a.create(flow="clearance", scenario=SCENARIO, seed=2)
    clock.t += 31
    b.tick_all()
    assert b.session_ids() == [kept.session_id] and a.count() == 1
    with pytest.raises(SessionNotFound):
        a.get(old.session_id)
    for node in (a, b):
        node.repository.close()


# --------------------------------------------------------------------------- kill -9


class Gateway:
    """`livefreq serve` in a subprocess; `store` are its LIVEFREQ_STORE... variables. With
    `wait=False` it is started but not waited for (call `ready`), so two nodes start at once."""

    # uvicorn's exit status when it cannot start, as when another test took the free port probed
    # for it in between (two pytest-xdist workers): started again on another port, a few times
    STARTUP_FAILURE = 3
    STARTS = 3

    def __init__(self, log: Path, *, wait: bool = True, **store: str) -> None:
        self.starts = 0
        self.env = {
            **os.environ,
            **store,
            "LIVEFREQ_SPEECH_PRELOAD": "false",
            "LIVEFREQ_TIME_SCALE": store.get("LIVEFREQ_TIME_SCALE", "8"),  # a 15 s silence prompt every ~1.9 s
            "LIVEFREQ_TICK_INTERVAL_S": "0.05",
            "LIVEFREQ_TTS_ENGINE": "espeak",  # replayed calls are spoken: the quick voice
            "LIVEFREQ_AUDIO_PACING": "false",
            "LIVEFREQ_FLOWS_DIR": str(ROOT / "flows"),
        }
        self.log = log.open("ab")
        self._start()
        if wait:
            self.ready()

    def _start(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.starts += 1
        self.proc = subprocess.Popen(
            [str(LIVEFREQ), "serve", "--port", str(self.port), "--log-level", "warning"],
            stdout=self.log, stderr=subprocess.STDOUT, env=self.env, cwd=ROOT,
        )
        self.http = httpx.Client(base_url=self.base, timeout=10)

    def ready(self) -> None:
        """Until it answers `/health` (or exits: an error)."""
        poll(self._healthy, 30, "the gateway to start")

    def _healthy(self) -> bool | None:
        if self.proc.poll() is not None:
            if self.proc.returncode == self.STARTUP_FAILURE and self.starts < self.STARTS:
                self.http.close()
                self._start()  # its port taken meanwhile: another one
                return None
            raise RuntimeError(f"the gateway exited with {self.proc.returncode}")
        try:
            return self.http.get("/health").status_code == 200 or None
        except httpx.TransportError:
            return None

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        assert self.proc.wait(timeout=10) == -signal.SIGKILL
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.http.close()
        self.log.close()


def poll(check: Callable[[], T | None], timeout: float, what: str) -> T:
    """`check()` until it returns something (bounded wait: the only sleeping in these tests)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {timeout:g} s")
        time.sleep(0.05)


def _stored(db: Path, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What is on disk: the session and its transcript, read with plain sqlite3."""
    with sqlite3.connect(db) as conn:
        session = json.loads(conn.execute("SELECT session FROM sessions WHERE id = ?", (session_id,)).fetchone()[0])
        lines = [json.loads(r[0]) for r in conn.execute("SELECT entry FROM transcript WHERE session_id = ? ORDER BY n", (session_id,))]
    conn.close()
    return session, lines


async def _resume(
    base: str, session_id: str, token: str, cancel: str, replays: int = 2
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """Resume over the WebSocket; returns session.started, the `replays` replayed calls, the state after `cancel`."""
    from tooling.voicekit import RadioClient

    client = await RadioClient.connect(base)
    try:
        await client.send({"type": "session.resume", "session_id": session_id, "resume_token": "wrong"})
        await client.wait_type("error", timeout=10, code="bad_token")
        await client.send({"type": "session.resume", "session_id": session_id, "resume_token": token})
        started = await client.wait_type("session.started", timeout=20)
        ends = lambda: sum(e["type"] == "atc.message.end" for e in client.rx.events)
        await client.until(lambda: True if ends() >= replays else None, 20, f"{replays} replayed call(s)")
        replayed = [e for e in client.rx.events if e["type"] == "atc.message"]
        mark = client.mark()
        await client.send({"type": "text", "text": cancel})
        state = await client.wait_for(lambda e: e["type"] == "state" and e["flow"] != "emergency", timeout=20, start=mark)
        return started, replayed, state
    finally:
        await client.close()


def test_kill_9_mid_session_and_resume_with_nothing_lost(tmp_path: Path) -> None:
    db, log = tmp_path / "livefreq.sqlite3", tmp_path / "gateway.log"
    first = Gateway(log, LIVEFREQ_STORE="sqlite", LIVEFREQ_SQLITE_PATH=str(db))
    try:
        reply = first.http.post("/api/radio/sessions", json={"flow": "clearance", "scenario": SCENARIO, "seed": 7})
        assert reply.status_code == 201, reply.text
        sid, token = reply.json()["session"]["id"], reply.json()["resume_token"]
        clearance = first.http.post(f"/api/radio/sessions/{sid}/transmissions", json={"text": reply.json()["expected_pilot"][0]})
        assert clearance.json()["session"]["state"] == "CD_READBACK"
        # MAYDAY in the middle of the readback: the emergency flow stacks the clearance
        mayday = first.http.post(f"/api/radio/sessions/{sid}/transmissions", json={"text": MAYDAY}).json()
        assert (mayday["session"]["flow"], mayday["session"]["state"]) == ("emergency", "EM_DETAILS")
        assert mayday["session"]["flow_stack"] == [{"flow": "clearance", "state": "CD_READBACK", "mode": "main", "return_to": None}]
        cancel = next(p for p in mayday["expected_pilot"] if "cancel" in p.lower())
        delivered = mayday["messages"][-1]["seq"]

        def transcript(http: httpx.Client) -> list[dict[str, Any]]:
            answer = http.get(f"/api/radio/sessions/{sid}/transcript")
            assert answer.status_code == 200
            return answer.json()["entries"]

        def prompted(http: httpx.Client, n: int) -> Callable[[], list[dict[str, Any]] | None]:
            def check() -> list[dict[str, Any]] | None:
                lines = transcript(http)
                return lines if len(_prompts(lines)) >= n else None

            return check

        # the pilot stays silent: the first "how do you read?" comes from the server's clock
        poll(prompted(first.http, 1), 20, "silence prompt")
        view, before = first.http.get(f"/api/radio/sessions/{sid}").json()["session"], transcript(first.http)
        first.kill()
    finally:
        first.close()

    # what the killed process left on disk is what it had answered: nothing lost
    on_disk, lines = _stored(db, sid)
    assert lines == before
    assert len(_prompts(lines)) == 1, "the second prompt fired before the kill: the test machine is too slow"
    pending = [t for t in on_disk["timers"] if not t["consumed"] and not t["cancelled"]]
    assert [(t["kind"], t["state"]) for t in pending] == [("silence", "EM_DETAILS")]

    second = Gateway(log, LIVEFREQ_STORE="sqlite", LIVEFREQ_SQLITE_PATH=str(db))
    try:
        again = second.http.get(f"/api/radio/sessions/{sid}").json()["session"]
        for key in ("flow", "state", "variables", "flags", "flow_stack", "parallel_flows", "main_flow", "seed"):
            assert again[key] == view[key], key
        assert transcript(second.http)[: len(before)] == before

        # the prompt that fell due while the gateway was down fires once; the one before it not again
        poll(prompted(second.http, 2), 20, "second prompt")
        on_disk, _ = _stored(db, sid)
        assert not [t for t in on_disk["timers"] if not t["consumed"] and not t["cancelled"]]  # none can follow
        after = transcript(second.http)
        assert after[: len(before)] == before and len(after) == len(before) + 1
        prompts = _prompts(after)
        assert len(prompts) == 2 and prompts[0] == _prompts(before)[0]

        # the WebSocket resume: same place; the calls nobody heard are spoken, the heard ones not
        started, replayed, state = asyncio.run(_resume(second.base, sid, token, cancel))
        assert started["resumed"] is True and (started["flow"], started["state"]) == ("emergency", "EM_DETAILS")
        assert started["scenario"] == view["variables"]
        assert [e["seq"] for e in replayed[:2]] == [p["seq"] for p in prompts]
        assert all(e["seq"] > delivered for e in replayed)
        # and the session goes on: cancelling the emergency returns to the stacked clearance
        assert (state["flow"], state["state"]) == ("clearance", "CD_READBACK")
        final = second.http.get(f"/api/radio/sessions/{sid}").json()["session"]
        assert final["flow_stack"] == []
        assert [e["text"] for e in transcript(second.http) if e["role"] == "pilot"][-1] == cancel
    finally:
        second.close()


def _stored_in_redis(url: str, prefix: str, session_id: str) -> dict[str, Any]:
    """The session as the store holds it, read with plain redis-py."""
    import redis

    with redis.Redis.from_url(url) as client:
        return json.loads(client.hget(f"{prefix}s:{session_id}", "record"))["session"]


async def _listen_on_b(
    base: str, session_id: str, token: str, mayday_on_a: Callable[[], dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """A pilot's socket on node B while node A decides: returns A's answer to the MAYDAY, the
    decision event B's socket got for it, the first silence prompt it heard, and every event."""
    from tooling.voicekit import RadioClient

    client = await RadioClient.connect(base)
    try:
        await client.send({"type": "session.resume", "session_id": session_id, "resume_token": token})
        await client.wait_type("session.started", timeout=20)
        mark = client.mark()
        mayday = await asyncio.to_thread(mayday_on_a)  # an HTTP transmission on node A
        tx = mayday["decision"]["transmission_id"]
        relayed = await client.wait_type("decision", timeout=20, start=mark, transmission_id=tx)
        # the pilot stays silent: a node's clock (either one) fires the prompt, B's socket speaks it
        prompt = await client.wait_for(lambda e: e["type"] == "atc.message" and PROMPT in e["text"], 30, mark)
        await client.wait_type("atc.message.end", timeout=20, start=mark, message_id=prompt["message_id"])
        return mayday, relayed, prompt, client.rx.events[mark:]
    finally:
        await client.close()


def test_two_nodes_on_redis_one_killed_and_the_other_carries_on(tmp_path: Path, redis_url: str) -> None:
    log, prefix = tmp_path / "gateways.log", "two:"
    shared = {"LIVEFREQ_STORE": "redis", "LIVEFREQ_REDIS_URL": redis_url, "LIVEFREQ_REDIS_PREFIX": prefix,
              "LIVEFREQ_TIME_SCALE": "6"}  # a silence prompt every 2.5 s
    a = Gateway(log, wait=False, LIVEFREQ_NODE_ID="node-a", **shared)
    try:
        b = Gateway(log, wait=False, LIVEFREQ_NODE_ID="node-b", **shared)
    except BaseException:
        a.close()
        raise
    try:  # both start at once; neither serves the test before both are up
        a.ready()
        b.ready()
    except BaseException:
        a.close()
        b.close()
        raise

    def transcript(http: httpx.Client) -> list[dict[str, Any]]:
        answer = http.get(f"/api/radio/sessions/{sid}/transcript")
        assert answer.status_code == 200
        return answer.json()["entries"]

    try:
        try:
            for node, name in ((a, "node-a"), (b, "node-b")):
                assert node.http.get("/health").json()["store"] == {"kind": "redis", "node": name}
            reply = a.http.post("/api/radio/sessions", json={"flow": "clearance", "scenario": SCENARIO, "seed": 7})
            assert reply.status_code == 201, reply.text
            sid, token = reply.json()["session"]["id"], reply.json()["resume_token"]
            clearance = a.http.post(f"/api/radio/sessions/{sid}/transmissions", json={"text": reply.json()["expected_pilot"][0]})
            assert clearance.json()["session"]["state"] == "CD_READBACK"

            def mayday_on_a() -> dict[str, Any]:
                answer = a.http.post(f"/api/radio/sessions/{sid}/transmissions", json={"text": MAYDAY})
                assert answer.status_code == 200, answer.text
                return answer.json()

            # live across nodes: the decision made on A reaches the socket on B, once
            mayday, relayed, prompt, events = asyncio.run(_listen_on_b(b.base, sid, token, mayday_on_a))
            assert (relayed["to_flow"], relayed["to_state"]) == ("emergency", "EM_DETAILS")
            assert sum(e["type"] == "decision" and e["transmission_id"] == relayed["transmission_id"] for e in events) == 1
            cancel = next(p for p in mayday["expected_pilot"] if "cancel" in p.lower())

            # both clocks ran while the prompt fell due: it fired once, and both nodes see the same
            view, before = b.http.get(f"/api/radio/sessions/{sid}").json()["session"], transcript(b.http)
            assert transcript(a.http) == before and a.http.get(f"/api/radio/sessions/{sid}").json()["session"] == view
            assert [p["seq"] for p in _prompts(before)] == [prompt["seq"]]
            stored = _stored_in_redis(redis_url, prefix, sid)
            a.kill()  # SIGKILL: no shutdown, no lease released, nothing flushed
        finally:
            a.close()
        pending = [t for t in stored["timers"] if not t["consumed"] and not t["cancelled"]]
        assert [(t["kind"], t["state"]) for t in pending] == [("silence", "EM_DETAILS")], (
            "the second prompt fired before the kill: the test machine is too slow"
        )

        # nothing lost: the session as it stood, on the surviving node
        again = b.http.get(f"/api/radio/sessions/{sid}").json()["session"]
        for key in ("flow", "state", "variables", "flags", "flow_stack", "parallel_flows", "main_flow", "seed"):
            assert again[key] == view[key], key
        assert again["flow_stack"] == [{"flow": "clearance", "state": "CD_READBACK", "mode": "main", "return_to": None}]

        # the pending timer fires on B, the surviving node, once
        after = poll(lambda: (lines if len(_prompts(lines := transcript(b.http))) >= 2 else None), 30, "second prompt")
        assert after[: len(before)] == before and len(after) == len(before) + 1
        assert not [t for t in _stored_in_redis(redis_url, prefix, sid)["timers"] if not t["consumed"] and not t["cancelled"]]
        second = _prompts(after)[1]

        # a session started on A resumes on B: the prompt nobody heard is spoken, the heard one not
        started, replayed, state = asyncio.run(_resume(b.base, sid, token, cancel, replays=1))
        assert started["resumed"] is True and (started["flow"], started["state"]) == ("emergency", "EM_DETAILS")
        assert [e["seq"] for e in replayed] == [second["seq"]]
        assert (state["flow"], state["state"]) == ("clearance", "CD_READBACK")
        assert len(_prompts(transcript(b.http))) == 2  # and none fired twice meanwhile
        assert [e["text"] for e in transcript(b.http) if e["role"] == "pilot"][-1] == cancel
    finally:
        b.close()
