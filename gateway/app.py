"""The Starlette application, assembled explicitly in one place.

    uvicorn --factory gateway.app:create_app

Routes come from the `gateway.api` modules, each bound to the `RadioService` it uses; errors of
every kind leave as ``{"error": {"code", "message", "field"}}``. The lifespan runs the session
clock: a background task that calls `RadioService.tick_all` every ``tick_interval_s`` so timers
and silence prompts fire server-side, and that is cancelled on shutdown.

Sessions live in the store ``settings.store`` names (SQLite by default, gateway/store): an app
that builds its own service opens it here and closes it on shutdown; sessions stored by an
earlier run are picked up again, with their pending timers. On the Redis store the lifespan also
runs the decision relay (gateway/relay.py), so a decision made on another node reaches the
sockets on this one. With the speech models preloaded and ``LIVEFREQ_VOICE_CAPACITY=auto`` it
then measures the node's voice capacity (gateway/capacity.py), which the radio's admission holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles

from gateway import metrics
from gateway.api import airports, assistant as assistant_api, compat, health, openapi, opensquawk, sessions, vatsim
from gateway.api import speech as speech_api
from gateway.api.access import AccessMiddleware
from gateway.api.errors import (
    ApiError,
    InternalErrorMiddleware,
    api_error,
    http_error,
    service_error,
    store_unavailable,
)
from gateway.auth import Authenticator
from gateway.capacity import VoiceCapacity, measure
from gateway.extras import installed
from gateway.service import RadioService, ServiceError
from gateway.settings import Settings
from gateway.speech.cpu import cpu_pool
from gateway.speech.stack import SpeechStack
from gateway.store import StoreUnavailable, open_repository
from gateway.ws.handler import route_handler as radio_handler

if TYPE_CHECKING:
    from gateway.relay import DecisionRelay

log = logging.getLogger(__name__)

_HOME = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>livefreq</title></head>
<body>
<h1>livefreq</h1>
<p>ATC radio training gateway. The browser client is not installed (no <code>static/index.html</code>).</p>
<ul>
<li><a href="/health">GET /health</a></li>
<li>POST /api/radio/sessions &mdash; start a session, then POST /api/radio/sessions/{id}/transmissions {"text": ...}</li>
<li><a href="/api/decision-flows/runtime">GET /api/decision-flows/runtime</a> &mdash; the loaded flows</li>
<li>WebSocket and HTTP protocol: see docs in the repository.</li>
</ul>
</body></html>
"""


async def run_clock(service: RadioService, interval_s: float) -> None:
    """Tick every session that has something due; an error in one round never stops the clock."""
    service.hub.bind()  # timers fire in a worker thread: their decisions come back to this loop
    while True:
        await asyncio.sleep(interval_s)
        try:
            fired = await asyncio.to_thread(service.tick_all)  # store writes off the event loop
        except Exception:
            log.exception("session clock round failed")
            continue
        if fired:
            log.debug("session clock fired %d decision(s)", len(fired))


