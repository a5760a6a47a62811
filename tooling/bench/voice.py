"""`livefreq bench voice`: how fast the voice path is on this machine, with the configured engines.

Three groups, each measured with real engines on real audio (the synthetic pilot of
`tooling.voicekit`: piper voice, radio effect, band noise):

1. Speech to text, in process: real-time factor (decode time / audio duration) of a whole
   recording, the final transcript's delay after the end of the audio when 20 ms frames arrive in
   real time with partials running (as the WebSocket handler does), and the word error rate
   against the phrase spoken (`tooling.bench.speech`).
2. Text to speech, in process: time to the first audio piece and real-time factor for controller
   messages, cold (an engine without any cache, so every piece is synthesized) and warm (the same
   messages through a primed `CachedTts`) (`tooling.bench.speech`).
3. The gateway end to end: ONE pilot on `WS /v1/radio` of a real uvicorn server on loopback
   (started here, or `--url`), flying the clearance -> startup -> taxi -> tower flows by voice in
   real time; from the release of the PTT key to the final transcript, the decision and the first
   byte of the controller's spoken reply (`tooling.bench.radio`).

The phrases are the flows' own: a text walk of seeded sessions collects every state's first
expected pilot phrase (with the recognizer context that state gives) and every controller
message's ICAO speech form. One warm-up run of each engine precedes the timed ones, so model
initialisation (ONNX graph set-up, first allocation) is not counted as a sample.
"""

from __future__ import annotations

import asyncio
import os
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from tooling.bench.common import BenchError, Progress
from tooling.bench.figures import latency_histogram, load_average, summarize
from tooling.bench.radio import BENCH_FLOWS, check_reachable, measure_radio, served_gateway, wait_ready
from tooling.bench.speech import Utterance, measure_stt, measure_tts
from tooling.metrics_scrape import scrape, stage_summary

if TYPE_CHECKING:
    from gateway.service import RadioService
    from gateway.settings import Settings

__all__ = [
    "METRICS",
    "FlightScript",
    "flight_script",
    "format_table",
    "pick_varied",
    "run_voice_bench",
    "write_histogram",
]

T = TypeVar("T")


# name -> (unit, description); the table and the JSON report list metrics in this order
METRICS: dict[str, tuple[str, str]] = {
    "stt_rtf": ("x", "STT decode time / audio duration (whole recording)"),
    "stt_decode_ms": ("ms", "STT decode time of a whole recording"),
    "stt_final_after_end_ms": ("ms", "STT final transcript after the end of real-time audio (partials on)"),
    "stt_wer": ("%", "word error rate of the STT transcript vs the phrase spoken"),
    "tts_cold_first_audio_ms": ("ms", "TTS first audio piece, no cache"),
    "tts_cold_rtf": ("x", "TTS synthesis time / audio duration, no cache"),
    "tts_warm_first_audio_ms": ("ms", "TTS first audio piece, cached"),
    "tts_warm_rtf": ("x", "TTS time / audio duration, cached"),
    "ptt_up_to_final_ms": ("ms", "WebSocket: ptt.up -> final transcript"),
    "ptt_up_to_decision_ms": ("ms", "WebSocket: ptt.up -> decision"),
    "ptt_up_to_first_audio_ms": ("ms", "WebSocket: ptt.up -> first byte of the controller's reply"),
    "decision_to_first_audio_ms": ("ms", "WebSocket: decision -> first byte of the reply (speech, queue)"),
    "radio_wer": ("%", "word error rate of the gateway's final transcripts"),
}


# --------------------------------------------------------------------------- what is said


@dataclass
class FlightScript:
    """Pilot phrases and controller speech of text-flown sessions, in the order they were said."""

    pilot: list[Utterance]
    controller: list[str]  # ICAO speech forms (what the TTS speaks)


