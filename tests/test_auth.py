"""Authentication and the WebSocket Origin check (gateway/auth.py, gateway/api/access.py).

The units first (key entries, digests, signed tokens, origins), then a real gateway on loopback
with two API keys: who reaches which HTTP route and which session, and the same over
`WS /v1/radio` (``?token=`` and ``Authorization: Bearer``), where a refusal is a typed error and
close code 1008.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openapi_spec_validator import validate
from starlette.types import ASGIApp
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from gateway.api.openapi import OPERATIONS
from gateway.app import create_app
from gateway.auth import (
    AuthConfigError,
    Authenticator,
    KeyRing,
    SessionTokens,
    bearer,
    digest_of,
    load_secret,
    new_key,
    origin_allowed,
    parse_key_entry,
)
from gateway.settings import Settings

KEY_A = "alpha-key-0123456789abcdef"
KEY_B = "bravo-key-0123456789abcdef"
SECRET = "s" * 40
AUTH = {
    "api_keys": [KEY_A, f"bravo sha256:{digest_of(KEY_B).hex()}"],
    "auth_secret": SECRET,
}
LIGHT = {"speech_preload": False, "stt_engine": "sphinx", "tts_engine": "espeak"}
CLOSE_POLICY = 1008


# --------------------------------------------------------------------------- units


def test_key_entries_plain_hashed_and_labelled() -> None:
    plain = parse_key_entry(KEY_A, "t")
    assert plain.digest == digest_of(KEY_A) and plain.key_id == f"key-{digest_of(KEY_A).hex()[:8]}"
    hashed = parse_key_entry(f"sha256:{digest_of(KEY_B).hex()}", "t")
    assert hashed.digest == digest_of(KEY_B)
    labelled = parse_key_entry(f"school-1 sha256:{digest_of(KEY_B).hex().upper()}", "t")
    assert labelled.key_id == "school-1" and labelled.digest == digest_of(KEY_B)
    for bad in ("short", "sha256:abc", "a b c", "bad/label " + KEY_A):
        with pytest.raises(AuthConfigError):
            parse_key_entry(bad, "t")


def test_keyring_identifies_by_digest_only() -> None:
    ring = KeyRing([parse_key_entry(KEY_A, "a"), parse_key_entry(f"bravo sha256:{digest_of(KEY_B).hex()}", "b")])
    assert ring.identify(KEY_B) == "bravo"
    assert ring.identify(KEY_A) == ring.keys[0].key_id
    assert ring.identify(KEY_A + "x") is None and ring.identify("") is None
    assert all(KEY_A not in repr(key) and KEY_B not in repr(key) for key in ring.keys)  # digests only
    with pytest.raises(AuthConfigError, match="same label"):
        KeyRing([parse_key_entry(KEY_A, "a"), parse_key_entry(KEY_A, "b")])


def test_keys_file_comments_and_new_keys(tmp_path: Path) -> None:
    key, entry = new_key()
    path = tmp_path / "keys"
    path.write_text(f"# the school's keys\n\nclassroom {entry}  # made by livefreq keys new\n", encoding="utf-8")
    auth = Authenticator(Settings(api_keys_file=path, auth_secret=SECRET))
    assert auth.enabled and auth.authenticate(key).key_id == "classroom"
    path.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(AuthConfigError, match="no API key"):
        Authenticator(Settings(api_keys_file=path, auth_secret=SECRET))
    with pytest.raises(AuthConfigError, match="cannot read"):
        Authenticator(Settings(api_keys_file=tmp_path / "missing", auth_secret=SECRET))


def test_session_tokens_are_signed_and_expire() -> None:
    tokens = SessionTokens(SECRET.encode(), ttl_s=3600)
    token = tokens.issue("abc123")
    assert tokens.verify(token) == "abc123"
    assert tokens.verify(token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]) is None  # altered
    assert SessionTokens(b"another secret of forty characters......", 3600).verify(token) is None  # forged
    assert SessionTokens(SECRET.encode(), ttl_s=-1).verify(token) is None  # expired
    assert tokens.verify("not a token") is None and tokens.verify("") is None


def test_secret_file_is_private_and_kept(tmp_path: Path) -> None:
    settings = Settings(api_keys=[KEY_A], sqlite_path=tmp_path / "db" / "livefreq.sqlite3")
    first = load_secret(settings)
    path = tmp_path / "db" / "auth-secret"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert load_secret(settings) == first  # a restart signs with the same secret: tokens survive


def test_bearer_header_parsing() -> None:
    assert bearer({"authorization": "Bearer abc"}) == "abc"
    assert bearer({"authorization": "bearer   abc "}) == "abc"
    assert bearer({"authorization": "Basic abc"}) is None
    assert bearer({"authorization": "Bearer "}) is None
    assert bearer({}) is None


@pytest.mark.parametrize(
    ("origin", "host", "allowed", "ok"),
    [
        (None, "127.0.0.1:8765", [], True),  # not a browser
        ("http://127.0.0.1:8765", "127.0.0.1:8765", [], True),  # the radio page the gateway serves
        ("http://localhost:8765", "localhost:8765", [], True),
        ("http://evil.example", "127.0.0.1:8765", [], False),
        ("http://127.0.0.1:9999", "127.0.0.1:8765", [], False),  # another local port is another origin
        ("null", "127.0.0.1:8765", [], False),  # sandboxed frames, file:// pages
        ("http://trainer.example", "127.0.0.1:8765", ["http://trainer.example"], True),
        ("http://evil.example", "127.0.0.1:8765", ["*"], True),
    ],
)
def test_origin_allow_list(origin: str | None, host: str, allowed: list[str], ok: bool) -> None:
    assert origin_allowed(origin, host, allowed) is ok


def test_authentication_is_off_by_default() -> None:
    auth = Authenticator(Settings())
    assert not auth.enabled
    assert auth.authenticate(None).key_id is None and auth.session_token("x") is None


# --------------------------------------------------------------------------- a live gateway


@pytest.fixture()
def gateway(serve: Callable[[ASGIApp], str]) -> str:
    return serve(create_app(Settings(**LIGHT, **AUTH)))


def _h(credential: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {credential}"} if credential else {}


def _create(base: str, key: str) -> dict[str, Any]:
    r = httpx.post(f"{base}/api/radio/sessions", json={"flow": "clearance", "seed": 1}, headers=_h(key), timeout=30)
    assert r.status_code == 201, r.text
    return r.json()


def _error(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code


def _path(template: str, session_id: str) -> str:
    return template.replace("{session_id}", session_id).replace("{icao}", "EDDF")


def test_every_protected_route_needs_a_credential(gateway: str) -> None:
    session = _create(gateway, KEY_A)["session"]["id"]
    for op in OPERATIONS:
        url = gateway + _path(op.path, session)
        public = op.path in ("/health", "/openapi.json")
        for credential in (None, "wrong-credential-0123456789", "Bearer"):
            r = httpx.request(op.method, url, json={} if op.body else None, headers=_h(credential), timeout=30)
            if public:
                assert r.status_code == 200, (op.operation_id, r.text)
            else:
                _error(r, 401, "unauthorized")
                assert r.headers["www-authenticate"].startswith("Bearer")
    assert httpx.get(f"{gateway}/", timeout=10).status_code == 200  # the browser radio's page


def test_sessions_are_reached_by_their_token_or_their_key_only(gateway: str) -> None:
    created = _create(gateway, KEY_A)
    sid, token = created["session"]["id"], created["session_token"]
    other = _create(gateway, KEY_B)
    other_sid, other_token = other["session"]["id"], other["session_token"]
    assert token and token != created["resume_token"]
    read = f"{gateway}/api/radio/sessions/{sid}"

    for allowed in (KEY_A, token):
        assert httpx.get(read, headers=_h(allowed), timeout=10).status_code == 200
        assert httpx.get(read + "/transcript", headers=_h(allowed), timeout=10).status_code == 200
    for refused in (KEY_B, other_token):
        _error(httpx.get(read, headers=_h(refused), timeout=10), 403, "forbidden")
        _error(httpx.post(read + "/transmissions", json={"text": "wilco"}, headers=_h(refused), timeout=10), 403, "forbidden")
        _error(httpx.delete(read, headers=_h(refused), timeout=10), 403, "forbidden")
    # a session token reaches nothing else: no new sessions, no other routes, not even a made-up id
    _error(httpx.post(f"{gateway}/api/radio/sessions", json={}, headers=_h(token), timeout=10), 403, "forbidden")
    _error(httpx.get(f"{gateway}/api/voices", headers=_h(token), timeout=10), 403, "forbidden")
    _error(httpx.get(f"{gateway}/api/radio/sessions/nope", headers=_h(token), timeout=10), 403, "forbidden")
    # a key gets 404 for a session that does not exist, as without authentication
    _error(httpx.get(f"{gateway}/api/radio/sessions/nope", headers=_h(KEY_A), timeout=10), 404, "unknown_session")
    assert httpx.get(f"{gateway}/metrics", headers=_h(KEY_B), timeout=10).status_code == 200
    # the refused calls changed nothing: the clearance flow waits for the pilot's first call, and
    # none of the refused transmissions reached it
    transcript = httpx.get(read + "/transcript", headers=_h(token), timeout=10).json()["entries"]
    assert transcript == []
    assert httpx.get(read, headers=_h(token), timeout=10).json()["session"]["state"] == created["session"]["state"]
    assert httpx.get(f"{gateway}/api/radio/sessions/{other_sid}", headers=_h(KEY_B), timeout=10).status_code == 200
    # the owner's key and the token both work for writes
    said = httpx.post(read + "/transmissions", json={"text": "request IFR clearance"}, headers=_h(token), timeout=30)
    assert said.status_code == 200, said.text
    assert httpx.get(read + "/transcript", headers=_h(KEY_A), timeout=10).json()["entries"][0]["role"] == "pilot"
    assert httpx.delete(read, headers=_h(KEY_A), timeout=10).status_code == 200


def test_openapi_declares_the_bearer_scheme_when_configured(gateway: str, live_server: str) -> None:
    secured = httpx.get(f"{gateway}/openapi.json", timeout=10).json()
    validate(secured)  # still a valid OpenAPI 3.1 document
    assert secured["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": secured["components"]["securitySchemes"]["bearer"]["description"],
    }
    assert secured["security"] == [{"bearer": []}]
    health = secured["paths"]["/health"]["get"]
    assert health["security"] == [] and "401" not in health["responses"]
    create = secured["paths"]["/api/radio/sessions"]["post"]["responses"]
    assert {"401", "403", "429", "503"} <= set(create)
    assert {"401", "403"} <= set(secured["paths"]["/api/radio/sessions/{session_id}"]["get"]["responses"])
    open_doc = httpx.get(f"{live_server}/openapi.json", timeout=10).json()
    assert "securitySchemes" not in open_doc["components"] and "security" not in open_doc
    assert "401" not in open_doc["paths"]["/api/radio/sessions"]["post"]["responses"]


# --------------------------------------------------------------------------- the WebSocket


def _ws(base: str, token: str | None = None, **kwargs: Any) -> ClientConnection:
    url = base.replace("http", "ws", 1) + "/v1/radio" + (f"?token={token}" if token else "")
    return connect(url, open_timeout=10, max_size=None, **kwargs)


def _until(ws: ClientConnection, kind: str) -> dict[str, Any]:
    while True:
        frame = ws.recv(timeout=30)
        if isinstance(frame, str):
            event = json.loads(frame)
            if event["type"] == kind:
                return event


def _refused(ws: ClientConnection, code: str) -> None:
    """The socket's last words: a fatal `code` error, then close code 1008."""
    event = _until(ws, "error")
    assert event["code"] == code and event["fatal"] is True, event
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_POLICY


