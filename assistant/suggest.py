"""Next-query suggestions (seed 003's next-query predictor), from the plan: no LLM."""

from __future__ import annotations

from typing import Any

from assistant.state import AviationPlan


def suggest(plan: AviationPlan | None) -> list[dict[str, Any]]:
    if plan is None:
        return [{"text": "Find airports between EGTF and LFMD", "tool": "find_airports_near_route"},
                {"text": "What must I read back in a taxi clearance?", "tool": "get_phraseology_help"}]
    a, tool = plan.arguments, plan.selected_tool
    out: list[tuple[str, str]] = []
    if tool == "find_airports_near_route":
        out += [("and only paved ones longer than 800 m?", tool),
                (f"weather at {a.get('to_location')}", "get_airport_weather"),
                (f"tower frequency at {a.get('to_location')}", "get_airport_details")]
    elif tool in ("find_airports_near_location", "search_airports"):
        out += [("and only with a runway longer than 1000 m?", tool), ("within 40 nm", tool)]
    elif tool in ("get_airport_details", "get_airport_weather", "get_notification_for_airport"):
        icao = a.get("icao_code")
        out += [(f"weather at {icao}", "get_airport_weather"), (f"airports near {icao}", "find_airports_near_location"),
                (f"do I need PPR at {icao}?", "get_notification_for_airport")]
    elif tool == "answer_rules_question":
        c = a.get("country") or "France"
        out += [("and in Germany?", tool), (f"list the airspace rules for {c}", "browse_rules"),
                ("compare this between France and the United Kingdom", "compare_rules_between_countries")]
    elif tool == "browse_rules":
        out += [("more", tool), ("Is an FPL required for a VFR flight in France?", "answer_rules_question")]
    elif tool == "compare_rules_between_countries":
        out += [("and Switzerland?", tool), ("list the flight plan rules", "browse_rules")]
    elif tool == "get_phraseology_help":
        out += [("what do I read back in a takeoff clearance?", tool), ("what must an IFR clearance contain?", tool)]
    return [{"text": t, "tool": tl} for t, tl in out if "None" not in t][:3]
