"""Prometheus metrics: what a pilot waits for, stage by stage, and what the gateway carries.

`prometheus_client` (the reference Python client) keeps the counters and histograms and renders
`GET /metrics` in the text exposition format; its default collectors add the process's CPU
seconds, resident memory and open files, which `livefreq load` scrapes to report server cost.

The stages of a voice transmission, each a label of `livefreq_stage_seconds`:

- ``speech_end_to_final``: push-to-talk release (or the VAD's end of speech) to the final transcript;
- ``second_hearing``: the closed-vocabulary decode of a transmission the engine would not accept
  as first heard (gateway/speech/rehearing.py; `livefreq_second_hearings_total` counts them,
  and those skipped because no CPU worker was idle);
- ``third_hearing``: whisper base's decode where the second hearing did not settle either
  (gateway/speech/stt/whisper_bigger.py; `livefreq_third_hearings_total`, by the same rules);
- ``confirm_hearing``: whisper base's decode of a readback the engine would accept as first heard
  (gateway/speech/rehearing.py `confirm_bigger`; `livefreq_confirm_hearings_total`, by the same
  rules as the third hearing);
- ``value_check``: the issued values a readback left unsure or missing, checked in the audio
  (gateway/speech/checking.py; `livefreq_value_checks_total` counts them, and those skipped);
- ``rival_check``: the rivals of a value heard right but rivalled (a frequency written short, a
  clearance limit the prompt named), scored in the audio, waiting their turn among the finals
  (gateway/speech/checking.py; `livefreq_rival_checks_total`);
- ``bigger_value_check``: the values still unsure after the third hearing, scored by whisper base
  (gateway/speech/checking.py; `livefreq_bigger_value_checks_total`);
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
from typing import get_args

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from engine.models import Decision
from engine.router_llm import Outcome, RouterVerdict

STAGES = (
    "speech_end_to_final", "second_hearing", "third_hearing", "confirm_hearing", "value_check", "rival_check", "bigger_value_check",
    "final_to_decision", "decision_to_first_tts_audio", "speech_end_to_first_audio",
)
# seconds; dense where the targets are (0.35 s p50, 0.7 s / 1.2 s p95, 1.5 s capacity limit)
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0, 3.0, 5.0, 10.0)

STAGE_SECONDS = Histogram(
    "livefreq_stage_seconds", "Latency of one stage of the voice path (see gateway/metrics.py)", ["stage"], buckets=LATENCY_BUCKETS
)
CONNECTIONS = Gauge("livefreq_ws_connections", "Open WebSocket radio connections")
WEBRTC_PEERS = Gauge("livefreq_webrtc_peers", "Open WebRTC peer connections (radio over WebRTC)")
ACTIVE_SESSIONS = Gauge("livefreq_ws_sessions", "Radio connections (WebSocket or WebRTC) with a session attached")
TRANSMISSIONS = Counter("livefreq_transmissions_total", "Pilot transmissions decided", ["source"])
MESSAGES = Counter("livefreq_ws_messages_total", "Radio protocol messages (WebSocket or WebRTC data channel) by direction and type", ["direction", "type"])
CONTROLLER_MESSAGES = Counter("livefreq_controller_messages_total", "Controller messages spoken on a socket", ["outcome"])
DROPPED = Counter(
    "livefreq_ws_dropped_total",
    "WebSocket frames dropped: in, over a rate limit; out, hints (partials, vad) for a slow reader",
    ["direction", "reason"],
)
ERRORS = Counter("livefreq_errors_total", "Errors returned to clients, by code", ["transport", "code"])
SPECULATIVE_TTS = Counter(
    "livefreq_speculative_tts_total",
    "Likely controller replies synthesized ahead (from session start, while the pilot talked)",
    ["outcome"],
)

# the LLM router (gateway/llm): how often it is asked, what its answers were worth, what it costs
ROUTER_DECISIONS = Counter(
    "livefreq_router_decisions_total",
    "Pilot transmissions routed, by the router that decided: deterministic (no LLM), llm, fallback",
    ["router"],
)
SECOND_HEARINGS = Counter(
    "livefreq_second_hearings_total",
    "Voice transmissions the engine would not accept as first heard, by what happened (gateway/speech/rehearing.py)",
    # heard_again | none (no closed decode for this audio) | busy (no worker of the CPU pool was idle)
    # | late (it would end past the reply's due time: LIVEFREQ_SECOND_HEARING_DUE_S) | probe (started
    # though its estimate said late, after 8 skipped in a row, on an idle worker: measured again;
    # every spare decode's counter below has it too, gateway/speech/rehearing.py `PROBE_AFTER`)
    ["outcome"],
)
THIRD_HEARINGS = Counter(
    "livefreq_third_hearings_total",
    "Voice transmissions the engine would not accept after the second hearing, heard by whisper base or not "
    "(gateway/speech/stt/whisper_bigger.py)",
    # heard_again | none (whisper base not installed, or audio past one window) | busy | late (as above)
    ["outcome"],
)
CONFIRM_HEARINGS = Counter(
    "livefreq_confirm_hearings_total",
    "Voice readbacks the engine would accept as first heard, heard by whisper base too or not (gateway/speech/rehearing.py)",
    # confirmed | otherwise (base read a value as another: its transcript joins the alternatives,
    # and the engine asks that value again) | none (no base, or audio past one window) | busy |
    # late (as above)
    ["outcome"],
)
VALUE_CHECKS = Counter(
    "livefreq_value_checks_total",
    "Voice transmissions after the second hearing: values checked in the audio or not (gateway/speech/checking.py)",
    # checked | unneeded (no value to check) | none (the recognizer answered nothing) | busy (no idle
    # worker) | late (it would end past the due time)
    ["outcome"],
)
RIVAL_CHECKS = Counter(
    "livefreq_rival_checks_total",
    "Voice transmissions whose only doubt was a value heard right but rivalled (a frequency written short, a "
    "clearance limit the prompt named): its rivals scored in the audio or not (gateway/speech/checking.py)",
    # checked | none | late (it would end past LIVEFREQ_BIGGER_HEARING_DUE_S); never busy: it waits its turn
    ["outcome"],
)
BIGGER_VALUE_CHECKS = Counter(
    "livefreq_bigger_value_checks_total",
    "Voice transmissions after the third hearing: values checked in the audio by whisper base or not "
    "(gateway/speech/checking.py)",
    # checked | unneeded | none | busy (no worker would stay free) | late (past LIVEFREQ_BIGGER_HEARING_DUE_S)
    ["outcome"],
)
LLM_REQUESTS = Counter("livefreq_llm_requests_total", "LLM router calls by outcome (engine/router_llm.py)", ["outcome"])
LLM_FALLBACKS = Counter(
    "livefreq_llm_fallbacks_total", "LLM router answers not used, by reason (the fallback policy decided)", ["reason"]
)
LLM_TOKENS = Counter("livefreq_llm_tokens_total", "Tokens used by the LLM router", ["kind"])
LLM_SECONDS = Histogram("livefreq_llm_request_seconds", "Latency of one LLM router call", buckets=LATENCY_BUCKETS)
CPU_JOBS = Gauge("livefreq_cpu_jobs", "Speech jobs in the shared CPU pool (gateway/speech/cpu.py)", ["state"])
CPU_BUSY_SECONDS = Counter(
    "livefreq_cpu_busy_seconds_total",
    "Seconds the shared CPU pool's workers spent on jobs, by priority and engine (stt, tts, other)",
    ["priority", "kind"],
)


def cpu_jobs_gauge(running: Callable[[], float], queued: Callable[[], float]) -> None:
    """Read the speech engines' CPU pool at each scrape (the app passes it: metrics imports no
    speech module, the arrows run from the parts to their metrics)."""
    CPU_JOBS.labels("running").set_function(running)
    CPU_JOBS.labels("queued").set_function(queued)

for _stage in STAGES:  # every stage appears in /metrics from the start, with zero counts
    STAGE_SECONDS.labels(_stage)
for _router in ("deterministic", "llm", "fallback"):
    ROUTER_DECISIONS.labels(_router)
for _outcome in get_args(Outcome):
    LLM_REQUESTS.labels(_outcome)
for _kind in ("prompt", "completion"):
    LLM_TOKENS.labels(_kind)


def observe_stage(stage: str, seconds: float) -> None:
    STAGE_SECONDS.labels(stage).observe(max(0.0, seconds))


def count_error(transport: str, code: str) -> None:
    ERRORS.labels(transport, code).inc()


def count_llm_call(verdict: RouterVerdict) -> None:
    """One LLM router call: its outcome, latency and tokens."""
    LLM_REQUESTS.labels(verdict.outcome).inc()
    LLM_SECONDS.observe(verdict.exchange.latency_ms / 1000.0)
    LLM_TOKENS.labels("prompt").inc(verdict.exchange.prompt_tokens)
    LLM_TOKENS.labels("completion").inc(verdict.exchange.completion_tokens)


def count_routing(decision: Decision, verdict: RouterVerdict | None) -> None:
    """Which router decided a transmission, and why an LLM answer was not used, if it was not."""
    router = decision.trace.router
    if router is not None:
        name = router.get("name")
        ROUTER_DECISIONS.labels(name if name in ("llm", "fallback") else "deterministic").inc()
    if verdict is None:
        return
    fallback = router.get("fallback") if router is not None else None
    if fallback is not None:
        LLM_FALLBACKS.labels(str(fallback.get("reason"))).inc()
    elif router is None or router.get("llm") is None:
        LLM_FALLBACKS.labels("stale").inc()  # the question was no longer asked when it came back


def stored_sessions_gauge(count: Callable[[], float]) -> None:
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
