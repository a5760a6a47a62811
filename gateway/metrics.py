"""Prometheus metrics: what a pilot waits for, stage by stage, and what the gateway carries.

`prometheus_client` (the reference Python client) keeps the counters and histograms and renders
`GET /metrics` in the text exposition format; its default collectors add the process's CPU
seconds, resident memory and open files, which `livefreq load` scrapes to report server cost.

The stages of a voice transmission, each a label of `livefreq_stage_seconds`:

- ``speech_end_to_final``: push-to-talk release (or the VAD's end of speech) to the final transcript;
- ``final_to_decision``: the final transcript to the engine's decision, stored;
- ``decision_to_first_tts_audio``: a controller message decided to its first synthesized audio;
- ``speech_end_to_first_audio``: release to the first byte of the controller's reply sent, the
  latency the pilot hears (the `livefreq load` and `livefreq bench voice` headline figure).

`livefreq_cpu_jobs` shows the speech engines' CPU pool (running, queued): a queue that stays
long is the capacity limit showing.

Metrics are process-wide (one registry, like the speech models): several apps in one process,
as in the tests, add to the same series.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.speech.cpu import cpu_pool

STAGES = ("speech_end_to_final", "final_to_decision", "decision_to_first_tts_audio", "speech_end_to_first_audio")
# seconds; dense where the targets are (0.35 s p50, 0.7 s / 1.2 s p95, 1.5 s capacity limit)
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0, 3.0, 5.0, 10.0)

STAGE_SECONDS = Histogram(
    "livefreq_stage_seconds", "Latency of one stage of the voice path (see gateway/metrics.py)", ["stage"], buckets=LATENCY_BUCKETS
)
CONNECTIONS = Gauge("livefreq_ws_connections", "Open WebSocket radio connections")
ACTIVE_SESSIONS = Gauge("livefreq_ws_sessions", "WebSocket connections with a session attached")
TRANSMISSIONS = Counter("livefreq_transmissions_total", "Pilot transmissions decided", ["source"])
MESSAGES = Counter("livefreq_ws_messages_total", "WebSocket messages by direction and type", ["direction", "type"])
CONTROLLER_MESSAGES = Counter("livefreq_controller_messages_total", "Controller messages spoken on a socket", ["outcome"])
ERRORS = Counter("livefreq_errors_total", "Errors returned to clients, by code", ["transport", "code"])
SPECULATIVE_TTS = Counter(
    "livefreq_speculative_tts_total", "Likely controller replies synthesized while the pilot talked", ["outcome"]
)

CPU_JOBS = Gauge("livefreq_cpu_jobs", "Speech jobs in the shared CPU pool (gateway/speech/cpu.py)", ["state"])
CPU_JOBS.labels("running").set_function(lambda: float(cpu_pool().busy))
CPU_JOBS.labels("queued").set_function(lambda: float(cpu_pool().queued))

for _stage in STAGES:  # every stage appears in /metrics from the start, with zero counts
    STAGE_SECONDS.labels(_stage)


def observe_stage(stage: str, seconds: float) -> None:
    STAGE_SECONDS.labels(stage).observe(max(0.0, seconds))


def count_error(transport: str, code: str) -> None:
    ERRORS.labels(transport, code).inc()


def stored_sessions_gauge(count: Callable[[], int]) -> None:
    """`livefreq_sessions`: sessions in the store, read when scraped (the last app built wins)."""
    gauge = REGISTRY._names_to_collectors.get("livefreq_sessions")  # noqa: SLF001 - re-binding in tests
    if gauge is None:
        gauge = Gauge("livefreq_sessions", "Sessions in the store")
    assert isinstance(gauge, Gauge)
    gauge.set_function(lambda: float(count()))


def routes() -> list[Route]:
    async def metrics(request: Request) -> Response:
        return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)

    return [Route("/metrics", metrics, methods=["GET"])]
