"""Request bodies and response views of the HTTP API (protocol-v1.md, "HTTP").

Requests are pydantic models so a bad body becomes a 422 naming the field. Responses are built
by the `*_view` functions from the engine's models, so the wire shape is defined here once and
reused by the WebSocket adapter (`message_view`, `readback_view`, `session_view`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gateway.wire import JsonBody, Traffic, json_int
from engine.models import ControllerMessage, Decision, ReadbackResult, Role, Session
from gateway.providers.vatsim import FlightPlan, FlightPlanCallsign
from gateway.service import MAX_SEED, RadioService
from gateway.radio.protocol import TelemetryBody


# strict: "7" and true are not seeds; 7.0 is 7
StrictSeed = json_int(ge=0, le=MAX_SEED)


# --------------------------------------------------------------------------- requests


class CreateSessionRequest(JsonBody):
    """``POST /api/radio/sessions``; every field optional (``{}`` starts the main flow)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    flow: str | None = Field(default=None, max_length=100)
    scenario: dict[str, Any] | None = None  # names and value types are checked by the service
    seed: StrictSeed | None = None
    # start from a filed flight plan: one as `GET /api/vatsim/flightplans` lists it, or the
    # callsign to look up in the data feed (404 unknown_flight_plan when it has none)
    flight_plan: FlightPlan | FlightPlanCallsign | None = None
    # callsigns of nearby aircraft: the recognizer hears them, the controller never applies them to us
    traffic: Traffic | None = None


class TransmissionRequest(JsonBody):
    """``POST /api/radio/sessions/{id}/transmissions``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str


# ``POST /api/radio/sessions/{id}/telemetry``: the protocol's `telemetry` fields over HTTP.
TelemetryRequest = TelemetryBody


class DecideCandidate(JsonBody):
    """A state the seed 000 frontend allows next (``id`` in ``flow``, default the request's flow)."""

    model_config = ConfigDict(extra="allow", strict=True)

    id: str
    flow: str | None = None
    state: dict[str, Any] | None = None


class DecideRequest(JsonBody):
    """``POST /api/llm/decide`` in the seed 000 input shape; unknown extra keys are ignored."""

    model_config = ConfigDict(extra="allow", strict=True)

    state_id: str
    state: dict[str, Any] | None = None
    candidates: list[DecideCandidate] = Field(default_factory=list)
    variables: dict[str, Any] | None = None
    flags: dict[str, Any] | None = None
    pilot_utterance: str | None = Field(default="", max_length=2000)
    flow_slug: str | None = None


# --------------------------------------------------------------------------- responses


class MessageView(BaseModel):
    """One controller message on the wire: exactly these keys."""

    model_config = ConfigDict(from_attributes=True)

    message_id: str
    seq: int
    role: Role
    station: str | None
    frequency: str | None
    template: str
    text: str
    speech: str


def message_view(message: ControllerMessage) -> dict[str, Any]:
    return MessageView.model_validate(message).model_dump(mode="json")


def readback_view(readback: ReadbackResult | None) -> dict[str, Any] | None:
    return readback.model_dump(mode="json") if readback is not None else None


def session_view(session: Session, service: RadioService) -> dict[str, Any]:
    """Where the session stands. `active_flow`/`current_state` repeat `flow`/`state` under the
    names of seed 000's future session shape."""
    return {
        "id": session.session_id,
        "flow": session.active.flow,
        "state": session.active.state,
        "phase": service.phase(session),
        "variables": session.variables,
        "flags": session.flags,
        "flow_stack": [f.model_dump(mode="json") for f in session.flow_stack],
        "parallel_flows": [f.model_dump(mode="json") for f in session.parallel_flows],
        "station": session.station,
        "frequency": session.frequency,
        "completed": session.completed,
        "main_flow": session.main_flow,
        "active_flow": session.active.flow,
        "current_state": session.active.state,
        "seed": session.seed,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "llm": session.llm.model_dump(mode="json"),  # the LLM router's calls and tokens, summed
        "traffic": list(session.traffic),  # callsigns of nearby aircraft (session start, telemetry)
    }


def decision_body(session: Session, decision: Decision, service: RadioService) -> dict[str, Any]:
    """The common part of every response that carries a decision.

    `session` is read after the decision, and a controller timer may fire in between (the
    background clock does not wait for the response): `expected_pilot` is that session's, never
    the decision's, so the state and the phrase it expects always come from one snapshot."""
    return {
        "session": session_view(session, service),
        "messages": [message_view(m) for m in decision.messages],
        "expected_pilot": service.expected_pilot(session),
        "trace": decision.trace.model_dump(mode="json"),
    }


def decision_summary(decision: Decision) -> dict[str, Any]:
    return {
        "transmission_id": decision.transmission_id,
        "from_flow": decision.from_flow,
        "from_state": decision.from_state,
        "to_flow": decision.to_flow,
        "to_state": decision.to_state,
        "recognized": decision.recognized,
        "intent": decision.intent,
        "completed": decision.completed,
    }
