"""The deterministic planner: intent, ICAO codes, places, countries and filters from the words,
mapped onto one tool of the manifest. No LLM. Follow-ups ("and only paved ones?") refine the plan
of the previous question.

`route()` is the router's half (rules vs database), `plan()` the planner's; both come from the same
`analyse()` so they never disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from assistant.state import AviationPlan, RouterDecision
from assistant.tools import RULES_TOOLS, TOOLS

STOP4 = set(
    "able also area away back been best both call came come does done down each even ever fact feet find fine "
    "five four free from full gave give goes gone good half have hear help here high hold home into just keep kind "
    "knew know land last late left less like line list live long look made main make many more most much must "
    "name near need next nice none note once only open over part past plan play pull push rain read real rest "
    "ride road room rule runs safe said same seen show side some soon stay step stop such sure take talk tell "
    "than that them then they this time told took tour town trip turn type unit upon used very view want ways "
    "week well went were what when whom wide will wind with word work year your zone also able fuel paid city "
    "taxi info vfr ifr atis".split()
)
NOT_CODES = {"ATIS", "INFO", "TAXI", "CTAF", "SIDS", "STAR", "PAPI", "VASI", "RNAV", "HELP", "LIST", "NDBS", "VORS", "AVGAS", "NOTE", "IFR", "VFR", "EASA", "ICAO"}
_CODE = re.compile(r"\b[A-Za-z0-9]{4}\b")
_NUM = r"(\d+(?:[.,]\d+)?)\s*"
UNIT_FT = {"m": 3.28084, "meter": 3.28084, "meters": 3.28084, "metre": 3.28084, "metres": 3.28084, "ft": 1.0, "feet": 1.0, "foot": 1.0}
UNIT_NM = {"nm": 1.0, "nautical": 1.0, "km": 0.539957, "kilometers": 0.539957, "kilometres": 0.539957, "miles": 0.868976, "mi": 0.868976}

RE_PHRASEOLOGY = re.compile(
    r"read ?-?back|phraseology|what (?:do|should|must) i (?:say|reply|answer|respond)|how (?:do i|to|should i) (?:say|reply|respond|answer|call|read)"
    r"|example (?:call|transmission|of)|radio call|r/t\b|what (?:must|does|should) (?:a|an|the) .*(?:clearance|instruction) (?:contain|include)"
    r"|what is in (?:a|an|the) .*clearance|word(?:ing|s) (?:for|of)"
)
RE_WEATHER = re.compile(r"\b(weather|metar|atis|wind|winds|qnh|visibility|ceiling|temperature|forecast|taf|clouds?|conditions)\b")
RE_FREQ = re.compile(r"\b(frequenc|freq|tower|ground|delivery|approach|runway|runways|elevation|details|info|information about|tell me about|navaid|vor|ils)")
RE_NOTIFY = re.compile(r"\b(notif\w*|notice|prior permission|ppr|in advance|how early|advance warning|announce)\b")
RE_COMPARE = re.compile(r"\b(compare|comparison|compared|differ|differs|difference|differences|vs\.?|versus|same in|both)\b")
RE_BROWSE = re.compile(
    r"\b(list|browse|show|see|which|what)\b.{0,20}\b(rules|questions|topics|categories|tags)\b|\brules (?:about|on|tagged|in the|under)\b"
    r"|\b(?:next|more|another) (?:page|rules)\b|\bcategor(?:y|ies)\b|\btagged\b"
)
RE_RULES = re.compile(
    r"\b(required|require|requires|requirement|requirements|need|needed|mandatory|allowed|permitted|permission|legal|illegal|rule|rules"
    r"|regulation|regulations|must i|do i have to|have to|can i|may i|is it ok|transponder|flight plan|fpl|airspace|class [a-g]\b|semicircle"
    r"|cloudbreak|fis|clearance|enforced|customs|file|filing|accepted|practice|terminate|penetrat\w*|military)\b"
)
RE_AIRPORTS = re.compile(r"\b(airports?|airfields?|aerodromes?|fields|strips?|places to land|alternates?|diversions?|runways? near|land near)\b")
RE_NEAR = re.compile(
    r"\b(?:near|nearby|around|close to|next to|in the vicinity of|close by|within\s+\d+(?:[.,]\d+)?\s*(?:nm|km|miles?|mi|nautical miles)?\s+(?:of|from))\s+"
    r"(.+?)(?=$|[,?.!;]| with | that | which | having | longer| shorter| and | in (?:the )?[a-z]+$| over | under | at least| paved| hard)",
)
RE_ROUTE = [
    re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+?)(?=$|[,?.!;]| with | that | which | having | longer| shorter| paved| hard| within| in (?:the )?[a-z]+\b)"),
    re.compile(r"\bfrom\s+(.+?)\s+to\s+(.+?)(?=$|[,?.!;]| with | that | which | having | longer| shorter| paved| hard| within| via| in (?:the )?[a-z]+\b)"),
    re.compile(r"\b([A-Za-z0-9]{4})\s*(?:to|-|–|->)\s*([A-Za-z0-9]{4})\b"),
]
RE_ROUTE_HINT = re.compile(r"\b(route|en ?route|along|on the way|between|from .+ to|leg)\b")
RE_FOLLOWUP = re.compile(r"^(?:and|but|only|more|next|what about|how about|now|also|same|then|just|ok(?:ay)?|what if|in)\b")

UNSUPPORTED_WORDS = {
    "has_avgas": r"\bavgas|100ll\b",
    "has_jet_a": r"\bjet[- ]?a1?\b|\bjet fuel\b",
    "point_of_entry": r"\bcustoms\b|\bport of entry\b|\bpoint of entry\b|\bborder crossing\b",
    "has_procedures": r"\binstrument (?:approach|procedure)s?\b|\bifr procedures?\b|\bapproach procedures?\b",
    "max_landing_fee": r"\blanding fees?\b|\bcheap\b",
}


@dataclass
class Analysis:
    text: str
    low: str
    icaos: list[str] = field(default_factory=list)
    unknown_codes: list[str] = field(default_factory=list)  # ICAO-looking words not in our data
    countries: list[str] = field(default_factory=list)
    filters: dict[str, Any] = field(default_factory=dict)
    route: tuple[str, str] | None = None
    near: str | None = None
    radius_nm: float | None = None
    tool: str = "search_airports"
    reason: str = ""


def _codes(text: str, airports: Any) -> list[str]:
    out: list[str] = []
    for m in _CODE.finditer(text):
        tok = m.group(0)
        code = tok.upper()
        if code in out or code not in airports:
            continue
        if tok.isupper() or (tok.lower() not in STOP4 and not tok.isdigit()):
            out.append(code)
    return out


def extract_filters(low: str, countries: list[str]) -> dict[str, Any]:
    f: dict[str, Any] = {}
    if re.search(r"\b(paved|hard|asphalt|tarmac|concrete|hard[- ]surface)\b", low):
        f["has_hard_runway"] = True
    m = re.search(r"(?:longer than|more than|over|at least|minimum|min\.?|above|greater than|>=?)\s*" + _NUM + r"(m|meters?|metres?|ft|feet|foot)\b", low)
    if m is None:
        m = re.search(_NUM + r"(m|meters?|metres?|ft|feet|foot)\b(?:\s*(?:runway|or (?:more|longer)|minimum|\+))", low)
    if m:
        f["min_runway_length_ft"] = round(float(m.group(1).replace(",", ".")) * UNIT_FT[m.group(2)])
    m = re.search(r"(?:shorter than|less than|under|at most|maximum|max\.?|below)\s*" + _NUM + r"(m|meters?|metres?|ft|feet|foot)\b", low)
    if m:
        f["max_runway_length_ft"] = round(float(m.group(1).replace(",", ".")) * UNIT_FT[m.group(2)])
    for key, pat in UNSUPPORTED_WORDS.items():
        if re.search(pat, low):
            f[key] = True
    if countries and re.search(r"\b(?:in|inside|within|only in)\s+(?:the\s+)?[a-z]", low):
        f["country"] = countries[-1]
    return f


def _radius(low: str) -> float | None:
    m = re.search(r"within\s+" + _NUM + r"(nm|nautical|km|kilometers|kilometres|miles|mi)?", low)
    if not m:
        return None
    return round(float(m.group(1).replace(",", ".")) * UNIT_NM.get(m.group(2) or "nm", 1.0), 1)


def _resolve_phrase(ctx: Any, phrase: str) -> str | None:
    """The longest leading/trailing part of `phrase` that is a known place."""
    words = phrase.strip(" ?.!,").split()
    for n in range(len(words), 0, -1):
        for cand in (" ".join(words[:n]), " ".join(words[-n:])):
            if cand.lower() in ("the", "a", "an", "me", "it", "here", "there", "us"):
                continue
            if ctx.places.resolve(cand) is not None:
                return cand
    return None


def analyse(ctx: Any, text: str) -> Analysis:
    low = " ".join(text.lower().split())
    a = Analysis(text=text, low=low)
    a.icaos = _codes(text, ctx.airports)
    a.unknown_codes = [
        t for t in re.findall(r"\b[A-Z]{4}\b", text)
        if t not in ctx.airports and t.lower() not in STOP4 and t not in NOT_CODES
    ]
    a.countries = [c for c in ctx.places.countries_in(text)]
    a.filters = extract_filters(low, a.countries)
    a.radius_nm = _radius(low)
    for pat in RE_ROUTE:
        m = pat.search(text if pat is RE_ROUTE[2] else low)
        if m:
            x, y = _resolve_phrase(ctx, m.group(1)), _resolve_phrase(ctx, m.group(2))
            if x and y:
                a.route = (x.upper() if x.upper() in ctx.airports else x, y.upper() if y.upper() in ctx.airports else y)
                break
    m = RE_NEAR.search(low)
    if m:
        a.near = _resolve_phrase(ctx, m.group(1)) or m.group(1).strip()
        if a.near.upper() in ctx.airports:
            a.near = a.near.upper()
    a.tool, a.reason = _choose(a)
    return a


def _choose(a: Analysis) -> tuple[str, str]:
    low = a.low
    if a.unknown_codes and not a.icaos and not a.route and not a.near:
        if RE_WEATHER.search(low) and not RE_FREQ.search(low):
            return "get_airport_weather", f"weather at {a.unknown_codes[0]} (a code not in our data)"
        if RE_NOTIFY.search(low):
            return "get_notification_for_airport", f"notice at {a.unknown_codes[0]} (a code not in our data)"
        if not RE_RULES.search(low) and not RE_PHRASEOLOGY.search(low):
            return "get_airport_details", f"about {a.unknown_codes[0]} (a code not in our data)"
    airportish = bool(RE_AIRPORTS.search(low))
    if RE_PHRASEOLOGY.search(low):
        return "get_phraseology_help", "asks what to say or read back: phraseology from our flows"
    if RE_WEATHER.search(low) and not re.search(r"\bfrequenc|\bfreq\b", low) and (a.icaos or a.near) and not airportish:
        return "get_airport_weather", "asks for weather/ATIS at an airport"
    if RE_NOTIFY.search(low) and a.icaos:
        return "get_notification_for_airport", "asks about notice/permission for a given airport"
    if len(a.countries) >= 2 and (RE_COMPARE.search(low) or RE_RULES.search(low)) and not airportish:
        return "compare_rules_between_countries", f"rules across {len(a.countries)} countries"
    if RE_BROWSE.search(low) and not airportish:
        return "browse_rules", "asks for a list of rules topics"
    if a.route and (RE_ROUTE_HINT.search(low) or airportish or len(a.icaos) >= 2):
        return "find_airports_near_route", "two places given as a route"
    if a.near and (airportish or RE_NEAR.search(low)) and not (RE_RULES.search(low) and not airportish):
        return "find_airports_near_location", f"airports near {a.near}"
    if (RE_RULES.search(low) or RE_NOTIFY.search(low)) and not (airportish and (a.countries or a.icaos)):
        return "answer_rules_question", "a rules question (requirement, permission, procedure)"
    if a.icaos and not airportish:
        return "get_airport_details", f"about airport {a.icaos[0]}"
    if a.icaos and RE_FREQ.search(low):
        return "get_airport_details", f"about airport {a.icaos[0]}"
    return "search_airports", "an airport search by name, code or country"


def _arguments(a: Analysis, tool: str) -> dict[str, Any]:
    filters = dict(a.filters)
    if tool == "find_airports_near_route":
        args: dict[str, Any] = {"from_location": a.route[0], "to_location": a.route[1]} if a.route else {}
        if a.radius_nm:
            args["max_distance_nm"] = a.radius_nm
        return {**args, "filters": filters}
    if tool == "find_airports_near_location":
        args = {"location": a.near or (a.icaos[0] if a.icaos else None)}
        if a.radius_nm:
            args["max_distance_nm"] = a.radius_nm
        return {**args, "filters": filters}
    if tool == "search_airports":
        q = a.icaos[0] if a.icaos else _name_query(a.low)
        if a.countries and "country" not in filters and not q:
            filters["country"] = a.countries[-1]
        return {"query": q, "filters": filters}
    if tool in ("get_airport_details", "get_notification_for_airport", "get_airport_weather"):
        args = {"icao_code": a.icaos[0] if a.icaos else a.unknown_codes[0] if a.unknown_codes else a.near}
        if tool == "get_airport_details":
            m = RE_FREQ.search(a.low)
            args["topic"] = ("frequencies" if m and m.group(1).startswith(("freq", "tower", "ground", "delivery", "approach")) else
                             "runways" if m and m.group(1).startswith("runway") else None)
        return args
    if tool == "answer_rules_question":
        return {"question": a.text, "country": a.countries[0] if a.countries else None}
    if tool == "compare_rules_between_countries":
        return {"question": a.text, "countries": a.countries}
    if tool == "browse_rules":
        return {"country": a.countries[0] if a.countries else None, "offset": 0}
    if tool == "get_phraseology_help":
        return {"topic": a.text}
    return {}


def _name_query(low: str) -> str | None:
    m = re.search(r"(?:called|named|airport of|airports? (?:in|at|for))\s+([a-z][a-z .'\-]+?)(?=$|[,?.!]| with| that| which)", low)
    return m.group(1).strip() if m else None


def _plan_one(ctx: Any, text: str) -> tuple[Analysis, AviationPlan]:
    a = analyse(ctx, text)
    args = _arguments(a, a.tool)
    if a.tool == "browse_rules":
        tag, category = ctx.rules.match_topic(a.low)
        args.update({"tag": tag, "category": category})
    if a.tool == "search_airports" and args.get("query") and ctx.places.country(args["query"]):
        args["filters"]["country"] = ctx.places.country(args.pop("query"))[0]
    if a.tool == "answer_rules_question" and not args.get("country") and a.icaos:
        country = (ctx.airports.get(a.icaos[0]) or {}).get("country")
        args["country"] = country if country in ctx.rules.countries else None
    return a, AviationPlan(selected_tool=a.tool, arguments={k: v for k, v in args.items() if v is not None})


def is_followup(a: Analysis) -> bool:
    words = a.low.split()
    if RE_FOLLOWUP.match(a.low) and len(words) <= 12:
        return True
    return bool(a.filters or a.radius_nm) and len(words) <= 6 and not (a.icaos or a.route or a.near)


def plan(ctx: Any, user_turns: list[str]) -> tuple[AviationPlan, str, Analysis]:
    """The plan for the last user turn; a follow-up refines the plan of the turn before."""
    text = user_turns[-1]
    a, p = _plan_one(ctx, text)
    if len(user_turns) > 1 and is_followup(a):
        prev, _, prev_a = plan(ctx, user_turns[:-1])
        args = dict(prev.arguments)
        changes = []
        if a.filters:
            args["filters"] = {**args.get("filters", {}), **a.filters}
            changes.append(f"filters {a.filters}")
        tool = prev.selected_tool
        if tool in RULES_TOOLS and a.countries:
            if tool == "compare_rules_between_countries":
                args["countries"] = list(dict.fromkeys([*args.get("countries", []), *a.countries]))
            else:
                args["country"] = a.countries[0]
            changes.append(f"countries {a.countries}")
            args.pop("filters", None) if tool != "browse_rules" else None
        elif tool == "find_airports_near_location" and (a.near or a.icaos):
            args["location"] = a.near or a.icaos[0]
            changes.append(f"location {args['location']}")
        elif tool in ("get_airport_details", "get_airport_weather", "get_notification_for_airport") and a.icaos:
            args["icao_code"] = a.icaos[0]
            changes.append(f"airport {a.icaos[0]}")
        elif tool == "browse_rules" and re.search(r"\b(next|more)\b", a.low):
            args["offset"] = int(args.get("offset", 0)) + 10
            changes.append("next page")
        if a.radius_nm and "max_distance_nm" in _params(tool):
            args["max_distance_nm"] = a.radius_nm
        if tool in RULES_TOOLS:
            args.get("filters") is not None and not args["filters"] and args.pop("filters")
        reasoning = (
            f"Follow-up to the previous question ({prev.selected_tool}); kept its plan and changed "
            + (", ".join(changes) or "nothing")
            + "."
        )
        return AviationPlan(selected_tool=tool, arguments=args), reasoning, a
    return p, reasoning_for(a, p), a


def _params(tool: str) -> set[str]:
    import inspect

    return set(inspect.signature(TOOLS[tool]).parameters)


def reasoning_for(a: Analysis, p: AviationPlan) -> str:
    bits = [f"Selected {p.selected_tool}: {a.reason}."]
    if a.icaos:
        bits.append(f"ICAO codes: {', '.join(a.icaos)}.")
    if a.countries:
        bits.append(f"Countries: {', '.join(a.countries)}.")
    filters = p.arguments.get("filters")
    if filters:
        bits.append(f"Filters: {filters}.")
    return " ".join(bits)


def route(ctx: Any, user_turns: list[str]) -> tuple[RouterDecision, AviationPlan, str]:
    p, reasoning, _ = plan(ctx, user_turns)
    path = "rules" if p.selected_tool in RULES_TOOLS else "database"
    why = "rules question: retrieve from rules.json" if path == "rules" else "airport/weather/phraseology: plan a data tool"
    return RouterDecision(path=path, reason=why), p, reasoning
