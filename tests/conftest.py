"""Shared fixtures: the real gateway on loopback ports, for HTTP/WebSocket tests.

`live_server`: base URL of one server (default settings, the repository's ``flows/``) for the
whole run. `serve`: start another server for an app a test builds itself (stopped after the test).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
import uvicorn
from starlette.types import ASGIApp

STARTUP_TIMEOUT_S = 20.0


@contextlib.contextmanager
def run_server(app: ASGIApp) -> Iterator[str]:
    """uvicorn serving `app` in a background thread on a free loopback port; yields the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
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
