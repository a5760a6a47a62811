"""The LLM router's provider: one OpenAI-compatible chat-completions call per question.

The same request works with OpenAI, vLLM, llama.cpp's ``llama-server`` and Ollama (all serve
``POST {base}/chat/completions``). Structured output where the server supports it: the answer's
JSON schema goes in ``response_format``, so a capable server can only produce a valid answer.
Servers spell it two ways: OpenAI's ``{"type": "json_schema", "json_schema": {..., "schema"}}``
(OpenAI, vLLM, Ollama, llama.cpp's ``llama-server``) and ``{"type": "json_object", "schema"}``
(llama-cpp-python's server, which knows only that one and turns the schema into a grammar). In
``auto`` mode (`Settings.llm_structured_output`) a server that refuses one form is asked again
at once in the next (`FORMATS`), down to plain prompts, and not offered the refused form again.
Either way the engine parses the answer strictly (engine/router_llm.py `judge`): the provider
only moves bytes and records what happened (`LlmExchange`), it never raises and never decides.

Why httpx and not the ``openai`` package: it is one POST; the trace needs the exact body and
answer; and the router has a hard deadline (`llm_timeout_s` covers the whole call, the retry
without a schema included), where the SDK retries on its own clock.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from typing import Any, Literal, Protocol

import httpx

from engine.router_llm import LlmExchange, RouterQuery
from gateway.llm.prompts import PromptSet
from gateway.settings import Settings

log = logging.getLogger(__name__)

Structured = Literal["auto", "json_schema", "json_object", "off"]
Format = Literal["json_schema", "json_object", "off"]
FORMATS: tuple[Format, ...] = ("json_schema", "json_object", "off")  # what `auto` tries, in order
SCHEMA_NAME = "route_choice"
_REFUSED = (400, 422)  # how servers say no to a response_format they do not know


class RouterProvider(Protocol):
    """Asks a model one `RouterQuery`; never raises (a failure is in the exchange)."""

    def describe(self) -> dict[str, Any]: ...

    async def ask(self, query: RouterQuery) -> LlmExchange: ...

    async def aclose(self) -> None: ...


class ChatCompletionsProvider:
    """`RouterProvider` over an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        prompts: PromptSet,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 256,
        timeout_s: float = 5.0,
        structured: Structured = "auto",
    ) -> None:
        self.endpoint = endpoint(url)
        self.model = model
        self.prompts = prompts
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.structured = structured
        # the form sent now; `auto` moves down FORMATS when the server refuses one, and stays there
        self.format: Format = "json_schema" if structured == "auto" else structured
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # an httpx client belongs to the event loop that opened it (the app's, or a CLI's runner)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> ChatCompletionsProvider | None:
        """The configured provider, or None when the LLM router is off (no `llm_url`)."""
        if not settings.llm_url:
            return None
        assert settings.llm_model  # Settings refuses a URL without a model
        return cls(
            settings.llm_url,
            settings.llm_model,
            prompts=PromptSet.load(settings.llm_prompts_dir),
            api_key=settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
            temperature=settings.llm_temperature,
            max_tokens=settings.llm_max_tokens,
            timeout_s=settings.llm_timeout_s,
            structured=settings.llm_structured_output,
        )

    def describe(self) -> dict[str, Any]:
        """What /health shows (never the key)."""
        return {
            "url": self.endpoint,
            "model": self.model,
            "structured_output": self.format != "off",
            "response_format": self.format,  # the form in use now (`auto` steps down on a refusal)
        }

    def body(self, query: RouterQuery, form: Format) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": self.prompts.messages(query),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stream": False,
        }
        if form == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": query.answer_schema()},
            }
        elif form == "json_object":
            body["response_format"] = {"type": "json_object", "schema": query.answer_schema()}
        return body

    async def ask(self, query: RouterQuery) -> LlmExchange:
        form = self.format
        body = self.body(query, form)
        exchange = LlmExchange(model=self.model, url=self.endpoint, structured=form, request=body)
        refused: list[str] = []
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await self._client().post(self.endpoint, json=body)
                while self.structured == "auto" and form != "off" and refused_format(response):
                    refused.append(f"{form}: HTTP {response.status_code}")
                    log.warning(
                        "the LLM server refused response_format %s (HTTP %d: %s); trying the next form",
                        form,
                        response.status_code,
                        response.text[:200],
                    )
                    form = FORMATS[FORMATS.index(form) + 1]
                    # never back up: a concurrent question may already have gone further down
                    self.format = max(self.format, form, key=FORMATS.index)
                    exchange.request = body = self.body(query, form)
                    exchange.structured = f"{form} (the server refused {'; '.join(refused)})"
                    response = await self._client().post(self.endpoint, json=body)
                _read(response, exchange)
        except (TimeoutError, httpx.TimeoutException):
            exchange.error, exchange.detail = "timeout", f"no answer within {self.timeout_s:g} s"
        except httpx.HTTPError as exc:
            exchange.error, exchange.detail = "transport_error", f"{type(exc).__name__}: {exc}"
        exchange.latency_ms = (time.perf_counter() - started) * 1000.0
        return exchange

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout_s), headers=self._headers)
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close this event loop's connection pool (the app's lifespan, a CLI at exit)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()


def endpoint(url: str) -> str:
    """``{base}/chat/completions`` for an API base such as ``http://127.0.0.1:11434/v1``; a URL
    that already names the endpoint is kept."""
    url = url.strip().rstrip("/")
    return url if url.endswith("/chat/completions") else f"{url}/chat/completions"


def refused_format(response: httpx.Response) -> bool:
    """Did the server refuse the request's ``response_format`` (rather than fail)? HTTP 400/422,
    or a 500 that names the field: llama-cpp-python's server reports its request validation
    errors (``Input should be 'text' or 'json_object'``) as HTTP 500."""
    if response.status_code in _REFUSED:
        return True
    return response.status_code == 500 and "response_format" in response.text


def _read(response: httpx.Response, exchange: LlmExchange) -> None:
    """The model's message text and token counts, or why there are none."""
    exchange.status = response.status_code
    if response.status_code != 200:
        exchange.error, exchange.detail = "http_error", f"HTTP {response.status_code}: {response.text[:300]}"
        return
    try:
        data = response.json()
        message = data["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        exchange.error, exchange.detail = "bad_response", f"not a chat completion: {response.text[:300]!r}"
        return
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    exchange.prompt_tokens = _count(usage.get("prompt_tokens"))
    exchange.completion_tokens = _count(usage.get("completion_tokens"))
    exchange.total_tokens = _count(usage.get("total_tokens")) or exchange.prompt_tokens + exchange.completion_tokens
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        refusal = message.get("refusal") if isinstance(message, dict) else None
        exchange.error = "bad_response"
        exchange.detail = f"the model refused: {refusal}" if refusal else "the completion has no text content"
        return
    exchange.content = content


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
