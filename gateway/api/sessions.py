"""Session endpoints (protocol-v1.md, "HTTP"): create, read, transmit, transcript, reset, end.

Handlers only parse, call `RadioService` and shape the answer; the service raises the errors
(`SessionNotFound` -> 404, `BadInput` -> 422, `TooManySessions` -> 429/503) that
`gateway.api.errors` turns into JSON. Who may call them is decided before, by
`gateway.api.access`; a new session is owned by the API key that created it and comes with its
session token (null when authentication is off).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from gateway.api.access import principal_of
from gateway.api.errors import read_model
from gateway.api.schemas import (
    CreateSessionRequest,
    TelemetryRequest,
    TransmissionRequest,
    decision_body,
    decision_summary,
    readback_view,
    session_view,
)
from gateway.auth import Authenticator
from gateway.service import RadioService


def routes(service: RadioService, max_body_bytes: int, auth: Authenticator) -> list[BaseRoute]:
    async def create(request: Request) -> JSONResponse:
        body = await read_model(request, CreateSessionRequest, max_body_bytes)
        owner = principal_of(request).key_id
        session, decision, token = await service.start(
            flow=body.flow, scenario=body.scenario, seed=body.seed, owner=owner, flight_plan=body.flight_plan,
            traffic=body.traffic,
        )
        payload = decision_body(session, decision, service)
        payload["resume_token"] = token
        payload["session_token"] = auth.session_token(session.session_id)
        return JSONResponse(payload, status_code=201)

    async def read(request: Request) -> JSONResponse:
        session = await service.get_async(request.path_params["session_id"])
        return JSONResponse(
            {"session": session_view(session, service), "expected_pilot": service.expected_pilot(session)}
        )

    async def transmit(request: Request) -> JSONResponse:
        session_id = request.path_params["session_id"]
        await service.get_async(session_id)  # 404 before a body error for an unknown session
        body = await read_model(request, TransmissionRequest, max_body_bytes)
        decision = await service.transmit_async(session_id, body.text)
        payload = decision_body(await service.get_async(session_id), decision, service)
        payload["readback"] = readback_view(decision.readback)
        payload["decision"] = decision_summary(decision)
        return JSONResponse(payload)

    async def telemetry(request: Request) -> JSONResponse:
        session_id = request.path_params["session_id"]
        await service.get_async(session_id)
        body = await read_model(request, TelemetryRequest, max_body_bytes)
        decision = await service.telemetry_async(session_id, body.model_dump(exclude_none=True))
        session = await service.get_async(session_id)
        if decision is None:
            return JSONResponse({"session": session_view(session, service), "messages": [], "decision": None,
                                 "expected_pilot": service.expected_pilot(session)})
        payload = decision_body(session, decision, service)
        payload["decision"] = decision_summary(decision)
        return JSONResponse(payload)

    async def transcript(request: Request) -> JSONResponse:
        session_id = request.path_params["session_id"]
        return JSONResponse({"session_id": session_id, "entries": await service.off_loop(session_id, service.transcript)})

    async def reset(request: Request) -> JSONResponse:
        session_id = request.path_params["session_id"]
        decision = await service.off_loop(session_id, service.reset)
        return JSONResponse(decision_body(await service.get_async(session_id), decision, service))

    async def delete(request: Request) -> JSONResponse:
        session_id = request.path_params["session_id"]
        await service.off_loop(session_id, service.delete)
        return JSONResponse({"ok": True, "session_id": session_id})

    base = "/api/radio/sessions"
    return [
        Route(base, create, methods=["POST"]),
        Route(base + "/{session_id}", read, methods=["GET"]),
        Route(base + "/{session_id}", delete, methods=["DELETE"]),
        Route(base + "/{session_id}/transmissions", transmit, methods=["POST"]),
        Route(base + "/{session_id}/transcript", transcript, methods=["GET"]),
        Route(base + "/{session_id}/telemetry", telemetry, methods=["POST"]),
        Route(base + "/{session_id}/reset", reset, methods=["POST"]),
    ]
