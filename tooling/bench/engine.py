"""`livefreq bench engine`: how many pilot transmissions per second the gateway decides.

Every mode drives the same realistic script: sessions start in the main flow and each pilot turn
sends the engine's own `expected_pilot[0]`, so the loop walks the whole curriculum (clearance to
the stand) for any set of flows without a hand-written script. Modes, from the inside out:
`engine` (the pure `SessionEngine`), `service` (`RadioService`: store copies, transcript) and
`http` (the public API on a real uvicorn server, one keep-alive client).
"""

from __future__ import annotations

import cProfile
import io
import pstats
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from tooling.bench.common import BackgroundServer, BenchError, Progress, percentile

if TYPE_CHECKING:
    from engine.models import Decision, Session
    from gateway.service import RadioService
    from gateway.settings import Settings

__all__ = [
    "TARGET_TX_PER_S",
    "BenchRun",
    "bench_engine",
    "bench_http",
    "bench_service",
    "bench_service_sqlite",
    "profile_engine",
    "scenario_pool",
]

TARGET_TX_PER_S = 2000.0  # in process, one core (the target)
MAX_IDLE_SESSIONS = 20
TX_CLOCK_STEP_S = 4.0  # virtual seconds between two transmissions in the engine loop

R = TypeVar("R")


@dataclass
class BenchRun:
    """Timings of one mode: per-transmission decision times and the loop's wall time."""

    mode: str
    times_ns: list[int] = field(default_factory=list)
    wall_s: float = 0.0
    sessions: int = 0
    completed: int = 0
    not_understood: int = 0
    stalled: int = 0  # sessions abandoned at a turn with no phrase to say and nothing scheduled
    _idle: int = 0  # sessions in a row that ended before any pilot transmission

    def new_session(self) -> None:
        """Count a session start; refuse to spin when sessions never reach a pilot turn."""
        self.sessions += 1
        self._idle += 1
        if self._idle > MAX_IDLE_SESSIONS:
            raise BenchError(
                f"{MAX_IDLE_SESSIONS} sessions in a row ended or stalled before any pilot turn: "
                "the flow has nothing for a pilot to say"
            )

    def record(self, elapsed_ns: int, recognized: bool) -> None:
        self.times_ns.append(elapsed_ns)
        self.not_understood += int(not recognized)
        self._idle = 0

    def result(self) -> dict[str, Any]:
        n = len(self.times_ns)
        ms = sorted(t / 1e6 for t in self.times_ns)
        return {
            "mode": self.mode,
            "transmissions": n,
            "sessions": self.sessions,
            "completed_sessions": self.completed,
            "not_understood": self.not_understood,
            "stalled_sessions": self.stalled,
            "seconds": round(self.wall_s, 4),
            "tx_per_s": round(n / self.wall_s, 1) if self.wall_s > 0 else None,
            "p50_ms": round(percentile(ms, 50), 4) if ms else None,
            "p99_ms": round(percentile(ms, 99), 4) if ms else None,
            "mean_ms": round(statistics.fmean(ms), 4) if ms else None,
            "max_ms": round(ms[-1], 4) if ms else None,
        }


def scenario_pool(service: RadioService, flow: str | None, size: int = 8) -> list[dict[str, Any]]:
    """Resolved scenario variables for seeds 0..size-1 (airport lookups are setup, not decisions)."""
    return [dict(service.create(flow=flow, seed=seed)[0].variables) for seed in range(size)]


