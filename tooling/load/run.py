"""`livefreq load`: many pilots at once on `WS /v1/radio`, replaying recorded transmissions.

Each simulated pilot is a `voicekit.VoicePilot` (the same timed client as `livefreq bench voice`)
flying its own seeded scenario. At every pilot turn it takes the corpus recording made for that
scenario and state (`tooling.corpus`), streams it as 20 ms frames in real time between `ptt.down`
and `ptt.up`, and waits for the controller like a person: until every controller message of the
answer has ended, then a human delay before the next call.

The talk model (documented in the README, options of `livefreq load`):

- a pilot answers a controller call (a readback, a reply to "how do you read?") after a think
  time drawn from `think_s` (default 1-3 s);
- a pilot who starts a new call (the last transmission got no spoken answer, or the session just
  began) does so after a workload pause drawn from `pause_s` (default 10-30 s: taxiing, checklists,
  flying); pilots start staggered over the first pause;
- a pilot never keys while the controller talks, and waits for timed controller calls when the
  scenario makes it wait;
- a readback state with a wrong readback in the corpus gets the wrong one first (the controller
  must catch it), then the correct one.

Measured with the default corpus, that makes 2.4 transmissions per pilot per minute, each pilot
talking 30 % of the time (transmissions are 5-9 s of audio): 50 pilots are a classroom of 50
trainees each on their own frequency, at a lively pace.

Reported per run: PTT release -> first controller audio byte (p50/p95/p99), final transcript
and decision times, the word error rate of the gateway's transcripts against the corpus text,
readback verdict accuracy (correct readbacks accepted, wrong ones caught, wrong ones missed),
errors by code (events the pilots received, the gateway's `livefreq_errors_total`, and client
failures such as timeouts), message integrity (seq gaps, out-of-order or interleaved controller
messages, audio outside a message, replies that never came), audio gaps (controller audio
arriving slower than real time, as a client player without a jitter buffer would hear it),
server CPU and memory from the gateway's `/metrics` process collector, and the gateway's own
stage histograms over the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import websockets

from tooling.bench.engine import BenchError, Progress
from tooling.bench.voice import latency_histogram, load_average, summarize, wait_ready
from tooling.corpus import Corpus, CorpusEntry
from tooling.metrics_scrape import Scrape, scrape, stage_summary
from gateway.settings import REPO_ROOT
from gateway.client.base import ProtocolRefused
from tooling.voicekit import Exchange, RadioClient, Received, VoicePilot

__all__ = [
    "CAPACITY_P95_MS",
    "LoadConfig",
    "PilotLog",
    "audio_gaps",
    "capacity_steps",
    "format_table",
    "gateway_process",
    "message_faults",
    "run_load",
]

logger = logging.getLogger("livefreq.load")

TARGET_P95_MS = 1200.0  # many sessions (the target for 50)
SINGLE_P50_MS, SINGLE_P95_MS = 350.0, 700.0  # one session alone
CAPACITY_P95_MS = 1500.0  # the capacity limit: sessions at which p95 passes this
REPLY_TIMEOUT_S = 30.0  # a reply later than this is counted as late, and the pilot hangs up
GAP_MIN_S = 0.02  # a player starving for less than one 20 ms frame does not click
METRICS_EVERY_S = 5.0  # server memory and CPU samples
MAX_SESSIONS = 500
MAX_DURATION_S = 3600.0


@dataclass(frozen=True)
class LoadConfig:
    """One run: how many pilots, for how long, and how they pace their talk (module docstring)."""

    sessions: int
    duration_s: float
    think_s: tuple[float, float] = (1.0, 3.0)
    pause_s: tuple[float, float] = (10.0, 30.0)
    seed: int = 0
    token: str | None = field(default=None, repr=False)  # an API key for a gateway that requires one; never reported

    def check(self) -> None:
        if not 1 <= self.sessions <= MAX_SESSIONS:
            raise BenchError(f"--sessions must be 1 to {MAX_SESSIONS}")
        if not 1 <= self.duration_s <= MAX_DURATION_S:
            raise BenchError(f"--duration must be 1 to {MAX_DURATION_S:g} s")
        for name, (low, high) in (("think", self.think_s), ("pause", self.pause_s)):
            if not 0 <= low <= high:
                raise BenchError(f"--{name} wants MIN,MAX seconds with 0 <= MIN <= MAX")


@dataclass
class PilotLog:
    """What one pilot did and saw."""

    index: int
    seed: int | None
    session_id: str | None = None
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)  # client-side: timeout, closed, refused
    no_recording: int = 0  # turns the corpus had nothing for (the pilot stopped there)
    talk_s: float = 0.0
    client: RadioClient | None = None


# --------------------------------------------------------------------------- the gateway


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def gateway_process(log_path: Path, env: dict[str, str] | None = None, ready_timeout_s: float = 180.0) -> Iterator[tuple[str, int]]:
    """A `livefreq serve` subprocess on a free loopback port with the default engines (or the
    `LIVEFREQ_*` settings in the environment), sessions in memory; yields (base URL, pid) once
    `/health` says ready, and stops it afterwards. Its output goes to `log_path`."""
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


# --------------------------------------------------------------------------- one pilot


async def fly_pilot(
    log: PilotLog,
    base_url: str,
    corpus: Corpus,
    config: LoadConfig,
    started: float,
    pcm_cache: dict[str, bytes],
) -> None:
    """One pilot flying scenario `log.seed` until the run's duration is over (see the module
    docstring for the talk model). Every failure is counted in `log`, never raised."""
    rng = random.Random(f"pilot-{config.seed}-{log.index}")
    loop = asyncio.get_running_loop()
    end = started + config.duration_s
    flow = corpus.start_flow(log.seed) if log.seed is not None else None
    pilot = VoicePilot(base_url, flow=flow, seed=log.seed, timeout_s=REPLY_TIMEOUT_S, token=config.token)
    try:
        await pilot.__aenter__()
    except ProtocolRefused as exc:  # e.g. unauthorized, too_many_sessions
        log.failures[f"refused: {exc.code}"] += 1
        await pilot.__aexit__(None, None, None)
        return
    except (OSError, TimeoutError, ConnectionError, websockets.InvalidHandshake, websockets.ConnectionClosed) as exc:
        log.failures[f"connect: {type(exc).__name__}"] += 1
        await pilot.__aexit__(None, None, None)
        return
    client = pilot.client
    assert client is not None
    log.client, log.session_id = client, pilot.session_id
    answering = False  # the next transmission answers a controller call
    wrong_done: set[tuple[str, str]] = set()
    try:
        await asyncio.sleep(rng.uniform(0.0, config.pause_s[1]))  # pilots join over the first pause
        while loop.time() < end and not pilot.completed:
            pilot.refresh()
            if not pilot.expected:  # the controller keeps the pilot waiting (a timer): listen
                mark = client.mark()
                try:
                    pilot.state = await client.wait_type("state", max(0.1, end - loop.time()), mark)
                except TimeoutError:
                    break
                answering = True
                continue
            key = (str(pilot.state.get("flow")), str(pilot.state.get("state")))
            options = corpus.for_state(log.seed, *key, pilot.expected)
            if not options:
                log.no_recording += 1
                break
            wrong = next((e for e in options if e.kind == "wrong"), None)
            entry: CorpusEntry = wrong if wrong is not None and key not in wrong_done else options[0]
            if entry.kind == "wrong":
                wrong_done.add(key)
            delay = rng.uniform(*(config.think_s if answering else config.pause_s))
            if loop.time() + delay >= end:
                break
            await asyncio.sleep(delay)
            await client.until(lambda: None if client.controller_talking else True, REPLY_TIMEOUT_S, "the controller to finish")
            state = pilot.refresh()
            if (str(state.get("flow")), str(state.get("state"))) != key:
                answering = True  # a timed controller call moved the scenario on meanwhile
                continue
            pcm = pcm_cache.get(entry.file)
            if pcm is None:
                pcm = pcm_cache[entry.file] = await asyncio.to_thread(corpus.pcm, entry)
            exchange = await pilot.transmit(pcm, entry.text)
            log.talk_s += exchange.audio_s
            log.exchanges.append(_record(exchange, entry))
            answering = exchange.reply_seq is not None
    except TimeoutError:
        log.failures["late reply (timeout)"] += 1
    except (ConnectionError, websockets.ConnectionClosed):
        log.failures["connection closed"] += 1
    except Exception as exc:  # counted, and logged with its traceback: one pilot never stops the run
        logger.exception("pilot %d failed", log.index)
        log.failures[f"pilot error: {type(exc).__name__}"] += 1
    finally:
        with contextlib.suppress(Exception):
            await pilot.__aexit__(None, None, None)


def _record(exchange: Exchange, entry: CorpusEntry) -> dict[str, Any]:
    """The exchange as a report row, with the recording's ground truth and the verdict check."""
    row = exchange.as_dict()
    row.update(file=entry.file, kind=entry.kind, expected_readback=entry.expected_readback, wrong_field=entry.wrong_field)
    verdict: str | None = None
    if entry.expected_readback is not None:
        if exchange.readback_ok is None:
            verdict = "not judged"  # decided in another state (a timer moved the scenario on)
        elif not exchange.readback_ok and exchange.readback_unsure and not exchange.readback_wrong:
            verdict = "say again"  # the controller asked for a value it heard unsure: no verdict
        elif entry.expected_readback == "ok":
            verdict = "accepted" if exchange.readback_ok else "rejected"
        elif exchange.readback_ok:
            verdict = "missed"  # a wrong readback the controller took as correct
        else:
            verdict = "caught" if entry.wrong_field in exchange.readback_not_ok else "caught other field"
    row["verdict"] = verdict
    return row


