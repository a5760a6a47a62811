"""The trainee's briefing assistant (seeds 001-003): a langgraph agent over airports, country rules,
weather and our own phraseology.

Pure like `engine/`: no sockets, no HTTP. Data comes in through `AssistantContext` (built from the
gateway's repositories or from files given by path); the gateway serves it (gateway/api/assistant.py).
"""

from __future__ import annotations

from typing import Any

__all__ = ["AgentState", "AssistantContext", "AviationPlan", "build_agent", "run_agent"]


def __getattr__(name: str) -> Any:  # lazy: importing assistant.geo must not build the graph
    if name == "AssistantContext":
        from assistant.context import AssistantContext

        return AssistantContext
    if name in ("build_agent", "run_agent"):
        from assistant import graph

        return getattr(graph, name)
    if name in ("AgentState", "AviationPlan"):
        from assistant import state

        return getattr(state, name)
    raise AttributeError(name)
