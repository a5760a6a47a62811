"""``GET /health``: liveness and readiness for load balancers and the CLI."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from gateway.service import RadioService


def package_version() -> str:
    try:
        return version("livefreq")
    except PackageNotFoundError:
        return "0.0.0+unknown"


def routes(service: RadioService) -> list[BaseRoute]:
    release = package_version()

    async def health(request: Request) -> JSONResponse:
        # No speech engines yet: ready as soon as the flows are loaded (they are, or the app
        # would not have been built).
        return JSONResponse(
            {
                "ok": True,
                "ready": True,
                "flows": len(service.registry),
                "sessions": service.count(),
                "version": release,
            }
        )

    return [Route("/health", health, methods=["GET"])]
