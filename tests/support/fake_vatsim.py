"""A fake VATSIM on loopback: a real HTTP server (uvicorn, `tests.conftest.run_server`) serving the
recorded payloads of tests/data/vatsim, with the failures a real provider has.

Per METAR station and for the data feed a test picks what is served (`FakeVatsim.metar`,
`FakeVatsim.feed`): a recorded payload, or a fault: ``slow`` (answers after `slow_s`, longer
than the gateway's timeout), ``fail`` (HTTP 503), ``fail_then_ok`` (503 for the first
`failures` requests, then the payload: retries must get it), ``empty`` (200 with no METAR). Every
request is counted per path, so tests see retries and caching.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from tests.conftest import run_server

DATA = Path(__file__).resolve().parents[1] / "data" / "vatsim"


def payload(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


@dataclass
class Fault:
    kind: str  # slow | fail | fail_then_ok | empty
    body: str = ""  # what fail_then_ok serves in the end
    failures: int = 1


@dataclass
class FakeVatsim:
    metars: dict[str, str | Fault] = field(default_factory=dict)  # ICAO -> METAR text or a fault
    feed: str | Fault = field(default_factory=lambda: payload("vatsim-data.json"))
    slow_s: float = 2.0
    requests: Counter[str] = field(default_factory=Counter)
    url: str = ""

    @property
    def metar_url(self) -> str:
        return f"{self.url}/metar/{{icao}}"

    @property
    def data_url(self) -> str:
        return f"{self.url}/v3/vatsim-data.json"

    async def _serve(self, key: str, what: str | Fault, media_type: str) -> Response:
        self.requests[key] += 1
        if isinstance(what, str):
            return Response(what, media_type=media_type)
        if what.kind == "slow":
            await asyncio.sleep(self.slow_s)  # the provider being slow (the client gives up first)
            return Response(what.body, media_type=media_type)
        if what.kind == "fail":
            return PlainTextResponse("Service Unavailable", status_code=503)
        if what.kind == "fail_then_ok":
            if self.requests[key] <= what.failures:
                return PlainTextResponse("Service Unavailable", status_code=503)
            return Response(what.body, media_type=media_type)
        return PlainTextResponse("")  # empty: the station has no METAR

    def app(self) -> Starlette:
        async def metar(request: Request) -> Response:
            icao = request.path_params["icao"].upper()
            return await self._serve(f"metar/{icao}", self.metars.get(icao, Fault("empty")), "text/plain")

        async def feed(request: Request) -> Response:
            return await self._serve("feed", self.feed, "application/json")

        return Starlette(routes=[Route("/metar/{icao}", metar), Route("/v3/vatsim-data.json", feed)])


@contextmanager
def fake_vatsim(**state) -> Iterator[FakeVatsim]:
    fake = FakeVatsim(**state)
    app = fake.app()

    async def health(request: Request) -> Response:  # run_server waits for /health
        return PlainTextResponse("ok")

    app.router.routes.append(Route("/health", health))
    with run_server(app) as base:
        fake.url = base
        yield fake
