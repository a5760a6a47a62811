"""Seed 000 compatibility: ``GET /api/decision-flows/runtime`` and ``POST /api/llm/decide``.

The OpenSquawk frontend reads flows in the legacy shape (transitions split into ``next``,
``ok_next``, ``bad_next``, ``timer_next`` and ``auto_transitions`` lists) and asks for one
stateless decision at a time. Both are adapters over the canonical model and the same engine
that plays live sessions; nothing here decides scenario logic.

``/api/llm/decide`` contract (seed 000: never a next_state the request did not allow):
the engine runs the utterance on a throwaway session at ``flow_slug``:``state_id``. When the
candidate it follows is one of the request's ``candidates``, that is ``next_state``. Otherwise
(the engine chose a route the request did not offer, stayed in the state to correct a readback,
or did not recognize the words) the answer is ``off_schema: true`` with
``trace.fallback = {used: true, reason}``, and ``next_state`` is the best-scoring request
candidate the engine still considered acceptable (not eliminated, score at or above the flow's
match threshold), else ``state_id`` (stay and say again). A fallback carries no updates, flags
or flow switch, since the engine's route was not taken.

With the LLM router configured (README "The LLM router"), an utterance the deterministic router
cannot decide is put to the model exactly as a live transmission would be; ``trace.calls`` lists
that call (request, response, latency, tokens, outcome), and an unusable answer is the engine's
traced fallback before the restriction above applies.

A radio check is answered in place: the engine runs the radio-check interrupt flow, which reports
readability and resumes the interrupted state, so the answer is ``radio_check: true``,
``next_state = state_id`` and the controller's reply, not a fallback (seed 000's ``radio_check``
flag exists for exactly this).
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from engine.candidates import Candidate
from engine.messages import STATION_TITLES, frequency_var
from engine.models import Flow, State, Transition, TransitionKind
from engine.registry import FlowRegistry
from gateway.api.errors import ApiError, read_model
from gateway.api.schemas import DecideCandidate, DecideRequest
from gateway.service import Evaluation, RadioService, ServiceError

log = logging.getLogger(__name__)

RADIO_CHECK = "radio_check"

# --------------------------------------------------------------------------- runtime


def runtime_view(registry: FlowRegistry, main_flow: str | None) -> dict[str, Any]:
    """Every flow in seed 000's runtime shape."""
    return {
        "schema_version": registry.schema_version,
        "main_flow": main_flow,
        "flows": {flow.slug: flow_view(flow, registry) for flow in registry},
    }


def flow_view(flow: Flow, registry: FlowRegistry) -> dict[str, Any]:
    declared = list(flow.end_states)
    ends = declared + [sid for sid, s in flow.states.items() if not s.transitions and sid not in declared]
    return {
        "slug": flow.slug,
        "schema_version": flow.schema_version,
        "name": flow.name,
        "description": flow.description.strip(),
        "start_state": flow.start_state,
        "end_states": ends,
        "variables": flow.variables,
        "flags": flow.flags,
        "policies": flow.policies.model_dump(mode="json"),
        "hooks": flow.hooks,
        "roles": [role.value for role in flow.roles],
        "phases": flow.phases,
        "states": {sid: state_view(flow, state, registry) for sid, state in flow.states.items()},
        "entry_mode": flow.entry_mode.value,
        "station": flow.station,
    }


def state_view(flow: Flow, state: State, registry: FlowRegistry) -> dict[str, Any]:
    station = state.station or flow.station
    handoff = None
    if state.handoff is not None:
        handoff = {"to": state.handoff.to, "freq": state.handoff.freq or _freq_tpl(flow, state.handoff.to)}
    groups: dict[str, list[dict[str, Any]]] = {
        "next": [],
        "ok_next": [],
        "bad_next": [],
        "timer_next": [],
        "auto_transitions": [],
    }
    for t in state.transitions:
        entry = transition_view(t, registry)
        if t.kind is TransitionKind.NEXT:
            groups["next"].append(entry)
        elif t.kind is TransitionKind.OK:
            groups["ok_next"].append(entry)
        elif t.kind is TransitionKind.BAD:
            groups["bad_next"].append(entry)
        elif t.kind is TransitionKind.TIMER:
            groups["timer_next"].append({"to": entry.pop("to"), "after_s": t.after_s, **entry})
        else:  # auto, interrupt, return keep their kind so the client can tell them apart
            groups["auto_transitions"].append({"kind": t.kind.value, **entry})
    return {
        "id": state.id,
        "role": state.role.value,
        "phase": state.phase,
        "name": state.name or state.id,
        "summary": state.summary or "",
        "say_tpl": state.say_tpl,
        "utterance_tpl": state.utterance_tpl,
        "readback_required": list(state.readback_required),
        **groups,
        "triggers": [tr.model_dump(mode="json", exclude_defaults=True) for tr in state.triggers],
        "conditions": list(state.conditions),
        "actions": [a.model_dump(mode="json", exclude_defaults=True) for a in state.actions],
        "handoff": handoff,
        "frequency": state.frequency or (_freq_tpl(flow, station) if station else None),
        "frequencyName": state.frequency_name or (STATION_TITLES.get(station, station.title()) if station else None),
        "station": station,
    }


