"""The frontend's decision context for ``POST /api/llm/decide``: its ``state`` and its candidates,
reconciled with the loaded flows before the engine decides.

The OpenSquawk frontend sends the state it is in (``state``: the runtime shape of
``GET /api/decision-flows/runtime``, possibly edited) and the states it allows next
(``candidates[]``, each with its ``state``). The backend owns scenario truth (seed 000), so the
frontend's context is *used* where it may differ legitimately and *checked* everywhere else:

Used (they change how this one transmission is decided):

- ``state.readback_required``: the values the pilot must read back here (each a variable name
  the scenario knows, or one the request's ``variables`` give);
- ``state.utterance_tpl`` (or ``expected_pilot_template``): the phrase expected here, the example
  the state's main route is scored against.

Checked (a contradiction is a 422 naming the field, never a silent guess):

- ``state.id`` and ``state.role`` must be those of ``state_id``;
- every ``to`` in ``state.next``, ``ok_next``, ``bad_next``, ``timer_next``, ``auto_transitions``
  must be a route of ``state_id`` in the loaded flow (``return`` entries may have ``to: null``);
- every candidate must name a state that exists (``candidates[i].flow``, ``candidates[i].id``)
  and that a route of ``state_id`` leads to (any kind, timers included, or an interrupt flow such
  as the radio check); its ``state.id``/``state.role``, when given, must match.

Everything else in ``state`` (names, summaries, templates the controller speaks, frequencies) is
display data and is not used; the trace lists what was used and what was not.

Error codes: ``state_mismatch`` (``state.id``/``state.role``/``candidates[i].state.*``),
``unknown_variable`` (``state.readback_required[i]``), ``unreconcilable_route``
(``state.<list>[i].to``), ``unknown_flow`` (``candidates[i].flow``), ``unknown_state``
(``candidates[i].id``), ``unreachable_candidate`` (``candidates[i].id``); all 422.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.candidates import target_of
from engine.models import Flow, TransitionKind
from engine.registry import FlowRegistry
from gateway.api.errors import ApiError
from gateway.api.schemas import DecideRequest

ROUTE_LISTS = ("next", "ok_next", "bad_next", "timer_next", "auto_transitions")
USED_FIELDS = ("readback_required", "utterance_tpl", "expected_pilot_template")
CHECKED_FIELDS = ("id", "role", *ROUTE_LISTS)


@dataclass(slots=True)
class Reconciled:
    """The flow to decide on (the loaded one, or a copy with the frontend's state fields) and the
    trace of what the frontend's context did."""

    flow: Flow
    registry: FlowRegistry
    used: dict[str, Any] = field(default_factory=dict)
    checked: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    candidates: list[dict[str, str]] = field(default_factory=list)  # [{id, flow, state}] resolved

    @property
    def overlaid(self) -> bool:
        return bool(self.used)

    def trace_view(self, given: bool) -> dict[str, Any]:
        if not given:
            source = "backend"
        else:
            source = "request" if self.used else "request (nothing in it changes the decision)"
        return {
            "source": source,
            "used": self.used,
            "checked": self.checked,
            "not_used": self.ignored,
            "candidates": self.candidates,
        }


def _targets(registry: FlowRegistry, flow: Flow, state_id: str) -> set[tuple[str, str]]:
    """Every (flow, state) a route of the state leads to, interrupt flows' starts and staying."""
    state = flow.states[state_id]
    out: set[tuple[str, str]] = {(flow.slug, state_id)}
    for t in state.transitions:
        if t.kind is TransitionKind.RETURN and not t.flow:
            continue
        out.add(target_of(registry, flow.slug, t, None))
    for iflow in registry.interrupt_flows():
        out.add((iflow.slug, iflow.start_state))
    return out


def reconcile(req: DecideRequest, registry: FlowRegistry, slug: str, known_variables: frozenset[str]) -> Reconciled:
    flow = registry.get(slug)
    state = flow.states[req.state_id]
    out = Reconciled(flow=flow, registry=registry)
    targets = _targets(registry, flow, req.state_id)
    given = req.state or {}

    if "id" in given and given["id"] != req.state_id:
        raise ApiError(422, "state_mismatch", f"state.id {given['id']!r} is not state_id {req.state_id!r}", "state.id")
    if "role" in given and given["role"] != state.role.value:
        raise ApiError(
            422, "state_mismatch", f"state.role {given['role']!r}: {slug}:{req.state_id} is a {state.role.value} state", "state.role"
        )
    for name in ROUTE_LISTS:
        entries = given.get(name)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise ApiError(422, "validation_error", f"state.{name} must be a list", f"state.{name}")
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                raise ApiError(422, "validation_error", f"state.{name}[{i}] must be an object", f"state.{name}[{i}]")
            to = entry.get("to")
            eflow = entry.get("flow") or slug
            if to is None and (entry.get("kind") == "return" or entry.get("resume_previous")):
                continue
            if not isinstance(to, str) or (eflow, to) not in targets:
                raise ApiError(
                    422, "unreconcilable_route",
                    f"state.{name}[{i}].to {to!r}: no route of {slug}:{req.state_id} leads there in the loaded flows",
                    f"state.{name}[{i}].to",
                )
    out.checked = [k for k in CHECKED_FIELDS if k in given]

    updates: dict[str, Any] = {}
    if "readback_required" in given:
        names = given["readback_required"]
        if not isinstance(names, list):
            raise ApiError(422, "validation_error", "state.readback_required must be a list of variable names", "state.readback_required")
        allowed = known_variables | set(req.variables or {}) | set(flow.variables)
        for i, name in enumerate(names):
            if not isinstance(name, str) or name not in allowed:
                raise ApiError(
                    422, "unknown_variable",
                    f"state.readback_required[{i}] {name!r} is no variable of the scenario or the request",
                    f"state.readback_required[{i}]",
                )
        if list(names) != list(state.readback_required):
            updates["readback_required"] = list(names)
            out.used["readback_required"] = list(names)
    phrase = given.get("utterance_tpl", given.get("expected_pilot_template"))
    if phrase is not None:
        key = "utterance_tpl" if "utterance_tpl" in given else "expected_pilot_template"
        if not isinstance(phrase, str):
            raise ApiError(422, "validation_error", f"state.{key} must be a string", f"state.{key}")
        if phrase != (state.utterance_tpl or ""):
            updates["utterance_tpl"] = phrase or None
            out.used[key] = phrase
    out.ignored = sorted(k for k in given if k not in USED_FIELDS and k not in CHECKED_FIELDS)

    for i, cand in enumerate(req.candidates):
        cflow_slug = cand.flow or slug
        cid = cand.id
        if ":" in cid and cand.flow is None:
            cflow_slug, cid = cid.split(":", 1)
        if cflow_slug not in registry:
            where = f"candidates[{i}].flow" if cand.flow is not None else f"candidates[{i}].id"
            raise ApiError(422, "unknown_flow", f"candidates[{i}]: unknown flow {cflow_slug!r}", where)
        cflow = registry.get(cflow_slug)
        if cid not in cflow.states:
            raise ApiError(422, "unknown_state", f"candidates[{i}]: flow {cflow_slug!r} has no state {cid!r}", f"candidates[{i}].id")
        if (cflow_slug, cid) not in targets:
            raise ApiError(
                422, "unreachable_candidate",
                f"candidates[{i}] {cflow_slug}:{cid}: no route of {slug}:{req.state_id} leads there in the loaded flows",
                f"candidates[{i}].id",
            )
        cstate = cand.state or {}
        if "id" in cstate and cstate["id"] != cid:
            raise ApiError(422, "state_mismatch", f"candidates[{i}].state.id {cstate['id']!r} is not {cid!r}", f"candidates[{i}].state.id")
        role = cflow.states[cid].role.value
        if "role" in cstate and cstate["role"] != role:
            raise ApiError(
                422, "state_mismatch", f"candidates[{i}].state.role {cstate['role']!r}: {cflow_slug}:{cid} is a {role} state",
                f"candidates[{i}].state.role",
            )
        out.candidates.append({"id": cand.id, "flow": cflow_slug, "state": cid})

    if updates:
        new_state = state.model_copy(update=updates)
        out.flow = flow.model_copy(update={"states": {**flow.states, req.state_id: new_state}})
        flows = {f.slug: f for f in registry}
        flows[slug] = out.flow
        out.registry = FlowRegistry(flows, main_flow=registry.main_flow, sources=registry.sources)
    return out
