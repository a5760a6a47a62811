"""A chat-completions server for the LLM router's tests, served by uvicorn on loopback.

It speaks the OpenAI API's ``POST /v1/chat/completions`` as OpenAI, vLLM, llama.cpp's server and
Ollama do, and answers the way the test sets it (`mode`):

- ``choose``: ``{"candidate": choice}``; ``choice`` None takes the first id the answer's schema
  offers (a strict server can only answer within the schema; the choice is checked against it);
- ``raw``: ``content`` as the model's text (an unknown id, malformed JSON, prose...);
- ``slow``: no answer until the test ends (`release`), so the gateway's deadline passes;
- ``error``: HTTP 500 with an OpenAI-style error body.

``formats`` are the ``response_format`` types it takes (the schema of the answer comes in
``json_schema.schema`` or, llama-cpp-python's way, in ``json_object``'s ``schema``); any other
is refused with ``refusal_status``: 400 like servers without structured output, or 500 with the
validation error llama-cpp-python's server sends for ``json_schema``. Every request body is kept
in `requests`; usage is `PROMPT_TOKENS` and `COMPLETION_TOKENS` per answer.

For the briefing assistant (tests/test_assistant_llm.py): ``script``, a list of answers taken in
order, one per request, before `mode` applies (each a text, or "!slow" / "!error"); and
``stream: true`` requests are answered as OpenAI's server-sent ``chat.completion.chunk`` events,
a word per chunk, usage in a last chunk when ``stream_options.include_usage`` asks for it.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Literal

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

PROMPT_TOKENS = 150
COMPLETION_TOKENS = 9
Mode = Literal["choose", "raw", "slow", "error"]
ALL_FORMATS = frozenset({"json_schema", "json_object"})


class ChatCompletionsServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []  # the Authorization header of each request
        self.mode: Mode = "choose"
        self.choice: str | None = None
        self.content: str = ""
        self.formats: frozenset[str] = ALL_FORMATS
        self.refusal_status = 400
        self.script: list[str] = []
        self.release = threading.Event()  # set at teardown: a "slow" answer never comes before
        self.url = ""  # base URL once served
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._complete, methods=["POST"]),
                Route("/health", self._health, methods=["GET"]),  # what tests.conftest.run_server waits for
            ]
        )

    def reset(self) -> None:
        self.requests.clear()
        self.authorizations.clear()
        self.mode, self.choice, self.content = "choose", None, ""
        self.formats, self.refusal_status = ALL_FORMATS, 400
        self.script = []

    def _refuse(self, form: Any) -> JSONResponse:
        if self.refusal_status == 500:  # what llama-cpp-python's server says about a type it does not know
            detail = f"{{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'input': {form!r}}}"
            return JSONResponse({"error": {"message": f"1 validation error:\n  {detail}", "type": "internal_server_error"}}, status_code=500)
        message = f"response_format {form} is not supported"
        return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status_code=self.refusal_status)

    def _stream(self, body: dict[str, Any], content: str) -> StreamingResponse:
        import re

        def chunk(delta: dict[str, Any], usage: dict[str, int] | None = None) -> str:
            data: dict[str, Any] = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "model": body["model"],
                                    "choices": [{"index": 0, "delta": delta, "finish_reason": None}] if delta else []}
            if usage is not None:
                data["usage"] = usage
            return f"data: {json.dumps(data)}\n\n"

        async def events() -> Any:
            yield chunk({"role": "assistant", "content": ""})
            for piece in re.findall(r"\S+\s*|\s+", content):
                yield chunk({"content": piece})
            if (body.get("stream_options") or {}).get("include_usage"):
                yield chunk({}, {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
                                 "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS})
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def _health(self, request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    async def _complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        self.authorizations.append(request.headers.get("authorization"))
        if not isinstance(body.get("messages"), list) or not body.get("model"):
            return JSONResponse({"error": {"message": "model and messages are required"}}, status_code=400)
        form = body.get("response_format") or {}
        schema = form.get("json_schema", {}).get("schema") if form.get("type") == "json_schema" else form.get("schema")
        if form and form.get("type") not in self.formats:
            return self._refuse(form.get("type"))
        scripted = self.script.pop(0) if self.script else None
        mode = {"!slow": "slow", "!error": "error"}.get(scripted or "", "raw" if scripted is not None else self.mode)
        if mode == "slow":
            await anyio.to_thread.run_sync(self.release.wait)
        if mode == "error":
            return JSONResponse({"error": {"message": "the model crashed", "type": "server_error"}}, status_code=500)
        if scripted is not None:
            content = scripted
            if body.get("stream"):
                return self._stream(body, content)
        elif mode == "raw":
            content = self.content
        else:
            allowed = schema["properties"]["candidate"]["enum"] if schema else None
            choice = self.choice if self.choice is not None else (allowed[0] if allowed else "none")
            if allowed is not None and choice not in allowed:
                return JSONResponse({"error": {"message": f"{choice} is outside the schema"}}, status_code=400)
            content = json.dumps({"candidate": choice})
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {
                    "prompt_tokens": PROMPT_TOKENS,
                    "completion_tokens": COMPLETION_TOKENS,
                    "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
                },
            }
        )
