"""Seed 000 compatibility: ``GET /api/decision-flows/runtime`` and ``POST /api/llm/decide``.

The OpenSquawk frontend reads flows in the legacy shape (transitions split into ``next``,
``ok_next``, ``bad_next``, ``timer_next`` and ``auto_transitions`` lists) and asks for one
stateless decision at a time. Both are adapters over the canonical model and the same engine
that plays live sessions; nothing here decides scenario logic.

``/api/decision-flows/runtime[?airport=ICAO&destination=ICAO&seed=N]``: frequencies are resolved
for an airport (default: the scenario default, EDDF, with its default destination, EDDM): a
state's ``frequency`` and ``handoff.freq`` are the airport data's frequencies as a session at that
airport with that seed (default 0) would have them, and ``frequency_tpl`` keeps the template
(``{{ground_freq}}``). The top-level ``airport`` says which airports and seed they belong to and,
per frequency variable, whether the value is the airport data's (``airport_data``) or generated
(``generated``: the data lists none for that station, e.g. no centre frequency for EDDF). A
``return`` entry (in ``auto_transitions``, ``kind: "return"``) has ``to: null`` and
``resume_previous: true``: the flow ends and the one it interrupted resumes where it was left,
which depends on the session; no other entry has ``to: null``.

``/api/llm/decide`` contract (seed 000: never a next_state the request did not allow). The
frontend's ``state`` and ``candidates`` are reconciled with the loaded flows first
(gateway/api/compat_state.py: its ``readback_required`` and expected phrase are used, the rest is
checked; a contradiction is a 422 naming the field), and ``trace.state`` says what was used. The
engine then runs the utterance on a throwaway session at ``flow_slug``:``state_id``:

- the candidate it follows is one of the request's ``candidates``: that is ``next_state``;
  ``activate_flow`` names the flow the session ends up in when auto-advance left the request's
  flow (clearance readback -> ``startup_pushback``), ``resume_previous`` says it returned to an
  interrupted one, and ``active_nodes`` lists the states it went through, those of another flow
  as ``flow:STATE`` (``trace.activeNodes`` has them as ``{flow, state}``);
- a wrong or unsure readback: the controller corrects it (or asks to say again the values heard
  unsure) and the engine stays in ``state_id``: ``next_state = state_id``, no fallback,
  ``trace.autoSelection.reason`` says "readback correction", ``trace.readback`` has the result;
- a radio check is answered in place: the radio-check interrupt flow reports readability and
  resumes the state, so ``radio_check: true``, ``next_state = state_id``;
- otherwise (the engine chose a route the request did not offer, or did not recognize the words)
  the answer is ``off_schema: true`` with ``trace.fallback = {used: true, reason}``, and
  ``next_state`` is the best-scoring request candidate that remains, else ``state_id`` (stay and
  say again). A fallback carries no updates, flags or flow switch.

``updates`` carries scenario variables only (the flows' and the scenario vocabulary's), never the
engine's bookkeeping (``interrupt_intent``, ``corrections``, ``say_again_items``...), which stays
in ``trace.engine``.

With the LLM router configured (docs/manual.md "The LLM router"), an utterance the deterministic router
cannot decide is put to the model exactly as a live transmission would be; ``trace.calls`` lists
that call (request, response, latency, tokens, outcome), and an unusable answer is the engine's
traced fallback before the restriction above applies. ``trace.rule`` is the deterministic rule
that applied (engine/router.py: ``single_remaining``, ``best_remaining``, ``uncertain``,
``none_left``).
"""

from __future__ import annotations

import copy
import logging
import re
from collections import OrderedDict
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from engine.candidates import Candidate
from engine.messages import frequency_var, render_text
from engine.models import Flow, State, Transition, TransitionKind
from engine.phraseology.stations import station_title
from engine.registry import ENGINE_VARIABLES, FlowRegistry
from engine.scenario import resolve_airports, resolve_scenario
from gateway.api.compat_state import Reconciled, reconcile
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
        "frequencyName": state.frequency_name or (station_title(station) if station else None),
        "station": station,
    }


def transition_view(t: Transition, registry: FlowRegistry) -> dict[str, Any]:
    """``{to, label, guard}`` plus whatever else the transition carries (flow switch, triggers...)."""
    to = t.to
    if to is None and t.flow and t.flow in registry:
        to = registry.get(t.flow).start_state
    entry: dict[str, Any] = {"to": to, "label": t.label, "guard": t.guard}
    if to is None and t.kind is TransitionKind.RETURN:
        entry["resume_previous"] = True  # back to the interrupted flow, where it was left
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


# --------------------------------------------------------------------------- runtime frequencies

