"""A worker of a real CPU pool held busy, so the jobs a test submits meanwhile queue behind it."""

from __future__ import annotations

import threading
from concurrent.futures import Future

from gateway.speech.cpu import CpuPool, Priority


def hold_worker(pool: CpuPool, level: Priority, timeout: float = 10.0) -> tuple[Future[None], threading.Event]:
    """(the job, its release): a job at `level` that has started on a worker of `pool` and holds
    it until the event is set (or `timeout` passes)."""
    gate, running = threading.Event(), threading.Event()

    def block() -> None:
        running.set()
        gate.wait(timeout)

    job = pool.submit(block, level)
    assert running.wait(timeout), "the pool never started the holding job"
    return job, gate
