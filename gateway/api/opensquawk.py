"""The OpenSquawk web app's session API (its ``app/composables/useRadioBackend.ts``), served beside
ours on the same service, engine and store.

The app calls, in this order (``app/pages/pm.vue``):

- ``POST /api/radio/session`` ``{flow_slug}`` -> ``RadioSessionResponse``
  ``{session_id, flow_slug, current_state, variables, flags}``;
- ``GET /api/decision-flows/runtime`` (gateway/api/compat.py);
- ``POST /api/radio/session/{id}/transmissions`` ``{pilot_utterance}`` -> ``RadioTransmitResponse``
  ``{session_id, next_state_id, controller_say_template, controller_say_rendered,
  expected_pilot_template, variables, flags, trace: [{type, message}], fallback_used,
  fallback_reason, auto_advanced_states}``, plus ``flow_slug`` (the flow ``next_state_id`` is in:
  a readback can end one flow and start the next, and the app's type has no other place for it);
- ``DELETE /api/radio/session/{id}`` -> ``{ok: true, session_id}`` (the app reads nothing).

Singular ``session``: ours is ``/api/radio/sessions`` (plural, protocol-v1.md "HTTP"); both reach
the same sessions, so a session created here can be read there and the other way round.

Field meanings:

- ``controller_say_template``: the controller's words as the flow's templates (``{{var}}``), the
  messages of this transmission joined by a space; ``controller_say_rendered`` the same rendered
  with the session's variables. Both null when the controller said nothing.
- ``expected_pilot_template``: what the pilot is expected to say next, as a template (the new
  state's ``utterance_tpl``, else its first route's), null when it is not the pilot's turn.
- ``auto_advanced_states``: the states the session passed through after the one the
  transmission selected, in order, without ``next_state_id`` itself (the app moves through them
  silently, then to ``next_state_id``). States of another flow are plain ids too, as the app's
  type wants; ``flow_slug`` says where the session ended up.
- ``trace``: every step of the engine's trace as ``{type, message}`` (``type``: candidates,
  readback, router, select, advance, flow, handoff, llm, error, ...).
- ``fallback_used``/``fallback_reason``: true when the transmission was not understood (the
  controller asked to say again) or the LLM router's answer could not be used; the reason says
  which.

Errors: the gateway's ``{"error": {code, message, field}}``; fields are named as the app names them
(``flow_slug``, ``pilot_utterance``, ``session_id``).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from engine.models import Decision, Role, Session
from gateway.api.access import principal_of
from gateway.api.errors import read_model
from gateway.api.schemas import StrictSeed
from gateway.service import RadioService, ServiceError
from gateway.wire import JsonBody


BASE = "/api/radio/session"


class OpenSquawkCreate(JsonBody):
    """``createSession(flowSlug)``: ``{flow_slug}`` (``scenario`` and ``seed`` as in ours, optional)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    flow_slug: str | None = Field(default=None, max_length=100)
    scenario: dict[str, Any] | None = None
    seed: StrictSeed | None = None


class OpenSquawkTransmit(JsonBody):
    """``transmit(sessionId, pilotUtterance)``: ``{pilot_utterance}``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    pilot_utterance: str  # 1-500 characters once stripped: checked by the service, published in the OpenAPI document


def _renamed(exc: ServiceError, old: str, new: str) -> ServiceError:
    """The service's error with the field named as the app names it."""
    if exc.field == old:
        exc.field = new
        if exc.message.startswith(old + " "):
            exc.message = new + exc.message[len(old):]
    return exc


def session_response(session: Session) -> dict[str, Any]:
    """``RadioSessionResponse``."""
    return {
        "session_id": session.session_id,
        "flow_slug": session.active.flow,
        "current_state": session.active.state,
        "variables": session.variables,
        "flags": session.flags,
    }


def expected_template(service: RadioService, flow_slug: str | None, state_id: str | None, completed: bool) -> str | None:
    """The textbook pilot phrase of a state, as a template (None: not the pilot's turn there)."""
    flow = service.registry.flows.get(flow_slug or "")
    state = flow.states.get(state_id or "") if flow else None
    if state is None or state.role is not Role.PILOT or completed:
        return None
    return state.utterance_tpl or next((t.utterance_tpl for t in state.transitions if t.utterance_tpl), None)


def fallback_of(decision: Decision) -> str | None:
    """Why the transmission was not decided as understood, or None."""
    router = decision.trace.router or {}
    llm_fallback = router.get("fallback")
    if llm_fallback:
        return f"LLM router fallback ({llm_fallback.get('reason')}: {llm_fallback.get('detail')}); policy {llm_fallback.get('policy')}"
    if not decision.recognized:
        if decision.intent == "say_again":
            return "the pilot asked to say again: the controller repeated the last message"
        reason = router.get("reason") or (decision.trace.errors[0] if decision.trace.errors else "not recognized")
        return f"not understood ({reason}): the controller asks to say again"
    return None


def transmit_response(service: RadioService, session: Session, decision: Decision) -> dict[str, Any]:
    """``RadioTransmitResponse`` (+ ``flow_slug``). `session` is read after the decision, and a
    controller timer may have moved it on in between; ``next_state_id`` and the
    ``expected_pilot_template`` are both the decision's, so the app never pairs a state with
    another state's phrase (the timer's call reaches the app with its next request)."""
    messages = decision.messages
    passed = [key.split(":", 1)[1] for key in decision.trace.auto_advance]
    if passed and passed[-1] == decision.to_state:
        passed = passed[:-1]
    reason = fallback_of(decision)
    return {
        "session_id": session.session_id,
        "next_state_id": decision.to_state,
        "flow_slug": decision.to_flow,
        "controller_say_template": " ".join(m.template for m in messages) if messages else None,
        "controller_say_rendered": " ".join(m.text for m in messages) if messages else None,
        "expected_pilot_template": expected_template(service, decision.to_flow, decision.to_state, decision.completed),
        "variables": session.variables,
        "flags": session.flags,
        "trace": [{"type": step.step, "message": step.detail} for step in decision.trace.steps],
        "fallback_used": reason is not None,
        "fallback_reason": reason,
        "auto_advanced_states": passed,
    }


def routes(service: RadioService, max_body_bytes: int) -> list[BaseRoute]:
    async def create(request: Request) -> JSONResponse:
        body = await read_model(request, OpenSquawkCreate, max_body_bytes)
        try:
            session, _decision, _token = await service.start(
                flow=body.flow_slug, scenario=body.scenario, seed=body.seed, owner=principal_of(request).key_id
            )
        except ServiceError as exc:
            raise _renamed(exc, "flow", "flow_slug") from None
        return JSONResponse(session_response(session), status_code=201)

    async def transmit(request: Request) -> JSONResponse:
        session_id = request.path_params["session_id"]
        await service.get_async(session_id)  # 404 before a body error for an unknown session
        body = await read_model(request, OpenSquawkTransmit, max_body_bytes)
        try:
            decision = await service.transmit_async(session_id, body.pilot_utterance)
        except ServiceError as exc:
            raise _renamed(exc, "text", "pilot_utterance") from None
        return JSONResponse(transmit_response(service, await service.get_async(session_id), decision))

    async def delete(request: Request) -> JSONResponse:
        session_id = request.path_params["session_id"]
        await service.off_loop(session_id, service.delete)
        return JSONResponse({"ok": True, "session_id": session_id})  # the app reads nothing

    return [
        Route(BASE, create, methods=["POST"]),
        Route(BASE + "/{session_id}/transmissions", transmit, methods=["POST"]),
        Route(BASE + "/{session_id}", delete, methods=["DELETE"]),
    ]
