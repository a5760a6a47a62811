"""The tool manifest (names as seed 003's airport_tools manifest, plus ours) and the one way to run a tool.

Tools return data only (never prose synthesis), with `_tool_type` for the formatter and
`filter_profile` for the UI; a `ToolError` is a message for the user.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from assistant.tools import airports, phraseology, rules, weather
from assistant.tools.base import ToolError

TOOLS: dict[str, Callable[..., dict[str, Any]]] = {
    "search_airports": airports.search_airports,
    "find_airports_near_location": airports.find_airports_near_location,
    "find_airports_near_route": airports.find_airports_near_route,
    "get_airport_details": airports.get_airport_details,
    "get_notification_for_airport": airports.get_notification_for_airport,
    "answer_rules_question": rules.answer_rules_question,
    "browse_rules": rules.browse_rules,
    "compare_rules_between_countries": rules.compare_rules_between_countries,
    # ours
    "get_airport_weather": weather.get_airport_weather,
    "get_phraseology_help": phraseology.get_phraseology_help,
}
RULES_TOOLS = ("answer_rules_question", "browse_rules", "compare_rules_between_countries")
DESCRIPTIONS = {
    "search_airports": "Text/name/code search and country queries, with filters.",
    "find_airports_near_location": "Airports near a place (ICAO code, airport name or city).",
    "find_airports_near_route": "Airports along the route between two places.",
    "get_airport_details": "Runways, frequencies and navaids of one airport.",
    "get_notification_for_airport": "Notice / permission requirements for an airport (from its country's rules).",
    "answer_rules_question": "A country's rule or practice, from rules.json (one country).",
    "browse_rules": "List rules questions by tag or category, paginated.",
    "compare_rules_between_countries": "Compare a rule across two or more countries.",
    "get_airport_weather": "Current METAR and ATIS of an airport (generated offline).",
    "get_phraseology_help": "What a clearance must contain and be read back, with an example, from our flows.",
}


def manifest() -> list[dict[str, Any]]:
    """[{name, description, parameters}] for a planner (or an LLM) to choose from."""
    out = []
    for name, fn in TOOLS.items():
        params = {
            p.name: {"required": p.default is inspect.Parameter.empty, "default": None if p.default is inspect.Parameter.empty else p.default}
            for p in list(inspect.signature(fn).parameters.values())[1:]
            if p.name != "retrieved"
        }
        out.append({"name": name, "description": DESCRIPTIONS[name], "parameters": params})
    return out


def run_tool(ctx: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run a manifest tool; unknown tools and bad arguments are `ToolError`s."""
    fn = TOOLS.get(name)
    if fn is None:
        raise ToolError(f"unknown tool {name!r}")
    allowed = set(list(inspect.signature(fn).parameters)[1:])
    args = {k: v for k, v in arguments.items() if k in allowed}
    try:
        return fn(ctx, **args)
    except TypeError as exc:
        raise ToolError(f"bad arguments for {name}: {exc}") from None


__all__ = ["RULES_TOOLS", "TOOLS", "ToolError", "manifest", "run_tool"]
