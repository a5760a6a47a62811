"""The HTTP client of the data providers: timeouts, retries with backoff, typed failures.

One `httpx.AsyncClient` per gateway (connection pooling, HTTP keep-alive to the provider). Every
request has the configured timeout; transport errors (refused, reset, timed out) and answers that
say "try again" (429, 5xx) are retried with exponential backoff and jitter by tenacity, up to
`retries` more times; any other answer fails at once. Whatever the cause, the caller gets one
`ProviderError` with a short stable `reason` (``timeout``, ``http_503``, ``unreachable``...), which
/health shows, and never an exception from the HTTP stack: a provider problem is reported, it
never ends a request or a session.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

log = logging.getLogger("livefreq.providers")

USER_AGENT = "livefreq (ATC radio training gateway)"
MAX_BACKOFF_S = 5.0


class ProviderError(Exception):
    """A provider did not deliver: `reason` is stable (for /health and logs), the message says more."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class _Retryable(Exception):
    """An answer worth asking again for (429, 5xx)."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, (_Retryable, httpx.TransportError))


class ProviderClient:
    """GET text or JSON from a provider with the gateway's timeout and retry policy."""

    def __init__(self, *, timeout_s: float, retries: int, backoff_s: float,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None or self._client.is_closed:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout_s),
                headers={"user-agent": USER_AGENT},
                follow_redirects=True,
                transport=self._transport,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def get_text(self, url: str) -> str:
        return (await self._get(url)).text

    async def get_json(self, url: str) -> Any:
        response = await self._get(url)
        try:
            return json.loads(response.content)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise ProviderError("malformed", f"{url}: not JSON ({exc})") from exc

    async def _get(self, url: str) -> httpx.Response:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.retries + 1),
            wait=wait_exponential_jitter(multiplier=self.backoff_s, max=MAX_BACKOFF_S, jitter=self.backoff_s),
            retry=retry_if_exception(_retryable),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    response = await self._http().get(url)
                    if response.status_code == 429 or response.status_code >= 500:
                        raise _Retryable(response)
                    if response.status_code >= 400:
                        raise ProviderError(f"http_{response.status_code}", f"{url}: HTTP {response.status_code}")
                    return response
        except _Retryable as exc:
            code = exc.response.status_code
            raise ProviderError(f"http_{code}", f"{url}: HTTP {code} after {self.retries + 1} attempts") from exc
        except httpx.TimeoutException as exc:
            raise ProviderError("timeout", f"{url}: no answer within {self.timeout_s:g} s ({self.retries + 1} attempts)") from exc
        except httpx.TransportError as exc:
            raise ProviderError("unreachable", f"{url}: {type(exc).__name__}: {exc}") from exc
        except httpx.InvalidURL as exc:
            raise ProviderError("bad_url", f"{url}: {exc}") from exc
        raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover
