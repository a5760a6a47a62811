"""``GET /openapi.json``: the OpenAPI 3.1 description of the HTTP API, generated from its models.

Why generated: request bodies are the very pydantic models the handlers validate with
(`gateway.api.schemas`, `gateway.api.speech`, `gateway.radio.protocol`), so the document cannot
promise a body the server refuses or the reverse. Responses are described by the view models
below; the schemathesis suite (tests/test_fuzz_http.py) checks every answer of a live server
against them, and tests/test_openapi.py checks that `OPERATIONS` and the app's routes list the
same endpoints, so neither side can drift unnoticed.

Two refinements come from the running service instead of the models, because the service checks
them, not pydantic: `flow` is one of the flows a session may start with, and `scenario` names only
variables the service accepts (`RadioService.allowed_variables`), each a string, number or boolean.
A transmission's text is what `RadioService` accepts (not blank, at most `MAX_TEXT_CHARS` once
stripped); the text `/api/atc/say` speaks is not blank; `/api/llm/decide` names a known flow and
state; an empty `flow`/`flow_slug` means none given.

Security follows the gateway's configuration: with authentication on (gateway/auth.py) the
document declares the bearer scheme, every operation outside `gateway.api.access.PUBLIC_PATHS`
requires it and lists its 401 `unauthorized` and 403 `forbidden` answers, and creating a session
may meet the per-key limit (429); with it off, none of that is promised. The session limit of the
whole gateway (503 `too_many_sessions`) holds either way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from engine.airport import AirportInfo
from engine.models import FlowMode
from gateway.api.access import is_public
from gateway.api.health import package_version
from gateway.api.schemas import (
    CreateSessionRequest,
    DecideRequest,
    TelemetryRequest,
    TransmissionRequest,
)
from gateway.api.opensquawk import OpenSquawkCreate as OsCreate
from gateway.api.opensquawk import OpenSquawkTransmit as OsTransmitRequest
from gateway.api.assistant import ChatEventStream, ChatRequest, ChatResponse
from gateway.api.speech import PttRequest, SayRequest
from gateway.api.openapi_views import (  # noqa: F401 (re-exported: tests and handlers name them here)
    _View,
    ErrorDetail,
    ErrorBody,
    SpeechStatus,
    StoreStatus,
    WeatherStatus,
    LlmStatus,
    Health,
    SessionView,
    DecisionSummary,
    DecisionBody,
    SessionCreated,
    TransmissionResult,
    TelemetryResult,
    SessionRead,
    SessionDeleted,
    Transcript,
    RuntimeAirport,
    Runtime,
    OsSession,
    OsTraceStep,
    OsTransmit,
    DecideDecision,
    DecideResult,
    SaySeed,
    SayAudio,
    SayOpenSquawk,
    HearingView,
    PttResult,
    VoiceView,
    Voices,
    AirportFrequencies,
    CloudView,
    MetarView,
    AtisView,
    FlightPlans,
    MetricsText,
    OpenApiDocument,
    IceServerView,
    WebRTCAnswer,
    CandidatesAdded,
    PeerClosed,
)
from gateway.auth import Authenticator
from gateway.service import MAX_TEXT_CHARS, RadioService
from gateway.webrtc.signaling import CandidatesRequest, WebRTCOffer

OPENAPI_VERSION = "3.1.0"
PATH = "/openapi.json"
_REF = "#/components/schemas/{model}"


# --------------------------------------------------------------------------- operations


Model = type[BaseModel]


@dataclass(frozen=True)
class Query:
    """A query parameter: its name, whether it is required, its JSON schema."""

    name: str
    schema: dict[str, Any]
    required: bool = False


@dataclass(frozen=True)
class Operation:
    """One endpoint: `responses` maps status -> model (None: an `ErrorBody`)."""

    method: str
    path: str
    operation_id: str
    summary: str
    tag: str
    ok: tuple[int, Model]
    errors: tuple[int, ...] = ()
    body: Model | None = None
    body_required: bool = True
    extra_ok: tuple[Model, ...] = field(default=())  # alternatives of the success shape (oneOf)
    media_type: str = "application/json"  # of the success response
    query: tuple[Query, ...] = ()


_BODY_ERRORS = (400, 413, 422)
_SESSION = "/api/radio/sessions/{session_id}"
_STORE = (503,)  # a session route reads or writes the store: 503 store_unavailable when Redis is gone
_DECIDE = (409, 503)  # ... and a decision may lose its race with another node's (409 session_busy)

OPERATIONS: tuple[Operation, ...] = (
    Operation("get", "/health", "health", "Liveness and readiness", "service", (200, Health), (503,)),
    Operation("get", PATH, "openapi", "This document", "service", (200, OpenApiDocument)),
    Operation(
        "get", "/metrics", "metrics", "Prometheus metrics: stage latencies, sessions, messages, errors", "service",
        (200, MetricsText), media_type="text/plain",
    ),
    Operation(
        "post", "/api/radio/sessions", "createSession", "Start a session", "sessions",
        (201, SessionCreated), (*_BODY_ERRORS, 404, 503), CreateSessionRequest, body_required=False,
    ),
    Operation("get", _SESSION, "getSession", "Where a session stands", "sessions", (200, SessionRead), (404, *_STORE)),
    Operation("delete", _SESSION, "deleteSession", "End a session", "sessions", (200, SessionDeleted), (404, *_STORE)),
    Operation(
        "post", _SESSION + "/transmissions", "transmit", "A typed pilot transmission", "sessions",
        (200, TransmissionResult), (404, *_BODY_ERRORS, *_DECIDE), TransmissionRequest,
    ),
    Operation(
        "get", _SESSION + "/transcript", "getTranscript", "Every transmission and controller message", "sessions",
        (200, Transcript), (404, *_STORE),
    ),
    Operation(
        "post", _SESSION + "/telemetry", "telemetry", "Aircraft state from a simulator", "sessions",
        (200, TelemetryResult), (404, *_BODY_ERRORS, *_DECIDE), TelemetryRequest, body_required=False,
    ),
    Operation(
        "post", _SESSION + "/reset", "resetSession", "Back to the scenario's first state", "sessions",
        (200, DecisionBody), (404, *_DECIDE),
    ),
    Operation(
        "post", "/api/radio/session", "osCreateSession", "Start a session (the OpenSquawk app's shape)", "compat",
        (201, OsSession), (*_BODY_ERRORS, 503), OsCreate, body_required=False,
    ),
    Operation(
        "post", "/api/radio/session/{session_id}/transmissions", "osTransmit",
        "A pilot transmission (the OpenSquawk app's shape)", "compat",
        (200, OsTransmit), (404, *_BODY_ERRORS, *_DECIDE), OsTransmitRequest,
    ),
    Operation(
        "delete", "/api/radio/session/{session_id}", "osDeleteSession", "End a session (the OpenSquawk app's shape)",
        "compat", (200, SessionDeleted), (404, *_STORE),
    ),
    Operation(
        "get", "/api/decision-flows/runtime", "runtime", "Every flow (seed 000 shape), frequencies of an airport",
        "compat", (200, Runtime), (404, 422),
        query=(
            Query("airport", {"type": "string", "pattern": "^[A-Za-z0-9]{3,4}$"}),
            Query("destination", {"type": "string", "pattern": "^[A-Za-z0-9]{3,4}$"}),
            Query("seed", {"type": "string", "pattern": "^[0-9]{1,18}$"}),
        ),
    ),
    Operation(
        "post", "/api/llm/decide", "decide", "One stateless decision (seed 000 shape)", "compat",
        (200, DecideResult), _BODY_ERRORS, DecideRequest,
    ),
    Operation(
        "post", "/api/atc/say", "say", "Text to radio audio", "speech",
        (200, SaySeed), (*_BODY_ERRORS, 500, 503), SayRequest, extra_ok=(SayOpenSquawk,),
    ),
    Operation(
        "post", "/api/atc/ptt", "ptt", "A recorded push-to-talk clip to text", "speech",
        (200, PttResult), (*_BODY_ERRORS, 500, 503), PttRequest,
    ),
    Operation("get", "/api/voices", "voices", "Controller voices", "speech", (200, Voices)),
    Operation(
        "post", "/v1/webrtc/offer", "webrtcOffer", "The radio over WebRTC: an SDP offer in, the answer out", "webrtc",
        (201, WebRTCAnswer), (*_BODY_ERRORS, 403, 503), WebRTCOffer,
    ),
    Operation(
        "post", "/v1/webrtc/{peer_id}/candidates", "webrtcCandidates", "Trickled ICE candidates of a peer", "webrtc",
        (200, CandidatesAdded), (404, *_BODY_ERRORS), CandidatesRequest,
    ),
    Operation("delete", "/v1/webrtc/{peer_id}", "webrtcHangUp", "Close a WebRTC peer", "webrtc", (200, PeerClosed), (404,)),
    Operation(
        "post", "/api/aviation-agent/chat", "assistantChat", "Ask the briefing assistant (docs/assistant.md)", "assistant",
        (200, ChatResponse), _BODY_ERRORS, body=ChatRequest,
    ),
    Operation(
        "post", "/api/aviation-agent/chat/stream", "assistantChatStream", "Ask the briefing assistant, answer as SSE",
        "assistant", (200, ChatEventStream), _BODY_ERRORS, body=ChatRequest, media_type="text/event-stream",
    ),
    Operation("get", "/api/airports/{icao}", "airport", "Airport data", "airports", (200, AirportInfo), (404,)),
    Operation(
        "get", "/api/airports/{icao}/frequencies", "airportFrequencies", "Airport frequencies", "airports",
        (200, AirportFrequencies), (404,),
    ),
    Operation("get", "/api/airports/{icao}/atis", "airportAtis", "The airport's ATIS now", "airports", (200, AtisView), (404,)),
    Operation(
        "get", "/api/vatsim/metar", "metar", "An airport's METAR, parsed (generated when there is no live one)", "data",
        (200, MetarView), (404, 422), query=(Query("icao", {"type": "string", "pattern": "^[A-Za-z0-9]{3,4}$"}, True),),
    ),
    Operation(
        "get", "/api/vatsim/flightplans", "flightplans", "Filed flight plans from the VATSIM data feed", "data",
        (200, FlightPlans), (422, 503),
        query=(Query("callsign", {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,12}$"}),),
    ),
)

_STATUS_TEXT = {
    200: "OK",
    201: "Created",
    400: "Body is not JSON",
    401: "No valid credential (unauthorized): an API key or the session's token is required",
    403: "The credential does not reach this (forbidden): another session's token, another key's session; or a browser page from a foreign origin",
    404: "Unknown session or resource (or flight plan)",
    409: "The session kept changing while it was decided (session_busy: another node decided at the same time); send again",
    413: "Body too large",
    422: "Invalid field (the error names it)",
    429: "This API key holds its limit of sessions (too_many_sessions)",
    500: "Speech engine failure",
    503: "Unavailable: the speech engines, the session store (store_unavailable) or a data provider (provider_unavailable), or the gateway holds its limit of sessions (too_many_sessions; past the node's voice capacity with Retry-After) or WebRTC peers (too_many_peers)",
}
_AUTH_ERRORS = (401, 403)
BEARER = "bearer"


# --------------------------------------------------------------------------- document


def openapi_document(
    service: RadioService, operations: Iterable[Operation] = OPERATIONS, *, secured: bool = False
) -> dict[str, Any]:
    """The OpenAPI 3.1 document of `operations` for this service's flows and variables;
    `secured`: authentication is on (see the module docstring)."""
    operations = tuple(operations)
    requests = {op.body for op in operations if op.body is not None}
    responses = {op.ok[1] for op in operations} | {m for op in operations for m in op.extra_ok} | {ErrorBody}
    keyed: list[tuple[Model, Literal["validation", "serialization"]]] = [
        *((m, "validation") for m in sorted(requests, key=lambda m: m.__name__)),
        *((m, "serialization") for m in sorted(responses, key=lambda m: m.__name__)),
    ]
    refs, defs = models_json_schema(keyed, ref_template=_REF, title="livefreq")
    components: dict[str, Any] = defs.get("$defs", {})
    _refine(components, refs, service)

    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        public = is_public(op.path)
        errors = op.errors
        if secured and not public:
            errors = (*errors, *_AUTH_ERRORS, *((429,) if op.operation_id == "createSession" else ()))
        item: dict[str, Any] = {
            "operationId": op.operation_id,
            "summary": op.summary,
            "tags": [op.tag],
            "responses": _responses(op, refs, tuple(sorted(set(errors)))),
        }
        if secured and public:
            item["security"] = []  # open to all: load balancers, API clients, the browser radio
        params = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
            for name in re.findall(r"{(\w+)}", op.path)
        ]
        params += [{"name": q.name, "in": "query", "required": q.required, "schema": q.schema} for q in op.query]
        if params:
            item["parameters"] = params
        if op.body is not None:
            body = refs[(op.body, "validation")]
            if not op.body_required:  # no body, or null, reads as {} (`gateway.api.errors.parse`)
                body = {"anyOf": [body, {"type": "null"}]}
            item["requestBody"] = {"required": op.body_required, "content": {"application/json": {"schema": body}}}
        paths.setdefault(op.path, {})[op.method] = item
    document: dict[str, Any] = {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "livefreq",
            "version": package_version(),
            "description": "ATC radio training gateway: the HTTP API (docs/protocol-v1.md). "
            "The live radio is the WebSocket `GET /v1/radio`, described in the protocol document, "
            "or WebRTC, signalled by the `/v1/webrtc` operations here (protocol-v1.md, \"WebRTC\").",
        },
        "paths": paths,
        "components": {"schemas": components},
    }
    if secured:
        document["components"]["securitySchemes"] = {
            BEARER: {
                "type": "http",
                "scheme": "bearer",
                "description": "An API key (every route; a session it creates is its own), or a session's "
                "`session_token` (that session's routes only). README \"Security\".",
            }
        }
        document["security"] = [{BEARER: []}]
    return document


def _responses(op: Operation, refs: dict[tuple[Model, str], dict[str, Any]], errors: tuple[int, ...]) -> dict[str, Any]:
    status, model = op.ok
    schema = refs[(model, "serialization")]
    if op.extra_ok:
        schema = {"oneOf": [schema, *(refs[(m, "serialization")] for m in op.extra_ok)]}
    content = {op.media_type: {"schema": schema}}
    out: dict[str, Any] = {str(status): {"description": _STATUS_TEXT[status], "content": content}}
    error = {"application/json": {"schema": refs[(ErrorBody, "serialization")]}}
    for code in (*errors, 405):
        out[str(code)] = {"description": _STATUS_TEXT.get(code, "Method not allowed"), "content": error}
    return out


@functools.cache
def _whitespace() -> str:
    """Python's whitespace (what `str.strip` removes) as regex escapes: ECMA's \\s is another set
    (it lacks \\x1c-\\x1f and \\x85, and has \\ufeff), so "not blank" is spelled out."""
    return "".join(f"\\u{ord(c):04x}" for c in map(chr, range(0x110000)) if c.isspace())


def _refine(components: dict[str, Any], refs: dict[tuple[Model, str], dict[str, Any]], service: RadioService) -> None:
    """What the service checks beyond the models (see the module docstring)."""
    startable = sorted(f.slug for f in service.registry if f.entry_mode not in (FlowMode.INTERRUPT, FlowMode.PARALLEL))
    create = _component(components, refs, CreateSessionRequest)
    create["properties"]["flow"] = {"anyOf": [{"enum": ["", *startable]}, {"type": "null"}], "default": None}
    create["properties"]["scenario"] = {
        "anyOf": [
            {
                "type": "object",
                "propertyNames": {"enum": sorted(service.allowed_variables)},
                "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
            },
            {"type": "null"},
        ],
        "default": None,
    }
    os_create = _component(components, refs, OsCreate)  # the OpenSquawk app's create: the same checks
    os_create["properties"]["flow_slug"] = dict(create["properties"]["flow"])
    os_create["properties"]["scenario"] = dict(create["properties"]["scenario"])
    space, word = f"[{_whitespace()}]", f"[^{_whitespace()}]"
    not_blank = f"^{space}*{word}([\\s\\S]{{0,{MAX_TEXT_CHARS - 2}}}{word})?{space}*$"  # 1-500 once stripped
    _component(components, refs, TransmissionRequest)["properties"]["text"]["pattern"] = not_blank
    _component(components, refs, OsTransmitRequest)["properties"]["pilot_utterance"]["pattern"] = not_blank
    _component(components, refs, SayRequest)["properties"]["text"]["pattern"] = word  # not blank
    decide = _component(components, refs, DecideRequest)["properties"]
    states = sorted({state for flow in service.registry for state in flow.states})
    decide["state_id"] = {"enum": states, "description": "a state of `flow_slug` (default: the first flow that has it)"}
    flows = sorted(f.slug for f in service.registry)
    decide["flow_slug"] = {"anyOf": [{"enum": ["", *flows]}, {"type": "null"}], "default": None}


def _component(components: dict[str, Any], refs: dict[tuple[Model, str], dict[str, Any]], model: Model) -> dict:
    name = refs[(model, "validation")]["$ref"].rsplit("/", 1)[-1]
    return components[name]


def routes(service: RadioService, auth: Authenticator) -> list[BaseRoute]:
    """``GET /openapi.json``, built once: the flows, variables and keys never change in a process."""
    document = openapi_document(service, secured=auth.enabled)

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(document)

    return [Route(PATH, openapi, methods=["GET"], include_in_schema=False)]
