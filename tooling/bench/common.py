"""What every benchmark shares: its error, a nearest-rank percentile, the 95 % interval of a
share, a progress line on stderr and a uvicorn server on loopback in a background thread."""

from __future__ import annotations

import math
import socket
import sys
import threading
import time
from typing import Any, Self, TextIO

__all__ = ["BackgroundServer", "BenchError", "Progress", "interval95", "percentile"]


class BenchError(Exception):
    """The benchmark could not run (server did not start, the API answered an error)."""


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, math.ceil(pct / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def interval95(hits: int, n: int) -> tuple[float, float] | None:
    """The 95 % Wilson interval of the share `hits` of `n` (scipy's), as fractions rounded to
    4 places, or None for n = 0. Why: one seed's 300 readbacks carry a few dozen events, and
    "0 of 84" or "9 of 212" say how sure only with their interval (0 of 84 is up to 4.4 %)."""
    if n <= 0:
        return None
    from scipy.stats import binomtest

    ci = binomtest(hits, n).proportion_ci(confidence_level=0.95, method="wilson")
    return round(float(ci.low), 4), round(float(ci.high), 4)


def interval_text(ci: tuple[float, float] | list[float] | None) -> str:
    """An `interval95` as "2.2-7.9%" (JSON gives it back as a list), "" for None."""
    return f"{100 * ci[0]:.1f}-{100 * ci[1]:.1f}%" if ci else ""


class Progress:
    """One progress line on stderr: rewritten in place on a terminal, every 10 % in a log."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None, unit: str = "transmissions") -> None:
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._next_step = 1  # in tenths of the total
        self._last = 0.0

    def update(self, done: int, note: str = "") -> None:
        """`done` of the total so far; `note` (e.g. running figures) follows on the same line."""
        tail = f"  {note}" if note else ""
        if self.tty:
            now = time.monotonic()
            if now - self._last >= 0.1 or done >= self.total:
                self._last = now
                print(f"\r{self.label}: {done}/{self.total} {self.unit}{tail}\033[K", end="", file=self.stream, flush=True)
        elif done * 10 >= self._next_step * self.total:
            print(f"{self.label}: {done}/{self.total} {self.unit}{tail}", file=self.stream, flush=True)
            self._next_step = done * 10 // self.total + 1

    def done(self) -> None:
        if self.tty:
            print(file=self.stream, flush=True)


class BackgroundServer:
    """uvicorn serving `app` on a free loopback port, in a daemon thread (bench, tests)."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY on accepted connections only for
        # sockets that say they are TCP, and without it every response waits ~40 ms for a
        # delayed ACK (Nagle), which would measure the kernel instead of the gateway.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False, ws_per_message_deflate=False)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Self:
        self._thread.start()
        deadline = time.monotonic() + 15.0
        while not self.server.started:  # uvicorn offers no event to wait on
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise BenchError("the benchmark server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=10.0)
        self._sock.close()