# --------------------------------------------------------------------------- what the pilots saw


def message_faults(rx: Received) -> dict[str, int]:
    """Protocol faults in what one socket received: seq gaps (lost), seqs going back or repeated
    (out of order), a message starting before the previous one ended (interleaved), an end
    without its start, and audio outside any message."""
    faults = Counter[str]()
    last_seq: int | None = None
    open_seq: int | None = None
    for event in rx.events:
        kind = event.get("type")
        if kind == "atc.message":
            seq = int(event.get("seq") or 0)
            if last_seq is not None and seq > last_seq + 1:
                faults["lost"] += seq - last_seq - 1
            elif last_seq is not None and seq <= last_seq:
                faults["out_of_order"] += 1
            if open_seq is not None:
                faults["interleaved"] += 1
            last_seq, open_seq = max(seq, last_seq or 0), seq
        elif kind == "atc.message.end":
            if open_seq is None or event.get("seq") != open_seq:
                faults["unmatched_end"] += 1
            open_seq = None
    faults["stray_audio"] += rx.stray_audio
    return {k: faults.get(k, 0) for k in ("lost", "out_of_order", "interleaved", "unmatched_end", "stray_audio")}


def audio_gaps(frames: list[tuple[float, int]], rate: int = 16000, min_gap_s: float = GAP_MIN_S) -> list[tuple[float, float]]:
    """Where a player starting at the first frame would run dry: (seconds of the message played
    before, seconds of silence) of each gap where audio arrived slower than real time. The
    player resumes when the late frame arrives."""
    if not frames:
        return []
    gaps: list[tuple[float, float]] = []
    clock = frames[0][0]  # when the audio received so far has been played out
    played = 0.0
    for arrived, nbytes in frames:
        if arrived - clock >= min_gap_s:
            gaps.append((played, arrived - clock))
        clock = max(clock, arrived) + nbytes / 2 / rate
        played += nbytes / 2 / rate
    return gaps


