"""Schemathesis against a live gateway: every operation of ``GET /openapi.json`` fuzzed over HTTP.

The server is the real app on loopback (uvicorn, `run_server`). Every operation gets positive
cases (valid per the document: the server must accept them, 2xx or 404 for an unknown id, except
where validity depends on data, `DATA_DEPENDENT`), and every operation with a body negative cases
too (schema-violating bodies: the server must refuse them with a 4xx). Every answer must be no
5xx and match the document's status codes, content type and response schema. Operations on one
session run with random ids (404) and again with the id of a real session, so the success shapes
are checked too. Afterwards the server must be healthy, fly a new session, and have logged no
error.

The speech endpoints use the real speech stack with the light engines (pocketsphinx, espeak-ng),
loaded once: they exercise the same request parsing, audio decoding, radio effect and encoding as
whisper and piper, at a cost per request the CI budget can afford.

Budget: `EXAMPLES` cases per operation and mode (speech operations fewer), scaled by
``LIVEFREQ_FUZZ_SCALE``; the count of cases tried is printed in the terminal summary and written
to ``reports/fuzz-http.json``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from gateway.api.openapi import OPERATIONS, Operation
from gateway.app import create_app
from gateway.settings import Settings
from gateway.speech.stack import SpeechStack
from tests.conftest import run_server
from tests.support.fuzz_report import ErrorLog, FuzzReport, budget

EXAMPLES = 15
SPEECH_EXAMPLES = 8
# Bodies up to 8 MB: a schema-bounded body (50 assistant messages of 20,000 characters, escaped)
# must meet the schema's verdict, not the body size limit (tests/test_limits.py tests that one).
SETTINGS = Settings(
    speech_preload=False, stt_engine="sphinx", tts_engine="espeak", max_transmission_s=5.0, max_body_bytes=8_000_000
)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]
# Where the document says everything the server checks, every valid request must be accepted.
# Not so for these: validity depends on data a JSON schema cannot state.
DATA_DEPENDENT = {
    "decide": "state_id must be a state of flow_slug (the document lists the states of all flows)",
    "say": "the text must have something speakable (not only punctuation)",
    "ptt": "the base64 audio must be a decodable recording",
    "webrtcOffer": "the sdp must be an SDP offer with an audio track and a data channel",
}


@pytest.fixture(scope="module")
def report(request: pytest.FixtureRequest) -> Iterator[FuzzReport]:
    fuzz = FuzzReport("http")
    yield fuzz
    total = sum(v for k, v in fuzz.counts.items() if k.startswith("cases:"))
    fuzz.finish(request.config, f"{total} HTTP requests over {len(OPERATIONS)} operations", requests=total)


@pytest.fixture(scope="module")
def logged() -> Iterator[ErrorLog]:
    with ErrorLog() as log:
        yield log


@pytest.fixture(scope="module")
def server(logged: ErrorLog) -> Iterator[str]:
    speech = SpeechStack(SETTINGS)
    asyncio.run(speech.load())
    with run_server(create_app(SETTINGS, speech=speech)) as base:
        yield base


@pytest.fixture(scope="module")
def schema(server: str) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{server}/openapi.json")


@pytest.fixture(scope="module")
def live_sessions() -> dict[str, str]:
    """Session id -> the operation fuzzed on it: each must still be readable afterwards (but deleted)."""
    return {}


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


def _targets() -> list[pytest.param]:
    out = []
    for op in OPERATIONS:
        # negative cases need something to break: a body (a path parameter is any non-empty string)
        modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if op.body else (GenerationMode.POSITIVE,)
        for mode in modes:
            out.append(pytest.param(op, mode, False, id=f"{op.operation_id}-{mode.value}"))
            if "{session_id}" in op.path:
                out.append(pytest.param(op, mode, True, id=f"{op.operation_id}-{mode.value}-live"))
    return out


@pytest.mark.parametrize(("op", "mode", "live"), _targets())
def test_operation_survives_fuzzing(
    op: Operation,
    mode: GenerationMode,
    live: bool,
    server: str,
    schema: schemathesis.BaseSchema,
    http: requests.Session,
    report: FuzzReport,
    live_sessions: dict[str, str],
) -> None:
    operation = schema[op.path][op.method.upper()]
    fixed = None
    if live:
        fixed = {"session_id": _new_session(server)}
        live_sessions[fixed["session_id"]] = op.operation_id
    strategy = operation.as_strategy(generation_mode=mode, path_parameters=fixed)
    examples = budget(SPEECH_EXAMPLES if op.tag == "speech" else EXAMPLES)
    key = f"cases:{op.operation_id}:{mode.value}{':live' if live else ''}"
    checks = CHECKS if op.operation_id in DATA_DEPENDENT else [*CHECKS, positive_data_acceptance]

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )
    @given(case=strategy)
    def fuzz(case: schemathesis.Case) -> None:
        report.add(key)
        began = time.perf_counter()
        response = case.call(base_url=server, session=http, timeout=60)
        report.add(f"ms:{op.operation_id}", round((time.perf_counter() - began) * 1000))
        case.validate_response(response, checks=checks)

    fuzz()


def _new_session(base: str) -> str:
    response = httpx.post(f"{base}/api/radio/sessions", json={"flow": "clearance", "seed": 3}, timeout=30)
    assert response.status_code == 201, response.text
    return response.json()["session"]["id"]


def test_server_healthy_after_fuzzing(server: str, logged: ErrorLog, live_sessions: dict[str, str]) -> None:
    """After everything above: healthy, every fuzzed session still there (unless deleted), a new
    session still flies, and nothing was logged as an error."""
    health = httpx.get(f"{server}/health", timeout=10)
    assert health.status_code == 200 and health.json()["ok"] is True
    for session_id, operation in live_sessions.items():
        if operation not in ("deleteSession", "osDeleteSession"):
            read = httpx.get(f"{server}/api/radio/sessions/{session_id}", timeout=10)
            assert read.status_code == 200, (operation, read.text)
    session_id = _new_session(server)
    answer = httpx.post(
        f"{server}/api/radio/sessions/{session_id}/transmissions", json={"text": "request IFR clearance"}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["decision"]["transmission_id"]
    assert logged.messages == []
