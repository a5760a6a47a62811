"""The template formatter (tools return data, the formatter speaks) and `build_ui_payload()`,
the one place a ui_payload is made (seed 003)."""

from __future__ import annotations

from typing import Any

from assistant.state import AviationPlan

COUNTRY_NAMES = {
    "BE": "Belgium", "FR": "France", "DE": "Germany", "LU": "Luxembourg", "NL": "the Netherlands", "SE": "Sweden",
    "CH": "Switzerland", "GB": "the United Kingdom", "GG": "Guernsey", "JE": "Jersey", "GR": "Greece", "HU": "Hungary",
    "IT": "Italy", "MT": "Malta", "NO": "Norway", "PL": "Poland", "PT": "Portugal", "TR": "Türkiye", "IE": "Ireland",
}
KINDS = {
    "find_airports_near_route": "route",
    "find_airports_near_location": "location",
    "search_airports": "search",
    "get_airport_details": "airport",
    "get_notification_for_airport": "airport",
    "get_airport_weather": "airport",
    "answer_rules_question": "rules",
    "browse_rules": "rules",
    "compare_rules_between_countries": "rules",
    "get_phraseology_help": "phraseology",
}
UI_KEYS = (
    "kind", "tool", "departure", "destination", "icao", "region", "topic", "filters", "visualization",
    "airports", "mcp_raw", "suggested_queries", "show_rules",
)


def country_name(code: str | None) -> str:
    return COUNTRY_NAMES.get(code or "", code or "?")


def _filters_line(profile: dict[str, Any]) -> str:
    parts = []
    if profile.get("has_hard_runway"):
        parts.append("paved runway (every airport in our data has one)")
    if profile.get("min_runway_length_ft"):
        n = profile["min_runway_length_ft"]
        parts.append(f"runway at least {n} ft ({round(n / 3.28084)} m)")
    if profile.get("max_runway_length_ft"):
        parts.append(f"runway at most {profile['max_runway_length_ft']} ft")
    if profile.get("country"):
        parts.append(f"in {country_name(profile['country'])}")
    out = f"Filters applied: {', '.join(parts)}." if parts else ""
    if profile.get("unsupported"):
        what = ", ".join(u["what"] for u in profile["unsupported"])
        out += f" Not applied (not in our data): {what}."
    return out.strip()


def _airport_lines(airports: list[dict[str, Any]], extra: str | None = None, limit: int = 15) -> list[str]:
    lines = []
    for a in airports[:limit]:
        bits = [f"**{a['icao']}** {a.get('name') or ''}", a.get("city") or "", a.get("country") or ""]
        rwy = f"longest runway {a.get('longest_runway_m')} m" if a.get("longest_runway_ft") else ""
        where = ""
        if extra == "route":
            where = f"{a.get('along_track_nm', 0):.0f} nm along, {a.get('distance_from_route_nm', 0):.0f} nm off track"
        elif extra == "near":
            where = f"{a.get('distance_nm', 0):.0f} nm away"
        lines.append("- " + ", ".join(b for b in (bits[0], bits[1], bits[2], rwy, where) if b))
    if len(airports) > limit:
        lines.append(f"- … and {len(airports) - limit} more on the map")
    return lines


def format_answer(plan: AviationPlan | None, result: dict[str, Any] | None, error: str | None) -> tuple[str, str]:
    """(answer markdown, formatting_reasoning)."""
    if error and not result:
        return (f"Sorry, I could not answer that: {error}", "An error came through state; the formatter explains it.")
    if not result or plan is None:
        return ("I did not understand the question. Try 'airports between EGTF and LFMD' or 'tower frequency at EDDM'.", "No tool result.")
    if result.get("error"):
        return (f"Sorry, I could not answer that: {result['error']}", "The tool reported an error; the formatter explains it.")
    kind = result.get("_tool_type")
    fn = _FORMATTERS.get(kind, _generic)
    return fn(result), f"Formatted the {kind} result with the template formatter (no LLM)."