def transition_view(t: Transition, registry: FlowRegistry) -> dict[str, Any]:
    """``{to, label, guard}`` plus whatever else the transition carries (flow switch, triggers...)."""
    to = t.to
    if to is None and t.flow and t.flow in registry:
        to = registry.get(t.flow).start_state
    entry: dict[str, Any] = {"to": to, "label": t.label, "guard": t.guard}
    if t.flow:
        entry["flow"] = t.flow
        entry["mode"] = t.mode.value if t.mode else None
    if t.intent:
        entry["intent"] = t.intent
    if t.utterance_tpl:
        entry["utterance_tpl"] = t.utterance_tpl
    if t.triggers:
        entry["triggers"] = [tr.model_dump(mode="json", exclude_defaults=True) for tr in t.triggers]
    if t.updates:
        entry["updates"] = t.updates
    if t.flags:
        entry["flags"] = t.flags
    if t.priority:
        entry["priority"] = t.priority
    return entry


def _freq_tpl(flow: Flow, station: str) -> str:
    return "{{" + frequency_var(flow, station) + "}}"


# --------------------------------------------------------------------------- decide


def _resolve_flow(registry: FlowRegistry, req: DecideRequest, main_flow: str | None) -> str:
    """`flow_slug`, or the flow that has `state_id` (the main flow first) when none is given."""
    if req.flow_slug:
        if req.flow_slug not in registry:
            raise ApiError(422, "unknown_flow", f"unknown flow {req.flow_slug!r}", "flow_slug")
        return req.flow_slug
    order = ([main_flow] if main_flow else []) + [f.slug for f in registry if f.slug != main_flow]
    for slug in order:
        if req.state_id in registry.get(slug).states:
            return slug
    raise ApiError(422, "unknown_state", f"no flow has a state {req.state_id!r}; give flow_slug", "state_id")


def _offered(cand: Candidate, offered: list[DecideCandidate], flow_slug: str) -> str | None:
    """The request candidate id that names the same target as an engine candidate, if any."""
    for rc in offered:
        if rc.id == f"{cand.target_flow}:{cand.target_state}":
            return rc.id
        if rc.id == cand.target_state and (rc.flow or flow_slug) == cand.target_flow:
            return rc.id
    return None


def _is_radio_check(cand: Candidate | None, registry: FlowRegistry) -> bool:
    if cand is None or cand.origin != "interrupt":
        return False
    flow = registry.flows.get(cand.target_flow)
    spec = flow.interrupt if flow else None
    by_trigger = bool(spec and any(tr.kind == "intent" and tr.intent == RADIO_CHECK for tr in spec.triggers))
    return by_trigger or RADIO_CHECK in cand.target_flow


