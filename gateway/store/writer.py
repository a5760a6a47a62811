"""Store work off the event loop, in order per session.

The stores are synchronous (store.base): a SQLite commit with ``synchronous=FULL`` waits for the
disk, a Redis round trip for the network, and on the event loop either stalls every connection
of the process. `OrderedWriter` runs such work in worker threads (`asyncio.to_thread`) and
chains the jobs of one session, so they run one after another in the order they were asked for
(a transmission's save never overtakes the delivery mark asked for before it), while sessions do
not wait for each other.

Nothing is lost: a job runs to its end even when the coroutine that awaits it is cancelled (a
socket closing mid-write), and `flush` waits for every job queued so far (a connection closing,
the gateway shutting down).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class OrderedWriter:
    def __init__(self) -> None:
        self._last: dict[str, asyncio.Task[Any]] = {}  # the newest job of each session

    def run(self, key: str, job: Callable[[], T]) -> Awaitable[T]:
        """Run `job` in a worker thread after the jobs queued before for `key` (its place is
        taken now, at the call); await it for its result. Cancelling the awaiting coroutine does
        not cancel the write."""
        return asyncio.shield(self._chain(key, job))

    def submit(self, key: str, job: Callable[[], Any]) -> None:
        """Queue `job` without waiting for it (its failure is logged)."""
        self._chain(key, job).add_done_callback(_log_failure)

    async def flush(self, key: str | None = None) -> None:
        """Wait for every job queued so far (for `key`, or for all sessions)."""
        if key is None:
            tasks = list(self._last.values())
        else:
            tasks = [self._last[key]] if key in self._last else []
        if tasks:
            await asyncio.wait(tasks)

    @property
    def pending(self) -> int:
        return len(self._last)

    def _chain(self, key: str, job: Callable[[], T]) -> asyncio.Task[T]:
        before = self._last.get(key)
        task = asyncio.get_running_loop().create_task(_after(before, job), name=f"livefreq-store-{key[:8]}")
        self._last[key] = task
        task.add_done_callback(lambda done: self._forget(key, done))
        return task

    def _forget(self, key: str, task: asyncio.Task[Any]) -> None:
        if self._last.get(key) is task:
            del self._last[key]


async def _after(before: asyncio.Task[Any] | None, job: Callable[[], T]) -> T:
    if before is not None:
        await asyncio.wait({before})  # its outcome is its caller's; only its end matters here
    return await asyncio.to_thread(job)


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a queued store write failed", exc_info=task.exception())
