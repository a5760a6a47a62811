"""The briefing assistant over HTTP (seed 001): ``POST /api/aviation-agent/chat/stream`` (SSE) and
``POST /api/aviation-agent/chat``, request ``{"messages": [{"role", "content"}], "session_id"?}``.

Behind ``settings.assistant_enabled``. Bad input never gives a 500: a malformed body is a 400 in
the gateway's error shape; an empty, too long or unanswerable question is an answer (or an `error`
event) from the graph itself.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import BaseRoute, Route

from assistant.context import AssistantContext
from assistant.graph import build_agent, user_turns
from assistant.llm import AssistantLlm, LlmConfig, sum_tokens
from assistant.streaming import stream_agent
from gateway.api.errors import ApiError, read_model
from gateway.llm.chat import AssistantChat
from gateway.assistant_log import ConversationLog, entry_from_state, log_dir
from gateway.settings import Settings


class ChatMessage(BaseModel):
    role: Literal["user", "assistant", "system"] = "user"
    content: str = Field(max_length=20000)


class ChatRequest(BaseModel):
    messages: list[ChatMessage] = Field(min_length=1, max_length=50)
    session_id: str | None = Field(default=None, max_length=128)
    persona_id: str | None = Field(default=None, max_length=64)


class ChatResponse(BaseModel):
    session_id: str
    answer: str | None
    thinking: str | None
    plan: dict[str, Any] | None
    ui_payload: dict[str, Any] | None
    suggested_queries: list[dict[str, Any]]
    error: str | None
    tokens: dict[str, int]


class ChatEventStream(BaseModel):
    """One server-sent event: `event` is plan, thinking, tool_call_start, tool_call_end, message,
    thinking_done, ui_payload, done or error; `data` its JSON payload (docs/assistant.md)."""

    event: str
    data: str
    id: str | None = None
    retry: int | None = None


def weather_callable(service: Any) -> Any:
    """The gateway's weather (live METAR when cached, else generated) as the assistant's callable."""
    from gateway.api.vatsim import atis_view

    def weather(icao: str) -> dict[str, Any] | None:
        airport = service.airports.get(icao)
        if airport is None:
            return None
        ws = service.providers.weather
        report = ws.cached(icao) or ws.generated(icao)
        atis = atis_view(ws.airport_atis(airport, report), airport)
        return {"raw": report.raw, "source": report.source, "wind": report.wind, "qnh_hpa": report.qnh_hpa,
                "visibility_m": report.visibility_m, "letter": atis["letter"], "atis": atis["text"], "runway": atis["runway"]}

    return weather


class AssistantService:
    def __init__(self, settings: Settings, context: AssistantContext) -> None:
        self.settings = settings
        self.context = context
        self.chat = AssistantChat.from_settings(settings)
        self.llm = AssistantLlm(self.chat, LlmConfig.load(settings.assistant_llm_config)) if self.chat else None
        self.graph = build_agent(context, llm=self.llm)
        self.log = ConversationLog(log_dir(settings))

    @classmethod
    def from_gateway(cls, settings: Settings, service: Any) -> AssistantService:
        repo = service.airports

        class _Repo:
            def raw_airports(self) -> Any:
                return repo._airports  # the shipped dataset's raw dicts, loaded once by the gateway

        ctx = AssistantContext(_Repo(), weather=weather_callable(service), flows_dir=settings.flows_dir)
        if settings.assistant_rules_path:
            ctx.rules_path = settings.assistant_rules_path
        return cls(settings, ctx)

    def write_log(self, session_id: str, question: str, state: dict[str, Any], started: datetime) -> None:
        try:
            self.log.append(entry_from_state(session_id, question, state, started, datetime.now(UTC)))
        except OSError:
            pass  # a full disk must not break the answer


def _messages(body: ChatRequest) -> list[dict[str, Any]]:
    return [m.model_dump() for m in body.messages if m.role != "system"]


def _question(msgs: list[dict[str, Any]]) -> str:
    users = [m["content"] for m in msgs if m["role"] == "user"]
    return users[-1] if users else ""


def routes(assistant: AssistantService, max_body_bytes: int) -> list[BaseRoute]:
    async def parse(request: Request) -> tuple[ChatRequest, str, list[dict[str, Any]]]:
        body = await read_model(request, ChatRequest, max_body_bytes)
        session_id = body.session_id or request.headers.get("x-session-id") or uuid.uuid4().hex
        return body, session_id, _messages(body)

    async def chat_stream(request: Request) -> StreamingResponse:
        body, session_id, msgs = await parse(request)
        started = datetime.now(UTC)
        question = _question(msgs)

        def on_final(state: dict[str, Any]) -> None:
            assistant.write_log(session_id, question, state, started)

        async def events() -> AsyncIterator[bytes]:
            async for ev in stream_agent(assistant.graph, msgs, session_id, on_final=on_final):
                yield f"event: {ev['event']}\ndata: {json.dumps(ev['data'], default=str)}\n\n".encode()

        return StreamingResponse(
            events(), media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "Connection": "keep-alive", "X-Accel-Buffering": "no"},
        )

    async def chat(request: Request) -> JSONResponse:
        body, session_id, msgs = await parse(request)
        started = datetime.now(UTC)
        from assistant.graph import to_messages

        state = await asyncio.to_thread(assistant.graph.invoke, {"messages": to_messages(msgs)})
        state["tokens"] = sum_tokens(state.get("llm_calls"))
        assistant.write_log(session_id, _question(msgs), state, started)
        plan = state.get("plan")
        return JSONResponse({
            "session_id": session_id,
            "answer": state.get("final_answer"),
            "thinking": state.get("thinking"),
            "plan": plan.model_dump(mode="json") if plan is not None else None,
            "ui_payload": state.get("ui_payload"),
            "suggested_queries": state.get("suggested_queries") or [],
            "error": state.get("error"),
            "tokens": state["tokens"],
        })

    return [
        Route("/api/aviation-agent/chat/stream", chat_stream, methods=["POST"]),
        Route("/api/aviation-agent/chat", chat, methods=["POST"]),
    ]


__all__ = ["ApiError", "AssistantService", "ChatRequest", "routes", "user_turns"]
