"""Shared fixtures: the real gateway on loopback ports, for HTTP/WebSocket tests.

`live_server`: base URL of one server (default settings, the repository's ``flows/``) for the
whole run. `serve`: start another server for an app a test builds itself (stopped after the test).

Session stores: gateways keep sessions in SQLite by default (``settings.sqlite_path``), one
gateway per file. Before any test module is imported the run sets ``LIVEFREQ_STORE=memory`` (a
run starts many servers in one process, at several fixture scopes at once) and points
``LIVEFREQ_SQLITE_PATH`` at a scratch directory, so no test, and no `livefreq` process a test
starts, touches the user's database. tests/test_persistence.py runs gateways on SQLite files of
its own, and on Redis: `redis_url` is a real redis-server on loopback, started once per run,
emptied before each test that uses it (tests/support/redis_server.py).

Tiers: every test carries exactly one of the markers ``unit``, ``integration``, ``browser``,
``slow``, given here by module (`TIERS`; a module may also mark itself). ``make test`` runs them
all; ``make test-fast`` (``-m unit``) runs the pure logic in under a minute.

Hypothesis: with ``CI=true`` the ``ci`` profile derandomizes (each property test draws the same
examples on every CI run), so the gate judges the change it is given, not a new draw; runs on a
developer's machine keep drawing fresh examples, where a new counterexample is found and kept in
``.hypothesis/``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from hypothesis import settings as hypothesis_settings
from starlette.types import ASGIApp

from tests.support.chat_completions import ChatCompletionsServer
from tests.support.redis_server import RedisServer, require_redis_server

hypothesis_settings.register_profile("ci", derandomize=True)
if os.environ.get("CI", "").lower() in ("true", "1"):
    hypothesis_settings.load_profile("ci")

STARTUP_TIMEOUT_S = 20.0
_STORE_DIR = "LIVEFREQ_TEST_STORE_DIR"


# unit: in-process logic, no sockets, no speech models (the fast tier). integration: real servers on
# loopback, subprocesses, SQLite and Redis, text only. browser: headless Chromium. slow: the real
# speech models (whisper, piper, vosk), benchmarks, fuzzing, the built wheel.
TIER_MARKERS = ("unit", "integration", "browser", "slow")  # registered in pyproject.toml
TIERS: dict[str, str] = {
    **dict.fromkeys(
        (
            "test_airports", "test_assistant", "test_audio", "test_client_waiting", "test_cpu_pool", "test_fakes", "test_guards",
            "test_identity", "test_loader", "test_phraseology", "test_radio_service", "test_readback",
            "test_readback_in_parts", "test_readback_props", "test_readback_regressions", "test_readback_safety", "test_readback_voice_rules", "test_router_llm",
            "test_router_rules", "test_scenario", "test_session_engine", "test_templates",
            "test_tokenizer_props", "test_tokenizer_regressions", "test_vad", "test_engine_parts", "test_value_said_again", "test_value_run_on",
            "test_import_rules", "test_import_rules_tooling", "test_module_sizes", "test_pilot_forms", "test_protocol_events",
            "test_voice_routes",
        ),
        "unit",
    ),
    **dict.fromkeys(
        (
            "test_admission", "test_ask_ws", "test_assistant_http", "test_bench_pilot_clock", "test_assistant_llm", "test_atis_radio", "test_auth", "test_cli",
            "test_compat_api", "test_contract_conformance", "test_flow_hardening", "test_fuzz_auth", "test_http_api",
            "test_http_flight", "test_limits", "test_llm_gateway", "test_metrics_scrape", "test_openapi",
            "test_persistence", "test_redis_store", "test_sim_bridge", "test_traffic_api", "test_weather",
        ),
        "integration",
    ),
    "test_browser": "browser",
    **dict.fromkeys(
        (
            "test_bench_callsign", "test_bench_readback", "test_bench_voice", "test_kokoro_pilot", "test_fuzz_http", "test_fuzz_regressions", "test_fuzz_ws",
            "test_load", "test_load_capacity", "test_rehearing", "test_confirm_hearing", "test_speech_api", "test_stt", "test_stt_bigger", "test_stt_vosk", "test_tts", "test_value_check", "test_webrtc",
            "test_wheel_install", "test_ws_radio",
        ),
        "slow",
    ),
}
DEFAULT_TIER = "integration"  # a module not listed yet: kept out of the fast tier until someone places it


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``-m unit`` (make test-fast): modules of another tier are not even imported (their imports
    of aiortc, playwright, schemathesis... cost seconds). A test that marks itself ``unit`` must
    then sit in a module whose tier is unit."""
    if config.getoption("markexpr", "") != "unit" or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    return TIERS.get(collection_path.stem, DEFAULT_TIER) != "unit" or None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give each test its module's tier, unless it carries one itself; more than one is an error."""
    for item in items:
        own = [name for name in TIER_MARKERS if item.get_closest_marker(name) is not None]
        if len(own) > 1:
            raise pytest.UsageError(f"{item.nodeid} has more than one tier: {', '.join(own)}")
        if not own:
            item.add_marker(TIERS.get(item.module.__name__.rsplit(".", 1)[-1] if item.module else "", DEFAULT_TIER))


