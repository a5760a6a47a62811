"""One pool of CPU workers for every speech engine, serving what a pilot waits for first.

Recognition (whisper, sphinx, vosk) and synthesis (piper, espeak) are CPU-bound and run off the
event loop. They used to have a thread pool each, one worker per core: on 2 cores up to four
decodes and syntheses ran at once, each with its own intra-op threads, so a final transcript a
pilot waited for shared the cores with partials and with the later sentences of messages that
had seconds of audio still to play. Under load that queueing is the latency.

Here one pool with one worker per core takes jobs by `Priority`, first come first served within
a priority:

1. ``FINAL``: a final transcript (the pilot released the key and waits for the answer);
2. ``ON_AIR``: audio of a controller message that is about to go on air (its first piece) and
   other work someone waits for now (HTTP speech requests, model loading);
3. ``AHEAD``: audio needed later: the next pieces of a message being spoken (the piece before
   still plays) and the speculative synthesis of a likely reply while the pilot talks;
4. ``PARTIAL``: partial transcripts, nice to have, skipped altogether while the pool is busy.

Within ``AHEAD``, jobs run earliest deadline first: the next sentence of a message is due when
the audio already sent has played out, a speculative reply when the pilot may release the key.
Other jobs of one priority run in the order they came. One exception: a job submitted *urgent*
(only the next piece of a message on air is) runs before every other job, finals included, once
its deadline is `URGENT_S` away: a final then waits one piece, and no pilot hears the controller
stall mid-message (docs/performance.md: 52 gaps -> 0 at 64 pilots, capacity 57 -> 63; with
speculation making whole replies ahead, 75).

The priority of a job is the caller's `current_priority()` (a context variable the radio
connection, gateway/connection.py, and the frequency set around their awaits, so WebSocket and
WebRTC pilots are served alike) unless given. A job cannot be pre-empted once running; jobs are
short (a decode or a sentence: 0.05-0.5 s), so a worker frees up soon.

A `BatchJob` may run together with the jobs of the same priority and `key` queued behind it
(final whisper decodes of one shape, `gateway.speech.stt.batching`): the worker that takes it
while every other worker is busy takes up to `cap` of them at once, only what is queued already
(a lone job never waits for company), and runs them in one call. With a worker idle the jobs
run side by side instead, which is sooner for each.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future
from contextvars import ContextVar
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeVar

from gateway import metrics

T = TypeVar("T")

__all__ = ["BatchJob", "CpuPool", "Priority", "cpu_count", "cpu_pool", "current_priority", "priority", "run_cpu"]


class Priority(IntEnum):
    FINAL = 0
    ON_AIR = 1
    AHEAD = 2
    PARTIAL = 3


# How long before its deadline a job submitted with `urgent=True` (the next piece of a message on
# air) jumps ahead of every other priority, finals included: about what a piece takes to
# synthesize on a loaded core, so it is ready before the audio before it runs dry (a gap).
URGENT_S = 0.8

_priority: ContextVar[tuple[Priority, float | None, bool]] = ContextVar(
    "livefreq_cpu_priority", default=(Priority.ON_AIR, None, False)
)


def current_priority() -> Priority:
    return _priority.get()[0]


@contextlib.contextmanager
def priority(level: Priority, deadline: float | None = None, *, urgent: bool = False) -> Iterator[None]:
    """CPU jobs submitted inside the block (by this task) get `level`, and `deadline` (a
    `time.monotonic()` instant: when the result is needed) orders them within it; `urgent` jobs
    with a deadline run before any other once it is `URGENT_S` away (audio about to run dry)."""
    token = _priority.set((level, deadline, urgent))
    try:
        yield
    finally:
        _priority.reset(token)


def cpu_count() -> int:
    """Cores this process may run on (its affinity mask where the OS has one)."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


@dataclass(frozen=True, eq=False)
class BatchJob:
    """A job the pool may run in one call with queued jobs of the same priority and `key`.

    `run(items)` returns one result per item, or the exception of an item that failed (the
    others still get theirs); run alone (`job()`), it is a batch of one. `cap` bounds the batch.
    """

    key: Hashable
    item: Any
    run: Callable[[list[Any]], list[Any]]
    cap: int = 1

    def __call__(self) -> Any:
        (result,) = self.run([self.item])
        if isinstance(result, BaseException):
            raise result
        return result


# (level, due, arrival, future, fn, urgent_at): the heap orders by the first three; `urgent_at`
# (None: never) is when the job jumps the queue.
_Entry = tuple[int, float, int, "Future[Any]", Callable[[], Any], float | None]