def create_app(
    settings: Settings | None = None, service: RadioService | None = None, speech: SpeechStack | None = None
) -> Starlette:
    settings = settings or (service.settings if service is not None else Settings())
    repository = open_repository(settings) if service is None else None
    service = service or RadioService(settings, repository=repository)
    speech = speech or SpeechStack(settings)
    auth = Authenticator(settings)  # off unless API keys are configured (docs/operations.md "Security")
    # the radio over WebRTC (gateway/webrtc), when the [webrtc] extra (aiortc) is installed
    if installed("aiortc"):
        from gateway.webrtc.signaling import PeerRegistry
        from gateway.webrtc.signaling import routes as webrtc_routes
    else:
        from gateway.api.webrtc_unavailable import PeerRegistry
        from gateway.api.webrtc_unavailable import routes as webrtc_routes
    capacity = VoiceCapacity.from_settings(settings)  # live voice sessions against this node's capacity
    peers = PeerRegistry(settings, capacity)
    metrics.stored_sessions_gauge(lambda: _stored_sessions(service))
    metrics.cpu_jobs_gauge(lambda: float(cpu_pool().busy), lambda: float(cpu_pool().queued))
    # the briefing assistant (docs/assistant.md): its indexes are built in the background at start-up
    briefing = assistant_api.AssistantService.from_gateway(settings, service) if settings.assistant_enabled else None
    service.assistant = briefing  # the radio socket's "ask" channel (gateway/ask.py) reaches it here

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        relay = await _start_relay(service, settings)
        clock = asyncio.create_task(run_clock(service, settings.tick_interval_s), name="livefreq-clock")
        loading = asyncio.create_task(_preload(speech), name="livefreq-speech") if settings.speech_preload else None
        warming = _in_daemon_thread(briefing.context.warm, "livefreq-assistant") if briefing else None
        measuring = (
            asyncio.create_task(_measure_capacity(capacity, speech, loading, warming), name="livefreq-capacity")
            if loading is not None and capacity.source == "unmeasured"
            else None
        )
        try:
            yield
        finally:
            await peers.close_all()
            for task in (clock, measuring, loading, warming):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
            await service.flush()  # the radio's queued store writes (gateway/store/writer.py)
            if relay is not None:
                await relay.stop()
            await service.providers.aclose()
            if service.llm is not None:
                await service.llm.aclose()
            if briefing is not None and briefing.chat is not None:
                briefing.chat.close()  # the assistant's model connection pool (gateway/llm/chat.py)
            if repository is not None:
                repository.close()

    routes: list[BaseRoute] = [
        *health.routes(service, speech, capacity),
        WebSocketRoute("/v1/radio", radio_handler(service, speech, settings, auth, capacity)),
        *webrtc_routes(peers, service, speech, settings, auth),
        *speech_api.routes(speech, settings),
        *sessions.routes(service, settings.max_body_bytes, auth),
        *compat.routes(service, settings.max_body_bytes),
        *opensquawk.routes(service, settings.max_body_bytes),  # the OpenSquawk app's /api/radio/session
        *vatsim.routes(service),  # /api/vatsim/metar, /api/vatsim/flightplans, /api/airports/{icao}/atis
        *airports.routes(service.airports),
        *(assistant_api.routes(briefing, settings.max_body_bytes) if briefing else []),
        *openapi.routes(service, auth),
        *metrics.routes(),
        _home(settings),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            speech_api.cors_middleware(settings),
            Middleware(InternalErrorMiddleware),
            Middleware(AccessMiddleware, auth=auth, service=service),
        ],
        exception_handlers={
            ApiError: api_error,
            ServiceError: service_error,
            StoreUnavailable: store_unavailable,
            HTTPException: http_error,
        },
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.settings = settings
    app.state.speech = speech
    app.state.assistant = briefing
    app.state.auth = auth
    app.state.peers = peers
    app.state.capacity = capacity
    return app


def _stored_sessions(service: RadioService) -> float:
    """For the metrics gauge: NaN while the store does not answer, so /metrics still shows the rest."""
    try:
        return float(service.count())
    except StoreUnavailable:
        return math.nan


async def _start_relay(service: RadioService, settings: Settings) -> DecisionRelay | None:
    """Relay decisions between the nodes sharing the service's Redis store (none otherwise)."""
    if "gateway.store.redis" not in sys.modules:
        return None  # never imported, so not the store: redis-py is the optional [redis] extra
    from gateway.relay import DecisionRelay
    from gateway.store.redis import RedisSessionRepository

    store = service.repository
    if not isinstance(store, RedisSessionRepository):
        return None
    relay = DecisionRelay(service.hub, store.url, store.channel, service.node, timeout_s=settings.redis_timeout_s)
    await relay.start()
    return relay


def _in_daemon_thread(work: Callable[[], None], name: str) -> asyncio.Future[None]:
    """`work` on a thread of its own, as a future of the running loop. Not `asyncio.to_thread`:
    the loop's executor is joined when the server stops, so a gateway stopped during the
    assistant's warm-up (seconds of index building) would wait for it; a daemon thread is left."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle(error: Exception | None) -> None:
        if done.done():  # cancelled by the lifespan's end
            return
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    def run() -> None:
        error: Exception | None = None
        try:
            work()
        except Exception as exc:  # handed to whoever awaits the future, and logged
            log.warning("%s failed: %s", name, exc)
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(settle, error)

    threading.Thread(target=run, name=name, daemon=True).start()
    return done


async def _measure_capacity(capacity: VoiceCapacity, speech: SpeechStack, *after: asyncio.Future[Any] | None) -> None:
    """The voice capacity's self-test (gateway/capacity.py), once the models are loaded and the
    assistant's indexes built: nothing else of this process then takes the CPU it measures."""
    for task in after:
        if task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(task)
    await measure(capacity, speech)


async def _preload(speech: SpeechStack) -> None:
    """Load the speech models in the background; the text API serves meanwhile."""
    try:
        await speech.load()
    except Exception:
        return  # logged by the stack; /health shows the error and voice requests report it


def _home(settings: Settings) -> BaseRoute:
    """The browser client from ``static/`` when it is installed, else a short pointer page."""
    if (settings.static_dir / "index.html").is_file():
        return Mount("/", StaticFiles(directory=settings.static_dir, html=True), name="static")

    async def home(request: Request) -> HTMLResponse:
        return HTMLResponse(_HOME)

    return Route("/", home, methods=["GET"])
