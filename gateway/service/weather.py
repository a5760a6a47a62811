"""The weather of sessions: at their start, while they run on live weather, and their ATIS.

The rules of which report a session reads are the engine's (engine/weather.py,
engine/atis_scenario.py); this module hands them what the gateway's providers and airport data
hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.atis import Atis
from engine.atis_scenario import session_report, station_atis, tuned_station
from engine.models import Session
from engine.weather import WeatherReport, refresh_weather
from gateway.airports.repository import AirportRepository
from gateway.providers import DataProviders, MetarError, parse_metar


class SessionWeather:
    def __init__(self, providers: DataProviders, airports: AirportRepository) -> None:
        self.providers = providers
        self.airports = airports

    def of(
        self, icao: str, metar: Any, field: str, reports: Mapping[str, WeatherReport] | None, notes: list[str]
    ) -> WeatherReport | None:
        """An airport's weather for a new session: the METAR the client gave, else the live report."""
        if metar is not None and metar != "":
            try:
                return parse_metar(str(metar), source="given").model_copy(update={"letter": None})
            except MetarError as exc:
                notes.append(f"scenario.{field} is no usable METAR ({exc}); the weather is generated")
                return None
        if reports is not None and icao in reports:
            return reports[icao]
        return self.providers.weather.cached(icao)

    def follow(self, session: Session) -> dict[str, Any]:
        """A live-weather session takes its airport's newest ATIS before it acts (gateway/service/
        core.py); returns the variables that changed."""
        if session.variables.get("weather_source") != "vatsim":
            return {}
        report = self.providers.weather.cached(str(session.variables.get("airport", "")))
        return refresh_weather(session, report) if report is not None else {}

    def atis(self, session: Session, frequency: str) -> Atis | None:
        """The ATIS the session's pilot hears on `frequency`, or None when it is no ATIS frequency
        (which airport and which weather: engine/atis_scenario.py)."""
        station = tuned_station(session, frequency, self._listed)
        if station is None:
            return None
        live = self.providers.weather.cached(station.icao) if station.live else None
        if live is not None:
            return station_atis(station, live, live=True)
        return station_atis(station, session_report(session, station, _parse), live=False)

    def _listed(self, icao: str) -> list[str]:
        airport = self.airports.get(icao)
        return list((airport.frequencies.get("atis") or []) if airport else [])


def _parse(text: str, source: str) -> WeatherReport | None:
    try:
        return parse_metar(text, source=source)  # type: ignore[arg-type]
    except MetarError:
        return None
