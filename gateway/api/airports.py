"""Airport data endpoints over `gateway.airports.AirportRepository` (OurAirports + airportsdata)."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from engine.airport import AirportInfo
from gateway.airports.repository import AirportRepository
from gateway.api.errors import ApiError

_ICAO = re.compile(r"^[A-Za-z0-9]{3,4}$")


def routes(airports: AirportRepository) -> list[BaseRoute]:
    def lookup(request: Request) -> AirportInfo:
        icao = request.path_params["icao"]
        airport = airports.get(icao) if _ICAO.match(icao) else None
        if airport is None:
            raise ApiError(404, "not_found", f"unknown airport {icao!r}", "icao")
        return airport

    async def airport(request: Request) -> JSONResponse:
        return JSONResponse(lookup(request).model_dump(mode="json"))

    async def frequencies(request: Request) -> JSONResponse:
        info = lookup(request)
        return JSONResponse({"icao": info.icao, "name": info.name, "frequencies": airports.frequencies(info.icao)})

    return [
        Route("/api/airports/{icao}", airport, methods=["GET"]),
        Route("/api/airports/{icao}/frequencies", frequencies, methods=["GET"]),
    ]
