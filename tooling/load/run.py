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
server CPU and memory from the gateway's `/metrics` process collector, the gateway's own
stage histograms over the run, and the pilots admitted and refused (a node past its voice
capacity refuses with `too_many_sessions`: by code, how fast, the retry hint).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from tooling.bench.common import Progress
from tooling.bench.figures import load_average, summarize
from tooling.bench.radio import wait_ready
from tooling.corpus import Corpus
from tooling.load.pilot import LoadConfig, PilotLog, fly_pilot
from tooling.load.report import build_report
from tooling.metrics_scrape import Scrape, scrape

__all__ = ["capacity_steps", "machine_cpu_s", "run_load"]

METRICS_EVERY_S = 5.0  # server memory and CPU samples


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
    here, see `tooling.load.gateway.gateway_process`); the report. Sessions of the run are deleted at its end."""
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
            "(their identical controller messages hit the TTS cache and flatter the figures; build more with "
            f"`livefreq corpus build --scenarios {config.sessions} --out {corpus.root}`)",
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
    return build_report(config, corpus, base_url, pid, health, logs, samples, wall_s, load_before, time.process_time() - cpu_before, machine)


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
