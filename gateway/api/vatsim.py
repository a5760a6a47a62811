"""Supporting data endpoints of seed 000: ``GET /api/vatsim/metar`` and ``GET /api/vatsim/flightplans``,
and the airport's ATIS, ``GET /api/airports/{icao}/atis``.

Thin views over gateway/providers: the weather service answers live data when the VATSIM provider
is configured and reachable, and generated weather otherwise (``source`` says which); the flight
plan list is empty offline (``source: "offline"``) and 503 ``provider_unavailable`` when the
configured feed does not answer.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from engine.airport import AirportInfo
from engine.atis import Atis
from engine.weather import WeatherReport
from gateway.api.errors import ApiError
from gateway.providers import ProviderError
from gateway.service import RadioService

_ICAO = re.compile(r"^[A-Za-z0-9]{3,4}$")
_CALLSIGN = re.compile(r"^[A-Za-z0-9_-]{1,12}$")
MAX_PLANS = 50


def report_view(report: WeatherReport) -> dict[str, Any]:
    """A parsed METAR on the wire (`MetarView` in the OpenAPI document)."""
    return {
        "icao": report.icao,
        "raw": report.raw,
        "source": report.source,
        "observed_at": report.observed_at.isoformat() if report.observed_at else None,
        "wind": report.wind,
        "wind_dir": report.wind_dir,
        "wind_speed_kt": report.wind_speed_kt,
        "gust_kt": report.gust_kt,
        "visibility_m": report.visibility_m,
        "cavok": report.cavok,
        "weather": list(report.weather),
        "clouds": [layer.model_dump() for layer in report.clouds],
        "temperature_c": report.temperature_c,
        "dewpoint_c": report.dewpoint_c,
        "qnh_hpa": report.qnh_hpa,
        "atis_letter": report.letter,
    }


def atis_view(atis: Atis, airport: AirportInfo) -> dict[str, Any]:
    return {
        "icao": airport.icao,
        "letter": atis.letter,
        "text": atis.text,
        "speech": atis.speech,
        "runway": atis.runway,
        "frequencies": list(airport.frequencies.get("atis") or []),
        "source": atis.report.source,
        "metar": report_view(atis.report),
    }


def routes(service: RadioService) -> list[BaseRoute]:
    weather = service.providers.weather

    def airport_of(value: str | None, field: str) -> AirportInfo:
        code = (value or "").strip()
        airport = service.airports.get(code) if _ICAO.match(code) else None
        if airport is None:
            raise ApiError(404, "not_found", f"unknown airport {code!r}", field)
        return airport

    async def metar(request: Request) -> JSONResponse:
        icao = request.query_params.get("icao")
        if not icao:
            raise ApiError(422, "validation_error", "icao is required: /api/vatsim/metar?icao=EDDF", "icao")
        airport = airport_of(icao, "icao")
        return JSONResponse(report_view(await weather.report(airport.icao)))

    async def flightplans(request: Request) -> JSONResponse:
        callsign = request.query_params.get("callsign", "").strip()
        if callsign and not _CALLSIGN.match(callsign):
            raise ApiError(422, "validation_error", "callsign: letters, digits, '_' or '-', at most 12", "callsign")
        try:
            plans = await service.providers.flight_plans(callsign or None, limit=MAX_PLANS)
        except ProviderError as exc:
            raise ApiError(503, "provider_unavailable", f"the VATSIM data feed is unavailable: {exc.message}") from exc
        return JSONResponse(
            {
                "source": service.providers.source,
                "callsign": callsign.upper() or None,
                "flightplans": [plan.model_dump() for plan in plans],
            }
        )

    async def atis(request: Request) -> JSONResponse:
        airport = airport_of(request.path_params["icao"], "icao")
        report = await weather.report(airport.icao)
        return JSONResponse(atis_view(weather.airport_atis(airport, report), airport))

    return [
        Route("/api/vatsim/metar", metar, methods=["GET"]),
        Route("/api/vatsim/flightplans", flightplans, methods=["GET"]),
        Route("/api/airports/{icao}/atis", atis, methods=["GET"]),
    ]
