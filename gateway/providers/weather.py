"""Today's weather and ATIS at an airport: VATSIM's METAR when configured and reachable, else made up.

`WeatherService` is what sessions, the ATIS broadcast and the HTTP endpoints ask. With
``LIVEFREQ_DATA_PROVIDER=vatsim`` it fetches an airport's METAR (`VatsimMetar`, cached for
`metar_ttl_s`), parses it with avwx-engine (gateway/providers/metar.py) and files it in its ATIS
book: an airport's first observation gets `engine.atis.first_letter`, every later one that differs
gets the next letter, so the information letter rotates when the weather changes. Offline (the
default), or when the provider fails, times out or sends a METAR that does not parse, an airport
has no live report and the caller falls back to generated weather (`engine.weather`), labelled
``source: "generated"``: a provider problem is counted and shown by /health, never raised to a
session.

A session start waits for its airports' METARs at most `weather_wait_s` (`for_airports`); a slow
provider keeps loading in the background and the next session gets the result. A live report
older than `STALE_AFTER_S` is no longer used.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from engine.airport import AirportInfo, short_name
from engine.atis import Atis, build_atis, first_letter, next_letter
from engine.weather import WeatherReport, generated_report, runway_in_use
from gateway.providers.cache import ProviderCache
from gateway.providers.http import ProviderError
from gateway.providers.metar import MetarError, parse_metar
from gateway.providers.vatsim import VatsimMetar

log = logging.getLogger("livefreq.weather")

STALE_AFTER_S = 3 * 3600.0  # a METAR this old is not today's weather any more


class WeatherService:
    def __init__(
        self,
        metar: VatsimMetar | None,
        cache: ProviderCache[WeatherReport],
        *,
        wait_s: float,
        clock: Callable[[], float] = time.monotonic,
        utcnow: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.metar = metar  # None: offline, every report is generated
        self.cache = cache
        self.wait_s = wait_s
        self.clock = clock
        self.utcnow = utcnow
        self._book: dict[str, tuple[WeatherReport, float]] = {}  # icao -> (last good report, filed at)
        self.fetches = 0
        self.failures = 0
        self.last_error: str | None = None
        self.last_error_at: datetime | None = None
        self.last_fetch_at: datetime | None = None

    @property
    def live(self) -> bool:
        return self.metar is not None

    # ------------------------------------------------------------------ live reports

    def cached(self, icao: str) -> WeatherReport | None:
        """The airport's latest live report with its ATIS letter (no I/O); None when there is
        none, or it is stale."""
        entry = self._book.get(icao.upper())
        if entry is None or self.clock() - entry[1] > STALE_AFTER_S:
            return None
        return entry[0]

    async def current(self, icao: str, wait_s: float | None = None) -> WeatherReport | None:
        """The airport's live report, fetched when not fresh; waits at most `wait_s` (default
        `weather_wait_s`). None: offline, failing, or not in time (generated weather then)."""
        if self.metar is None:
            return None
        code = icao.strip().upper()
        try:
            await asyncio.wait_for(self.cache.get(code, lambda: self._fetch(code)), self.wait_s if wait_s is None else wait_s)
        except ProviderError:
            pass  # counted in _fetch; an error remembered by the cache is reported once
        except TimeoutError:
            log.info("METAR of %s not there within %.1f s; generated weather for now", code, self.wait_s)
        return self.cached(code)

    async def for_airports(self, icaos: Iterable[str]) -> dict[str, WeatherReport]:
        """Live reports of several airports, fetched together (a session's departure and
        destination); airports without one are absent."""
        codes = sorted({c.strip().upper() for c in icaos if c})
        reports = await asyncio.gather(*(self.current(code) for code in codes))
        return {code: report for code, report in zip(codes, reports) if report is not None}

    async def _fetch(self, icao: str) -> WeatherReport:
        assert self.metar is not None
        self.fetches += 1
        try:
            raw = await self.metar.fetch(icao)
            report = parse_metar(raw, source="vatsim", issued=self.utcnow().date())
            if report.icao != icao:
                raise MetarError(f"asked for {icao}, the METAR is of {report.icao}")
        except MetarError as exc:
            self._failed(icao, ProviderError("malformed", str(exc)))
            raise ProviderError("malformed", str(exc)) from exc
        except ProviderError as exc:
            self._failed(icao, exc)
            raise
        self.last_fetch_at = self.utcnow()
        return self._file(report)

    def _failed(self, icao: str, exc: ProviderError) -> None:
        self.failures += 1
        self.last_error = f"{icao}: {exc.reason}: {exc.message}"
        self.last_error_at = self.utcnow()
        log.warning("METAR of %s unavailable (%s: %s); sessions there get generated weather", icao, exc.reason, exc.message)

    def _file(self, report: WeatherReport) -> WeatherReport:
        """Into the ATIS book: same observation, same letter; a new one, the next letter."""
        previous = self._book.get(report.icao)
        if previous is None:
            letter = first_letter(report)
        elif previous[0].raw == report.raw:
            letter = previous[0].letter
        else:
            letter = next_letter(previous[0].letter)
            log.info("%s weather changed: information %s is current", report.icao, letter)
        filed = report.model_copy(update={"letter": letter})
        self._book[report.icao] = (filed, self.clock())
        return filed

    # ------------------------------------------------------------------ any airport, live or not

    def generated(self, icao: str) -> WeatherReport:
        """Made-up weather for an airport with no live report: a new observation every half hour
        (its letter moves on with it), the same on every gateway."""
        now = self.utcnow()
        slot = now.replace(minute=20 if now.minute < 50 else 50, second=0, microsecond=0)
        if now.minute < 20:
            slot = (now - timedelta(hours=1)).replace(minute=50, second=0, microsecond=0)
        report = generated_report(icao, f"{icao.upper()}:{slot:%Y%m%d%H%M}", observed_at=slot)
        return report.model_copy(update={"letter": first_letter(report)})

    async def report(self, icao: str) -> WeatherReport:
        """The airport's weather for the HTTP API: live when there is any, else generated."""
        return await self.current(icao) or self.generated(icao)

    def airport_atis(self, airport: AirportInfo, report: WeatherReport) -> Atis:
        """The airport's own ATIS for a report (`GET /api/airports/{icao}/atis`): the runway the
        wind puts in use, the report's letter."""
        return build_atis(
            report,
            airport_name=short_name(airport),
            letter=report.letter or first_letter(report),
            runway=runway_in_use(airport, report),
        )

    def describe(self) -> dict[str, Any]:
        """For /health: where weather comes from now, and the provider's last trouble."""
        fresh = sum(1 for icao in self._book if self.cached(icao) is not None)
        source = "vatsim" if self.live and fresh else "generated"
        return {
            "provider": "vatsim" if self.live else "offline",
            "source": source,
            "airports": fresh,
            "fetches": self.fetches,
            "failures": self.failures,
            "last_fetch_at": self.last_fetch_at.isoformat() if self.last_fetch_at else None,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at.isoformat() if self.last_error_at else None,
        }