def test_websocket_needs_a_credential(gateway: str) -> None:
    for token in (None, "wrong-credential-0123456789"):
        with _ws(gateway, token) as ws:
            _refused(ws, "unauthorized")


def test_the_client_library_says_why_the_gateway_refused_it(gateway: str) -> None:
    """`RadioClient.start` on a connection the gateway refused (and closed, maybe before the
    start went out) raises `ProtocolRefused` with the gateway's code, not a bare ConnectionClosed."""
    import asyncio

    from gateway.client.base import ProtocolRefused
    from gateway.client.ws import RadioClient

    async def start_without_a_key() -> str:
        client = await RadioClient.connect(gateway)
        try:
            await client.until(lambda: True if client.closed else None, 10, "the refusal")  # closed first
            with pytest.raises(ProtocolRefused) as refused:
                await client.start(flow="clearance")
            return refused.value.code
        finally:
            await client.close()

    assert asyncio.run(start_without_a_key()) == "unauthorized"


def test_websocket_sessions_by_key_and_by_token(gateway: str) -> None:
    with _ws(gateway, additional_headers={"Authorization": f"Bearer {KEY_A}"}) as ws:
        ws.send(json.dumps({"type": "session.start", "flow": "clearance", "seed": 2}))
        started = _until(ws, "session.started")
    sid, resume, token = started["session_id"], started["resume_token"], started["session_token"]
    assert token
    resume_msg = json.dumps({"type": "session.resume", "session_id": sid, "resume_token": resume})
    for credential in (token, KEY_A):  # its own token, and the key that created it
        with _ws(gateway, credential) as ws:
            ws.send(resume_msg)
            assert _until(ws, "session.started")["resumed"] is True
    other_token = _create(gateway, KEY_B)["session_token"]
    for credential in (KEY_B, other_token):  # another key, another session's token: refused, socket open
        with _ws(gateway, credential) as ws:
            ws.send(resume_msg)
            assert _until(ws, "error")["code"] == "forbidden"
            ws.send(json.dumps({"type": "ping"}))
            assert _until(ws, "pong") == {"type": "pong"}
    with _ws(gateway, token) as ws:  # a session token starts nothing
        ws.send(json.dumps({"type": "session.start", "flow": "clearance"}))
        error = _until(ws, "error")
        assert error["code"] == "forbidden" and error["fatal"] is False


