"""The briefing assistant's LLM path (assistant/llm.py, gateway/llm/chat.py) against a real
chat-completions server on loopback (tests/support/chat_completions.py): a valid plan is used, an
invented tool, malformed JSON, a timeout or an HTTP error falls back to the deterministic plan (and
says so in the thinking), the formatter's tokens stream as `message` events, and tokens are summed
over every call into `done`."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from assistant.context import AssistantContext
from assistant.graph import build_agent
from assistant.llm import AssistantLlm, LlmConfig, validate_plan
from assistant.streaming import stream_agent
from gateway.llm.chat import AssistantChat
from tests.support.chat_completions import COMPLETION_TOKENS, PROMPT_TOKENS, ChatCompletionsServer

ROUTE_PLAN = json.dumps({"selected_tool": "find_airports_near_route",
                         "arguments": {"from_location": "EGTF", "to_location": "LFMD", "filters": {"min_runway_length_ft": 3000}},
                         "reasoning": "two airports given as a route"})
WORDED = "Along the **EGTF** to **LFMD** route you have several airfields with long runways. Check the AIP."


@pytest.fixture(scope="module")
def ctx() -> AssistantContext:
    c = AssistantContext()
    c.warm()
    return c


def agent(ctx: AssistantContext, server: ChatCompletionsServer, timeout_s: float = 10.0) -> Any:
    chat = AssistantChat(f"{server.url}/v1", "test-model", timeout_s=timeout_s)
    return build_agent(ctx, llm=AssistantLlm(chat, LlmConfig.load()))


def run(graph: Any, question: str | list[dict[str, str]]) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    final: dict[str, Any] = {}

    async def go() -> list[tuple[str, Any]]:
        return [(e["event"], e["data"]) async for e in stream_agent(graph, question, "s1", on_final=final.update)]

    return asyncio.run(go()), final


def answer_of(events: list[tuple[str, Any]]) -> str:
    return "".join(d["content"] for e, d in events if e == "message")


def test_a_valid_plan_is_used_and_the_model_words_the_answer_streamed(ctx: AssistantContext, llm_server: ChatCompletionsServer) -> None:
    llm_server.script = [ROUTE_PLAN, WORDED]
    events, final = run(agent(ctx, llm_server), "which airfields could I use on the way from Fairoaks to Cannes?")
    plan = next(d for e, d in events if e == "plan")
    assert plan["selected_tool"] == "find_airports_near_route"
    assert plan["arguments"] == {"from_location": "EGTF", "to_location": "LFMD", "filters": {"min_runway_length_ft": 3000}}
    assert final["tool_result"]["filter_profile"]["min_runway_length_ft"] == 3000
    messages = [d["content"] for e, d in events if e == "message"]
    assert len(messages) > 5 and "".join(messages) == WORDED  # the model's tokens, as they came
    assert final["final_answer"] == WORDED
    thinking = next(d for e, d in events if e == "thinking_done")["thinking"]
    assert "LLM planner (test-model) chose find_airports_near_route" in thinking and "LLM formatter" in thinking
    done = events[-1]
    assert done[0] == "done"
    assert done[1]["tokens"] == {"input": 2 * PROMPT_TOKENS, "output": 2 * COMPLETION_TOKENS, "total": 2 * (PROMPT_TOKENS + COMPLETION_TOKENS)}
    assert [c["outcome"] for c in final["llm_calls"]] == ["used", "used"]
    # what the planner was asked: the manifest, the schema (tools as an enum), the config's temperature
    ask, fmt = llm_server.requests
    assert ask["temperature"] == 0.0 and ask["stream"] is False
    assert ask["response_format"]["json_schema"]["schema"]["properties"]["selected_tool"]["enum"][0] == "search_airports"
    assert "find_airports_near_route(from_location, to_location" in ask["messages"][0]["content"]
    assert fmt["stream"] is True and fmt["stream_options"] == {"include_usage": True} and fmt["temperature"] == 0.2
    assert "EGTF" in fmt["messages"][1]["content"]  # the tool's facts went to the formatter


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ('{"selected_tool": "book_a_hotel", "arguments": {"city": "Cannes"}}', "invented tool 'book_a_hotel'"),
        ('{"selected_tool": "get_airport_details", "arguments": {"icao_code": "LFMD", "colour": "red"}}', "colour: Extra inputs"),
        ('{"selected_tool": "get_airport_details", "arguments": {"icao_code": "LFMD"', "malformed JSON"),
        ("!error", "http_error: HTTP 500"),
    ],
)
def test_a_bad_plan_falls_back_to_the_deterministic_one_and_says_so(
    ctx: AssistantContext, llm_server: ChatCompletionsServer, answer: str, why: str
) -> None:
    llm_server.script = [answer, "!error"]  # the formatter fails too: the template answers
    events, final = run(agent(ctx, llm_server), "tower frequency at EDDM")
    plan = next(d for e, d in events if e == "plan")
    assert plan == {"selected_tool": "get_airport_details", "arguments": {"icao_code": "EDDM", "topic": "frequencies"},
                    "answer_style": "narrative_markdown"}
    assert why in final["planning_reasoning"] and "used the deterministic plan" in final["planning_reasoning"]
    thinking = next(d for e, d in events if e == "thinking_done")["thinking"]
    assert why in thinking and "LLM formatter failed (http_error" in thinking
    assert "EDDM" in answer_of(events) and "118" in answer_of(events)  # the template's answer
    assert not any(e == "error" for e, _ in events)
    assert [c["stage"] for c in final["llm_calls"]] == ["planner", "formatter"]
    assert all(c["outcome"].startswith("fallback") for c in final["llm_calls"])
    tokens = events[-1][1]["tokens"]
    assert tokens["total"] == (0 if answer == "!error" else PROMPT_TOKENS + COMPLETION_TOKENS)  # the answered call counts


def test_a_slow_server_falls_back_within_the_deadline(ctx: AssistantContext, llm_server: ChatCompletionsServer) -> None:
    llm_server.script = ["!slow", "!slow"]
    t0 = time.perf_counter()
    events, final = run(agent(ctx, llm_server, timeout_s=0.5), "Find airports between EGTF and LFMD")
    assert time.perf_counter() - t0 < 5
    assert next(d for e, d in events if e == "plan")["selected_tool"] == "find_airports_near_route"
    assert "LLM planner failed (timeout" in final["planning_reasoning"]
    assert [c["outcome"] for c in final["llm_calls"]] == ["fallback: timeout", "fallback: timeout"]
    assert "EGTF" in answer_of(events) and events[-1][1]["tokens"]["total"] == 0


def test_validate_plan_drops_nothing_it_was_not_given() -> None:
    p = validate_plan('```json\n{"selected_tool": "find_airports_near_location", "arguments": {"location": "Lyon"}}\n```')
    assert p.arguments == {"location": "Lyon"}
    with pytest.raises(ValueError, match="filters.wifi"):
        validate_plan('{"selected_tool": "search_airports", "arguments": {"filters": {"wifi": true}}}')
    with pytest.raises(ValueError, match="location"):
        validate_plan('{"selected_tool": "find_airports_near_location", "arguments": {}}')


def test_over_http_with_the_gateway_settings(serve: Callable[[Any], str], llm_server: ChatCompletionsServer, tmp_path: Any) -> None:
    from gateway.app import create_app
    from gateway.settings import Settings

    settings = Settings(speech_preload=False, assistant_log_dir=tmp_path, llm_url=f"{llm_server.url}/v1", llm_model="m1")
    base = serve(create_app(settings))
    llm_server.script = [ROUTE_PLAN, WORDED]
    r = httpx.post(f"{base}/api/aviation-agent/chat/stream", timeout=30,
                   json={"messages": [{"role": "user", "content": "airports between EGTF and LFMD"}]})
    events = [(b.split("\n")[0][7:], json.loads(b.split("\n")[1][6:])) for b in r.text.strip().split("\n\n")]
    assert answer_of(events) == WORDED
    assert events[-1][1]["tokens"]["total"] == 2 * (PROMPT_TOKENS + COMPLETION_TOKENS)
    llm_server.script = ['{"selected_tool": "teleport", "arguments": {}}', WORDED]
    body = httpx.post(f"{base}/api/aviation-agent/chat", timeout=30,
                      json={"messages": [{"role": "user", "content": "weather at EDDF"}]}).json()
    assert body["plan"]["selected_tool"] == "get_airport_weather" and "invented tool 'teleport'" in body["thinking"]
    assert body["tokens"]["total"] == 2 * (PROMPT_TOKENS + COMPLETION_TOKENS)
    [log] = list(tmp_path.glob("*.jsonl"))
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [c["outcome"] for c in lines[-1]["metadata"]["llm_calls"]][0].startswith("fallback: invented tool")


def test_bench_with_the_llm_planner(ctx: AssistantContext, llm_server: ChatCompletionsServer, tmp_path: Any) -> None:
    from tooling.bench.assistant import run_assistant_bench

    labels = tmp_path / "q.tsv"
    labels.write_text("find_airports_near_route\tairports between EGTF and LFMD\nget_airport_details\ttower frequency at EDDM\n")
    chat = AssistantChat(f"{llm_server.url}/v1", "bench-model", timeout_s=5)
    llm_server.script = [ROUTE_PLAN, '{"selected_tool": "nope", "arguments": {}}']  # then "choose" mode: not a plan
    report = run_assistant_bench(ctx, labels=labels, llm=AssistantLlm(chat, LlmConfig.load()))
    assert report["planner"] == "llm (bench-model)" and report["correct"] == 2  # the fallback was right
    lp = report["llm_planner"]
    assert lp["calls"] == 2 and lp["used"] == 1 and lp["fallbacks"][0].startswith("fallback: invented tool 'nope'")
    assert lp["tokens"]["total"] == 2 * (PROMPT_TOKENS + COMPLETION_TOKENS)


def test_llm_bench_runs_each_question_once_through_the_graph(ctx: AssistantContext, llm_server: ChatCompletionsServer, tmp_path: Any) -> None:
    from tooling.bench.assistant import run_llm_bench

    labels = tmp_path / "q.tsv"
    labels.write_text("find_airports_near_route\tairports between EGTF and LFMD\n"
                      "answer_rules_question\tIs a flight plan required for a VFR flight in France?\n")
    chat = AssistantChat(f"{llm_server.url}/v1", "bench-model", timeout_s=5)
    llm_server.script = [ROUTE_PLAN, WORDED, "In France a VFR flight plan is needed to cross a border (rules.json, FR)."]
    lines: list[str] = []
    report = run_llm_bench(AssistantLlm(chat, LlmConfig.load()), ctx, labels=labels, echo=lines.append)
    assert report["graph_runs"] == 2
    assert report["planner"] == "llm (bench-model)" and report["correct"] == 2 and len(lines) == 2
    route, rules = report["rows"]
    assert route["path"] != "rules" and route["planner"] == "used" and route["formatter"] == "used"
    assert rules["path"] == "rules" and rules["planner"] is None and rules["formatter"] == "used"  # the rules path plans without the model
    assert report["llm_planner"]["calls"] == 1 and report["llm_formatter"] == {**report["llm_formatter"], "calls": 2, "used": 2, "fallbacks": {}}
    assert report["tokens"]["total"] == 3 * (PROMPT_TOKENS + COMPLETION_TOKENS) and report["error_events"] == 0
    assert report["first_event_ms"]["p50"] <= report["done_ms"]["max"]


def test_llm_bench_plans_the_questions_beyond_its_graph_runs(ctx: AssistantContext, llm_server: ChatCompletionsServer, tmp_path: Any) -> None:
    from tooling.bench.assistant import run_llm_bench

    labels = tmp_path / "q.tsv"
    labels.write_text("find_airports_near_route\tairports between EGTF and LFMD\n"
                      "answer_rules_question\tIs a flight plan required for a VFR flight in France?\n")
    chat = AssistantChat(f"{llm_server.url}/v1", "bench-model", timeout_s=5)
    llm_server.script = [ROUTE_PLAN]
    report = run_llm_bench(AssistantLlm(chat, LlmConfig.load()), ctx, labels=labels, graph_runs=0)
    assert report["graph_runs"] == 0 and report["first_event_ms"] is None and report["correct"] == 2
    assert [r["planner"] for r in report["rows"]] == ["used", None]  # one model call: the rules path plans without it
    assert report["llm_planner"]["calls"] == 1 and report["llm_formatter"]["calls"] == 0
