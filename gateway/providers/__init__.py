"""Supporting data services (seed 000 "Supporting Data Endpoints"): weather, ATIS and flight plans.

Independent of the decision engine: they fetch, parse and cache, and hand the engine plain data
(`engine.weather.WeatherReport`, flight plan fields). `DataProviders.from_settings` builds them
for ``LIVEFREQ_DATA_PROVIDER``: ``offline`` (the default: no network, generated weather, no flight
plans) or ``vatsim`` (VATSIM's METAR service and data feed, at the configured URLs).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from gateway.providers.cache import ProviderCache
from gateway.providers.http import ProviderClient, ProviderError
from gateway.providers.metar import MetarError, parse_metar
from gateway.providers.vatsim import FlightPlan, VatsimFeed, VatsimMetar
from gateway.providers.weather import WeatherService
from gateway.settings import Settings

__all__ = [
    "DataProviders",
    "FlightPlan",
    "MetarError",
    "ProviderError",
    "WeatherService",
    "parse_metar",
]


class DataProviders:
    """The weather service and the flight plan feed of one gateway, sharing one HTTP client."""

    def __init__(self, weather: WeatherService, feed: VatsimFeed | None, client: ProviderClient | None) -> None:
        self.weather = weather
        self.feed = feed  # None: offline
        self.client = client

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.monotonic,
        utcnow: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> DataProviders:
        metar_cache = ProviderCache(settings.metar_ttl_s, settings.provider_retry_after_s, timer=clock)
        if settings.data_provider != "vatsim":
            return cls(WeatherService(None, metar_cache, wait_s=settings.weather_wait_s, clock=clock, utcnow=utcnow), None, None)
        client = ProviderClient(
            timeout_s=settings.provider_timeout_s, retries=settings.provider_retries, backoff_s=settings.provider_backoff_s
        )
        weather = WeatherService(
            VatsimMetar(client, settings.vatsim_metar_url), metar_cache,
            wait_s=settings.weather_wait_s, clock=clock, utcnow=utcnow,
        )
        feed_cache: ProviderCache[list[FlightPlan]] = ProviderCache(
            settings.datafeed_ttl_s, settings.provider_retry_after_s, maxsize=1, timer=clock
        )
        return cls(weather, VatsimFeed(client, settings.vatsim_data_url, feed_cache), client)

    @property
    def source(self) -> str:
        return "offline" if self.feed is None else "vatsim"

    async def flight_plans(self, callsign: str | None = None, limit: int = 50) -> list[FlightPlan]:
        """Filed plans whose callsign starts with `callsign` (all without one), exact matches
        first, at most `limit`; none offline. `ProviderError` when the feed cannot be had."""
        if self.feed is None:
            return []
        plans = await self.feed.flight_plans()
        if callsign:
            wanted = callsign.strip().upper()
            plans = [p for p in plans if p.callsign and p.callsign.startswith(wanted)]
            plans.sort(key=lambda p: (p.callsign != wanted, p.prefiled, p.callsign))
        return plans[:limit]

    async def aclose(self) -> None:
        await self.weather.cache.aclose()
        if self.feed is not None:
            await self.feed.cache.aclose()
        if self.client is not None:
            await self.client.aclose()
