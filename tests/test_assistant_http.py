"""The briefing assistant over HTTP against a real uvicorn server on loopback (docs/assistant.md):
the seed's SSE events in order, the conversation log, the rules citation, bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest


@pytest.fixture()
def server(serve: Callable[[Any], str], tmp_path: Path) -> tuple[str, Path]:
    from gateway.app import create_app
    from gateway.settings import Settings

    logs = tmp_path / "logs"
    return serve(create_app(Settings(speech_preload=False, assistant_log_dir=logs))), logs


def sse(response: httpx.Response) -> list[tuple[str, Any]]:
    events = []
    for block in response.text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.strip().splitlines() if ": " in line)
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


def stream(base: str, messages: list[dict[str, str]], **extra: Any) -> list[tuple[str, Any]]:
    r = httpx.post(f"{base}/api/aviation-agent/chat/stream", json={"messages": messages, **extra}, timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    return sse(r)


def test_route_question_streams_the_seed_events_in_order_and_is_logged(server: tuple[str, Path]) -> None:
    base, logs = server
    events = stream(base, [{"role": "user", "content": "Find airports between EGTF and LFMD"}], session_id="s-route")
    names = [n for n, _ in events]
    collapsed = [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n]
    assert collapsed == ["plan", "thinking", "tool_call_start", "tool_call_end", "message", "thinking_done", "ui_payload", "done"]
    data = dict(events)
    assert data["plan"]["selected_tool"] == "find_airports_near_route"
    assert data["plan"]["arguments"]["from_location"] == "EGTF" and data["plan"]["arguments"]["to_location"] == "LFMD"
    assert data["tool_call_start"]["name"] == "find_airports_near_route"
    ui = data["ui_payload"]
    assert ui["kind"] == "route" and ui["tool"] == "find_airports_near_route"
    assert ui["departure"] == "EGTF" and ui["destination"] == "LFMD"
    assert ui["visualization"]["type"] == "route_with_markers"
    assert len(ui["airports"]) >= 5 and all(a["distance_from_route_nm"] <= 20 for a in ui["airports"])
    assert {"kind", "tool", "departure", "destination", "icao", "region", "topic", "filters", "visualization",
            "airports", "mcp_raw", "suggested_queries", "show_rules"} <= set(ui)
    answer = "".join(d["content"] for n, d in events if n == "message")
    assert "EGTF" in answer and ui["airports"][0]["icao"] in answer
    assert data["done"]["session_id"] == "s-route" and data["done"]["tokens"] == {"input": 0, "output": 0, "total": 0}
    [log] = list(logs.glob("*.jsonl"))
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    entry = next(e for e in entries if e["session_id"] == "s-route")
    assert entry["question"] == "Find airports between EGTF and LFMD" and entry["answer"] == answer
    assert entry["tool_calls"][0]["name"] == "find_airports_near_route"
    assert entry["metadata"] == {**entry["metadata"], "has_visualizations": True, "num_tool_calls": 1, "has_error": False}
    assert {"timestamp", "timestamp_end", "duration_seconds", "thinking"} <= set(entry)


def test_flight_plan_question_answers_from_the_france_entry_and_cites_it(server: tuple[str, Path]) -> None:
    base, _ = server
    r = httpx.post(f"{base}/api/aviation-agent/chat", json={"messages": [
        {"role": "user", "content": "Is a flight plan required for a VFR flight in France?"}]}, timeout=30)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["plan"]["selected_tool"] == "answer_rules_question" and body["plan"]["arguments"]["country"] == "FR"
    rules = json.loads((Path(__file__).resolve().parent.parent / "assistant" / "data" / "rules.json").read_text())
    q = next(q for q in rules["questions"] if q["question_text"] == "Is an FPL required for a VFR flight?")
    fr = q["answers_by_country"]["FR"]
    answer = body["answer"]
    assert "France" in answer and "Is an FPL required for a VFR flight?" in answer
    assert fr["answer_html"] in answer and fr["last_reviewed"] in answer
    assert "not an authoritative" in answer
    ui = body["ui_payload"]
    assert ui["kind"] == "rules" and ui["show_rules"] is True and ui["region"] == "FR"
    assert ui["mcp_raw"]["best"]["country"] == "FR"


def test_follow_up_refines_the_previous_plan(server: tuple[str, Path]) -> None:
    base, _ = server
    msgs = [
        {"role": "user", "content": "airports near Lyon"},
        {"role": "assistant", "content": "..."},
        {"role": "user", "content": "and only ones longer than 1500 m?"},
    ]
    data = dict(stream(base, msgs))
    assert data["plan"]["selected_tool"] == "find_airports_near_location"
    assert data["plan"]["arguments"]["location"].lower() == "lyon"
    assert data["plan"]["arguments"]["filters"]["min_runway_length_ft"] == 4921
    assert all(a["longest_runway_m"] >= 1500 for a in data["ui_payload"]["airports"])


@pytest.mark.parametrize("content", ["", "x" * 5000, "tower frequency at QQQQ?", "airports near Xyzzyplace"])
def test_bad_questions_get_an_answer_or_an_error_event_never_a_500(server: tuple[str, Path], content: str) -> None:
    base, _ = server
    events = stream(base, [{"role": "user", "content": content}])
    names = [n for n, _ in events]
    assert names[-1] == "done" and "error" in names
    answer = "".join(d["content"] for n, d in events if n == "message")
    assert answer.startswith("Sorry")


def test_malformed_bodies_are_400s(server: tuple[str, Path]) -> None:
    base, _ = server
    for body in ({}, {"messages": []}, {"messages": "hi"}):
        r = httpx.post(f"{base}/api/aviation-agent/chat", json=body, timeout=10)
        assert r.status_code in (400, 422), r.text
        assert r.json()["error"]["code"]
    r = httpx.post(f"{base}/api/aviation-agent/chat/stream", content=b"{not json", timeout=10)
    assert 400 <= r.status_code < 500


def test_feature_setting_turns_the_routes_off(serve: Callable[[Any], str], tmp_path: Path) -> None:
    from gateway.app import create_app
    from gateway.settings import Settings

    base = serve(create_app(Settings(speech_preload=False, assistant_enabled=False, assistant_log_dir=tmp_path)))
    r = httpx.post(f"{base}/api/aviation-agent/chat", json={"messages": [{"role": "user", "content": "hi"}]}, timeout=10)
    assert r.status_code in (404, 405)