class CpuPool:
    """`workers` daemon threads taking jobs from a priority queue."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._queue: list[_Entry] = []
        self._order = itertools.count()
        self._cond = threading.Condition()
        self._busy = 0
        self._threads = [
            threading.Thread(target=self._work, name=f"livefreq-cpu-{i}", daemon=True) for i in range(self.workers)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[[], T], level: Priority, deadline: float | None = None, urgent: bool = False) -> Future[T]:
        """Queue `fn` at `level`; within it by `deadline` (default: now, i.e. in arrival order).
        An `urgent` job with a deadline runs before every other job from `URGENT_S` before it."""
        future: Future[T] = Future()
        due = time.monotonic() if deadline is None else deadline
        urgent_at = deadline - URGENT_S if urgent and deadline is not None else None
        with self._cond:
            heapq.heappush(self._queue, (int(level), due, next(self._order), future, fn, urgent_at))
            self._cond.notify()
        return future

    @property
    def queued(self) -> int:
        """Jobs waiting for a worker."""
        with self._cond:
            return len(self._queue)

    @property
    def busy(self) -> int:
        """Workers running a job now."""
        with self._cond:
            return self._busy

    def saturated(self) -> bool:
        """Every worker busy, or work waiting."""
        with self._cond:
            return self._busy + len(self._queue) >= self.workers

    def spare(self) -> bool:
        """Whether optional work (a partial) may start now and still leave a worker free for the
        next final (on one core: whether the worker is idle)."""
        with self._cond:
            return self._busy + len(self._queue) < max(1, self.workers - 1)

    def idle(self) -> bool:
        """Whether a worker is free now with nothing queued: a job submitted now starts at once."""
        with self._cond:
            return self._busy + len(self._queue) < self.workers

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                level, _due, _n, future, fn, _urgent_at = self._next()
                if not future.set_running_or_notify_cancel():
                    continue  # its caller gave up before it started
                batch = self._take_batch(level, fn) if isinstance(fn, BatchJob) and self._all_others_busy() else []
                self._busy += 1
            started = time.monotonic()
            if batch:
                self._run_batch([(future, fn), *batch], level, started)
                continue
            try:
                result = fn()
            except BaseException as exc:  # handed to the awaiting caller
                self._done(level, fn, started)
                future.set_exception(exc)
            else:
                self._done(level, fn, started)  # before the caller sees the result: it may ask `saturated()`
                future.set_result(result)

    def _next(self) -> _Entry:
        """The job to run next (lock held): the most overdue urgent one, else the heap's first."""
        now = time.monotonic()
        urgent = [entry for entry in self._queue if entry[5] is not None and entry[5] <= now]
        if not urgent:
            return heapq.heappop(self._queue)
        entry = min(urgent, key=lambda e: (e[5], e[2]))
        self._queue.remove(entry)
        heapq.heapify(self._queue)
        return entry

    def _all_others_busy(self) -> bool:
        """Whether every other worker runs a job (lock held). Only then does a batch gain: a job
        an idle worker can start now finishes sooner alone than in a batch (two finals on two
        workers: 0.32 s each; in one batch on one: 0.54 s both)."""
        return self._busy >= self.workers - 1

    def _take_batch(self, level: int, head: BatchJob) -> list[tuple[Future[Any], BatchJob]]:
        """Queued jobs that may run with `head` (same level and key), in queue order, up to its
        cap; taken off the queue. Called with the lock held."""
        if head.cap <= 1:
            return []
        mates = sorted(
            entry
            for entry in self._queue
            if entry[0] == level and isinstance(entry[4], BatchJob) and entry[4].key == head.key
        )[: head.cap - 1]
        if not mates:
            return []
        taken = {id(entry[3]) for entry in mates}
        self._queue = [entry for entry in self._queue if id(entry[3]) not in taken]
        heapq.heapify(self._queue)
        return [(entry[3], entry[4]) for entry in mates if entry[3].set_running_or_notify_cancel()]  # type: ignore[misc]

    def _run_batch(self, jobs: list[tuple[Future[Any], Any]], level: int, started: float) -> None:
        """Run `jobs` (BatchJobs of one key) in one call of their `run`; each future gets its own
        result or error."""
        try:
            results = jobs[0][1].run([job.item for _future, job in jobs])
            if len(results) != len(jobs):
                raise RuntimeError(f"a batch of {len(jobs)} jobs returned {len(results)} results")
        except BaseException as exc:  # the whole call failed: every caller hears of it
            self._done(level, jobs[0][1], started)
            for future, _job in jobs:
                future.set_exception(exc)
            return
        self._done(level, jobs[0][1], started)
        for (future, _job), result in zip(jobs, results, strict=True):
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)

    def _done(self, level: int, fn: Callable[[], Any], started: float) -> None:
        """A worker is free again; its seconds are counted (`livefreq_cpu_busy_seconds_total`:
        what fills the cores under load, `livefreq load` prints it) before any caller sees the
        result."""
        with self._cond:
            self._busy -= 1
        metrics.CPU_BUSY_SECONDS.labels(Priority(level).name.lower(), job_kind(fn)).inc(time.monotonic() - started)


def job_kind(fn: Callable[[], Any]) -> str:
    """"stt", "tts" or "other": which engine a job runs, by the module of its function."""
    inner: Any = fn.run if isinstance(fn, BatchJob) else fn
    while isinstance(inner, functools.partial):
        inner = inner.func
    module = getattr(inner, "__module__", "") or ""
    return "stt" if ".stt" in module else "tts" if ".tts" in module else "other"


_pool: CpuPool | None = None
_pool_lock = threading.Lock()


def cpu_pool() -> CpuPool:
    """The process-wide pool, one worker per core (created on first use)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = CpuPool(cpu_count())
        return _pool


async def run_cpu(fn: Callable[..., T], *args: object, level: Priority | None = None) -> T:
    """Run CPU-bound `fn(*args)` on the pool at `level` (default: the caller's priority) and
    await its result. Cancelling the await drops a job that has not started yet."""
    current, deadline, urgent = _priority.get()
    future = cpu_pool().submit(functools.partial(fn, *args), current if level is None else level, deadline, urgent)
    return await asyncio.wrap_future(future)
