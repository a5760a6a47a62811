"""The langgraph graph (seed 002 with seed 003's next-query step):

    router ─rules──▶ rules_agent ─┐
       └─database─▶ planner ──────┴▶ predict_next ─▶ tool_runner ─▶ formatter ─▶ END

Every node returns a partial update and never raises: an exception becomes `error` in state, later
nodes skip their work, and the formatter still answers (explaining the error).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, StateGraph

from assistant import planning
from assistant.context import AssistantContext
from assistant.formatting import build_ui_payload, format_answer
from assistant.state import AgentState, AviationPlan
from assistant.suggest import suggest
from assistant.tools import TOOLS, ToolError, run_tool
from assistant.tools.rules import retrieve

RETRIEVAL = {"bm25": "lexical retrieval (bm25)", "embeddings": "embedding retrieval (all-MiniLM-L6-v2)",
             "hybrid": "hybrid retrieval (bm25 + all-MiniLM-L6-v2, rank fusion)"}

MAX_MESSAGE_CHARS = 2000
_CHUNK = re.compile(r"\S+\s*|\s+")


def user_turns(messages: Sequence[BaseMessage]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, HumanMessage) and str(m.content).strip()]


def _safe(name: str, fn: Callable[[AgentState, RunnableConfig], dict[str, Any]]) -> Callable[[AgentState, RunnableConfig], dict[str, Any]]:
    def node(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        try:
            return fn(state, config)
        except Exception as exc:  # errors travel in state (seed 002), never out of the graph
            return {"error": f"{name} failed: {exc.__class__.__name__}: {exc}"}

    node.__name__ = name
    return node


def build_agent(ctx: AssistantContext | None = None, llm_planner: Any | None = None, llm: Any | None = None) -> Any:
    """The compiled graph. `llm` (assistant/llm.py `AssistantLlm`) plans with a model (validated
    against the manifest, falling back to the deterministic plan) and words the answer; the lower
    level hook `llm_planner(turns, plan, reasoning) -> (plan, reasoning)` replaces the plan as is
    (the tool runner still refuses a tool outside the manifest)."""
    ctx = ctx or AssistantContext()

    def _check_input(state: AgentState) -> list[str] | str:
        turns = user_turns(state.get("messages") or [])
        if not turns:
            return "The question is empty: ask about an airport, a route, a country's rules or a readback."
        if len(turns[-1]) > MAX_MESSAGE_CHARS:
            return f"The question is too long ({len(turns[-1])} characters, at most {MAX_MESSAGE_CHARS})."
        return turns

    def router(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        turns = _check_input(state)
        if isinstance(turns, str):
            return {"error": turns}
        decision, plan, reasoning = planning.route(ctx, turns)
        return {"router_decision": decision}

    def rules_agent(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        if state.get("error"):
            return {}
        turns = user_turns(state["messages"])
        plan, reasoning, _ = planning.plan(ctx, turns)
        retrieved: list[dict[str, Any]] = []
        if plan.selected_tool == "answer_rules_question":
            country = plan.arguments.get("country")
            question = plan.arguments.get("question", turns[-1])
            if len(turns) > 1 and planning.is_followup(planning.analyse(ctx, turns[-1])):
                question = next((t for t in reversed(turns[:-1]) if not planning.is_followup(planning.analyse(ctx, t))), question)
                plan.arguments["question"] = question
            retrieved = retrieve(ctx, question, [country] if country in ctx.rules.countries else None)
        return {"plan": plan, "planning_reasoning": reasoning + f" Rules path: {RETRIEVAL[ctx.rules.retriever]} over rules.json.",
                "retrieved_rules": retrieved}

    def planner(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        if state.get("error"):
            return {}
        turns = user_turns(state["messages"])
        plan, reasoning, _ = planning.plan(ctx, turns)
        calls: list[dict[str, Any]] = []
        if llm is not None:
            plan, reasoning, calls = llm.plan(turns, plan, reasoning)
        if llm_planner is not None:
            plan, reasoning = llm_planner(turns, plan, reasoning)
        return {"plan": plan, "planning_reasoning": reasoning, "llm_calls": calls}

    def predict_next(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        return {"suggested_queries": suggest(state.get("plan"))}

    def tool_runner(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        plan = state.get("plan")
        if state.get("error") or plan is None:
            return {}
        if plan.selected_tool not in TOOLS:
            return {"error": f"the planner chose {plan.selected_tool!r}, which is not in the manifest"}
        args = dict(plan.arguments)
        if plan.selected_tool == "answer_rules_question" and state.get("retrieved_rules") is not None:
            args["retrieved"] = state["retrieved_rules"]
        try:
            return {"tool_result": run_tool(ctx, plan.selected_tool, args)}
        except ToolError as exc:
            return {"error": str(exc), "tool_result": {"error": str(exc), "_tool_type": "error"}}

    def formatter(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        plan, result, error = state.get("plan"), state.get("tool_result"), state.get("error")
        answer, why = format_answer(plan, result, error)
        calls: list[dict[str, Any]] = []
        worded = None
        if llm is not None and plan is not None and result and not error and not result.get("error"):
            turns = user_turns(state.get("messages") or [])
            worded, llm_why, calls = llm.format(turns[-1] if turns else "", plan, result, answer,
                                                lambda tok: _emit(config, "answer_chunk", {"text": tok}))
            why = f"{why} {llm_why}"
        if worded is not None:
            answer = worded
        else:
            for piece in _CHUNK.findall(answer):  # the template's answer, streamed as `message` events
                _emit(config, "answer_chunk", {"text": piece})
        thinking = "\n\n".join(x for x in (state.get("planning_reasoning"), why) if x) or None
        return {
            "final_answer": answer,
            "formatting_reasoning": why,
            "thinking": thinking,
            "ui_payload": build_ui_payload(plan, result if not (result or {}).get("error") else None, state.get("suggested_queries")),
            "messages": [AIMessage(content=answer)],
            "llm_calls": calls,
        }

    g = StateGraph(AgentState)
    g.add_node("router", _safe("router", router))
    g.add_node("rules_agent", _safe("rules_agent", rules_agent))
    g.add_node("planner", _safe("planner", planner))
    g.add_node("predict_next", _safe("predict_next", predict_next))
    g.add_node("tool_runner", _safe("tool_runner", tool_runner))
    g.add_node("formatter", _safe_formatter(formatter))
    g.set_entry_point("router")
    g.add_conditional_edges("router", _route_decision, {"rules_agent": "rules_agent", "planner": "planner"})
    g.add_edge("rules_agent", "predict_next")
    g.add_edge("planner", "predict_next")
    g.add_edge("predict_next", "tool_runner")
    g.add_edge("tool_runner", "formatter")
    g.add_edge("formatter", END)
    return g.compile()


def _route_decision(state: AgentState) -> str:
    d = state.get("router_decision")
    return "rules_agent" if d is not None and d.path == "rules" else "planner"


def _safe_formatter(fn: Callable[[AgentState, RunnableConfig], dict[str, Any]]) -> Callable[[AgentState, RunnableConfig], dict[str, Any]]:
    def formatter(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        try:
            return fn(state, config)
        except Exception as exc:
            msg = f"Sorry, something went wrong while writing the answer ({exc.__class__.__name__})."
            return {"final_answer": msg, "error": str(exc), "ui_payload": None, "messages": [AIMessage(content=msg)]}

    return formatter


def _emit(config: RunnableConfig, name: str, data: dict[str, Any]) -> None:
    try:
        from langchain_core.callbacks.manager import dispatch_custom_event

        dispatch_custom_event(name, data, config=config)
    except Exception:  # outside a run (a node called directly in a test): nothing to stream to
        pass


def to_messages(messages: Sequence[dict[str, Any]] | str) -> list[BaseMessage]:
    """The seed's request messages ([{"role", "content"}]) as langchain messages."""
    if isinstance(messages, str):
        return [HumanMessage(content=messages)]
    out: list[BaseMessage] = []
    for m in messages:
        role, content = m.get("role"), str(m.get("content") or "")
        out.append(AIMessage(content=content) if role == "assistant" else HumanMessage(content=content))
    return out


def run_agent(graph: Any, messages: Sequence[dict[str, Any]] | str) -> dict[str, Any]:
    """One question, synchronously: the final state plus `duration_s`."""
    t0 = time.perf_counter()
    state = graph.invoke({"messages": to_messages(messages)})
    return {**state, "duration_s": time.perf_counter() - t0}


__all__ = ["AviationPlan", "build_agent", "run_agent", "to_messages", "user_turns"]