def test_websocket_origin_allow_list(serve: Callable[[ASGIApp], str]) -> None:
    base = serve(create_app(Settings(**LIGHT, ws_origins=["http://trainer.example"])))
    host = base.removeprefix("http://")
    with _ws(base, origin="http://evil.example") as ws:
        _refused(ws, "forbidden")
    for origin in (f"http://{host}", "http://trainer.example", None):
        with _ws(base, origin=origin) as ws:
            ws.send(json.dumps({"type": "ping"}))
            assert _until(ws, "pong") == {"type": "pong"}


@pytest.fixture()
def open_gateway(serve: Callable[[ASGIApp], str]) -> Iterator[str]:
    yield serve(create_app(Settings(**LIGHT)))


def test_without_keys_everything_is_open_but_foreign_pages(open_gateway: str) -> None:
    """Off by default: a local trainer needs no set-up; the Origin check still holds."""
    created = _create(open_gateway, "")
    assert created["session_token"] is None
    assert httpx.get(f"{open_gateway}/api/radio/sessions/{created['session']['id']}", timeout=10).status_code == 200
    with _ws(open_gateway) as ws:
        ws.send(json.dumps({"type": "session.start", "flow": "clearance"}))
        assert _until(ws, "session.started")["session_token"] is None
    with _ws(open_gateway, origin="http://evil.example") as ws:
        _refused(ws, "forbidden")