# --------------------------------------------------------------------------- a run


def run_load(
    config: LoadConfig,
    corpus: Corpus,
    url: str,
    *,
    pid: int | None = None,
    err: TextIO | None = None,
    label: str = "load",
) -> dict[str, Any]:
    """One run of `config.sessions` pilots against the gateway at `url` (`pid`: it was started
    here, see `gateway_process`); the report. Sessions of the run are deleted at its end."""
    config.check()
    return asyncio.run(_run(config, corpus, url.rstrip("/"), pid, err or sys.stderr, label))


def capacity_steps(start: int, limit: int) -> Iterator[int]:
    """Session counts to try: `start`, then up by a quarter (at least 5) each step, to `limit`."""
    n = max(1, start)
    while n <= limit:
        yield n
        n += max(5, n // 4)


async def _run(config: LoadConfig, corpus: Corpus, base_url: str, pid: int | None, err: TextIO, label: str) -> dict[str, Any]:
    health = await wait_ready(base_url, 30.0)
    seeds = corpus.seeds or [None]
    if len(corpus.seeds) and len(corpus.seeds) < config.sessions:
        print(
            f"{label}: the corpus has {len(corpus.seeds)} scenarios for {config.sessions} pilots: some fly the same one "
            "(their identical controller messages hit the TTS cache; build more with --scenarios)",
            file=err,
        )
    logs = [PilotLog(i, seeds[i % len(seeds)]) for i in range(config.sessions)]
    pcm_cache: dict[str, bytes] = {}
    loop = asyncio.get_running_loop()
    before = await asyncio.to_thread(scrape, base_url, 5.0, config.token)
    samples: list[tuple[float, Scrape]] = [(0.0, before)] if before is not None else []
    load_before = load_average()
    machine_before = machine_cpu_s()
    cpu_before = time.process_time()
    started = loop.time()
    wall_started = time.perf_counter()
    progress = Progress(label, int(config.duration_s), err, unit="s")

    async def watch() -> None:
        while True:
            await asyncio.sleep(1.0)
            elapsed = loop.time() - started
            latencies = [e["first_audio_ms"] for log in logs for e in log.exchanges if e["first_audio_ms"] is not None]
            p95 = summarize(latencies)["p95"]
            progress.update(
                min(int(elapsed), int(config.duration_s)),
                f"{config.sessions} pilots, {sum(len(log.exchanges) for log in logs)} transmissions"
                + (f", p95 {p95:.0f} ms" if p95 is not None else ""),
            )
            if samples and elapsed - samples[-1][0] >= METRICS_EVERY_S:
                reading = await asyncio.to_thread(scrape, base_url, 5.0, config.token)
                if reading is not None:
                    samples.append((elapsed, reading))

    watcher = asyncio.create_task(watch(), name="load-progress")
    try:
        await asyncio.gather(*(fly_pilot(log, base_url, corpus, config, started, pcm_cache) for log in logs))
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    wall_s = time.perf_counter() - wall_started
    progress.update(int(config.duration_s))
    progress.done()
    after = await asyncio.to_thread(scrape, base_url, 5.0, config.token)
    if after is not None:
        samples.append((loop.time() - started, after))
    await _end_sessions(base_url, logs, config.token)
    machine_after = machine_cpu_s()
    machine = None if machine_before is None or machine_after is None else machine_after - machine_before
    return _report(config, corpus, base_url, pid, health, logs, samples, wall_s, load_before, time.process_time() - cpu_before, machine)


def machine_cpu_s() -> float | None:
    """CPU seconds every process on the machine has used since boot (Linux `/proc/stat`), so a
    run can tell how much CPU others took from it (other engineers' test suites share the cores)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    except (OSError, ValueError):
        return None
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


async def _end_sessions(base_url: str, logs: list[PilotLog], token: str | None) -> None:
    """Delete the run's sessions, so a gateway serving several runs holds none of them."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with httpx.AsyncClient(base_url=base_url, timeout=10.0, headers=headers) as http:
        for log in logs:
            if log.session_id is not None:
                with contextlib.suppress(httpx.HTTPError):
                    await http.delete(f"/api/radio/sessions/{log.session_id}")


def _report(
    config: LoadConfig,
    corpus: Corpus,
    base_url: str,
    pid: int | None,
    health: dict[str, Any],
    logs: list[PilotLog],
    samples: list[tuple[float, Scrape]],
    wall_s: float,
    load_before: float | None,
    client_cpu_s: float,
    machine_cpu: float | None = None,
) -> dict[str, Any]:
    exchanges = [e for log in logs for e in log.exchanges]
    first_audio = summarize([e["first_audio_ms"] for e in exchanges])
    edits, words = sum(e["word_errors"] for e in exchanges), sum(e["words"] for e in exchanges)
    verdicts = Counter(e["verdict"] for e in exchanges if e["verdict"] is not None)
    judged_correct = verdicts["accepted"] + verdicts["rejected"]
    judged_wrong = verdicts["caught"] + verdicts["caught other field"] + verdicts["missed"]
    received_errors = Counter(
        str(ev.get("code")) for log in logs if log.client is not None for ev in log.client.rx.events if ev.get("type") == "error"
    )
    failures = Counter[str]()
    for log in logs:
        failures.update(log.failures)
    faults = Counter[str]()
    gaps: list[float] = []
    worst: list[dict[str, Any]] = []  # the longest gaps: where in which message
    messages = messages_with_gaps = 0
    for log in logs:
        if log.client is None:
            continue
        faults.update(message_faults(log.client.rx))
        texts = {ev.get("message_id"): ev.get("text") for ev in log.client.rx.events if ev.get("type") == "atc.message"}
        for message_id, frames in log.client.rx.audio_frames.items():
            messages += 1
            found = audio_gaps(frames)
            messages_with_gaps += bool(found)
            gaps.extend(gap for _at, gap in found)
            worst.extend({"gap_ms": round(g * 1000, 1), "after_s": round(at, 2), "message": texts.get(message_id)} for at, g in found)
    worst = sorted(worst, key=lambda w: -w["gap_ms"])[:10]
    server = _server_figures(samples)
    p95 = first_audio["p95"]
    errors_total = sum(received_errors.values()) + sum(failures.values()) + sum(server.get("errors_by_code", {}).values())
    lost_or_disordered = faults["lost"] + faults["out_of_order"] + faults["interleaved"] + faults["unmatched_end"] + faults["stray_audio"]
    talk_s = sum(log.talk_s for log in logs)
    return {
        "benchmark": "load",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": {
            "sessions": config.sessions,
            "duration_s": config.duration_s,
            "think_s": list(config.think_s),
            "pause_s": list(config.pause_s),
            "seed": config.seed,
            "corpus": str(corpus.root),
            "corpus_recordings": len(corpus.entries),
            "corpus_scenarios": len(corpus.seeds),
        },
        "gateway": {"url": base_url, "started_here": pid is not None, "pid": pid, "speech": health.get("speech"), "version": health.get("version")},
        "cpu_count": os.cpu_count(),
        "load_average": {"before": load_before, "after": load_average()},
        "wall_s": round(wall_s, 1),
        "transmissions": len(exchanges),
        "replies": first_audio["n"],
        "talk_duty": round(talk_s / (config.sessions * config.duration_s), 3),
        "transmissions_per_pilot_minute": round(len(exchanges) / config.sessions / (config.duration_s / 60), 2),
        "latency_ms": {
            "ptt_up_to_first_audio": first_audio,
            "ptt_up_to_final": summarize([e["final_ms"] for e in exchanges]),
            "ptt_up_to_decision": summarize([e["decision_ms"] for e in exchanges]),
        },
        "wer": round(edits / words, 4) if words else None,
        "not_understood": sum(1 for e in exchanges if e["recognized"] is False),
        "verdicts": {
            "counts": dict(verdicts),
            "correct_readbacks": judged_correct,
            "correct_accepted": verdicts["accepted"],
            "wrong_readbacks": judged_wrong,
            "wrong_caught": verdicts["caught"] + verdicts["caught other field"],
            "wrong_missed": verdicts["missed"],
            "say_again": verdicts["say again"],
            "accuracy": round((verdicts["accepted"] + verdicts["caught"] + verdicts["caught other field"]) / (judged_correct + judged_wrong), 4)
            if judged_correct + judged_wrong
            else None,
        },
        "errors": {"total": errors_total, "received_by_code": dict(received_errors), "client": dict(failures), "server_by_code": server.pop("errors_by_code", {})},
        "messages": {"controller_messages": messages, **{k: faults[k] for k in ("lost", "out_of_order", "interleaved", "unmatched_end", "stray_audio")}, "total_faults": lost_or_disordered},
        "audio": {
            "messages": messages,
            "messages_with_gaps": messages_with_gaps,
            "gaps": len(gaps),
            "gap_s_total": round(sum(gaps), 3),
            "gap_ms_max": round(max(gaps) * 1000, 1) if gaps else 0.0,
            "longest": worst,
        },
        "server": server,
        "client_cpu_s": round(client_cpu_s, 1),
        # cores the rest of the machine used meanwhile: a busy machine makes every figure slower
        "other_cpu_cores": _other_cores(machine_cpu, client_cpu_s, server.get("cpu_s"), base_url, wall_s),
        "no_recording": sum(log.no_recording for log in logs),
        "targets": {
            "p50_ms_max": SINGLE_P50_MS if config.sessions == 1 else None,
            "p95_ms_max": SINGLE_P95_MS if config.sessions == 1 else TARGET_P95_MS,
            "p50_ok": config.sessions > 1 or (first_audio["p50"] is not None and first_audio["p50"] <= SINGLE_P50_MS),
            "p95_ok": p95 is not None and p95 <= (SINGLE_P95_MS if config.sessions == 1 else TARGET_P95_MS),
            "no_errors": errors_total == 0,
            "no_lost_or_out_of_order": lost_or_disordered == 0,
            "capacity_p95_ms": CAPACITY_P95_MS,
            "over_capacity": p95 is not None and p95 > CAPACITY_P95_MS,
        },
        "exchanges": exchanges,
    }