def bench_engine(
    service: RadioService,
    n: int,
    flow: str | None,
    progress: Progress,
    *,
    scenarios: list[dict[str, Any]] | None = None,
) -> BenchRun:
    """The engine alone: `SessionEngine.start/transmit/tick` on sessions held in this loop.

    Sessions cycle through `scenarios` (default `scenario_pool`) and run on a virtual clock that
    moves 4 s per transmission. Each pilot turn sends `expected_pilot[0]`; a turn with nothing to
    say waits for the next timer; a finished session is replaced by a new one.
    """
    engine = service.engine
    scenarios = scenarios or scenario_pool(service, flow)
    run = BenchRun("engine")
    now = 0.0
    start_flow = flow or service.registry.main_flow
    started = time.perf_counter()
    session: Session | None = None
    expected: list[str] = []
    last_wakeup: float | None = None
    while len(run.times_ns) < n:
        if session is None:
            variables = scenarios[run.sessions % len(scenarios)]
            run.new_session()
            session, decision = engine.start(
                variables=dict(variables),
                session_id=f"bench-{run.sessions}",
                flow=start_flow,
                now=now,
                seed=run.sessions,
            )
            expected = decision.expected_pilot
            if decision.completed:
                run.completed += 1
                session = None
                continue
        if not expected:
            due = engine.next_wakeup(session)
            if due is None:
                run.stalled += 1
                session = None
                continue
            if due <= now and due == last_wakeup:
                run.stalled += 1  # the engine asked for this moment already and nothing happened
                session = None
                continue
            last_wakeup, now = due, max(now, due)
            for decision in engine.tick(session, now):
                expected = decision.expected_pilot
            if session.completed:
                run.completed += 1
                session = None
            continue
        now += TX_CLOCK_STEP_S
        t0 = time.perf_counter_ns()
        decision = engine.transmit(session, expected[0], now)
        run.record(time.perf_counter_ns() - t0, decision.recognized)
        expected = decision.expected_pilot
        if decision.completed:
            run.completed += 1
            session = None
        progress.update(len(run.times_ns))
    run.wall_s = time.perf_counter() - started
    progress.done()
    return run


class _Turn(NamedTuple):
    """What the real-time loop reads from a session start or a transmission's answer."""

    expected: list[str]  # the phrases the pilot may say next
    completed: bool
    recognized: bool = True


def _run_turns(
    run: BenchRun,
    n: int,
    progress: Progress,
    start: Callable[[int], tuple[str, _Turn]],
    transmit: Callable[[str, str], R],
    read: Callable[[R], _Turn],
) -> None:
    """The `service` and `http` loop: `n` timed transmissions of `expected[0]`, and `run.wall_s`.

    `start(seed)` opens a session (untimed in `times_ns`, timed in the wall time, as clients
    would); only `transmit(session_id, text)` is timed, `read` its answer is not. Their clock is
    real time, so a turn with nothing to say is not waited out: the session counts as stalled and
    a new one starts.
    """
    started = time.perf_counter()
    session_id: str | None = None
    expected: list[str] = []
    while len(run.times_ns) < n:
        if session_id is None:
            run.new_session()
            session_id, turn = start(run.sessions)
            expected = turn.expected
            if turn.completed:
                run.completed += 1
                session_id = None
                continue
        if not expected:
            run.stalled += 1
            session_id = None
            continue
        t0 = time.perf_counter_ns()
        answer = transmit(session_id, expected[0])
        elapsed_ns = time.perf_counter_ns() - t0
        turn = read(answer)
        run.record(elapsed_ns, turn.recognized)
        expected = turn.expected
        if turn.completed:
            run.completed += 1
            session_id = None
        progress.update(len(run.times_ns))
    run.wall_s = time.perf_counter() - started


def bench_service(
    service: RadioService, n: int, flow: str | None, progress: Progress, mode: str = "service"
) -> BenchRun:
    """The whole in-process path a request takes: `RadioService.create/transmit` (store copies,
    transcript, engine). Sessions are created inside the timed loop, as clients would. `mode`
    names the run: the same loop measures the memory store and the durable SQLite store."""

    def start(seed: int) -> tuple[str, _Turn]:
        session, decision, _token = service.create(flow=flow, seed=seed)
        return session.session_id, _Turn(decision.expected_pilot, decision.completed)

    def read(decision: Decision) -> _Turn:
        return _Turn(decision.expected_pilot, decision.completed, decision.recognized)

    run = BenchRun(mode)
    _run_turns(run, n, progress, start, service.transmit, read)
    progress.done()
    return run


