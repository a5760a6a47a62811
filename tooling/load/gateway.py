"""A `livefreq serve` subprocess for the load tester: its own process (as in production), on a free
loopback port, stopped with the load tester (even on SIGTERM)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from gateway.settings import REPO_ROOT
from tooling.bench.common import BenchError
from tooling.bench.radio import wait_ready
from tooling.load.capacity import wait_capacity

__all__ = ["gateway_process"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def gateway_process(log_path: Path, env: dict[str, str] | None = None, ready_timeout_s: float = 180.0) -> Iterator[tuple[str, int]]:
    """A `livefreq serve` subprocess on a free loopback port with the default engines (or the
    `LIVEFREQ_*` settings in the environment, then `env`), sessions in memory; yields (base URL,
    pid) once `/health` says ready and the voice capacity is known, and stops it afterwards. Its
    output goes to `log_path`."""
    import httpx

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "LIVEFREQ_STORE": "memory", "LIVEFREQ_SPEECH_PRELOAD": "true", **(env or {})}
    command = [sys.executable, "-m", "tooling.cli", "serve", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment, cwd=REPO_ROOT)
        # a SIGTERM to the load tester unwinds through here too: its gateway never outlives it
        previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if threading.current_thread() is threading.main_thread() else None
        try:
            deadline = time.monotonic() + ready_timeout_s
            while True:  # until it listens; then wait_ready polls until the models are loaded
                if process.poll() is not None:
                    raise BenchError(f"the gateway exited with code {process.returncode}; see {log_path}")
                try:
                    httpx.get(f"{url}/health", timeout=5.0)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise BenchError(f"the gateway did not start within {ready_timeout_s:g} s; see {log_path}") from None
                    time.sleep(0.1)  # a process starting up offers nothing to wait on
            asyncio.run(wait_ready(url, ready_timeout_s))
            wait_capacity(url)  # its capacity self-test runs after the models load: never during the run
            yield url, process.pid
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
