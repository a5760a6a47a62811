"""Stateless evaluation: one utterance through the engine on a throwaway session, nothing stored.

For the compatibility API (`POST /api/llm/decide`, gateway/api/compat.py) and the router bench.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.candidates import Candidate
from engine.models import Decision, FlowFrame, FlowMode, Session
from engine.phraseology import callsign_telephony
from engine.registry import FlowRegistry
from engine.router import RouteResult
from engine.session import SessionEngine
from gateway.llm import RouterProvider, consult
from gateway.service.errors import UnknownFlowError, UnknownStateError


@dataclass(slots=True)
class Evaluation:
    """What the engine made of one utterance on a throwaway session (see `RadioService.evaluate`).

    `chosen` is the candidate the engine followed (None when it asked to say again);
    `candidates` every candidate it weighed, with scores and eliminations.
    """

    session: Session
    decision: Decision
    chosen: Candidate | None
    candidates: list[Candidate]
    route: RouteResult | None
    threshold: float


async def evaluate(
    engine: SessionEngine,
    llm: RouterProvider | None,
    registry: FlowRegistry,
    *,
    flow: str,
    state: str,
    text: str,
    variables: Mapping[str, Any] | None,
    flags: Mapping[str, Any] | None,
) -> Evaluation:
    """Decide `text` at `flow`:`state` with `engine` (the LLM router asked as for a live
    transmission, when one is configured); `registry` holds the flow (its declared variables and
    flags are the defaults under the given ones)."""
    session = throwaway(registry, flow, state, variables, flags)
    query = engine.route_query(session, text) if llm is not None else None
    verdict = await consult(llm, query) if llm is not None and query is not None else None
    decision, routing = engine.decide(session, text, 0.0, llm=verdict)
    if routing is None:
        return Evaluation(session, decision, None, [], None, registry.get(flow).policies.match_threshold)
    return Evaluation(session, decision, routing.chosen, routing.candidates, routing.result, routing.threshold)


def throwaway(
    registry: FlowRegistry, flow: str, state: str, variables: Mapping[str, Any] | None, flags: Mapping[str, Any] | None
) -> Session:
    """A session at `flow`:`state` that is never stored (see `evaluate`)."""
    try:
        target = registry.get(flow)
    except KeyError:
        raise UnknownFlowError(f"unknown flow {flow!r}", field="flow_slug") from None
    if state not in target.states:
        raise UnknownStateError(f"flow {flow!r} has no state {state!r}", field="state_id")
    given = {**target.variables, **dict(variables or {})}
    if isinstance(given.get("callsign"), str) and "callsign_spoken" not in given:
        given["callsign_spoken"] = callsign_telephony(given["callsign"])
    return Session(
        session_id="decide",
        main_flow=target.slug,
        start_flow=target.slug,
        active=FlowFrame(flow=target.slug, state=state, mode=FlowMode.MAIN),
        variables=given,
        flags={**target.flags, **{str(k): bool(v) for k, v in (flags or {}).items()}},
        station=target.states[state].station or target.station,
    )
