"""VATSIM's public data: METARs (metar.vatsim.net) and the network data feed (flight plans).

URLs come from settings (`vatsim_metar_url` with ``{icao}`` in it, `vatsim_data_url`), so a
mirror, a proxy or a test server on loopback can stand in. Both go through `ProviderClient`
(timeouts, retries) and `ProviderCache` (TTL, single flight, remembered failures).

The data feed (v3 JSON) lists connected ``pilots`` with their ``flight_plan`` and ``prefiles``
(plans filed before connecting). Entries that lack a callsign, a departure or an arrival, or whose
fields are not text, are skipped one by one: a malformed entry never hides the good ones, while a
feed that is not the v3 shape at all is a `ProviderError` (``malformed``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gateway.providers.cache import ProviderCache
from gateway.providers.http import ProviderClient, ProviderError

ICAO_PATTERN = r"^[A-Z0-9]{3,4}$"
CALLSIGN_PATTERN = r"^[A-Z0-9_-]{2,12}$"
_CALLSIGN = re.compile(CALLSIGN_PATTERN)
# a callsign a client names to look its plan up, any case ("dlh4ab")
FlightPlanCallsign = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{2,12}$")]


class FlightPlan(BaseModel):
    """A filed flight plan, as `GET /api/vatsim/flightplans` lists it and a session may start from."""

    model_config = ConfigDict(extra="forbid", strict=True)

    callsign: str | None = Field(default=None, pattern=CALLSIGN_PATTERN)
    departure: str = Field(pattern=ICAO_PATTERN)
    arrival: str = Field(pattern=ICAO_PATTERN)
    route: str = Field(default="", max_length=2000)
    altitude: str = Field(default="", max_length=10)  # as filed: "FL360", "36000"
    aircraft: str | None = Field(default=None, max_length=40)  # ICAO type, "A320"
    flight_rules: str | None = Field(default=None, pattern=r"^[IVYZ]$")  # I(FR), V(FR), Y, Z
    alternate: str | None = Field(default=None, max_length=4)
    prefiled: bool = False  # from the feed's prefiles: filed, not connected yet


class VatsimMetar:
    """The METAR of one airport from VATSIM's METAR service."""

    def __init__(self, client: ProviderClient, url: str) -> None:
        self.client = client
        self.url = url

    async def fetch(self, icao: str) -> str:
        """The latest METAR line of `icao`; `ProviderError` (``no_metar``) when there is none."""
        code = icao.strip().upper()
        text = await self.client.get_text(self.url.replace("{icao}", code))
        for line in text.splitlines():
            line = " ".join(line.split())
            if line.upper().startswith(code + " "):
                return line
        raise ProviderError("no_metar", f"no METAR for {code} in the provider's answer ({len(text)} characters)")


class VatsimFeed:
    """Flight plans from VATSIM's network data feed, the whole feed cached for `ttl_s`."""

    def __init__(self, client: ProviderClient, url: str, cache: ProviderCache[list[FlightPlan]]) -> None:
        self.client = client
        self.url = url
        self.cache = cache

    async def flight_plans(self) -> list[FlightPlan]:
        return await self.cache.get("feed", self._load)

    async def _load(self) -> list[FlightPlan]:
        feed = await self.client.get_json(self.url)
        if not isinstance(feed, dict) or not isinstance(feed.get("pilots", []), list) or not isinstance(feed.get("prefiles", []), list):
            raise ProviderError("malformed", f"{self.url}: not a VATSIM v3 data feed (no pilots/prefiles lists)")
        plans: list[FlightPlan] = []
        for prefiled, entries in ((False, feed.get("pilots", [])), (True, feed.get("prefiles", []))):
            for entry in entries:
                plan = _plan(entry, prefiled)
                if plan is not None:
                    plans.append(plan)
        return plans


def _plan(entry: Any, prefiled: bool) -> FlightPlan | None:
    """One feed entry's flight plan, or None when it has none or it is malformed."""
    if not isinstance(entry, dict) or not isinstance(entry.get("flight_plan"), dict):
        return None
    fp = entry["flight_plan"]
    callsign = str(entry.get("callsign") or "").strip().upper()
    try:
        return FlightPlan(
            callsign=callsign if _CALLSIGN.match(callsign) else None,
            departure=str(fp.get("departure") or "").upper(),
            arrival=str(fp.get("arrival") or "").upper(),
            route=str(fp.get("route") or "")[:2000],
            altitude=str(fp.get("altitude") or "")[:10],
            aircraft=(str(fp.get("aircraft_short") or fp.get("aircraft") or "").split("/")[0][:40] or None),
            flight_rules=(str(fp.get("flight_rules") or "").upper()[:1] or None),
            alternate=(str(fp.get("alternate") or "").upper()[:4] or None),
            prefiled=prefiled,
        )
    except ValidationError:
        return None
