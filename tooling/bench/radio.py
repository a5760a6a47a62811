"""`livefreq bench voice`, end to end: one voice pilot on `WS /v1/radio` of a gateway (started
here on loopback, or a running one), timed from PTT release to the final transcript, the decision
and the first byte of the controller's reply. `wait_ready` is shared with the load tester."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import websockets

from tooling.bench.common import BackgroundServer, BenchError, Progress
from tooling.voicekit import Exchange, VoicePilot

if TYPE_CHECKING:
    from gateway.settings import Settings

__all__ = ["BENCH_FLOWS", "check_reachable", "measure_radio", "served_gateway", "wait_ready"]

BENCH_FLOWS = ("clearance", "startup_pushback", "taxi_out", "tower_departure")
SERVER_READY_TIMEOUT_S = 180.0
RADIO_TIMEOUT_S = 60.0  # longest wait for one answer from the gateway


async def measure_radio(
    base_url: str,
    n: int,
    progress: Progress,
    *,
    flow: str = BENCH_FLOWS[0],
    flows: Sequence[str] = BENCH_FLOWS,
    seed: int = 0,
    time_limit_s: float | None = None,
) -> dict[str, Any]:
    """One pilot at a time flies sessions from `flow` by voice until `n` transmissions got a
    spoken controller reply, or `4 n + 8` transmissions, or `time_limit_s` (default 60 s + 40 s
    per sample) have passed. A session that completes, leaves `flows`, or stalls (nothing to
    say, or the same state misunderstood three times) is replaced by a new one."""
    limit_s = time_limit_s if time_limit_s is not None else 60.0 + 40.0 * n
    max_tx = 4 * n + 8
    started = time.monotonic()
    exchanges: list[Exchange] = []
    sessions = 0
    speech: dict[str, Any] = {}
    stopped = "samples"

    def samples() -> int:
        return sum(1 for e in exchanges if e.first_audio_ms is not None)

    while samples() < n:
        if len(exchanges) >= max_tx:
            stopped = "transmission limit"
            break
        if time.monotonic() - started > limit_s:
            stopped = "time limit"
            break
        before = len(exchanges)
        async with _connected(VoicePilot(base_url, flow=flow, seed=seed + sessions, timeout_s=RADIO_TIMEOUT_S)) as pilot:
            sessions += 1
            speech = dict(pilot.started.get("speech") or {})
            misses = 0
            while samples() < n and len(exchanges) < max_tx and time.monotonic() - started <= limit_s:
                if pilot.completed or not pilot.expected or (flows and pilot.state.get("flow") not in flows):
                    break
                try:
                    exchange = await pilot.say(pilot.expected[0])
                except (TimeoutError, ConnectionError) as exc:
                    raise BenchError(f"the gateway at {base_url} stopped answering: {exc}") from None
                exchanges.append(exchange)
                progress.update(samples())
                misses = misses + 1 if exchange.to_state == exchange.state and exchange.recognized is False else 0
                if misses >= 3:
                    break
        if len(exchanges) == before:
            raise BenchError(f"a session from flow {flow!r} gave the pilot nothing to say")
    progress.done()
    edits = sum(e.word_errors for e in exchanges)
    words = sum(e.words for e in exchanges)
    return {
        "url": base_url,
        "speech": speech,
        "sessions": sessions,
        "transmissions": len(exchanges),
        "replies": samples(),
        "stopped_by": stopped,
        "wall_s": round(time.monotonic() - started, 2),
        "corpus_wer": round(edits / words, 4) if words else None,
        "not_understood": sum(1 for e in exchanges if e.recognized is False),
        "exchanges": [e.as_dict() for e in exchanges],
    }


@contextlib.asynccontextmanager
async def _connected(pilot: VoicePilot) -> AsyncIterator[VoicePilot]:
    """`pilot` connected and in a session; a refused or dropped connection is a `BenchError`."""
    try:
        await pilot.__aenter__()
    except (OSError, TimeoutError, ConnectionError, websockets.InvalidHandshake) as exc:
        await pilot.__aexit__(None, None, None)
        raise BenchError(f"cannot start a session on {pilot.base_url}/v1/radio: {exc}") from None
    try:
        yield pilot
    finally:
        await pilot.__aexit__(None, None, None)


async def check_reachable(base_url: str) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=10.0) as client:
        try:
            (await client.get("/health")).raise_for_status()
        except httpx.HTTPError as exc:
            raise BenchError(f"no gateway answers at {base_url}: {exc}") from None


async def wait_ready(base_url: str, timeout_s: float = SERVER_READY_TIMEOUT_S) -> dict[str, Any]:
    """Poll `GET /health` until the gateway's speech engines are loaded; its answer."""
    import httpx

    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=10.0) as client:
        while True:
            try:
                health = (await client.get("/health")).json()
            except (httpx.HTTPError, ValueError) as exc:
                raise BenchError(f"no gateway answers at {base_url}: {exc}") from None
            speech = health.get("speech") or {}
            if speech.get("error"):
                raise BenchError(f"the gateway's speech engines failed to load: {speech['error']}")
            if health.get("ready"):
                return dict(health)
            if time.monotonic() > deadline:
                raise BenchError(f"the gateway at {base_url} was not ready after {timeout_s:g} s")
            await asyncio.sleep(0.2)  # polling a server that is loading its models


@contextlib.contextmanager
def served_gateway(settings: Settings, url: str | None) -> Iterator[str]:
    """The base URL to measure: `url` as given, or a gateway served here on a loopback port with
    its own speech stack (fresh TTS cache) loaded at start-up."""
    if url:
        yield url.rstrip("/")
        return
    from gateway.app import create_app

    # its own server, sessions in memory: a benchmark never writes to the user's database; no
    # admission self-test, whose decodes would share the CPU with the first measured exchanges
    server_settings = settings.model_copy(update={"speech_preload": True, "store": "memory", "voice_capacity": "off"})
    with BackgroundServer(create_app(server_settings)) as server:
        yield server.url
