"""`livefreq bench decode`: whisper final decodes one at a time and in batches of 1, 2, 4, 8, 16.

A fixed set of K pilot utterances (the flows' expected phrases, each with its own prompt, spoken by
the piper pilot voice through the radio effect, `tooling.voicekit.pilot_pcm`) is decoded:

- ``sequential``: the gateway's single decode (`WhisperEngine.decode_result`), one per call;
- ``batch B``: B utterances per CTranslate2 call (`gateway.speech.stt.batching.decode_windows`).
  A call needs one shape, so each batch (utterances in length order) is shaped alike: its
  windows padded to the longest, its prompts cut to the shortest (their last tokens kept). That
  costs what a batch of finals of one shape costs, but changes some transcripts: the report counts
  those that differ from the sequential decode (the gateway batches only finals of one shape,
  whose results equal the single decode, see tests/test_decode_batching.py), and the word error
  rate of each configuration against the phrases says whether shaping costs accuracy.

`workers` threads (default: one per core, as the CPU pool runs) take the calls from one queue,
each on its own CTranslate2 replica of `cpu_threads` threads (default 1, as the gateway runs).
Every round runs every configuration, in a rotated order, so a shared machine's load falls on
all alike. Per configuration: utterances per second (wall), seconds of audio per CPU second (the
process's CPU time: CTranslate2 computes in its own threads), and the latency of a call, which
is what the first final of a batch waits for. The utterances' shapes are reported too, and how
many finals of one shape a queue of n holds (what the gateway's batching can find); then all K
finals are queued at once on a CPU pool, as the gateway runs them, without and with its batching
(`burst`): the gain a burst of these utterances really gets.
"""

from __future__ import annotations

import functools
import os
import queue
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.audio.pcm import pcm_to_float32
from gateway.settings import Settings
from gateway.speech.cpu import BatchJob, CpuPool, Priority, cpu_count
from gateway.speech.stt.base import SttResult
from gateway.speech.stt.batching import WindowInput, decode_finals, decode_windows, final_job
from gateway.speech.stt.whisper import WhisperEngine, build_prompt, max_new_tokens, window_samples
from tooling.bench.common import Progress
from tooling.bench.figures import load_average, summarize

__all__ = ["BATCH_SIZES", "DecodeItem", "format_table", "load_utterances", "run_decode_bench", "write_plot"]

BATCH_SIZES = (1, 2, 4, 8, 16)
STT_RATE = 16000
QUEUE_DEPTHS = (2, 4, 8, 16, 32)


@dataclass(frozen=True)
class DecodeItem:
    """One pilot utterance: what is said, its audio and the prompt its state gives whisper."""

    phrase: str
    pcm: bytes
    prompt: str | None

    @property
    def audio_s(self) -> float:
        return len(self.pcm) / 2 / STT_RATE


def load_utterances(settings: Settings, k: int, seed: int = 0) -> list[DecodeItem]:
    """K utterances spread from short to long over the flows' pilot phrases (a fixed set for a
    seed), at radio readability 3-5, with each one's own prompt."""
    from gateway.service import RadioService
    from tooling.bench.voice import flight_script, pick_varied
    from tooling.voicekit import pilot_pcm

    script = flight_script(RadioService(settings), min_phrases=max(k, 15), seed=seed)
    picked = pick_varied(script.pilot, k, key=lambda u: len(u.phrase))
    items = []
    for i, u in enumerate(picked):
        pcm = pilot_pcm(u.phrase, STT_RATE, radio_level=3 + i % 3, seed=seed + i)
        items.append(DecodeItem(u.phrase, pcm, build_prompt(u.context)))
    return items


def shaped_alike(engine: WhisperEngine, items: Sequence[DecodeItem]) -> list[WindowInput]:
    """`items` as windows of one shape: the longest window of them, the shortest prompt (the
    last tokens of each, after its <|startofprev|>)."""
    samples = [pcm_to_float32(item.pcm) for item in items]
    tokens = [engine.prompt_tokens(item.prompt) for item in items]
    tail = len(engine.prompt_tokens(None))  # start of transcript, no timestamps
    keep = min(len(t) for t in tokens) - tail  # prompt tokens kept, <|startofprev|> included
    cut = [[t[0], *t[len(t) - tail - keep + 1 : len(t) - tail], *t[-tail:]] if keep > 0 else t[-tail:] for t in tokens]
    window = max(window_samples(len(s)) for s in samples)
    return [engine.window_input(s, t, max_new_tokens(len(s)), window) for s, t in zip(samples, cut, strict=True)]