def pytest_configure(config: pytest.Config) -> None:
    """Before collection, so settings built at import time (and subprocesses) use a scratch store."""
    directory = tempfile.mkdtemp(prefix="livefreq-store-")
    os.environ[_STORE_DIR] = directory
    os.environ["LIVEFREQ_STORE"] = "memory"
    os.environ["LIVEFREQ_SQLITE_PATH"] = os.path.join(directory, "livefreq.sqlite3")


def pytest_unconfigure(config: pytest.Config) -> None:
    directory = os.environ.pop(_STORE_DIR, None)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def run_server(app: ASGIApp) -> Iterator[str]:
    """uvicorn serving `app` in a background thread on a free loopback port; yields the base URL."""
    # IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted connections only for sockets that say
    # they are TCP; without it each loopback round trip waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue until uvicorn accepts: no port race, no retry storm
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=f"server-{port}", daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    try:
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=STARTUP_TIMEOUT_S).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline or not thread.is_alive():
                    raise RuntimeError("test server did not start") from None
                time.sleep(0.05)  # only while waiting for the server to come up
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    from gateway.app import create_app
    from gateway.settings import Settings

    with run_server(create_app(Settings(speech_preload=False))) as base:
        yield base


@pytest.fixture()
def serve() -> Iterator[Callable[[ASGIApp], str]]:
    """``url = serve(app)``: run `app` on its own port until the test ends."""
    with contextlib.ExitStack() as stack:
        yield lambda app: stack.enter_context(run_server(app))


@pytest.fixture(scope="session")
def chat_completions() -> Iterator[ChatCompletionsServer]:
    """A chat-completions server on loopback for the LLM router (tests/support/chat_completions.py)."""
    server = ChatCompletionsServer()
    with run_server(server.app) as base:
        server.url = base
        try:
            yield server
        finally:
            server.release.set()  # a "slow" answer still held returns, so the server can stop


@pytest.fixture()
def llm_server(chat_completions: ChatCompletionsServer) -> ChatCompletionsServer:
    """The chat-completions server, reset to answer with the schema's first id."""
    chat_completions.reset()
    return chat_completions


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer(require_redis_server())
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture()
def redis_url(request: pytest.FixtureRequest) -> str:
    """URL of the run's redis-server, emptied for this test (skips without redis-server; fails in CI)."""
    require_redis_server()
    server: RedisServer = request.getfixturevalue("redis_server")
    import redis

    with redis.Redis.from_url(server.url) as client:
        client.flushall()
    return server.url


# ---------------------------------------------------------------- the scenario most tests set up
# Loading the shipped flows, an engine over them, a service on a hand-driven clock with sessions in
# memory: built here once instead of in each module. Imports are local so a test run that needs
# none of them does not pay for them.

DLH359 = {"callsign": "DLH359", "callsign_spoken": "Lufthansa 359"}  # the tests' usual pilot


class ManualClock:
    """A clock that moves only when the test says (`clock.t += 60`, `clock.advance(60)`)."""

    def __init__(self, t: float = 1_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> float:
        self.t += seconds
        return self.t


@pytest.fixture(scope="session")
def shipped_flows() -> Any:
    """The flows the package ships (gateway/assets/flows), loaded once per run."""
    from engine.loader import load_registry
    from gateway.flows_source import DirectoryFlowSource
    from gateway.resources import flows_dir

    return load_registry(DirectoryFlowSource(flows_dir()))


@pytest.fixture(scope="session")
def session_engine(shipped_flows: Any) -> Any:
    """A `SessionEngine` over the shipped flows (stateless between calls: shared by the run)."""
    from engine.session import SessionEngine

    return SessionEngine(shipped_flows)


@pytest.fixture()
def manual_clock() -> ManualClock:
    return ManualClock()


@pytest.fixture()
def radio_service(shipped_flows: Any, manual_clock: ManualClock) -> Any:
    """A `RadioService` over the shipped flows on `manual_clock`, sessions in memory."""
    from gateway.service import RadioService
    from gateway.settings import Settings
    from gateway.store import MemorySessionRepository

    return RadioService(
        Settings(store="memory", speech_preload=False), registry=shipped_flows, clock=manual_clock,
        repository=MemorySessionRepository(),
    )


@pytest.fixture()
def fake_speech() -> Any:
    """A loaded `SpeechStack` of the fake engines (tests/fakes.py): `.stt` hears what
    `.stt.say(text)` made, `.tts` speaks tones as long as the text."""
    import asyncio

    from gateway.settings import Settings
    from gateway.speech.stack import SpeechStack
    from tests.fakes import FakeStt, FakeTts

    stack = SpeechStack(Settings(speech_preload=False), stt=FakeStt(), tts=FakeTts())
    asyncio.run(stack.load())
    return stack


@pytest.fixture(scope="module")
def whisper() -> Any:
    """The bundled whisper tiny.en, loaded once per module (the STT tests share it)."""
    from gateway.speech.stt import make_stt
    from gateway.speech.stt.whisper import WhisperEngine

    engine = make_stt("whisper")
    assert isinstance(engine, WhisperEngine)
    engine.load()
    return engine
