"""The graph's `astream_events(version="v2")` as the seed's SSE events (seed 001 section 3):
plan, thinking, tool_call_start, tool_call_end, message (chunks), thinking_done, ui_payload,
done (session_id, tokens) and error. The final state is handed to `on_final` (for the
conversation log) without running the graph a second time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from assistant.graph import to_messages


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


async def stream_agent(
    graph: Any,
    messages: Sequence[dict[str, Any]] | str,
    session_id: str,
    on_final: Callable[[dict[str, Any]], None] | None = None,
) -> AsyncIterator[dict[str, Any]]:
    tokens = {"input": 0, "output": 0, "total": 0}
    final: dict[str, Any] = {}
    plan: Any = None
    streamed = False
    try:
        async for ev in graph.astream_events({"messages": to_messages(messages)}, version="v2"):
            kind, name, data = ev.get("event"), ev.get("name"), ev.get("data") or {}
            if kind == "on_chain_end" and name in ("planner", "rules_agent"):
                out = data.get("output") or {}
                plan = out.get("plan")
                if plan is not None:
                    yield {"event": "plan", "data": _plain(plan)}
                if out.get("planning_reasoning"):
                    yield {"event": "thinking", "data": {"content": out["planning_reasoning"]}}
            elif kind == "on_chain_start" and name == "tool_runner" and plan is not None:
                yield {"event": "tool_call_start", "data": {"name": plan.selected_tool, "arguments": plan.arguments}}
            elif kind == "on_chain_end" and name == "tool_runner" and plan is not None:
                out = data.get("output") or {}
                yield {"event": "tool_call_end", "data": {"name": plan.selected_tool, "result": out.get("tool_result"), "error": out.get("error")}}
            elif kind == "on_custom_event" and name == "answer_chunk":
                streamed = True
                yield {"event": "message", "data": {"content": data.get("text", "")}}
            elif kind == "on_chat_model_stream":  # an LLM formatter's tokens
                chunk = data.get("chunk")
                text = getattr(chunk, "content", "") if chunk is not None else ""
                if text:
                    streamed = True
                    yield {"event": "message", "data": {"content": text}}
            elif kind in ("on_chat_model_end", "on_llm_end"):
                usage = getattr(data.get("output"), "usage_metadata", None) or {}
                tokens["input"] += int(usage.get("input_tokens", 0))
                tokens["output"] += int(usage.get("output_tokens", 0))
                tokens["total"] = tokens["input"] + tokens["output"]
            elif kind == "on_chain_end" and ev.get("parent_ids") == [] :
                final = dict(data.get("output") or {})
    except Exception as exc:  # the graph itself never raises; this is a last resort
        yield {"event": "error", "data": {"message": f"assistant failed: {exc.__class__.__name__}"}}
        final.setdefault("error", str(exc))
    if final.get("final_answer") and not streamed:
        yield {"event": "message", "data": {"content": final["final_answer"]}}
    if final.get("error"):
        yield {"event": "error", "data": {"message": final["error"]}}
    yield {"event": "thinking_done", "data": {"thinking": final.get("thinking")}}
    if final.get("ui_payload") is not None:
        yield {"event": "ui_payload", "data": final["ui_payload"]}
    from assistant.llm import sum_tokens

    called = sum_tokens(final.get("llm_calls"))
    tokens = {k: tokens[k] + called[k] for k in tokens}
    final["tokens"] = tokens
    if on_final is not None:
        on_final(final)
    yield {"event": "done", "data": {"session_id": session_id, "tokens": tokens}}