def flight_script(
    service: RadioService,
    *,
    min_phrases: int,
    flow: str | None = None,
    flows: Sequence[str] = BENCH_FLOWS,
    seed: int = 0,
    max_sessions: int = 50,
) -> FlightScript:
    """Fly seeded sessions by text (each pilot turn says `expected_pilot[0]`) until at least
    `min_phrases` pilot phrases and as many controller messages are collected.

    A session ends when it completes, leaves `flows` (when given and known), or reaches a state
    with nothing for the pilot to say.
    """
    from gateway.speech.stack import stt_context

    known = [f for f in flows if f in service.registry]
    start = flow or (known[0] if known else service.registry.main_flow)
    allowed = set(known) if known and flow is None else None
    script = FlightScript([], [])
    for offset in range(max_sessions):
        if len(script.pilot) >= min_phrases and len(script.controller) >= min_phrases:
            break
        session, decision, _token = service.create(flow=start, seed=seed + offset)
        sid = session.session_id
        try:
            script.controller.extend(m.speech for m in decision.messages)
            expected = decision.expected_pilot
            for _ in range(100):
                session = service.get(sid)
                if session.completed or not expected or (allowed and session.active.flow not in allowed):
                    break
                script.pilot.append(Utterance(expected[0], stt_context(session, expected), session.active.flow, session.active.state))
                decision = service.transmit(sid, expected[0])
                script.controller.extend(m.speech for m in decision.messages)
                expected = decision.expected_pilot
        finally:
            service.delete(sid)
    if not script.pilot or not script.controller:
        raise BenchError(f"the flows from {start!r} give no pilot phrase or controller message to measure")
    return script