def _other_cores(machine_cpu: float | None, client_cpu_s: float, server_cpu_s: float | None, base_url: str, wall_s: float) -> float | None:
    """Cores used during the run by processes other than the pilots and a gateway on this machine."""
    from urllib.parse import urlsplit

    local = urlsplit(base_url).hostname in ("127.0.0.1", "localhost", "::1")
    if machine_cpu is None or wall_s <= 0 or (local and server_cpu_s is None):
        return None
    return round(max(0.0, machine_cpu - client_cpu_s - ((server_cpu_s or 0.0) if local else 0.0)) / wall_s, 2)


def _server_figures(samples: list[tuple[float, Scrape]]) -> dict[str, Any]:
    """CPU and memory of the gateway process over the run, its stage histograms and errors."""
    if len(samples) < 2:
        return {"metrics": False}
    (t0, first), (t1, last) = samples[0], samples[-1]
    rss = [s.value("process_resident_memory_bytes") for _, s in samples]
    rss_mb = [round(v / 2**20, 1) for v in rss if v is not None]
    cpu0, cpu1 = first.value("process_cpu_seconds_total"), last.value("process_cpu_seconds_total")
    windows = [  # cores used between consecutive samples: the steady state, not the ramp-up
        (b.value("process_cpu_seconds_total") - a.value("process_cpu_seconds_total")) / (tb - ta)  # type: ignore[operator]
        for (ta, a), (tb, b) in zip(samples, samples[1:])
        if tb - ta >= 1.0 and a.value("process_cpu_seconds_total") is not None and b.value("process_cpu_seconds_total") is not None
    ]
    delta = last.minus(first)
    errors = {
        f"{dict(labels).get('transport')}:{dict(labels).get('code')}": int(value)
        for (name, labels), value in delta.samples.items()
        if name == "livefreq_errors_total" and value > 0
    }
    speculative = {
        dict(labels).get("outcome", "?"): int(value)
        for (name, labels), value in delta.samples.items()
        if name == "livefreq_speculative_tts_total" and value > 0
    }
    return {
        "metrics": True,
        "cpu_s": round(cpu1 - cpu0, 1) if cpu0 is not None and cpu1 is not None else None,
        "cpu_cores_used": round((cpu1 - cpu0) / (t1 - t0), 2) if cpu0 is not None and cpu1 is not None and t1 > t0 else None,
        "cpu_cores_peak": round(max(windows), 2) if windows else None,  # busiest 5 s
        "rss_mb_start": rss_mb[0] if rss_mb else None,
        "rss_mb_peak": max(rss_mb) if rss_mb else None,
        "rss_mb_end": rss_mb[-1] if rss_mb else None,
        "rss_mb_samples": rss_mb,
        "stages": stage_summary(delta),
        "speculative_tts": speculative,
        "errors_by_code": errors,
    }


