"""`livefreq bench voice`: how fast the voice path is on this machine, with the configured engines.

Three groups, each measured with real engines on real audio (the synthetic pilot of
`tooling.voicekit`: piper voice, radio effect, band noise):

1. Speech to text, in process: real-time factor (decode time / audio duration) of a whole
   recording, the final transcript's delay after the end of the audio when 20 ms frames arrive in
   real time with partials running (as the WebSocket handler does), and the word error rate
   against the phrase spoken.
2. Text to speech, in process: time to the first audio piece and real-time factor for controller
   messages, cold (an engine without any cache, so every piece is synthesized) and warm (the same
   messages through a primed `CachedTts`).
3. The gateway end to end: ONE pilot on `WS /v1/radio` of a real uvicorn server on loopback
   (started here, or `--url`), flying the clearance -> startup -> taxi -> tower flows by voice in
   real time; from the release of the PTT key to the final transcript, the decision and the first
   byte of the controller's spoken reply.

The phrases are the flows' own: a text walk of seeded sessions collects every state's first
expected pilot phrase (with the recognizer context that state gives) and every controller
message's ICAO speech form. One warm-up run of each engine precedes the timed ones, so model
initialisation (ONNX graph set-up, first allocation) is not counted as a sample.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import websockets

from tooling.bench.engine import BackgroundServer, BenchError, Progress
from tooling.metrics_scrape import scrape, stage_summary
from gateway.speech.stt.base import SttContext, SttEngine, start_engine
from tooling.voicekit import (
    FRAME_MS,
    Exchange,
    VoicePilot,
    frames,
    pcm_seconds,
    pilot_pcm,
    word_errors,
)

if TYPE_CHECKING:
    from gateway.service import RadioService
    from gateway.settings import Settings
    from gateway.speech.tts.base import TtsEngine

__all__ = [
    "BENCH_FLOWS",
    "METRICS",
    "FlightScript",
    "Utterance",
    "flight_script",
    "latency_histogram",
    "load_average",
    "measure_radio",
    "measure_stt",
    "measure_tts",
    "pick_varied",
    "run_voice_bench",
    "summarize",
    "write_histogram",
]

T = TypeVar("T")

BENCH_FLOWS = ("clearance", "startup_pushback", "taxi_out", "tower_departure")
STT_RATE = 16000
PARTIAL_EVERY_S = 0.5  # how often the WebSocket handler asks the recognizer for a partial
SERVER_READY_TIMEOUT_S = 180.0
RADIO_TIMEOUT_S = 60.0  # longest wait for one answer from the gateway
WARMUP_TEXT = "Radio check, how do you read."

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


@dataclass(frozen=True)
class Utterance:
    """A pilot phrase a state expects, and what the recognizer is told to expect there."""

    phrase: str
    context: SttContext
    flow: str
    state: str


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


# --------------------------------------------------------------------------- statistics


def summarize(values: Sequence[float | None]) -> dict[str, float | int | None]:
    """n, p50, p95, p99 (linear interpolation between ranks), mean, min and max of the values given."""
    import numpy as np

    data = [float(v) for v in values if v is not None]
    if not data:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "mean": None, "min": None, "max": None}
    arr = np.asarray(data)
    return {
        "n": len(data),
        "p50": round(float(np.percentile(arr, 50)), 4),
        "p95": round(float(np.percentile(arr, 95)), 4),
        "p99": round(float(np.percentile(arr, 99)), 4),
        "mean": round(statistics.fmean(data), 4),
        "min": round(min(data), 4),
        "max": round(max(data), 4),
    }


# --------------------------------------------------------------------------- 1. speech to text


async def measure_stt(stt: SttEngine, utterances: Sequence[Utterance], progress: Progress) -> dict[str, Any]:
    """Per utterance: whole-recording decode (RTF, transcript, WER), then the same audio fed in
    real time as 20 ms frames with partials polled every 0.5 s and the final awaited at its end."""
    await start_engine(stt)
    recordings = [await asyncio.to_thread(pilot_pcm, u.phrase, STT_RATE) for u in utterances]
    if recordings:
        await _decode_whole(stt, recordings[0], utterances[0].context)  # warm-up, not a sample
    samples: list[dict[str, Any]] = []
    edits = words = 0
    for done, (utterance, pcm) in enumerate(zip(utterances, recordings), start=1):
        audio_s = pcm_seconds(pcm, STT_RATE)
        text, decode_s = await _decode_whole(stt, pcm, utterance.context)
        errors, count = word_errors(utterance.phrase, text)
        edits, words = edits + errors, words + count
        streamed, after_end_s, partials = await _decode_streaming(stt, pcm, utterance.context)
        samples.append(
            {
                "flow": utterance.flow,
                "state": utterance.state,
                "phrase": utterance.phrase,
                "audio_s": round(audio_s, 3),
                "transcript": text,
                "decode_ms": _ms(decode_s),
                "rtf": round(decode_s / audio_s, 4),
                "word_errors": errors,
                "words": count,
                "wer": round(errors / count, 4) if count else None,
                "streamed_transcript": streamed,
                "final_after_end_ms": _ms(after_end_s),
                "partials": partials,
            }
        )
        progress.update(done)
    progress.done()
    return {"engine": stt.name, "samples": samples, "corpus_wer": round(edits / words, 4) if words else None}


async def _decode_whole(stt: SttEngine, pcm: bytes, context: SttContext) -> tuple[str, float]:
    stream = stt.open(context)
    try:
        stream.feed(pcm)
        started = time.perf_counter()
        text = await stream.final()
        return text.strip(), time.perf_counter() - started
    finally:
        await stream.aclose()


async def _decode_streaming(stt: SttEngine, pcm: bytes, context: SttContext) -> tuple[str, float, int]:
    """(final transcript, seconds from the end of the audio to the final, partials produced)."""
    stream = stt.open(context)
    partials = 0
    fed = 0

    async def poll() -> None:
        nonlocal partials
        while True:
            await asyncio.sleep(PARTIAL_EVERY_S)
            if fed and await stream.partial():
                partials += 1

    poller = asyncio.create_task(poll(), name="bench-partials")
    loop = asyncio.get_running_loop()
    try:
        start = loop.time()
        for k, frame in enumerate(frames(pcm, STT_RATE, FRAME_MS)):
            delay = start + k * FRAME_MS / 1000 - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            stream.feed(frame)
            fed += len(frame)
        delay = start + pcm_seconds(pcm, STT_RATE) - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)  # the speaker releases the key when the audio ends
        ended = time.perf_counter()
        poller.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await poller
        text = await stream.final()
        return text.strip(), time.perf_counter() - ended, partials
    finally:
        poller.cancel()
        await stream.aclose()


# --------------------------------------------------------------------------- 2. text to speech


async def measure_tts(engine: TtsEngine, texts: Sequence[str], progress: Progress) -> dict[str, Any]:
    """Cold: `engine` (which must have no cache) speaks each text; warm: the same texts through a
    fresh `CachedTts` over `engine`, primed with each text before it is timed."""
    from gateway.speech.tts.cache import CachedTts, TtsCache

    await engine.load()
    await _speak(engine, WARMUP_TEXT)  # warm-up, not a sample
    cold: list[dict[str, Any]] = []
    for done, text in enumerate(texts, start=1):
        cold.append(await _speak(engine, text))
        progress.update(done)
    cached = CachedTts(engine, TtsCache())
    warm: list[dict[str, Any]] = []
    for done, text in enumerate(texts, start=len(texts) + 1):
        await cached.synthesize(text)
        warm.append(await _speak(cached, text))
        progress.update(done)
    progress.done()
    return {"engine": engine.name, "voice": engine.voice, "sample_rate": engine.sample_rate, "cold": cold, "warm": warm}


async def _speak(engine: TtsEngine, text: str) -> dict[str, Any]:
    started = time.perf_counter()
    first: float | None = None
    nbytes = pieces = 0
    async for pcm in engine.stream(text):
        if first is None:
            first = time.perf_counter() - started
        nbytes += len(pcm)
        pieces += 1
    total = time.perf_counter() - started
    audio_s = nbytes / 2 / engine.sample_rate
    return {
        "text": text,
        "pieces": pieces,
        "audio_s": round(audio_s, 3),
        "first_audio_ms": _ms(first) if first is not None else None,
        "total_ms": _ms(total),
        "rtf": round(total / audio_s, 4) if audio_s else None,
    }


# --------------------------------------------------------------------------- 3. the gateway


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


async def _check_reachable(base_url: str) -> None:
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
def _gateway(settings: Settings, url: str | None) -> Iterator[str]:
    """The base URL to measure: `url` as given, or a gateway served here on a loopback port with
    its own speech stack (fresh TTS cache) loaded at start-up."""
    if url:
        yield url.rstrip("/")
        return
    from gateway.app import create_app

    # its own server, sessions in memory: a benchmark never writes to the user's database
    server_settings = settings.model_copy(update={"speech_preload": True, "store": "memory"})
    with BackgroundServer(create_app(server_settings)) as server:
        yield server.url


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
        asyncio.run(_check_reachable(url))  # before a minute of in-process work, not after
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
    with _gateway(settings, url) as base:
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


def latency_histogram(exchanges: Sequence[dict[str, Any]], metric: dict[str, Any], title: str, path: Path) -> Path:
    """A PNG histogram of the exchanges' `first_audio_ms` (PTT release -> first controller audio
    byte) with the p50 and p95 of `metric` marked; replies that waited behind another controller
    call are stacked in their own colour. `livefreq bench voice` and `livefreq load` draw it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    replied = [e for e in exchanges if e.get("first_audio_ms") is not None]
    latencies = [e["first_audio_ms"] for e in replied]
    direct = [e["first_audio_ms"] for e in replied if not e.get("spoken_before_reply")]
    queued = [e["first_audio_ms"] for e in replied if e.get("spoken_before_reply")]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    try:
        if latencies:
            ax.hist(
                [direct, queued],
                bins=max(20, min(60, 4 * len(latencies))),
                stacked=True,
                color=["#4c78a8", "#f58518"],
                edgecolor="white",
                label=["reply spoken first", "after another controller call (e.g. a silence prompt)"],
            )
            for key, style in (("p50", "-"), ("p95", "--")):
                if metric.get(key) is not None:
                    ax.axvline(metric[key], color="#e45756", linestyle=style, label=f"{key} {metric[key]:.0f} ms")
            ax.legend()
        else:
            ax.text(0.5, 0.5, "no controller reply was measured", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("milliseconds")
        ax.set_ylabel("transmissions")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path


def load_average() -> float | None:
    """The 1-minute load average (other work on the machine slows every figure), where known."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 1)
