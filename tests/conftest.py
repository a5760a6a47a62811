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

import httpx
import pytest
import uvicorn
from starlette.types import ASGIApp

from tests.support.chat_completions import ChatCompletionsServer
from tests.support.redis_server import RedisServer, require_redis_server

STARTUP_TIMEOUT_S = 20.0
_STORE_DIR = "LIVEFREQ_TEST_STORE_DIR"


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
