"""A chat-completions server for the LLM router's tests, served by uvicorn on loopback.

It speaks the OpenAI API's ``POST /v1/chat/completions`` as OpenAI, vLLM, llama.cpp's server and
Ollama do, and answers the way the test sets it (`mode`):

- ``choose``: ``{"candidate": choice}``; ``choice`` None takes the first id the answer's schema
  offers (a strict server can only answer within the schema; the choice is checked against it);
- ``raw``: ``content`` as the model's text (an unknown id, malformed JSON, prose...);
- ``slow``: no answer until the test ends (`release`), so the gateway's deadline passes;
- ``error``: HTTP 500 with an OpenAI-style error body.

``schema_support = False`` makes it refuse ``response_format`` (HTTP 400) like servers without
structured output. Every request body is kept in `requests`; usage is `PROMPT_TOKENS` and
`COMPLETION_TOKENS` per answer.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Literal

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

PROMPT_TOKENS = 150
COMPLETION_TOKENS = 9
Mode = Literal["choose", "raw", "slow", "error"]


class ChatCompletionsServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []  # the Authorization header of each request
        self.mode: Mode = "choose"
        self.choice: str | None = None
        self.content: str = ""
        self.schema_support = True
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
        self.mode, self.choice, self.content, self.schema_support = "choose", None, "", True

    async def _health(self, request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    async def _complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        self.authorizations.append(request.headers.get("authorization"))
        if not isinstance(body.get("messages"), list) or not body.get("model"):
            return JSONResponse({"error": {"message": "model and messages are required"}}, status_code=400)
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
        if "response_format" in body and not self.schema_support:
            return JSONResponse(
                {"error": {"message": "response_format json_schema is not supported", "type": "invalid_request_error"}},
                status_code=400,
            )
        if self.mode == "slow":
            await anyio.to_thread.run_sync(self.release.wait)
        if self.mode == "error":
            return JSONResponse({"error": {"message": "the model crashed", "type": "server_error"}}, status_code=500)
        if self.mode == "raw":
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