@dataclass
class _Run:
    config: str
    wall_s: float = 0.0
    cpu_s: float = 0.0
    utterances: int = 0
    audio_s: float = 0.0


def _in_workers(
    calls: list[Callable[[], list[str]]], workers: int
) -> tuple[list[list[str]], list[float], float, float]:
    """Run `calls` on `workers` threads from one queue: their results in order, each call's
    latency, the wall and the process CPU seconds."""
    todo: queue.Queue[int] = queue.Queue()
    for index in range(len(calls)):
        todo.put(index)
    results: list[list[str]] = [[] for _ in calls]
    latency = [0.0] * len(calls)
    errors: list[BaseException] = []

    def work() -> None:
        while True:
            try:
                index = todo.get_nowait()
            except queue.Empty:
                return
            started = time.perf_counter()
            try:
                results[index] = calls[index]()
            except BaseException as exc:
                errors.append(exc)
                return
            latency[index] = time.perf_counter() - started

    threads = [threading.Thread(target=work, name=f"bench-decode-{i}") for i in range(workers)]
    wall, cpu = time.perf_counter(), time.process_time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if errors:
        raise errors[0]
    return results, latency, wall, cpu


def _texts(results: Sequence[SttResult | BaseException]) -> list[str]:
    return [f"<error: {r}>" if isinstance(r, BaseException) else r.text for r in results]


def _alone(engine: WhisperEngine, item: DecodeItem) -> list[str]:
    return [engine.decode_result(item.pcm, item.prompt).text]


def _together(engine: WhisperEngine, group: list[DecodeItem]) -> list[str]:
    return _texts(decode_windows(engine, shaped_alike(engine, group)))


def _calls(engine: WhisperEngine, items: list[DecodeItem], config: str) -> list[Callable[[], list[str]]]:
    """The calls of one configuration, in the order of `_order`."""
    if config == "sequential":
        return [functools.partial(_alone, engine, item) for item in items]
    size = int(config.split()[1])
    ordered = [items[i] for i in _order(items, config)]
    starts = range(0, len(ordered), size)
    return [functools.partial(_together, engine, ordered[start : start + size]) for start in starts]


def _order(items: list[DecodeItem], config: str) -> list[int]:
    """Item indexes in the order `_calls` returns their texts."""
    if config == "sequential":
        return list(range(len(items)))
    return sorted(range(len(items)), key=lambda i: len(items[i].pcm))


