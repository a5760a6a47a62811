"""One JSON error shape for every failure: ``{"error": {"code", "message", "field"}}``.

Handlers here turn service errors, HTTP errors and malformed bodies into that shape; anything
unexpected becomes ``internal`` (500) and is logged with its traceback, which never reaches the
client.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.metrics import count_error
from gateway.service import ServiceError

log = logging.getLogger("gateway.api")

M = TypeVar("M", bound=BaseModel)

# Service error code -> HTTP status.
SERVICE_STATUS: dict[str, int] = {
    "unknown_session": 404,
    "unknown_flow": 422,
    "unknown_state": 422,
    "validation_error": 422,
    "session_busy": 409,
    "unknown_flight_plan": 404,
    "provider_unavailable": 503,
}
HTTP_CODES: dict[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
}


class ApiError(Exception):
    """Raised by endpoints for a request they refuse."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field


def error_response(
    status: int, code: str, message: str, field: str | None = None, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "field": field}}
    count_error("http", code)
    return JSONResponse(body, status_code=status, headers=headers)


async def api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.code, exc.message, exc.field)


async def service_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServiceError)
    status = getattr(exc, "status", None) or SERVICE_STATUS.get(exc.code, 400)  # e.g. TooManySessions: 429/503
    return error_response(status, exc.code, exc.message, exc.field)


async def store_unavailable(request: Request, exc: Exception) -> Response:
    """The session store did not answer (Redis down): 503, so a load balancer retries elsewhere."""
    log.warning("session store unavailable on %s %s: %s", request.method, request.url.path, exc)
    return error_response(503, "store_unavailable", "the session store did not answer; try again shortly")


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = HTTP_CODES.get(exc.status_code, "http_error")
    message = exc.detail if exc.status_code != 404 else f"no such resource: {request.url.path}"
    return error_response(exc.status_code, code, str(message), None, exc.headers)


class InternalErrorMiddleware:
    """Last line: an unexpected exception is logged and answered with a plain 500 JSON body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def _send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, _send)
        except Exception:
            log.exception("internal error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            response = error_response(500, "internal", "internal server error")
            await response(scope, receive, send)


async def read_json(request: Request, limit: int) -> Any:
    """The request body as JSON, reading at most `limit` bytes; None when there is no body."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, "payload_too_large", f"request body is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, "payload_too_large", f"request body is larger than {limit} bytes")
        chunks.append(chunk)
    body = b"".join(chunks)
    if not body:  # no body at all; blanks alone are no JSON document (400 below)
        return None
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        raise ApiError(400, "bad_json", "request body is not UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise ApiError(400, "bad_json", f"request body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def parse(model: type[M], data: Any) -> M:
    """Validate a JSON body against `model`; the first problem names its field."""
    try:
        return model.model_validate({} if data is None else data)
    except ValidationError as exc:
        problems = exc.errors(include_url=False)
        first = problems[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        message = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in problems[:5]
        )
        raise ApiError(422, "validation_error", message, field) from None


async def read_model(request: Request, model: type[M], limit: int) -> M:
    return parse(model, await read_json(request, limit))
