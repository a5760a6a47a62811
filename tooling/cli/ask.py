"""`livefreq ask`: one question through the briefing assistant's graph in process (debugging)."""

from __future__ import annotations

import argparse
from typing import Any

from tooling.cli.common import EXIT_FAILED, EXIT_OK, load_settings

__all__ = ["cmd_ask"]


def cmd_ask(args: argparse.Namespace) -> int:
    import json as _json

    from assistant.context import AssistantContext
    from assistant.graph import build_agent, run_agent
    from gateway.providers import DataProviders

    settings = load_settings()
    weather = DataProviders.from_settings(settings).weather
    from gateway.airports.repository import default_repository

    repo = default_repository()

    def wx(icao: str) -> dict[str, Any] | None:
        airport = repo.get(icao)
        if airport is None:
            return None
        report = weather.generated(icao)
        atis = weather.airport_atis(airport, report)
        return {"raw": report.raw, "source": report.source, "letter": atis.letter, "atis": atis.text}

    graph = build_agent(AssistantContext.load(flows_dir=settings.flows_dir, weather=wx))
    turns = args.question if len(args.question) > 1 else [" ".join(args.question)]
    msgs = []
    for i, t in enumerate(turns):
        msgs.append({"role": "user", "content": t})
        if i < len(turns) - 1:
            msgs.append({"role": "assistant", "content": "..."})
    state = run_agent(graph, msgs)
    dump = lambda v: _json.dumps(v, indent=2, default=str, ensure_ascii=False)  # noqa: E731
    if args.plan or args.verbose:
        plan = state.get("plan")
        print("router:", getattr(state.get("router_decision"), "path", None))
        print("plan:", dump(plan.model_dump() if plan else None))
    if args.tool_result or args.verbose:
        print("tool_result:", dump(state.get("tool_result")))
    if args.verbose:
        print("thinking:", state.get("thinking"))
        print("ui_payload keys:", sorted((state.get("ui_payload") or {}).keys()))
        print("suggested:", dump(state.get("suggested_queries")))
        print(f"time: {1000 * state['duration_s']:.1f} ms (includes loading the indexes)")
    print(state.get("final_answer"))
    return EXIT_FAILED if state.get("error") else EXIT_OK