def pick_varied(items: Sequence[T], n: int, key: Callable[[T], float]) -> list[T]:
    """`n` items spread evenly over the range of `key` (short to long), without repeats while the
    pool lasts; a pool smaller than `n` is reused in order."""
    ranked = sorted(range(len(items)), key=lambda i: key(items[i]))
    if n >= len(ranked):
        return [items[ranked[i % len(ranked)]] for i in range(n)]
    if n == 1:
        return [items[ranked[len(ranked) // 2]]]
    picks = [ranked[round(k * (len(ranked) - 1) / (n - 1))] for k in range(n)]
    return [items[i] for i in sorted(picks)]  # in flight order


# --------------------------------------------------------------------------- the run


def run_voice_bench(
    settings: Settings,
    n: int,
    *,
    url: str | None = None,
    err: TextIO | None = None,
) -> dict[str, Any]:
    """Measure all three groups with `settings`' engines (`n` samples each); the JSON report."""
    from gateway.service import RadioService
    from gateway.speech.stack import SpeechStack
    from gateway.speech.tts.factory import make_tts

    err = err or sys.stderr
    if url:
        asyncio.run(check_reachable(url))  # before a minute of in-process work, not after
    load_before = load_average()
    if load_before is not None and load_before > (os.cpu_count() or 1) * 0.5:
        print(f"bench voice: this machine is busy (load average {load_before:.1f}): figures will be slower", file=err)
    service = RadioService(settings)
    script = flight_script(service, min_phrases=max(n, 15))
    utterances = pick_varied(script.pilot, n, key=lambda u: len(u.phrase))
    texts = pick_varied(sorted(set(script.controller), key=script.controller.index), n, key=len)
    print(
        f"bench voice: stt={settings.stt_engine} tts={settings.tts_engine}, n={n}, "
        f"{len(script.pilot)} pilot phrases and {len(script.controller)} controller messages from the flows",
        file=err,
        flush=True,
    )

    async def in_process() -> tuple[dict[str, Any], dict[str, Any]]:
        stt = SpeechStack(settings).stt
        stt_result = await measure_stt(stt, utterances, Progress("stt", n, err, unit="recordings"))
        voice = {"voice": settings.tts_voice} if settings.tts_voice else {}
        tts = make_tts(settings.tts_engine, cache=None, **voice)
        tts_result = await measure_tts(tts, texts, Progress("tts", 2 * n, err, unit="messages (cold, warm)"))
        return stt_result, tts_result

    stt_result, tts_result = asyncio.run(in_process())
    print(f"radio: one pilot over WebSocket at {url or 'a loopback gateway started here'}", file=err, flush=True)
    with served_gateway(settings, url) as base:
        health = asyncio.run(wait_ready(base))
        before = scrape(base)
        radio = asyncio.run(measure_radio(base, n, Progress("radio", n, err, unit="controller replies")))
        after = scrape(base)
    # the same run seen by the gateway's own stage histograms (GET /metrics)
    radio["server_stages"] = stage_summary(after.minus(before)) if before is not None and after is not None else None
    radio["server"] = "external" if url else "in-process"
    radio["health"] = {k: health.get(k) for k in ("version", "speech", "flows")}
    exchanges = radio["exchanges"]
    values: dict[str, list[Any]] = {
        "stt_rtf": [s["rtf"] for s in stt_result["samples"]],
        "stt_decode_ms": [s["decode_ms"] for s in stt_result["samples"]],
        "stt_final_after_end_ms": [s["final_after_end_ms"] for s in stt_result["samples"]],
        "stt_wer": [100.0 * s["wer"] for s in stt_result["samples"] if s["wer"] is not None],
        "tts_cold_first_audio_ms": [s["first_audio_ms"] for s in tts_result["cold"]],
        "tts_cold_rtf": [s["rtf"] for s in tts_result["cold"]],
        "tts_warm_first_audio_ms": [s["first_audio_ms"] for s in tts_result["warm"]],
        "tts_warm_rtf": [s["rtf"] for s in tts_result["warm"]],
        "ptt_up_to_final_ms": [e["final_ms"] for e in exchanges],
        "ptt_up_to_decision_ms": [e["decision_ms"] for e in exchanges],
        "ptt_up_to_first_audio_ms": [e["first_audio_ms"] for e in exchanges],
        "decision_to_first_audio_ms": [
            round(e["first_audio_ms"] - e["decision_ms"], 1) for e in exchanges if e["first_audio_ms"] is not None
        ],
        "radio_wer": [100.0 * e["word_errors"] / e["words"] for e in exchanges if e["words"]],
    }
    metrics = {name: {"unit": METRICS[name][0], "description": METRICS[name][1], **summarize(values[name])} for name in METRICS}
    return {
        "benchmark": "voice",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "n": n,
        "engines": {"stt": settings.stt_engine, "tts": settings.tts_engine, "tts_voice": settings.tts_voice},
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "load_average": {"before": load_before, "after": load_average()},
        "metrics": metrics,
        "stt": stt_result,
        "tts": tts_result,
        "radio": radio,
    }


def format_table(report: dict[str, Any]) -> list[tuple[str, ...]]:
    """Rows (metric, n, p50, p95, mean) of the report's metrics, units in the metric name; then
    the gateway's own stage histograms over the radio run (`server:` rows, GET /metrics)."""
    rows: list[tuple[str, ...]] = []
    for name, m in report["metrics"].items():
        unit = m["unit"]
        label = f"{name.removesuffix('_ms')} ({unit})"
        rows.append((label, str(m["n"]), *(_fmt(m[k], unit) for k in ("p50", "p95", "mean"))))
    for stage, m in (report.get("radio", {}).get("server_stages") or {}).items():
        rows.append((f"server: {stage} (ms)", str(m["n"]), *(_fmt(m[k], "ms") for k in ("p50_ms", "p95_ms", "mean_ms"))))
    return rows


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "ms":
        return f"{value:.0f}" if value >= 10 else f"{value:.2f}"
    if unit == "%":
        return f"{value:.1f}"
    return f"{value:.3f}"


def write_histogram(report: dict[str, Any], path: Path) -> Path:
    """A PNG histogram of PTT release -> first controller audio byte of the radio run."""
    engines = report["radio"].get("speech") or report["engines"]
    replied = [e for e in report["radio"]["exchanges"] if e["first_audio_ms"] is not None]
    title = (
        f"PTT release -> first ATC audio byte, one session (n={len(replied)}; "
        f"stt={engines.get('stt')}, tts={engines.get('tts')}; {report['cpu_count']} CPUs)"
    )
    return latency_histogram(report["radio"]["exchanges"], report["metrics"]["ptt_up_to_first_audio_ms"], title, path)