def decide_view(req: DecideRequest, flow_slug: str, ev: Evaluation, registry: FlowRegistry) -> dict[str, Any]:
    d = ev.decision
    offered = req.candidates
    chosen = ev.chosen
    chosen_id = _offered(chosen, offered, flow_slug) if chosen is not None else None
    scores = {c.id: c.score for c in ev.candidates if not c.eliminated}
    steps: list[dict[str, Any]] = [
        {"stage": "candidates", "ids": [c.id for c in ev.candidates]},
        {
            "stage": "screen",
            "eliminated": [{"id": c.id, "reason": c.reason} for c in ev.candidates if c.eliminated],
        },
        {"stage": "score", "scores": scores, "threshold": ev.threshold},
        {"stage": "select", "chosen": chosen.id if chosen else None, "reason": ev.route.reason if ev.route else None},
        {"stage": "restrict", "offered": [rc.id for rc in offered], "match": chosen_id},
    ]
    radio_check = _is_radio_check(chosen, registry)
    in_place = chosen_id is None and radio_check and d.to_flow == flow_slug and d.to_state == req.state_id
    if in_place:
        chosen_id = req.state_id  # the radio check ran and the flow resumed: stay, no fallback
    if chosen_id is not None:
        assert chosen is not None
        next_state = chosen_id
        fallback: dict[str, Any] = {"used": False}
        off_schema = False
        target_flow = chosen.target_flow
        activate = target_flow if target_flow != flow_slug and not in_place else None
        resume = chosen.transition.kind is TransitionKind.RETURN
        updates, flags = dict(d.updates), dict(d.flags)
        say = d.messages[0].text if d.messages else None
        auto = {
            "id": chosen_id,
            "router": ev.route.router if ev.route else None,
            "score": chosen.score,
            "reason": ev.route.reason if ev.route else "readback",
        }
        advanced = [key.split(":", 1)[1] for key in d.trace.auto_advance]
        active_nodes = [next_state] if in_place or not advanced else advanced
    else:
        if chosen is None:
            reason = "no candidate recognized" if d.intent != "say_again" else "pilot asked to say again"
            if ev.route is not None and ev.route.reason:
                reason += f" ({ev.route.reason})"
        else:
            reason = f"engine chose {chosen.id}, which is not among the request's candidates"
        acceptable = [
            (c, rid)
            for c in ev.candidates
            if not c.eliminated and c.score >= ev.threshold and (rid := _offered(c, offered, flow_slug)) is not None
        ]
        best = max(acceptable, key=lambda pair: pair[0].score, default=None)  # max keeps the first of equals
        next_state = best[1] if best else req.state_id
        reason += f"; next_state is {'the best-scoring offered candidate' if best else 'the current state'} {next_state}"
        fallback = {"used": True, "reason": reason}
        off_schema = True
        activate, resume, updates, flags, auto = None, False, {}, {}, None
        stayed = d.to_flow == flow_slug and d.to_state == req.state_id
        say = d.messages[0].text if d.messages and stayed and next_state == req.state_id else None
        active_nodes = [next_state]
    steps[-1]["next_state"] = next_state
    return {
        "decision": {
            "next_state": next_state,
            "updates": updates,
            "flags": flags,
            "controller_say_tpl": say,
            "radio_check": radio_check,
            "activate_flow": activate,
            "resume_previous": resume,
            "off_schema": off_schema,
        },
        "trace": {
            "calls": [llm] if (llm := (d.trace.router or {}).get("llm")) else [],
            "fallback": fallback,
            "candidateTimeline": {"steps": steps},
            "autoSelection": auto,
            "engine": d.trace.model_dump(mode="json"),
        },
        "active_nodes": active_nodes,
        "pilot_intent": d.intent,
    }


# --------------------------------------------------------------------------- routes


def routes(service: RadioService, max_body_bytes: int) -> list[BaseRoute]:
    runtime = runtime_view(service.registry, service.default_flow)  # the registry never changes

    async def decision_flows_runtime(request: Request) -> JSONResponse:
        return JSONResponse(runtime)

    async def llm_decide(request: Request) -> JSONResponse:
        req = await read_model(request, DecideRequest, max_body_bytes)
        slug = _resolve_flow(service.registry, req, service.default_flow)
        if req.state_id not in service.registry.get(slug).states:
            raise ApiError(422, "unknown_state", f"flow {slug!r} has no state {req.state_id!r}", "state_id")
        try:
            ev = await service.evaluate(
                flow=slug,
                state=req.state_id,
                text=req.pilot_utterance or "",
                variables=req.variables,
                flags=req.flags,
            )
        except ServiceError:
            raise
        except Exception as exc:  # odd variables the engine cannot render: a traced fallback, never a 500
            log.warning("decide: engine failed on %s:%s: %r", slug, req.state_id, exc, exc_info=True)
            return JSONResponse(_engine_failure(req, repr(exc)))
        return JSONResponse(decide_view(req, slug, ev, service.registry))

    return [
        Route("/api/decision-flows/runtime", decision_flows_runtime, methods=["GET"]),
        Route("/api/llm/decide", llm_decide, methods=["POST"]),
    ]


def _engine_failure(req: DecideRequest, error: str) -> dict[str, Any]:
    return {
        "decision": {
            "next_state": req.state_id,
            "updates": {},
            "flags": {},
            "controller_say_tpl": None,
            "radio_check": False,
            "activate_flow": None,
            "resume_previous": False,
            "off_schema": True,
        },
        "trace": {
            "calls": [],
            "fallback": {"used": True, "reason": f"engine error: {error}; staying in {req.state_id}"},
            "candidateTimeline": {"steps": []},
            "autoSelection": None,
        },
        "active_nodes": [req.state_id],
        "pilot_intent": None,
    }