def bench_service_sqlite(settings: Settings, n: int, flow: str | None, progress: Progress) -> BenchRun:
    """`bench_service` on the store `make run` uses (SQLite, the configured synchronous mode), in a
    temporary file: every decision committed before its reply, as in production, and never the
    user's database."""
    import tempfile
    from pathlib import Path

    from gateway.service import RadioService
    from gateway.store import SqliteSessionRepository

    with tempfile.TemporaryDirectory(prefix="livefreq-bench-") as tmp:
        repository = SqliteSessionRepository(Path(tmp) / "bench.sqlite3", synchronous=settings.sqlite_synchronous)
        try:
            service = RadioService(settings, repository=repository)
            return bench_service(service, n, flow, progress, mode=f"service-sqlite-{settings.sqlite_synchronous.lower()}")
        finally:
            repository.close()


def bench_http(settings: Settings, n: int, flow: str | None, progress: Progress) -> BenchRun:
    """The public HTTP API end to end: a real uvicorn server on loopback, one keep-alive client."""
    import httpx

    from gateway.app import create_app

    run = BenchRun("http")
    # the benchmark's own server keeps its sessions in memory: never the user's database
    app = create_app(settings.model_copy(update={"store": "memory"}))
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url, timeout=30.0) as client:
        body: dict[str, Any] = {"flow": flow} if flow else {}

        def start(seed: int) -> tuple[str, _Turn]:
            reply = _http_json(client.post("/api/radio/sessions", json={**body, "seed": seed}))
            return reply["session"]["id"], _http_turn(reply)

        def transmit(session_id: str, text: str) -> dict[str, Any]:
            return _http_json(client.post(f"/api/radio/sessions/{session_id}/transmissions", json={"text": text}))

        client.get("/health").raise_for_status()
        _run_turns(run, n, progress, start, transmit, _http_turn)
    progress.done()
    return run


def _http_turn(reply: dict[str, Any]) -> _Turn:
    return _Turn(
        list(reply.get("expected_pilot") or []),
        bool(reply["session"].get("completed")),
        (reply.get("decision") or {}).get("recognized") is not False,
    )


def _http_json(response: Any) -> dict[str, Any]:
    if response.status_code >= 400:
        raise BenchError(f"HTTP {response.status_code} from {response.request.url.path}: {response.text[:300]}")
    data = response.json()
    if not isinstance(data, dict):
        raise BenchError(f"unexpected reply from {response.request.url.path}: {str(data)[:300]}")
    return data


def profile_engine(
    service: RadioService, n: int, flow: str | None, top: int = 25
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """cProfile over `n` transmissions of the engine loop (scenario setup not included).

    Returns the `top` functions by own time (with their share of the whole run) and by
    cumulative time: {function, calls, tottime_s, cumtime_s, share_pct}.
    """
    scenarios = scenario_pool(service, flow)
    profiler = cProfile.Profile()
    profiler.enable()
    bench_engine(service, n, flow, Progress("profile", n, io.StringIO()), scenarios=scenarios)
    profiler.disable()
    stats = pstats.Stats(profiler)
    raw = stats.stats.items()  # type: ignore[attr-defined]
    total = sum(tt for _, (_cc, _nc, tt, _ct, _callers) in raw) or 1.0
    rows = [
        {
            "function": f"{_short_path(filename)}:{line}({func})",
            "calls": nc,
            "tottime_s": round(tt, 4),
            "cumtime_s": round(ct, 4),
            "share_pct": round(100.0 * tt / total, 1),
        }
        for (filename, line, func), (_cc, nc, tt, ct, _callers) in raw
    ]
    own = sorted(rows, key=lambda r: r["tottime_s"], reverse=True)[:top]
    cumulative = sorted(rows, key=lambda r: r["cumtime_s"], reverse=True)[:top]
    return own, cumulative


def _short_path(filename: str) -> str:
    for marker in ("/engine/", "/gateway/", "/site-packages/", "/lib/python"):
        if marker in filename:
            return filename[filename.index(marker) + 1 :]
    return filename