def _route(r: dict[str, Any]) -> str:
    out = [f"Airports within {r['max_distance_nm']:g} nm of the direct route {r['from']['name']} → {r['to']['name']} "
           f"({r['route_length_nm']:.0f} nm): {r['count']} found, listed from departure to destination."]
    out += _airport_lines(r["airports"], "route")
    if fl := _filters_line(r["filter_profile"]):
        out.append(fl)
    if not r["airports"]:
        out.append("No airport matched; try a wider corridor (\"within 30 nm\") or fewer filters.")
    return "\n".join(out)


def _near(r: dict[str, Any]) -> str:
    loc = r["location"]
    out = [f"Airports within {r['max_distance_nm']:g} nm of {loc['name']}: {r['count']} found, nearest first."]
    out += _airport_lines(r["airports"], "near")
    if fl := _filters_line(r["filter_profile"]):
        out.append(fl)
    if not r["airports"]:
        out.append("None in our data; try a wider radius (\"within 50 nm\").")
    return "\n".join(out)


def _search(r: dict[str, Any]) -> str:
    out = [f"{r['count']} airport(s) found" + (f" for “{r['query']}”" if r.get("query") else "") + ", longest runway first."]
    out += _airport_lines(r["airports"])
    if fl := _filters_line(r["filter_profile"]):
        out.append(fl)
    return "\n".join(out)


def _airport(r: dict[str, Any]) -> str:
    a = r["airport"]
    out = [f"**{a['icao']}** {a['name']}, {a.get('city') or ''} ({a.get('country')}), elevation {a.get('elevation_ft')} ft."]
    freqs = a.get("frequencies") or {}
    freq_lines = [f"- {station}: {', '.join(v)}" for station, v in freqs.items()]
    rwy_lines = [f"- {'/'.join(x for x in rw['ends'] if x)}: {rw['length_m']} m ({rw['length_ft']} ft), {rw['surface']}" for rw in a.get("runways", [])]
    if r.get("topic") == "frequencies":
        out.append("Frequencies (MHz):" if freq_lines else "No frequencies for it in our data.")
        out += freq_lines
        if freqs and "tower" not in freqs:
            out.append("Our data lists no tower frequency for it.")
    elif r.get("topic") == "runways":
        out += ["Runways:", *rwy_lines]
    else:
        out += ["Runways:", *rwy_lines]
        if freq_lines:
            out += ["Frequencies (MHz):", *freq_lines]
    out.append("Training use only: check current charts and the AIP before flight.")
    return "\n".join(out)


def _notification(r: dict[str, Any]) -> str:
    out = [f"**{r['icao']}** is in {country_name(r['country'])}. {r['note']}"]
    if r["country_rules"]:
        out.append(f"What pilots report for {country_name(r['country'])} (community know-how, not authoritative):")
        for e in r["country_rules"][:4]:
            out.append(f"- *{e['question']}* — {e['answer']} (reviewed {e['last_reviewed']})")
    else:
        out.append("The rules data has nothing for that country.")
    return "\n".join(out)


def _rules(r: dict[str, Any]) -> str:
    best = r.get("best")
    if not best:
        return "I found no rule in our data matching that question. " + r["disclaimer"]
    if r.get("needs_country") or best.get("answer") is None:
        return (f"The closest question in the rules data is *{best['question']}*; it is answered per country. "
                f"Which country? It covers {', '.join(r['covered_countries'])}.")
    out = [f"**{country_name(best['country'])}** — *{best['question']}*", "", best["answer"] or "(no answer recorded)", "",
           f"Cited: rules.json, {best['country']}, “{best['question']}”, last reviewed {best['last_reviewed']}."]
    if best.get("links"):
        out.append("Links: " + ", ".join(best["links"]))
    others = [x for x in r["rules"][1:3] if x["question"] != best["question"]]
    if others:
        out.append("Related: " + "; ".join(f"*{x['question']}* — {x['answer'][:160]}" for x in others))
    out.append(r["disclaimer"])
    return "\n".join(out)