_ICAO = re.compile(r"^[A-Za-z0-9]{3,4}$")
_FREQ_VARS = (
    "delivery_freq", "ground_freq", "tower_freq", "departure_freq", "atis_freq", "approach_freq", "center_freq",
    "dest_tower_freq", "dest_ground_freq", "dest_atis_freq", "dest_approach_freq",
)


def runtime_airport(service: RadioService, airport: str | None, destination: str | None, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The variables a session at `airport` (to `destination`) with `seed` has, and the
    ``airport`` block of the runtime response."""
    given: dict[str, Any] = {}
    for name, value in (("airport", airport), ("destination", destination)):
        if value is None:
            continue
        if not _ICAO.match(value) or service.airports.get(value) is None:
            raise ApiError(404, "unknown_airport", f"no airport {value!r} in the airport data", name)
        given[name] = value.upper()
    dep, dest = resolve_airports(given, None)
    dep_info, dest_info = service.airports.get(dep), service.airports.get(dest)
    variables = resolve_scenario(given, airport=dep_info, destination=dest_info, seed=seed)
    listed = {
        f for info in (dep_info, dest_info) if info is not None for freqs in info.frequencies.values() for f in freqs
    }
    freqs = {
        var: {"value": variables.get(var), "source": "airport_data" if variables.get(var) in listed else "generated"}
        for var in _FREQ_VARS
        if variables.get(var) is not None
    }
    block = {
        "icao": dep,
        "name": dep_info.name if dep_info else None,
        "destination": {"icao": dest, "name": dest_info.name if dest_info else None},
        "seed": seed,
        "frequencies": freqs,
    }
    return variables, block


def resolve_frequencies(runtime: dict[str, Any], variables: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
    """The runtime with every state's ``frequency`` and ``handoff.freq`` rendered (the templates
    kept in ``frequency_tpl`` and ``handoff.freq_tpl``)."""
    out = copy.deepcopy(runtime)
    for flow in out["flows"].values():
        for state in flow["states"].values():
            tpl = state.get("frequency")
            if isinstance(tpl, str):
                state["frequency_tpl"] = tpl
                state["frequency"] = render_text(tpl, variables) if "{" in tpl else tpl
            handoff = state.get("handoff")
            if handoff and isinstance(handoff.get("freq"), str):
                handoff["freq_tpl"] = handoff["freq"]
                handoff["freq"] = render_text(handoff["freq"], variables) if "{" in handoff["freq"] else handoff["freq"]
    out["airport"] = block
    return out


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


def _node(flow: str, state: str, request_flow: str) -> str:
    """An active node: the state id, qualified as ``flow:STATE`` outside the request's flow."""
    return state if flow == request_flow else f"{flow}:{state}"


def _public_updates(updates: dict[str, Any], public: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in updates.items() if k in public}