def shape_stats(engine: WhisperEngine, items: Sequence[DecodeItem], cap: int, seed: int = 0) -> dict[str, Any]:
    """Distinct shapes (window, prompt tokens) among `items`, and for a queue of n finals drawn
    from them, how many the head one decodes with (its own shape, up to `cap`), on average."""
    shapes = [(window_samples(len(item.pcm) // 2), len(engine.prompt_tokens(item.prompt))) for item in items]
    rng = random.Random(seed)
    mean_batch: dict[str, float] = {}
    for depth in QUEUE_DEPTHS:
        draws = [[rng.choice(shapes) for _ in range(depth)] for _ in range(2000)]
        mean_batch[str(depth)] = round(sum(min(cap, sum(s == d[0] for s in d)) for d in draws) / len(draws), 3)
    return {
        "distinct": len(set(shapes)),
        "of": len(shapes),
        "largest_group": max(Counter(shapes).values()),
        "head_batch_mean_by_queue": mean_batch,
    }


def exact_batches(engine: WhisperEngine, items: Sequence[DecodeItem], cap: int) -> dict[str, Any]:
    """The utterances whose shapes coincide, decoded as the gateway batches them (their own
    windows and prompts, up to `cap` a call) and compared with their single decode (text and
    hearing): how many came out identical."""
    groups: dict[tuple[int, int], list[DecodeItem]] = {}
    for item in items:
        shape = (window_samples(len(item.pcm) // 2), len(engine.prompt_tokens(item.prompt)))
        groups.setdefault(shape, []).append(item)
    batched = identical = calls = 0
    for members in groups.values():
        for start in range(0, len(members), cap):
            chunk = members[start : start + cap]
            if len(chunk) < 2:
                continue
            inputs = []
            for item in chunk:
                samples = pcm_to_float32(item.pcm)
                tokens = engine.prompt_tokens(item.prompt)
                inputs.append(engine.window_input(samples, tokens, max_new_tokens(len(samples))))
            together = decode_windows(engine, inputs)
            calls += 1
            batched += len(chunk)
            identical += sum(r == engine.decode_result(i.pcm, i.prompt) for r, i in zip(together, chunk, strict=True))
    return {"utterances": batched, "calls": calls, "identical": identical}


def burst(engine: WhisperEngine, items: Sequence[DecodeItem], cap: int, workers: int, rounds: int) -> dict[str, Any]:
    """All K finals queued at once on a CPU pool of `workers` (pilots releasing together), as the
    gateway runs them: each alone, and with its batching (one shape, up to `cap`); per final the
    time from its submission to its result, the time to drain the queue, the calls made, and how
    many transcripts differ between the two (none may)."""
    tokens = [engine.prompt_tokens(item.prompt) for item in items]
    modes = {"pool, alone": 1, f"pool, batched (cap {cap})": cap}
    pools = {mode: CpuPool(workers) for mode in modes}
    waits: dict[str, list[float]] = {mode: [] for mode in modes}
    drain: dict[str, list[float]] = {mode: [] for mode in modes}
    calls: dict[str, list[int]] = {mode: [] for mode in modes}
    texts: dict[str, list[str]] = {}
    names = list(modes)
    for r in range(rounds):
        for mode in names[r % 2 :] + names[: r % 2]:
            size = modes[mode]

            def run(batch: list[Any], mode: str = mode) -> list[Any]:
                calls[mode].append(len(batch))
                return decode_finals(engine, batch)

            started = time.perf_counter()
            futures = []
            for item, start_tokens in zip(items, tokens, strict=True):
                key = final_job(engine, item.pcm, start_tokens, window_samples(len(item.pcm) // 2)).key
                future = pools[mode].submit(BatchJob(key, (item.pcm, start_tokens), run, size), Priority.FINAL)
                future.add_done_callback(functools.partial(_record_wait, waits[mode], started))
                futures.append(future)
            texts[mode] = [future.result()[0].text for future in futures]
            drain[mode].append(time.perf_counter() - started)
    out: dict[str, Any] = {}
    for mode in modes:
        out[mode] = {
            "final_after_submit_ms": summarize([1000.0 * s for s in waits[mode]]),
            "drain_ms_mean": round(1000.0 * sum(drain[mode]) / len(drain[mode]), 1),
            "calls_per_round": len(calls[mode]) // rounds,
            "largest_call": max(calls[mode]),
        }
    out["differ"] = sum(a != b for a, b in zip(*texts.values(), strict=True))
    return out


def _record_wait(waits: list[float], started: float, _future: object) -> None:
    waits.append(time.perf_counter() - started)


def run_decode_bench(
    settings: Settings,
    k: int,
    sizes: Sequence[int] = BATCH_SIZES,
    rounds: int = 3,
    workers: int | None = None,
    progress: Progress | None = None,
    cpu_threads: int = 1,
) -> dict[str, Any]:
    """Measure every configuration `rounds` times, interleaved; the JSON report."""
    from gateway.speech.stt.batching import BATCH_MAX

    workers = workers or cpu_count()
    engine = WhisperEngine(num_workers=workers, cpu_threads=cpu_threads)  # the gateway: one replica per core
    engine.load()
    items = load_utterances(settings, k)
    configs = ["sequential", *(f"batch {b}" for b in sizes)]
    engine.decode_result(items[0].pcm, items[0].prompt)  # warm-up, not a sample
    load_before = load_average()
    runs = {config: _Run(config) for config in configs}
    latencies: dict[str, list[float]] = {config: [] for config in configs}
    texts: dict[str, list[str]] = {}
    progress = progress or Progress("bench decode", rounds * len(configs), unit="runs")
    done = 0
    for r in range(rounds):
        for config in configs[r % len(configs) :] + configs[: r % len(configs)]:  # rotated each round
            results, latency, wall, cpu = _in_workers(_calls(engine, items, config), workers)
            run = runs[config]
            run.wall_s += wall
            run.cpu_s += cpu
            run.utterances += len(items)
            run.audio_s += sum(item.audio_s for item in items)
            latencies[config].extend(latency)
            flat = [text for batch in results for text in batch]
            order = _order(items, config)
            texts[config] = [t for _i, t in sorted(zip(order, flat, strict=True))]
            done += 1
            progress.update(done, config)
    progress.done()
    from tooling.voicekit import word_errors

    baseline = texts["sequential"]
    results_out = []
    for config in configs:
        run = runs[config]
        lat = summarize([1000.0 * s for s in latencies[config]])
        results_out.append(
            {
                "config": config,
                "batch_size": None if config == "sequential" else int(config.split()[1]),
                "utterances": len(items),
                "calls": len(latencies[config]) // rounds,
                "utt_per_s": round(run.utterances / run.wall_s, 3),
                "audio_s_per_cpu_s": round(run.audio_s / run.cpu_s, 3) if run.cpu_s else None,
                "call_ms": lat,
                "per_utterance_wall_ms": round(1000.0 * run.wall_s / run.utterances, 1),
                "differ_from_sequential": sum(a != b for a, b in zip(texts[config], baseline, strict=True)),
                "wer": _corpus_wer([word_errors(i.phrase, text) for i, text in zip(items, texts[config], strict=True)]),
            }
        )
    return {
        "benchmark": "decode",
        "model": str(engine.model_path),
        "beam_size": engine.beam_size,
        "cpu_threads": engine.cpu_threads,
        "ct2_replicas": engine.num_workers,
        "workers": workers,
        "cores": cpu_count(),
        "os_cpu_count": os.cpu_count(),
        "k": len(items),
        "rounds": rounds,
        "audio_s_total": round(sum(item.audio_s for item in items), 2),
        "load_average_before": load_before,
        "load_average_after": load_average(),
        "batch_max": BATCH_MAX,
        "shapes": shape_stats(engine, items, BATCH_MAX),
        "exact_batches": exact_batches(engine, items, BATCH_MAX),
        "burst": burst(engine, items, BATCH_MAX, workers, rounds),
        "results": results_out,
        "utterances": [
            {"phrase": item.phrase, "audio_s": round(item.audio_s, 2), "sequential": text}
            for item, text in zip(items, baseline, strict=True)
        ],
    }


def _corpus_wer(errors: list[tuple[int, int]]) -> float | None:
    words = sum(count for _edits, count in errors)
    return round(sum(edits for edits, _count in errors) / words, 4) if words else None


def format_table(report: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per configuration, under `TABLE_HEAD`."""
    rows: list[tuple[str, ...]] = []
    for r in report["results"]:
        lat = r["call_ms"]
        rows.append(
            (
                r["config"],
                str(r["calls"]),
                f"{r['utt_per_s']:.2f}",
                f"{r['audio_s_per_cpu_s']:.1f}" if r["audio_s_per_cpu_s"] else "-",
                f"{lat['p50']:.0f}",
                f"{lat['p95']:.0f}",
                str(r["differ_from_sequential"]),
                "-" if r["wer"] is None else f"{100 * r['wer']:.1f}%",
            )
        )
    return rows


TABLE_HEAD = ("config", "calls", "utt/s", "audio s/CPU s", "call p50 ms", "call p95 ms", "differ", "WER")


def write_plot(report: dict[str, Any], path: Path) -> Path:
    """Throughput and call latency against batch size, the sequential decode as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    batches = [r for r in report["results"] if r["batch_size"] is not None]
    sequential = next(r for r in report["results"] if r["batch_size"] is None)
    sizes = [r["batch_size"] for r in batches]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
    try:
        left.plot(sizes, [r["utt_per_s"] for r in batches], "o-", label="batched")
        left.axhline(sequential["utt_per_s"], color="#e45756", linestyle="--", label="sequential")
        left.set_xscale("log", base=2)
        left.set_xticks(sizes, [str(s) for s in sizes])
        left.set_xlabel("batch size")
        left.set_ylabel("utterances / s")
        left.legend()
        right.plot(sizes, [r["call_ms"]["p50"] for r in batches], "o-", label="call p50")
        right.plot(sizes, [r["call_ms"]["p95"] for r in batches], "s--", label="call p95")
        right.axhline(sequential["call_ms"]["p50"], color="#e45756", linestyle="--", label="sequential p50")
        right.set_xscale("log", base=2)
        right.set_xticks(sizes, [str(s) for s in sizes])
        right.set_xlabel("batch size")
        right.set_ylabel("ms per call")
        right.legend()
        fig.suptitle(
            f"whisper tiny.en decode, {report['k']} utterances, "
            f"{report['workers']} workers on {report['cores']} cores, "
            f"{report['rounds']} rounds (load avg {report['load_average_before']})",
            fontsize=9,
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path
