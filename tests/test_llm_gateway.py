"""The LLM router through the gateway: a real uvicorn gateway asks a real chat-completions server on
loopback (tests/support/chat_completions.py) that answers correctly, invalidly (unknown id,
malformed JSON, prose), slowly (past the deadline) or fails (HTTP 500). Each fallback is traced,
tokens are summed per session, counters show in /metrics, the compatibility API lists the call,
and a server without structured output gets plain prompts parsed strictly."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from engine.router_llm import judge
from gateway.app import create_app
from gateway.llm import ChatCompletionsProvider
from gateway.llm.prompts import PromptError, PromptSet
from tooling.metrics_scrape import parse
from gateway.service import RadioService
from gateway.settings import REPO_ROOT, Settings
from tests.conftest import run_server
from tests.support.chat_completions import COMPLETION_TOKENS, PROMPT_TOKENS, ChatCompletionsServer

TIMEOUT_S = 2.0  # the slow answer never comes; this is how long the gateway waits for it
FREE_FORM = "Lufthansa 359, we'd like to get the engines running please"  # at SP_REQUEST: below threshold
TEXTBOOK = "Frankfurt Ground, Lufthansa 359, stand V155, request startup and pushback"
SCENARIO = {"callsign": "DLH359", "airport": "EDDF", "stand": "V155"}


@pytest.fixture(scope="module")
def gateway(chat_completions: ChatCompletionsServer) -> Iterator[str]:
    settings = Settings(
        speech_preload=False,
        llm_url=f"{chat_completions.url}/v1",
        llm_model="fake-router",
        llm_timeout_s=TIMEOUT_S,
    )
    with run_server(create_app(settings)) as base:
        yield base


@pytest.fixture()
def client(gateway: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gateway, timeout=30.0) as c:
        yield c


def _session(client: httpx.Client) -> str:
    reply = client.post("/api/radio/sessions", json={"flow": "startup_pushback", "seed": 7, "scenario": SCENARIO})
    assert reply.status_code == 201, reply.text
    assert reply.json()["session"]["state"] == "SP_REQUEST"
    return reply.json()["session"]["id"]


def _say(client: httpx.Client, session_id: str, text: str) -> dict[str, Any]:
    reply = client.post(f"/api/radio/sessions/{session_id}/transmissions", json={"text": text})
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_a_free_form_request_is_routed_by_the_llm_among_the_candidates(client: httpx.Client, llm_server: ChatCompletionsServer) -> None:
    llm_server.choice = "SP_STARTUP_ONLY"
    reply = _say(client, _session(client), FREE_FORM)
    assert reply["decision"]["from_state"] == "SP_REQUEST" and reply["decision"]["intent"] == "request_startup"
    assert reply["session"]["state"] == "SP_STARTUP_RB" and reply["messages"]
    # what the server was asked: the model, the prompts from the files, the schema of the answer
    [request] = llm_server.requests
    assert request["model"] == "fake-router" and request["temperature"] == 0.0
    system, user = request["messages"]
    assert system["role"] == "system" and system["content"] == (REPO_ROOT / "gateway/llm/prompts/system.txt").read_text().strip()
    assert FREE_FORM in user["content"] and "SP_APPROVE" in user["content"] and "request startup" in user["content"]
    schema = request["response_format"]["json_schema"]
    assert schema["strict"] is True and schema["schema"]["properties"]["candidate"]["enum"] == ["SP_APPROVE", "SP_STARTUP_ONLY", "none"]
    # and the trace: request, response, latency, tokens
    router = reply["trace"]["router"]
    assert router["name"] == "llm" and router["consult"] == "below_threshold" and router["fallback"] is None
    llm = router["llm"]
    assert llm["outcome"] == "chosen" and llm["choice"] == "SP_STARTUP_ONLY" and llm["model"] == "fake-router"
    assert llm["request"]["messages"] == request["messages"] and llm["response"] == '{"candidate": "SP_STARTUP_ONLY"}'
    assert llm["status"] == 200 and llm["structured"] == "json_schema" and llm["latency_ms"] > 0
    assert llm_server.authorizations == [None]  # no key configured: none sent
    assert llm["tokens"] == {"prompt": PROMPT_TOKENS, "completion": COMPLETION_TOKENS, "total": PROMPT_TOKENS + COMPLETION_TOKENS}


def test_textbook_phraseology_never_reaches_the_llm(client: httpx.Client, llm_server: ChatCompletionsServer) -> None:
    reply = _say(client, _session(client), TEXTBOOK)
    assert reply["session"]["state"] == "SP_APPROVE_RB" and reply["trace"]["router"]["name"] == "deterministic"
    assert llm_server.requests == []


@pytest.mark.parametrize(
    ("mode", "content", "reason"),
    [
        ("raw", '{"candidate": "SP_TAXI_TO_THE_MOON"}', "unknown_candidate"),
        ("raw", '{"candidate": "SP_APPROVE"', "malformed_json"),
        ("raw", "The pilot is asking for startup only, so SP_STARTUP_ONLY.", "malformed_json"),
        ("error", "", "http_error"),
        ("slow", "", "timeout"),
    ],
    ids=["unknown-id", "malformed-json", "prose", "http-500", "slow"],
)
def test_an_unusable_answer_is_a_traced_say_again(
    client: httpx.Client, llm_server: ChatCompletionsServer, mode: str, content: str, reason: str
) -> None:
    llm_server.mode, llm_server.content = mode, content  # type: ignore[assignment]
    session_id = _session(client)
    reply = _say(client, session_id, FREE_FORM)
    assert reply["decision"]["recognized"] is False
    assert [m["text"] for m in reply["messages"]] == ["Lufthansa 359, say again."]
    assert reply["session"]["state"] == "SP_REQUEST"  # never an invented state
    router = reply["trace"]["router"]
    assert router["name"] == "fallback" and router["fallback"]["reason"] == reason and router["fallback"]["policy"] == "say_again"
    assert router["llm"]["outcome"] == reason and len(llm_server.requests) == 1
    if mode == "raw":
        assert router["llm"]["response"] == content
    if mode == "error":
        assert router["llm"]["status"] == 500 and "the model crashed" in router["llm"]["detail"]
    # the session and the server go on: a textbook call is decided as ever
    assert _say(client, session_id, TEXTBOOK)["session"]["state"] == "SP_APPROVE_RB"
    assert client.get("/health").json()["ok"] is True


def test_tokens_are_summed_per_session_and_counted_in_metrics(client: httpx.Client, llm_server: ChatCompletionsServer) -> None:
    before = parse(client.get("/metrics").text)
    session_id = _session(client)
    llm_server.mode, llm_server.content = "raw", "no idea"
    _say(client, session_id, FREE_FORM)
    llm_server.mode, llm_server.choice = "choose", "SP_APPROVE"
    _say(client, session_id, FREE_FORM)
    usage = client.get(f"/api/radio/sessions/{session_id}").json()["session"]["llm"]
    assert usage == {
        "calls": 2,
        "prompt_tokens": 2 * PROMPT_TOKENS,
        "completion_tokens": 2 * COMPLETION_TOKENS,
        "total_tokens": 2 * (PROMPT_TOKENS + COMPLETION_TOKENS),
        "fallbacks": 1,
    }
    other = _session(client)
    assert client.get(f"/api/radio/sessions/{other}").json()["session"]["llm"]["calls"] == 0
    delta = parse(client.get("/metrics").text).minus(before)
    assert delta.value("livefreq_llm_requests_total", outcome="malformed_json") == 1
    assert delta.value("livefreq_llm_requests_total", outcome="chosen") == 1
    assert delta.value("livefreq_llm_fallbacks_total", reason="malformed_json") == 1
    assert delta.value("livefreq_llm_tokens_total", kind="prompt") == 2 * PROMPT_TOKENS
    assert delta.value("livefreq_llm_tokens_total", kind="completion") == 2 * COMPLETION_TOKENS
    assert delta.value("livefreq_llm_request_seconds_count") == 2
    assert delta.value("livefreq_router_decisions_total", router="llm") == 1
    assert delta.value("livefreq_router_decisions_total", router="fallback") == 1


def test_the_compatibility_api_lists_the_llm_call(client: httpx.Client, llm_server: ChatCompletionsServer) -> None:
    llm_server.choice = "SP_STARTUP_ONLY"
    body = {
        "state_id": "SP_REQUEST",
        "flow_slug": "startup_pushback",
        "pilot_utterance": FREE_FORM,
        "variables": {"callsign": "DLH359", "stand": "V155"},
        "candidates": [{"id": "SP_APPROVE"}, {"id": "SP_STARTUP_ONLY"}],
    }
    reply = client.post("/api/llm/decide", json=body).json()
    assert reply["decision"]["next_state"] == "SP_STARTUP_ONLY" and reply["decision"]["off_schema"] is False
    [call] = reply["trace"]["calls"]
    assert call["outcome"] == "chosen" and call["model"] == "fake-router"
    assert reply["trace"]["autoSelection"]["router"] == "llm"
    llm_server.mode, llm_server.content = "raw", '{"candidate": "SP_SOMEWHERE"}'
    reply = client.post("/api/llm/decide", json=body).json()
    assert reply["decision"]["off_schema"] is True and reply["decision"]["next_state"] == "SP_REQUEST"
    assert "unknown_candidate" in reply["trace"]["fallback"]["reason"]


def test_health_names_the_llm_router_only_when_configured(client: httpx.Client, live_server: str) -> None:
    llm = client.get("/health").json()["llm"]
    assert llm["model"] == "fake-router" and llm["structured_output"] is True and llm["response_format"] == "json_schema"
    assert llm["url"].endswith("/v1/chat/completions")
    assert httpx.get(f"{live_server}/health").json()["llm"] is None  # off by default


# --------------------------------------------------------------------------- the provider


def _ask(provider: ChatCompletionsProvider, query: Any, times: int = 1) -> list[Any]:
    """`times` questions on one event loop, whose connection pool is closed after."""

    async def ask() -> list[Any]:
        try:
            return [await provider.ask(query) for _ in range(times)]
        finally:
            await provider.aclose()

    return asyncio.run(ask())


def _query_and_provider(url: str, **kw: Any) -> tuple[Any, ChatCompletionsProvider]:
    service = RadioService(Settings(store="memory"))
    session, _decision, _token = service.create(flow="startup_pushback", seed=7, scenario=SCENARIO)
    query = service.engine.route_query(session, FREE_FORM)
    assert query is not None
    prompts = PromptSet.load(REPO_ROOT / "gateway" / "llm" / "prompts")
    return query, ChatCompletionsProvider(f"{url}/v1", "fake-router", prompts=prompts, timeout_s=TIMEOUT_S, **kw)


def _forms(requests: list[dict[str, Any]]) -> list[str | None]:
    return [(r.get("response_format") or {}).get("type") for r in requests]


def test_a_server_without_structured_output_gets_plain_prompts_parsed_strictly(llm_server: ChatCompletionsServer) -> None:
    llm_server.formats = frozenset()
    llm_server.choice = "SP_APPROVE"
    query, provider = _query_and_provider(llm_server.url)
    first, second = _ask(provider, query, 2)
    # both forms refused once (HTTP 400), asked again without a schema, and not offered one again
    assert _forms(llm_server.requests) == ["json_schema", "json_object", None, None]
    assert first.structured == "off (the server refused json_schema: HTTP 400; json_object: HTTP 400)"
    assert second.structured == "off" and provider.describe()["structured_output"] is False
    assert judge(query, first).choice == "SP_APPROVE" and judge(query, second).outcome == "chosen"
    # plain prompts still say what to answer, and the answer is parsed strictly
    assert '"enum": ["SP_APPROVE", "SP_STARTUP_ONLY", "none"]' in llm_server.requests[2]["messages"][1]["content"]
    llm_server.mode, llm_server.content = "raw", '```json\n{"candidate": "SP_APPROVE"}\n```'
    [fenced] = _ask(provider, query)
    assert judge(query, fenced).outcome == "malformed_json"  # no JSON fished out of a code fence


def test_a_llama_cpp_python_server_gets_the_schema_as_json_object(llm_server: ChatCompletionsServer) -> None:
    """llama-cpp-python's server knows only ``json_object`` (with a ``schema``, which it turns into
    a grammar) and answers ``json_schema`` with HTTP 500 and its validation error: that is a
    refusal of the form, not a failed call, so the same question goes at once as json_object."""
    llm_server.formats, llm_server.refusal_status = frozenset({"json_object"}), 500
    llm_server.choice = "SP_STARTUP_ONLY"
    query, provider = _query_and_provider(llm_server.url)
    first, second = _ask(provider, query, 2)
    assert _forms(llm_server.requests) == ["json_schema", "json_object", "json_object"]
    assert llm_server.requests[1]["response_format"]["schema"] == query.answer_schema()
    assert first.structured == "json_object (the server refused json_schema: HTTP 500)" and second.structured == "json_object"
    assert judge(query, first).choice == judge(query, second).choice == "SP_STARTUP_ONLY"
    assert provider.describe()["structured_output"] is True and provider.describe()["response_format"] == "json_object"


def test_a_server_error_is_not_taken_for_a_refused_schema(llm_server: ChatCompletionsServer) -> None:
    llm_server.mode = "error"  # HTTP 500 about the model, not about response_format
    query, provider = _query_and_provider(llm_server.url)
    [exchange] = _ask(provider, query)
    assert exchange.error == "http_error" and _forms(llm_server.requests) == ["json_schema"]
    assert provider.format == "json_schema"  # offered again next time


@pytest.mark.parametrize("form", ["json_schema", "json_object"])
def test_a_configured_form_is_always_sent_and_a_refusal_is_an_http_error(llm_server: ChatCompletionsServer, form: str) -> None:
    llm_server.formats = frozenset()
    query, provider = _query_and_provider(llm_server.url, structured=form)
    first, second = _ask(provider, query, 2)
    assert _forms(llm_server.requests) == [form, form] and first.structured == second.structured == form
    assert judge(query, first).outcome == "http_error" and first.status == 400


def test_structured_output_off_never_sends_a_schema_and_an_api_key_is_a_bearer_token(llm_server: ChatCompletionsServer) -> None:
    llm_server.choice = "SP_STARTUP_ONLY"
    query, provider = _query_and_provider(llm_server.url, structured="off", api_key="sk-test")
    [exchange] = _ask(provider, query)
    assert exchange.structured == "off" and "response_format" not in llm_server.requests[0]
    assert judge(query, exchange).choice == "SP_STARTUP_ONLY"
    assert llm_server.authorizations == ["Bearer sk-test"]
    assert "sk-test" not in json.dumps(exchange.model_dump())  # the key is never traced


def test_an_unreachable_server_is_a_transport_error(llm_server: ChatCompletionsServer) -> None:
    query, provider = _query_and_provider("http://127.0.0.1:9")  # the discard port: nothing listens
    [exchange] = _ask(provider, query)
    assert exchange.error == "transport_error" and judge(query, exchange).outcome == "transport_error"


def test_configuration_errors_are_refused_at_start_up(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="LIVEFREQ_LLM_MODEL"):
        Settings(llm_url="http://127.0.0.1:11434/v1")
    (tmp_path / "system.txt").write_text("route")
    (tmp_path / "user.txt").write_text("words: ${transcript} ${secret_key}")
    with pytest.raises(PromptError, match="secret_key"):
        PromptSet.load(tmp_path)
    with pytest.raises(PromptError, match="cannot read"):
        PromptSet.load(tmp_path / "missing")
