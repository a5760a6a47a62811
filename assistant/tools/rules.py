"""Rules tools over rules.json (community know-how by country, flyfun, MIT): data only.

`retrieved_rules` entries: {"country", "question", "category", "tags", "answer", "links", "last_reviewed", "score"}.
"""

from __future__ import annotations

from typing import Any

from assistant.tools.base import ToolError

DISCLAIMER = (
    "Source: pilots' community know-how (flyfun rules.json, reviewed per country), not an authoritative "
    "publication: check the country's AIP before you fly."
)


def _countries(ctx: Any, given: list[str]) -> list[str]:
    known = ctx.rules.countries
    missing = [c for c in given if c not in known]
    if missing:
        raise ToolError(
            f"The rules data has no answers for {', '.join(missing)}; it covers {', '.join(known)}."
        )
    return given


def retrieve(ctx: Any, question: str, countries: list[str] | None, k: int = 3) -> list[dict[str, Any]]:
    hits = ctx.rules.search(question, k=k)
    out = []
    for score, q in hits:
        for c in countries or []:
            a = q.answer(c)
            if a is not None:
                out.append({**a, "score": round(score, 3)})
    if not countries:
        for score, q in hits[:1]:
            out.append({"country": None, "question": q.text, "category": q.category, "tags": list(q.tags),
                        "answer": None, "links": [], "last_reviewed": None, "score": round(score, 3)})
    return out


def answer_rules_question(ctx: Any, question: str, country: str | None = None, retrieved: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    countries = _countries(ctx, [country]) if country else []
    rules = retrieved if retrieved is not None else retrieve(ctx, question, countries)
    best = rules[0] if rules else None
    answers = [r for r in rules if r.get("answer") is not None]
    if country and answers:
        best = answers[0]
    return {
        "_tool_type": "rules",
        "question": question,
        "country": country,
        "best": best,
        "rules": answers,
        "needs_country": not country,
        "covered_countries": ctx.rules.countries,
        "disclaimer": DISCLAIMER,
        "filter_profile": {"country": country} if country else {},
        "pretty": f"{len(answers)} rule answer(s)" + (f" for {country}" if country else ""),
    }


def browse_rules(
    ctx: Any, tag: str | None = None, category: str | None = None, country: str | None = None, offset: int = 0, limit: int = 10
) -> dict[str, Any]:
    if country:
        _countries(ctx, [country])
    questions = ctx.rules.browse(tag, category)
    offset, limit = max(0, int(offset)), max(1, min(50, int(limit)))
    page = questions[offset : offset + limit]
    items = []
    for q in page:
        item: dict[str, Any] = {"question": q.text, "category": q.category, "tags": list(q.tags)}
        if country:
            item["answer"] = q.answer(country)
        items.append(item)
    return {
        "_tool_type": "rules_browse",
        "tag": tag,
        "category": category,
        "country": country,
        "total": len(questions),
        "offset": offset,
        "limit": limit,
        "next_offset": offset + limit if offset + limit < len(questions) else None,
        "items": items,
        "available_tags": ctx.rules.tags,
        "available_categories": ctx.rules.categories,
        "disclaimer": DISCLAIMER,
        "filter_profile": {k: v for k, v in {"tag": tag, "category": category, "country": country}.items() if v},
        "pretty": f"{len(questions)} rule question(s)" + (f" tagged {tag!r}" if tag else "") + (f" in {category}" if category else ""),
    }


def compare_rules_between_countries(ctx: Any, question: str, countries: list[str]) -> dict[str, Any]:
    countries = _countries(ctx, list(dict.fromkeys(c.upper() for c in countries)))
    if len(countries) < 2:
        raise ToolError("A comparison needs at least two countries, e.g. 'compare flight plan rules in France and Germany'.")
    hits = ctx.rules.search(question, k=2)
    if not hits:
        raise ToolError("I found no rules question matching that topic to compare.")
    comparisons = []
    for score, q in hits:
        answers = [q.answer(c) for c in countries]
        texts = {(a or {}).get("answer", "").strip().lower() for a in answers}
        comparisons.append({"question": q.text, "score": round(score, 3), "answers": answers, "same_answer": len(texts) == 1})
    return {
        "_tool_type": "comparison",
        "question": question,
        "countries": countries,
        "comparisons": comparisons,
        "disclaimer": DISCLAIMER,
        "filter_profile": {"countries": countries},
        "pretty": f"{len(comparisons)} rules question(s) compared across {', '.join(countries)}",
    }
