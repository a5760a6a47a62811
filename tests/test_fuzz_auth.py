"""The fuzz suites' authentication variant: with API keys configured, requests without a valid
credential, or with one that does not reach what they ask for, are refused and touch no session.

A live gateway (real app, uvicorn on loopback) runs with two API keys. Key A owns session S, key
B owns session T; both have spoken. Then schemathesis generates requests for every protected
operation of the gateway's own ``/openapi.json`` (positive and negative bodies, session routes
aimed at S or at generated ids) and hypothesis chooses the credential: none, a random string
(with or without the Bearer scheme), S's token with one character changed, T's token, or key B
on S's routes. Each must be answered 401 ``unauthorized`` (the first three) or 403 ``forbidden``
(the others), never 2xx or 5xx. The WebSocket gets the same credentials on ``?token=`` or the
``Authorization`` header, followed by `session.resume` of S, `session.start` and a transmission.

Afterwards S and T are exactly as they were (state, variables, transcript), no session was
created, the server is healthy and logged no error. Budget and report as the other fuzz suites
(``LIVEFREQ_FUZZ_SCALE``, ``reports/fuzz-auth.json``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from gateway.api.access import is_public
from gateway.api.openapi import OPERATIONS, Operation
from gateway.app import create_app
from gateway.settings import Settings
from tests.conftest import run_server
from tests.support.fuzz_report import ErrorLog, FuzzReport, budget

EXAMPLES = 10
WS_EXAMPLES = 30
KEY_A = "alpha-key-0123456789abcdef"
KEY_B = "bravo-key-0123456789abcdef"
SETTINGS = Settings(
    speech_preload=False, stt_engine="sphinx", tts_engine="espeak", api_keys=[KEY_A, KEY_B], auth_secret="f" * 40
)
PROTECTED = [op for op in OPERATIONS if not is_public(op.path)]
ASCII = st.characters(min_codepoint=0x21, max_codepoint=0x7E)
UNAUTHORIZED = ("none", "garbage", "scheme", "mangled")


@dataclass
class World:
    base: str
    s: dict[str, Any]  # session S (key A): id, tokens
    t: dict[str, Any]  # session T (key B)
    before: dict[str, Any]  # what S and T look like before fuzzing


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _snapshot(base: str, world_s: dict[str, Any], world_t: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, session, key in (("S", world_s, KEY_A), ("T", world_t, KEY_B)):
        url = f"{base}/api/radio/sessions/{session['id']}"
        view = httpx.get(url, headers=_auth(key), timeout=10).json()["session"]
        out[name] = {k: view[k] for k in ("flow", "state", "variables", "flags", "flow_stack", "updated_at")}
        out[name + " transcript"] = httpx.get(url + "/transcript", headers=_auth(key), timeout=10).json()["entries"]
    return out


@pytest.fixture(scope="module")
def logged() -> Iterator[ErrorLog]:
    with ErrorLog() as log:
        yield log


@pytest.fixture(scope="module")
def world(logged: ErrorLog) -> Iterator[World]:
    app = create_app(SETTINGS)
    with run_server(app) as base:
        made = {}
        for name, key in (("s", KEY_A), ("t", KEY_B)):
            body = httpx.post(f"{base}/api/radio/sessions", json={"flow": "clearance", "seed": 5}, headers=_auth(key),
                              timeout=30).json()
            sid = body["session"]["id"]
            said = httpx.post(f"{base}/api/radio/sessions/{sid}/transmissions", json={"text": "request IFR clearance"},
                              headers=_auth(key), timeout=30)
            assert said.status_code == 200, said.text
            made[name] = {"id": sid, "token": body["session_token"], "resume": body["resume_token"]}
        world = World(base, made["s"], made["t"], {})
        world.before = _snapshot(base, world.s, world.t)
        assert len(app.state.service.session_ids()) == 2
        world.before["count"] = 2
        world.before["app"] = app
        yield world


@pytest.fixture(scope="module")
def report(request: pytest.FixtureRequest) -> Iterator[FuzzReport]:
    fuzz = FuzzReport("auth")
    yield fuzz
    http = sum(v for k, v in fuzz.counts.items() if k.startswith("cases:"))
    ws = fuzz.counts["ws_examples"]
    fuzz.finish(request.config, f"{http} HTTP requests over {len(PROTECTED)} protected operations and {ws} "
                f"WebSocket connections with wrong credentials", requests=http, websockets=ws)


@pytest.fixture(scope="module")
def schema(world: World) -> schemathesis.BaseSchema:
    document = httpx.get(f"{world.base}/openapi.json", timeout=10)
    assert document.status_code == 200  # public, so clients can learn the scheme
    return schemathesis.openapi.from_dict(document.json())


def _mangle(token: str, at: int) -> str:
    """One character of the token's signed part changed. Not of its signature: base64's last
    character carries bits no byte uses, so a changed one there can still decode to the same
    signature, the same token (a fresh draw found "...A" for "...B" accepted, stop 48)."""
    signed = token.rsplit(".", 1)[0]
    i = at % len(signed)
    return token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1 :]


@st.composite
def credential(draw: st.DrawFn, world: World, own_session: bool) -> tuple[str, dict[str, str]]:
    """(kind, headers): a credential that must not get through."""
    kinds = [*UNAUTHORIZED, "other_token"] + (["other_key"] if own_session else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return kind, {}
    if kind == "garbage":
        return kind, {"Authorization": "Bearer " + draw(st.text(ASCII, min_size=1, max_size=80))}
    if kind == "scheme":  # the right key in the wrong scheme is no bearer credential
        return kind, {"Authorization": draw(st.sampled_from(["Basic ", "Token ", "", "Bearer"])) + KEY_A}
    if kind == "mangled":
        return kind, _auth(_mangle(world.s["token"], draw(st.integers(0, 10_000))))
    if kind == "other_token":
        return kind, _auth(world.t["token"])
    return kind, _auth(KEY_B)


def _targets() -> list[Any]:
    out = []
    for op in PROTECTED:
        modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if op.body else (GenerationMode.POSITIVE,)
        for mode in modes:
            out.append(pytest.param(op, mode, False, id=f"{op.operation_id}-{mode.value}"))
            if "{session_id}" in op.path:
                out.append(pytest.param(op, mode, True, id=f"{op.operation_id}-{mode.value}-S"))
    return out


@pytest.mark.parametrize(("op", "mode", "aim_at_s"), _targets())
def test_wrong_credentials_are_refused(
    op: Operation, mode: GenerationMode, aim_at_s: bool, world: World, schema: schemathesis.BaseSchema,
    report: FuzzReport,
) -> None:
    operation = schema[op.path][op.method.upper()]
    fixed = {"session_id": world.s["id"]} if aim_at_s else None
    strategy = operation.as_strategy(generation_mode=mode, path_parameters=fixed)
    key = f"cases:{op.operation_id}:{mode.value}{':S' if aim_at_s else ''}"

    @settings(
        max_examples=budget(EXAMPLES), deadline=None, database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck), print_blob=True,
    )
    @given(case=strategy, cred=credential(world, own_session=aim_at_s))
    def fuzz(case: schemathesis.Case, cred: tuple[str, dict[str, str]]) -> None:
        kind, headers = cred
        report.add(key)
        report.add(f"credential:{kind}")
        # schemathesis adds an Authorization header of its own to follow the document's bearer
        # scheme (a generated, so wrong, one), and a negative case may drop it: the request is
        # the case's, the credential ours ("none": no header at all)
        request = case.as_transport_kwargs(base_url=world.base)
        request["headers"] = {k: v for k, v in request["headers"].items() if k.lower() != "authorization"} | headers
        response = requests.request(**request, timeout=30)
        status, code = (401, "unauthorized") if kind in UNAUTHORIZED else (403, "forbidden")
        assert response.status_code == status, (kind, case.method, case.formatted_path, response.text[:300])
        assert response.json()["error"]["code"] == code
        if status == 401:
            assert response.headers["www-authenticate"].startswith("Bearer")

    fuzz()


def test_websocket_refuses_wrong_credentials(world: World, report: FuzzReport) -> None:
    ws_url = world.base.replace("http", "ws", 1) + "/v1/radio"
    resume_s = json.dumps({"type": "session.resume", "session_id": world.s["id"], "resume_token": world.s["resume"]})

    @settings(max_examples=budget(WS_EXAMPLES), deadline=None, database=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(cred=credential(world, own_session=True), in_query=st.booleans(),
           then=st.lists(st.sampled_from(["resume", "start", "text"]), min_size=1, max_size=3))
    def fuzz(cred: tuple[str, dict[str, str]], in_query: bool, then: list[str]) -> None:
        kind, headers = cred
        report.add("ws_examples")
        report.add(f"ws_credential:{kind}")
        url, extra = ws_url, headers
        value = headers.get("Authorization", "")
        if in_query and value.startswith("Bearer "):
            url, extra = f"{ws_url}?token={quote(value.removeprefix('Bearer '), safe='')}", {}
        with connect(url, additional_headers=extra, open_timeout=10) as ws:
            frames = {"resume": resume_s, "start": json.dumps({"type": "session.start", "flow": "clearance"}),
                      "text": json.dumps({"type": "text", "text": "wilco"})}
            if kind == "other_key":  # a valid key may start its own sessions: only S is out of its reach
                then = ["resume"] + [f for f in then if f != "start"]
            events: list[dict[str, Any]] = []
            try:
                with contextlib.suppress(ConnectionClosed):  # refused: the server may close before we are done
                    for step in then:
                        ws.send(frames[step])
                    ws.send('{"type": "ping"}')
                while True:
                    event = json.loads(ws.recv(timeout=20))
                    events.append(event)
                    if event["type"] == "pong":
                        break
            except ConnectionClosed as closed:
                assert kind in UNAUTHORIZED, (kind, events)
                assert closed.rcvd is not None and closed.rcvd.code == 1008
                assert events and events[-1] == {"type": "error", "code": "unauthorized", "message": events[-1]["message"],
                                                  "fatal": True}, events
                return
        assert kind not in UNAUTHORIZED, (kind, events)
        assert not [e for e in events if e["type"] == "session.started"], events
        codes = [e["code"] for e in events if e["type"] == "error"]
        expected = {"resume": "forbidden", "start": "forbidden", "text": "no_session"}
        assert codes == [expected[step] for step in then], (kind, then, codes)

    fuzz()


def test_no_session_was_touched(world: World, logged: ErrorLog) -> None:
    """After everything above: S and T as they were, no new session, healthy, nothing logged."""
    app = world.before["app"]
    assert len(app.state.service.session_ids()) == world.before["count"]
    after = _snapshot(world.base, world.s, world.t)
    assert after == {k: v for k, v in world.before.items() if k not in ("count", "app")}
    assert httpx.get(f"{world.base}/health", timeout=10).json()["ok"] is True
    assert logged.messages == []
