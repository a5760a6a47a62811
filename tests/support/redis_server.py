"""A real `redis-server` on a loopback port for the Redis store's tests.

scripts/install-system-deps.sh installs the binary (Debian's redis-server). Without it, the tests
that need it are skipped with the reason, except in CI (``CI=true``), where a missing server is a
failure: CI installs it, so its absence is a broken set-up, never a reason to test less.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

START_TIMEOUT_S = 20.0


def require_redis_server() -> str:
    """The redis-server binary; skips the test without one (fails in CI)."""
    binary = shutil.which("redis-server")
    if binary is not None:
        return binary
    reason = "redis-server is not installed (bash scripts/install-system-deps.sh installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must have it", pytrace=False)
    pytest.skip(reason)


class RedisServer:
    """redis-server in the foreground on 127.0.0.1, no persistence, in a scratch directory."""

    def __init__(self, binary: str, port: int | None = None) -> None:
        if port is None:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
        self.port = port
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.dir = Path(tempfile.mkdtemp(prefix="livefreq-redis-"))
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--logfile", "", "--dir", str(self.dir)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        self.log: list[str] = []
        self._wait_ready()

    def _wait_ready(self) -> None:
        """Read the server's log until it says it accepts connections (an event, not a sleep)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline().decode(errors="replace")
            if not line:  # the server exited
                self.stop()
                raise RuntimeError("redis-server exited at start:\n" + "".join(self.log))
            self.log.append(line)
            if "Ready to accept connections" in line:
                return
        self.stop()
        raise RuntimeError("redis-server did not start:\n" + "".join(self.log))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class ReplyCutter:
    """A loopback TCP proxy in front of a server that can lose one reply on purpose: `cut_next`
    makes it close the connection instead of forwarding the next bytes the server sends back (the
    request did reach the server and ran). That is a network failure at the worst moment, for
    real: the client's retry logic runs exactly as it would in production."""

    def __init__(self, upstream_port: int) -> None:
        self._upstream = ("127.0.0.1", upstream_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._cut = threading.Event()
        self.cuts = 0
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, name="reply-cutter", daemon=True).start()

    def cut_next(self) -> None:
        self._cut.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self._upstream)
            self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, replies: bool) -> None:
        try:
            while data := source.recv(65536):
                if replies and self._cut.is_set():
                    self._cut.clear()
                    self.cuts += 1
                    break  # the reply is lost with the connection
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        self._listener.close()
        for s in self._sockets:
            with contextlib.suppress(OSError):
                s.close()
