"""``GET /health``: liveness, readiness, load and capacity for load balancers and the CLI.

`voice` is the node's live voice sessions against its capacity (gateway/capacity.py): a balancer
sends new pilots to a node whose `voice.accepting` is true; `ready` stays what it was.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from gateway.capacity import VoiceCapacity
from gateway.service import RadioService
from gateway.speech.stack import SpeechStack


def package_version() -> str:
    try:
        return version("livefreq")
    except PackageNotFoundError:
        return "0.0.0+unknown"


def routes(service: RadioService, speech: SpeechStack, capacity: VoiceCapacity | None = None) -> list[BaseRoute]:
    release = package_version()
    voice = capacity if capacity is not None else VoiceCapacity(None, "off")

    async def health(request: Request) -> JSONResponse:
        # ok: the process serves (the text API works); ready: the speech engines are loaded too.
        # store: where sessions live and which node this is (several nodes share a Redis store).
        # llm: the LLM router's endpoint and model, null when it is off (the default).
        # voice: live voice sessions, the capacity (null: unknown or unlimited), whether a new one is admitted.
        # A store that does not answer raises StoreUnavailable: 503 store_unavailable, so a load
        # balancer takes the node out.
        return JSONResponse(
            {
                "ok": True,
                "ready": speech.ready,
                "speech": speech.describe(),
                "flows": len(service.registry),
                "sessions": service.count(),
                "store": {"kind": service.repository.kind, "node": service.node},
                # where weather comes from now: "vatsim" or "generated" (offline, or the provider failing)
                "weather": service.providers.weather.describe(),
                "llm": service.llm.describe() if service.llm is not None else None,
                "voice": voice.describe(),
                "version": release,
            }
        )

    return [Route("/health", health, methods=["GET"])]
