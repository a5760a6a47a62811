"""The briefing assistant in process: planner accuracy on the labelled set, tools, errors in state,
the conversation log under concurrency (docs/assistant.md)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from assistant.context import AssistantContext
from assistant.graph import build_agent, run_agent
from assistant.planning import plan
from assistant.state import AviationPlan
from assistant.tools import TOOLS, manifest
from gateway.assistant_log import ConversationLog
from tooling.bench.assistant import load_labels

SEED_TOOLS = {
    "search_airports", "find_airports_near_location", "find_airports_near_route", "get_airport_details",
    "get_notification_for_airport", "answer_rules_question", "browse_rules", "compare_rules_between_countries",
}


@pytest.fixture(scope="module")
def ctx() -> AssistantContext:
    c = AssistantContext.load(weather=lambda icao: {"raw": f"{icao} 121250Z 25008KT CAVOK 15/07 Q1013", "source": "generated", "letter": "K", "atis": "test"})
    c.warm()
    return c


@pytest.fixture(scope="module")
def graph(ctx: AssistantContext):
    return build_agent(ctx)


def test_manifest_has_the_seed_tool_names(ctx: AssistantContext) -> None:
    assert SEED_TOOLS <= set(TOOLS)
    assert {m["name"] for m in manifest()} == set(TOOLS)


def test_deterministic_planner_selects_the_right_tool_for_90_percent_of_the_labelled_set(ctx: AssistantContext) -> None:
    labels = load_labels()
    assert len(labels) >= 150 and {t for t, _ in labels} == set(TOOLS)
    right = sum(plan(ctx, [q])[0].selected_tool == t for t, q in labels)
    assert right / len(labels) >= 0.9, right / len(labels)


def test_filters_and_unsupported_filters_are_reported(graph) -> None:
    s = run_agent(graph, "airports near Lyon with avgas longer than 800 m")
    profile = s["tool_result"]["filter_profile"]
    assert profile["min_runway_length_ft"] == 2625
    assert profile["unsupported"] == [{"filter": "has_avgas", "what": "AVGAS availability"}]
    assert "Not applied (not in our data): AVGAS availability" in s["final_answer"]
    s = run_agent(graph, "airports in Switzerland")
    assert s["plan"].arguments["filters"] == {"country": "CH"}
    assert {a["country"] for a in s["ui_payload"]["airports"]} == {"CH"}


def test_notification_says_airport_specific_notice_is_not_in_our_data(graph) -> None:
    s = run_agent(graph, "PPR for LFMD?")
    assert s["plan"].selected_tool == "get_notification_for_airport"
    assert "not in our data" in s["final_answer"] and "France" in s["final_answer"]


def test_phraseology_comes_from_our_flows(graph) -> None:
    s = run_agent(graph, "what must I read back in a taxi clearance?")
    item = s["tool_result"]["items"][0]
    assert item["flow"] == "taxi_out" and item["readback_fields"] == ["runway", "holding_point", "taxi_route"]
    assert "holding point N4" in s["final_answer"]


def test_weather_through_the_injected_callable(graph) -> None:
    s = run_agent(graph, "weather at LSZH")
    assert s["plan"].selected_tool == "get_airport_weather" and "LSZH 121250Z" in s["final_answer"]


def test_compare_and_browse(graph) -> None:
    s = run_agent(graph, "compare transponder rules in France and Germany")
    assert s["tool_result"]["_tool_type"] == "comparison" and s["tool_result"]["countries"] == ["FR", "DE"]
    s = run_agent(graph, [{"role": "user", "content": "list rules about airspace"}, {"role": "assistant", "content": "."},
                          {"role": "user", "content": "more"}])
    assert s["plan"].arguments["offset"] == 10 and s["tool_result"]["offset"] == 10


def test_an_invented_tool_becomes_an_error_in_state_and_the_formatter_still_answers(ctx: AssistantContext) -> None:
    def bad_planner(turns, plan_, reasoning):
        return AviationPlan(selected_tool="book_a_hotel"), "invented"

    s = run_agent(build_agent(ctx, llm_planner=bad_planner), "tower frequency at EDDM")
    assert "not in the manifest" in s["error"] and s["final_answer"].startswith("Sorry")


def test_conversation_log_lines_never_interleave(tmp_path: Path) -> None:
    log = ConversationLog(tmp_path)
    now = datetime.now(UTC).isoformat()

    def write(n: int) -> None:
        for i in range(50):
            log.append({"session_id": f"{n}-{i}", "timestamp": now, "answer": "x" * 5000})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    [path] = list(tmp_path.glob("*.jsonl"))
    lines = path.read_text().splitlines()
    assert len(lines) == 400 and len({json.loads(x)["session_id"] for x in lines}) == 400


def test_a_bench_sample_is_seeded_and_covers_every_tool() -> None:
    from tooling.bench.assistant import sample_labels

    items = load_labels()
    a, b = sample_labels(items, 20, seed=1), sample_labels(items, 20, seed=1)
    assert a == b and len(a) == 20 and len(set(a)) == 20 and set(a) <= set(items)
    assert {t for t, _ in a} == {t for t, _ in items}  # stratified: every tool, twice
    assert sample_labels(items, None) == items and sample_labels(items, 20, seed=2) != a