# --------------------------------------------------------------------------- output


def format_table(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(what, figure) rows of a run for the terminal."""
    lat = report["latency_ms"]
    v, m, a, s = report["verdicts"], report["messages"], report["audio"], report["server"]

    def ms(stats: dict[str, Any]) -> str:
        if not stats["n"]:
            return "-"
        return f"p50 {stats['p50']:.0f}  p95 {stats['p95']:.0f}  p99 {stats['p99']:.0f}  (n={stats['n']})"

    rows = [
        ("pilots, duration", f"{report['config']['sessions']} for {report['config']['duration_s']:g} s (load average {report['load_average']['before']} -> {report['load_average']['after']}"
         + ("" if report.get("other_cpu_cores") is None else f"; other processes used {report['other_cpu_cores']} cores") + ")"),
        ("transmissions, talk duty", f"{report['transmissions']} ({report['transmissions_per_pilot_minute']}/pilot/min), pilots talking {100 * report['talk_duty']:.0f} % of the time"),
        ("PTT release -> first ATC audio (ms)", ms(lat["ptt_up_to_first_audio"])),
        ("PTT release -> final transcript (ms)", ms(lat["ptt_up_to_final"])),
        ("PTT release -> decision (ms)", ms(lat["ptt_up_to_decision"])),
        ("transcript WER", "-" if report["wer"] is None else f"{100 * report['wer']:.1f} %  ({report['not_understood']} not understood)"),
        ("readback verdicts", f"correct accepted {v['correct_accepted']}/{v['correct_readbacks']}, wrong caught {v['wrong_caught']}/{v['wrong_readbacks']}, wrong missed {v['wrong_missed']}, said again {v.get('say_again', 0)}"
         + ("" if v["accuracy"] is None else f", accuracy {100 * v['accuracy']:.1f} %")),
        ("errors", f"{report['errors']['total']}" + "".join(f"  {k}={n}" for part in ("received_by_code", "client", "server_by_code") for k, n in report["errors"][part].items())),
        ("messages lost/out of order", f"{m['lost']}/{m['out_of_order']} of {m['controller_messages']} (interleaved {m['interleaved']}, stray audio {m['stray_audio']})"),
        ("audio gaps", f"{a['gaps']} in {a['messages_with_gaps']} of {a['messages']} messages, {a['gap_s_total']:.2f} s in all, longest {a['gap_ms_max']:.0f} ms"),
    ]
    if s.get("metrics"):
        rows.append(("server CPU", f"{s['cpu_s']} s: {s['cpu_cores_used']} cores of {report['cpu_count']} on average, "
                     f"{s['cpu_cores_peak']} in the busiest 5 s; client (pilots) {report['client_cpu_s']} s"))
        rows.append(("server memory (RSS MB)", f"start {s['rss_mb_start']}, peak {s['rss_mb_peak']}, end {s['rss_mb_end']}"))
        for stage, st in s["stages"].items():
            if st["n"]:
                rows.append((f"server: {stage} (ms)", f"p50 {st['p50_ms']}  p95 {st['p95_ms']}  p99 {st['p99_ms']}  (n={st['n']})"))
        if s.get("speculative_tts"):
            rows.append(("server: speculative TTS", ", ".join(f"{k} {n}" for k, n in s["speculative_tts"].items())))
    return rows


def write_outputs(report: dict[str, Any], report_dir: Path, name: str = "load") -> tuple[Path, Path]:
    """`<name>.json` and `<name>.png` (latency histogram) in `report_dir`."""
    import json

    report_dir.mkdir(parents=True, exist_ok=True)
    speech = report["gateway"].get("speech") or {}
    metric = report["latency_ms"]["ptt_up_to_first_audio"]
    title = (
        f"PTT release -> first ATC audio byte, {report['config']['sessions']} pilots for {report['config']['duration_s']:g} s "
        f"(n={metric['n']}; stt={speech.get('stt')}, tts={speech.get('tts')}; {report['cpu_count']} CPUs)"
    )
    png = latency_histogram(report["exchanges"], metric, title, report_dir / f"{name}.png")
    report["png"] = str(png)
    path = report_dir / f"{name}.json"
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return path, png