def _browse(r: dict[str, Any]) -> str:
    what = f"tagged “{r['tag']}”" if r.get("tag") else f"in category {r['category']}" if r.get("category") else "in all"
    out = [f"{r['total']} rules questions {what}; showing {r['offset'] + 1}–{r['offset'] + len(r['items'])}:"]
    for it in r["items"]:
        line = f"- *{it['question']}* ({it['category']})"
        if it.get("answer"):
            line += f": {it['answer']['answer'][:200]}"
        out.append(line)
    if r.get("next_offset") is not None:
        out.append("Say “more” for the next page.")
    if not r.get("tag") and not r.get("category"):
        out.append("Tags: " + ", ".join(r["available_tags"]))
    out.append(r["disclaimer"])
    return "\n".join(out)


def _comparison(r: dict[str, Any]) -> str:
    out = [f"Comparing {', '.join(country_name(c) for c in r['countries'])}:"]
    for c in r["comparisons"]:
        out.append(f"\n*{c['question']}*" + (" — the same everywhere." if c["same_answer"] else ""))
        for a in c["answers"]:
            if a:
                out.append(f"- **{a['country']}**: {a['answer'] or '(no answer)'} (reviewed {a['last_reviewed']})")
    out.append(r["disclaimer"])
    return "\n".join(out)


def _weather(r: dict[str, Any]) -> str:
    w = r["weather"]
    out = [f"**{r['icao']}** weather ({'live METAR' if w.get('source') == 'vatsim' else 'generated for training, not real'}):",
           f"`{w.get('raw', '')}`"]
    if w.get("atis"):
        out.append(f"ATIS information {w.get('letter')}: {w['atis']}")
    return "\n".join(out)


def _phraseology(r: dict[str, Any]) -> str:
    if not r["items"]:
        return "I found no readback situation in our flows for that. Try 'taxi clearance', 'takeoff clearance' or 'IFR clearance'."
    out = []
    for it in r["items"][:2]:
        out.append(f"**{it['flow_name']}** ({it['flow']}, {it['state']}): read back {', '.join(it['must_read_back'])}.")
        if it.get("instruction_example"):
            out.append(f"- ATC: “{it['instruction_example']}”")
        if it.get("readback_example"):
            out.append(f"- You: “{it['readback_example']}”")
    out.append("From livefreq's own flows: the controller checks exactly these values.")
    return "\n".join(out)


def _generic(r: dict[str, Any]) -> str:
    return str(r.get("pretty") or "Done.")


_FORMATTERS = {
    "route": _route, "near_location": _near, "search": _search, "airport": _airport, "notification": _notification,
    "rules": _rules, "rules_browse": _browse, "comparison": _comparison, "weather": _weather, "phraseology": _phraseology,
}


def build_ui_payload(
    plan: AviationPlan | None, tool_result: dict[str, Any] | None, suggested_queries: list[dict[str, Any]] | None = None
) -> dict[str, Any] | None:
    """Hybrid payload (seed 001): stable top-level keys, common fields flattened, `mcp_raw` authoritative."""
    if plan is None:
        return None
    tool = plan.selected_tool
    args = plan.arguments
    result = tool_result or {}
    payload: dict[str, Any] = dict.fromkeys(UI_KEYS)
    payload.update({"kind": KINDS.get(tool, "unknown"), "tool": tool, "mcp_raw": tool_result, "show_rules": tool in (
        "answer_rules_question", "browse_rules", "compare_rules_between_countries")})
    if tool == "find_airports_near_route":
        payload["departure"] = (result.get("from") or {}).get("icao") or args.get("from_location")
        payload["destination"] = (result.get("to") or {}).get("icao") or args.get("to_location")
        payload["ifr"] = False
    if tool in ("get_airport_details", "get_notification_for_airport", "get_airport_weather"):
        payload["icao"] = result.get("icao") or args.get("icao_code")
    if payload["show_rules"]:
        payload["region"] = args.get("country") or args.get("countries")
        payload["topic"] = args.get("tag") or args.get("category") or args.get("question")
    if tool == "get_phraseology_help":
        payload["topic"] = args.get("topic")
    if "filter_profile" in result:
        payload["filters"] = result["filter_profile"]
    if "visualization" in result:
        payload["visualization"] = result["visualization"]
    if "airports" in result:
        payload["airports"] = result["airports"]
    payload["suggested_queries"] = suggested_queries or []
    return payload
