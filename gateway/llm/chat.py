"""One chat-completions call for the briefing assistant's LLM path (assistant/llm.py `ChatFn`).

The same OpenAI-compatible endpoint, model and key as the LLM router (`llm_url`, `llm_model`,
`llm_api_key`; gateway/llm/client.py), with the assistant's own deadline
(`assistant_llm_timeout_s`). Synchronous on purpose: the assistant's graph nodes run in worker
threads. Structured output like the router's provider: the answer's JSON schema as
``response_format`` json_schema, then json_object with a schema, then plain prompts, stepping
down (and staying down) when the server refuses a form. Streams (``stream: true``, usage asked
with ``stream_options.include_usage``) when the caller takes tokens. Never raises: a failure is
`ChatResult.error` (timeout, http_error, transport_error, bad_response).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from assistant.llm import ChatResult
from gateway.llm.client import FORMATS, Format, _count, endpoint, refused_format
from gateway.settings import Settings


class AssistantChat:
    def __init__(self, url: str, model: str, *, api_key: str | None = None, timeout_s: float = 15.0) -> None:
        self.endpoint = endpoint(url)
        self.model = model
        self.timeout_s = timeout_s
        self.format: Format = "json_schema"
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s), headers={"Authorization": f"Bearer {api_key}"} if api_key else {})

    @classmethod
    def from_settings(cls, settings: Settings) -> AssistantChat | None:
        if not (settings.llm_url and settings.llm_model and settings.assistant_llm):
            return None
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        return cls(settings.llm_url, settings.llm_model, api_key=key, timeout_s=settings.assistant_llm_timeout_s)

    def describe(self) -> dict[str, Any]:
        return {"url": self.endpoint, "model": self.model, "timeout_s": self.timeout_s, "response_format": self.format}

    def close(self) -> None:
        self._client.close()

    def _body(self, messages: list[dict[str, str]], temperature: float, max_tokens: int,
              schema: dict[str, Any] | None, form: Format, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": temperature,
                                "max_tokens": max_tokens, "stream": stream}
        if stream:
            body["stream_options"] = {"include_usage": True}
        if schema is not None and form == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "plan", "strict": False, "schema": schema}}
        elif schema is not None and form == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema}
        return body

    def __call__(self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int,
                 schema: dict[str, Any] | None = None, on_token: Callable[[str], None] | None = None) -> ChatResult:
        out = ChatResult(model=self.model)
        started = time.perf_counter()
        deadline = started + self.timeout_s
        stream = on_token is not None
        form = self.format
        try:
            while True:
                body = self._body(messages, temperature, max_tokens, schema, form, stream)
                with self._client.stream("POST", self.endpoint, json=body) as response:
                    if response.status_code != 200:
                        response.read()
                        if schema is not None and form != "off" and refused_format(response):
                            form = FORMATS[FORMATS.index(form) + 1]
                            self.format = max(self.format, form, key=FORMATS.index)
                            continue
                        out.error, out.detail = "http_error", f"HTTP {response.status_code}: {response.text[:300]}"
                    elif stream and response.headers.get("content-type", "").startswith("text/event-stream"):
                        _read_stream(response, out, on_token, deadline)
                    else:
                        _read_body(response.read(), out)
                        if out.content and on_token is not None:
                            on_token(out.content)
                break
        except (TimeoutError, httpx.TimeoutException):
            out.error, out.detail = "timeout", f"no answer within {self.timeout_s:g} s"
        except httpx.HTTPError as exc:
            out.error, out.detail = "transport_error", f"{type(exc).__name__}: {exc}"
        out.latency_ms = (time.perf_counter() - started) * 1000.0
        return out


def _read_body(raw: bytes, out: ChatResult) -> None:
    try:
        data = json.loads(raw)
        message = data["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        out.error, out.detail = "bad_response", f"not a chat completion: {raw[:300]!r}"
        return
    _usage(data, out)
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        out.error, out.detail = "bad_response", "the completion has no text content"
        return
    out.content = content


def _usage(data: dict[str, Any], out: ChatResult) -> None:
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    out.input_tokens = _count(usage.get("prompt_tokens")) or out.input_tokens
    out.output_tokens = _count(usage.get("completion_tokens")) or out.output_tokens


def _read_stream(response: httpx.Response, out: ChatResult, on_token: Callable[[str], None] | None, deadline: float) -> None:
    parts: list[str] = []
    pieces = 0
    for line in response.iter_lines():
        if time.perf_counter() > deadline:
            raise TimeoutError
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            break
        try:
            data = json.loads(payload)
        except ValueError:
            out.error, out.detail = "bad_response", f"not a stream chunk: {payload[:200]!r}"
            break
        _usage(data, out)
        for choice in data.get("choices") or ():
            tok = (choice.get("delta") or {}).get("content")
            if isinstance(tok, str) and tok:
                parts.append(tok)
                pieces += 1
                if on_token is not None:
                    on_token(tok)
    out.content = "".join(parts) if parts or out.error is None else None
    if not out.output_tokens and pieces:  # a server that reports no usage: count the pieces
        out.output_tokens = pieces
