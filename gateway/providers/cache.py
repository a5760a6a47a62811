"""A small TTL cache for provider answers, with single flight and remembered failures.

Values live for `ttl_s` (cachetools' `TTLCache`, on an injectable clock). Concurrent callers
asking for the same missing key share one load (single flight: ten sessions starting at EDDF
make one METAR request). A failed load is remembered for `failure_ttl_s`, so while a provider is
down callers get its error at once instead of each waiting out the timeout and the retries.
A load runs as its own task: a caller that stops waiting (`asyncio.wait_for`) leaves it running,
and its result fills the cache for the next caller.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from cachetools import TTLCache

from gateway.providers.http import ProviderError

T = TypeVar("T")


class ProviderCache(Generic[T]):
    def __init__(self, ttl_s: float, failure_ttl_s: float, *, maxsize: int = 1024,
                 timer: Callable[[], float] = time.monotonic) -> None:
        self._values: TTLCache[Hashable, T] = TTLCache(maxsize=maxsize, ttl=ttl_s, timer=timer)
        self._failures: TTLCache[Hashable, ProviderError] = TTLCache(maxsize=maxsize, ttl=failure_ttl_s, timer=timer)
        self._loading: dict[Hashable, asyncio.Task[T | ProviderError]] = {}

    def peek(self, key: Hashable) -> T | None:
        """The fresh value, if any (never loads)."""
        return self._values.get(key)

    async def get(self, key: Hashable, load: Callable[[], Awaitable[T]]) -> T:
        """The fresh value, else the result of one shared `load()`; `ProviderError` when it failed
        now or within `failure_ttl_s`."""
        if key in self._values:
            return self._values[key]
        failed = self._failures.get(key)
        if failed is not None:
            raise failed
        task = self._loading.get(key)
        if task is None:
            task = asyncio.create_task(self._load(key, load), name=f"livefreq-provider-{key}")
            self._loading[key] = task
        result = await asyncio.shield(task)
        if isinstance(result, ProviderError):
            raise result
        return result

    async def _load(self, key: Hashable, load: Callable[[], Awaitable[T]]) -> T | ProviderError:
        """Run one load; its outcome is returned, never raised, so a task nobody awaits any more
        leaves no 'exception never retrieved' behind."""
        try:
            value = await load()
        except ProviderError as exc:
            self._failures[key] = exc
            return exc
        finally:
            self._loading.pop(key, None)
        self._values[key] = value
        self._failures.pop(key, None)
        return value

    async def aclose(self) -> None:
        """Stop loads still running (application shutdown)."""
        tasks = list(self._loading.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
