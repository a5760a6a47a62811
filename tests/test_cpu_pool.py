"""The shared CPU pool serves what a pilot waits for first, and the frequency synthesizes a
message's next sentence while the one before is sent."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from gateway.radio.playout import prefetched
from gateway.speech.cpu import CpuPool, Priority, current_priority
from tests.support.cpu_pool import hold_worker


def test_jobs_run_by_priority_then_in_order() -> None:
    pool = CpuPool(1)
    blocker, gate = hold_worker(pool, Priority.PARTIAL)  # holds the only worker
    done: list[str] = []
    now = time.monotonic()
    jobs = [
        ("partial", Priority.PARTIAL, None),
        ("ahead, due later", Priority.AHEAD, now + 3.0),
        ("final 1", Priority.FINAL, None),
        ("ahead, due sooner", Priority.AHEAD, now + 1.0),
        ("on air", Priority.ON_AIR, None),
        ("final 2", Priority.FINAL, None),
    ]
    futures = [pool.submit(lambda name=name: done.append(name), level, due) for name, level, due in jobs]
    assert pool.saturated() and pool.queued == len(jobs)
    dropped = pool.submit(lambda: done.append("dropped"), Priority.FINAL)
    assert dropped.cancel()  # a queued job its caller gave up on never runs
    gate.set()
    for future in [blocker, *futures]:
        future.result(timeout=10)
    assert done == ["final 1", "final 2", "on air", "ahead, due sooner", "ahead, due later", "partial"]
    assert not pool.saturated() and pool.busy == 0


def test_a_failing_job_hands_its_error_to_the_caller() -> None:
    pool = CpuPool(2)

    def boom() -> None:
        raise ValueError("bad audio")

    future = pool.submit(boom, Priority.FINAL)
    try:
        future.result(timeout=10)
    except ValueError as exc:
        assert str(exc) == "bad audio"
    else:
        raise AssertionError("the error was lost")
    assert pool.submit(lambda: 42, Priority.FINAL).result(timeout=10) == 42


def test_the_next_sentence_is_synthesized_while_the_one_before_is_sent() -> None:
    asked: list[tuple[str, Priority]] = []  # which sentence was asked for, at what priority

    async def sentences() -> AsyncIterator[bytes]:
        for name in ("one", "two", "three", "four"):
            asked.append((name, current_priority()))
            yield name.encode()

    async def scenario() -> list[tuple[str, int]]:
        seen: list[tuple[str, int]] = []  # each piece sent, and how many had been asked for then
        async with contextlib.aclosing(prefetched(sentences(), lambda pcm: 1.0)) as pieces:
            async for piece in pieces:
                await asyncio.sleep(0)  # sending the piece: the next one is made meanwhile
                seen.append((piece.decode(), len(asked)))
                if piece == b"two":
                    break  # the pilot keyed over the controller: the rest is not wanted
        return seen

    seen = asyncio.run(scenario())
    assert seen == [("one", 2), ("two", 3)]
    assert asked == [("one", Priority.ON_AIR), ("two", Priority.AHEAD), ("three", Priority.AHEAD)]


def test_idle_means_a_job_submitted_now_starts_at_once() -> None:
    """The second hearing (gateway/speech/rehearing.py) runs only while a worker is idle."""
    pool = CpuPool(2)
    assert pool.idle()
    first, first_gate = hold_worker(pool, Priority.FINAL)
    assert pool.idle()  # one of two workers busy: the other takes a job at once
    second, second_gate = hold_worker(pool, Priority.FINAL)
    assert not pool.idle()  # both busy
    first_gate.set(), second_gate.set()
    first.result(10), second.result(10)
    deadline = time.monotonic() + 10
    while not pool.idle() and time.monotonic() < deadline:  # workers account the end of a job after its result
        time.sleep(0.01)
    assert pool.idle()


def test_a_piece_about_to_run_dry_goes_before_finals() -> None:
    """The next piece of a message on air (`urgent`) runs before everything once its deadline is
    `URGENT_S` away: a final waits a piece, the pilot on air does not hear a gap. Until then it
    waits its turn at its own priority."""
    from gateway.speech.cpu import URGENT_S

    pool = CpuPool(1)
    blocker, gate = hold_worker(pool, Priority.PARTIAL)
    done: list[str] = []
    now = time.monotonic()
    pool.submit(lambda: done.append("final"), Priority.FINAL)
    pool.submit(lambda: done.append("piece due soon"), Priority.AHEAD, now + URGENT_S / 2, urgent=True)
    pool.submit(lambda: done.append("piece due later"), Priority.AHEAD, now + 60.0, urgent=True)
    pool.submit(lambda: done.append("speculation due soon"), Priority.AHEAD, now + URGENT_S / 4)  # not urgent
    last = pool.submit(lambda: done.append("on air"), Priority.ON_AIR)
    gate.set()
    blocker.result(10)
    last.result(10)
    deadline = time.monotonic() + 10
    while len(done) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert done == ["piece due soon", "final", "on air", "speculation due soon", "piece due later"]


def test_worker_seconds_are_counted_by_priority_and_engine() -> None:
    """`livefreq_cpu_busy_seconds_total{priority, kind}` says what fills the cores under load:
    a real piper synthesis counts as tts, a whisper batch as stt, anything else as other."""
    import functools

    from gateway import metrics
    from gateway.speech.cpu import BatchJob, job_kind
    from gateway.speech.stt import batching
    from gateway.speech.tts.piper import PiperTts

    assert job_kind(functools.partial(PiperTts.synthesize_sync, None, "x")) == "tts"
    assert job_kind(BatchJob("k", 1, functools.partial(batching.decode_windows, None))) == "stt"
    assert job_kind(lambda: None) == "other"

    def busy(priority: str, kind: str) -> float:
        return metrics.CPU_BUSY_SECONDS.labels(priority, kind)._value.get()

    before = busy("partial", "other")
    CpuPool(1).submit(lambda: time.sleep(0.01), Priority.PARTIAL).result(timeout=10)
    assert busy("partial", "other") > before
