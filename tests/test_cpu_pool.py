"""The shared CPU pool serves what a pilot waits for first, and a playout synthesizes a
message's pieces ahead of playing them."""

from __future__ import annotations

import asyncio
import threading
import time

from gateway.radio.playout_guard import SpeedWindow
from gateway.radio.synthesis_ahead import SynthesisAhead
from gateway.speech.cpu import CpuPool, Priority, current_priority


def test_jobs_run_by_priority_then_in_order() -> None:
    pool = CpuPool(1)
    gate, running = threading.Event(), threading.Event()

    def block() -> None:
        running.set()
        gate.wait(10)

    blocker = pool.submit(block, Priority.PARTIAL)  # holds the only worker
    assert running.wait(10)
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


def test_a_message_is_synthesized_ahead_of_its_playout_at_on_air_priority() -> None:
    asked: list[tuple[str, Priority]] = []  # which piece was asked for, at what priority

    async def synthesize(text: str) -> bytes:
        asked.append((text, current_priority()))
        await asyncio.sleep(0)
        return text.encode() * 100

    async def scenario() -> tuple[list[bytes], bytes | None, bytes | None]:
        seconds = lambda pcm: len(pcm) / 1000  # noqa: E731
        ahead = SynthesisAhead(["one", "two", "three"], synthesize, seconds, SpeedWindow(), time.monotonic)
        first = await ahead.piece(0)
        await ahead.wait_for(3)  # nobody consumed a piece: synthesis ran ahead anyway
        past = await ahead.piece(3)
        await ahead.close()
        return ahead.pieces, first, past

    pieces, first, past = asyncio.run(scenario())
    assert pieces == [b"one" * 100, b"two" * 100, b"three" * 100] and first == b"one" * 100 and past is None
    assert asked == [("one", Priority.ON_AIR), ("two", Priority.ON_AIR), ("three", Priority.ON_AIR)]


def test_closing_stops_synthesis_ahead() -> None:
    asked: list[str] = []

    async def synthesize(text: str) -> bytes:
        asked.append(text)
        await asyncio.sleep(3600 if text == "two" else 0)  # "two" is still synthesizing
        return b"pcm"

    async def scenario() -> None:
        ahead = SynthesisAhead(["one", "two", "three"], synthesize, lambda pcm: 1.0, SpeedWindow(), time.monotonic)
        await ahead.wait_for(1)
        await asyncio.sleep(0)
        await ahead.close()  # the pilot keyed over the controller: the rest is not wanted
        assert ahead.done and len(ahead.pieces) == 1

    asyncio.run(scenario())
    assert asked == ["one", "two"]