def decide_view(
    req: DecideRequest,
    flow_slug: str,
    ev: Evaluation,
    registry: FlowRegistry,
    *,
    public: frozenset[str] | None = None,
    state_trace: dict[str, Any] | None = None,
) -> dict[str, Any]:
    d = ev.decision
    offered = req.candidates
    chosen = ev.chosen
    chosen_id = _offered(chosen, offered, flow_slug) if chosen is not None else None
    scores = {c.id: c.score for c in ev.candidates if not c.eliminated}
    router = d.trace.router or {}
    steps: list[dict[str, Any]] = [
        {"stage": "candidates", "ids": [c.id for c in ev.candidates]},
        {
            "stage": "screen",
            "eliminated": [{"id": c.id, "reason": c.reason} for c in ev.candidates if c.eliminated],
            "remaining": [c.id for c in ev.candidates if c.status == "remains"],
            "uncertain": [{"id": c.id, "evidence": c.evidence} for c in ev.candidates if c.status == "uncertain"],
        },
        {"stage": "score", "scores": scores, "threshold": ev.threshold},
        {
            "stage": "select",
            "chosen": chosen.id if chosen else None,
            "rule": router.get("rule"),
            "reason": ev.route.reason if ev.route else None,
        },
        {"stage": "restrict", "offered": [rc.id for rc in offered], "match": chosen_id},
    ]
    stayed = d.to_flow == flow_slug and d.to_state == req.state_id
    radio_check = _is_radio_check(chosen, registry)
    correction = (
        chosen_id is None
        and chosen is not None
        and chosen.transition.kind is TransitionKind.BAD
        and d.readback is not None
        and stayed
    )
    in_place = chosen_id is None and stayed and (correction or (radio_check and chosen is not None))
    if in_place:
        chosen_id = req.state_id  # corrected, or the radio check ran and the flow resumed: stay, no fallback
    visited = [tuple(key.split(":", 1)) for key in d.trace.auto_advance]
    nodes = [{"flow": f, "state": st} for f, st in visited]
    if chosen_id is not None:
        assert chosen is not None
        next_state = chosen_id
        fallback: dict[str, Any] = {"used": False}
        off_schema = False
        resume = chosen.transition.kind is TransitionKind.RETURN or any(
            step.step == "flow" and step.detail.startswith("resumed") for step in d.trace.steps
        )
        resume = resume and not in_place  # an answered radio check is no change for the frontend
        activate = d.to_flow if d.to_flow != flow_slug and not in_place and not resume else None
        updates, flags = dict(d.updates), dict(d.flags)
        say = " ".join(m.text for m in d.messages) if d.messages else None
        if correction:
            reason = (
                "readback correction: the controller corrects the readback and the engine stays in "
                f"{req.state_id}"
            )
        elif in_place:
            reason = f"radio check answered; {req.state_id} resumed"
        else:
            reason = ev.route.reason if ev.route else "readback"
        auto = {
            "id": chosen_id,
            "router": ev.route.router if ev.route else None,
            "rule": router.get("rule"),
            "score": chosen.score,
            "reason": reason,
        }
        if in_place or not visited:
            active_nodes = [next_state]
            nodes = [{"flow": flow_slug, "state": req.state_id}] if in_place else nodes
        else:
            active_nodes = [_node(f, st, flow_slug) for f, st in visited]
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
            if c.status == "remains" and (rid := _offered(c, offered, flow_slug)) is not None
        ]
        best = max(acceptable, key=lambda pair: pair[0].score, default=None)  # max keeps the first of equals
        next_state = best[1] if best else req.state_id
        reason += f"; next_state is {'the best-scoring offered candidate that remains' if best else 'the current state'} {next_state}"
        fallback = {"used": True, "reason": reason}
        off_schema = True
        activate, resume, updates, flags, auto = None, False, {}, {}, None
        say = " ".join(m.text for m in d.messages) if d.messages and stayed and next_state == req.state_id else None
        active_nodes = [next_state]
        nodes = [{"flow": flow_slug, "state": next_state}]
    if public is not None:
        updates = _public_updates(updates, public)
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
            "calls": [llm] if (llm := router.get("llm")) else [],
            "fallback": fallback,
            "candidateTimeline": {"steps": steps},
            "autoSelection": auto,
            "rule": router.get("rule"),
            "state": state_trace,
            "readback": d.readback.model_dump(mode="json") if d.readback is not None else None,
            "activeNodes": nodes,
            "engine": d.trace.model_dump(mode="json"),
        },
        "active_nodes": active_nodes,
        "pilot_intent": d.intent,
    }


# --------------------------------------------------------------------------- routes


def routes(service: RadioService, max_body_bytes: int) -> list[BaseRoute]:
    runtime = runtime_view(service.registry, service.default_flow)  # the registry never changes
    resolved: OrderedDict[tuple[str | None, str | None, int], dict[str, Any]] = OrderedDict()
    public = frozenset(service.allowed_variables - ENGINE_VARIABLES)

    async def decision_flows_runtime(request: Request) -> JSONResponse:
        q = request.query_params
        raw_seed = q.get("seed", "0")
        if not raw_seed.isdigit() or len(raw_seed) > 18:
            raise ApiError(422, "validation_error", "seed must be a non-negative integer", "seed")
        key = (q.get("airport") or None, q.get("destination") or None, int(raw_seed))
        body = resolved.get(key)
        if body is None:
            variables, block = runtime_airport(service, *key)
            body = resolve_frequencies(runtime, variables, block)
            resolved[key] = body
            if len(resolved) > 32:
                resolved.popitem(last=False)
        else:
            resolved.move_to_end(key)
        return JSONResponse(body)

    async def llm_decide(request: Request) -> JSONResponse:
        req = await read_model(request, DecideRequest, max_body_bytes)
        slug = _resolve_flow(service.registry, req, service.default_flow)
        if req.state_id not in service.registry.get(slug).states:
            raise ApiError(422, "unknown_state", f"flow {slug!r} has no state {req.state_id!r}", "state_id")
        rec: Reconciled = reconcile(req, service.registry, slug, service.allowed_variables)
        state_trace = rec.trace_view(req.state is not None)
        try:
            ev = await service.evaluate(
                flow=slug,
                state=req.state_id,
                text=req.pilot_utterance or "",
                variables=req.variables,
                flags=req.flags,
                registry=rec.registry if rec.overlaid else None,
            )
        except ServiceError:
            raise
        except Exception as exc:  # odd variables the engine cannot render: a traced fallback, never a 500
            log.warning("decide: engine failed on %s:%s: %r", slug, req.state_id, exc, exc_info=True)
            return JSONResponse(_engine_failure(req, repr(exc)))
        return JSONResponse(decide_view(req, slug, ev, rec.registry, public=public, state_trace=state_trace))

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
