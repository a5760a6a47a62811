"""The speech stack of one gateway process: one STT engine, one TTS engine, loaded once.

Both the WebSocket radio and the speech HTTP endpoints (`/api/atc/say`, `/api/atc/ptt`) use the
same instances, so a model is in memory once and every session shares the worker pools. Models
load in the background at start-up: the text API answers at once, `/health` reports `ready` when
the voice is.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from engine import phraseology
from engine.models import Session
from gateway.settings import Settings
from gateway.speech.stt.base import SttContext, SttEngine, start_engine
from gateway.speech.stt.factory import make_stt
from gateway.speech.tts.base import TtsEngine
from gateway.speech.tts.cache import TtsCache
from gateway.speech.tts.factory import make_tts

log = logging.getLogger("livefreq.speech")

# Variables whose values a pilot reads back or says: they bias recognition towards the scenario.
_VOCAB_KINDS = frozenset(
    {"runway", "frequency", "altitude", "flight_level", "heading", "squawk", "qnh", "sid", "star", "route", "designator", "letter"}
)


class SpeechStack:
    def __init__(self, settings: Settings, *, stt: SttEngine | None = None, tts: TtsEngine | None = None) -> None:
        self.settings = settings
        stt_options: dict[str, Any] = {}
        if settings.stt_engine.strip().lower() == "vosk":
            stt_options["model_path"] = settings.vosk_model_path
        self.stt: SttEngine = stt or make_stt(settings.stt_engine, **stt_options)
        tts_options: dict[str, Any] = {"voice": settings.tts_voice} if settings.tts_voice else {}
        cache = TtsCache(max_bytes=settings.tts_cache_mb * 1024 * 1024) if settings.tts_cache_mb else None
        self.tts: TtsEngine = tts or make_tts(settings.tts_engine, cache=cache, **tts_options)
        self.ready = False
        self.error: str | None = None
        self._loading: asyncio.Task[None] | None = None

    async def load(self) -> None:
        """Load both models (idempotent; concurrent callers share one load)."""
        if self.ready:
            return
        if self._loading is None:
            self._loading = asyncio.create_task(self._load(), name="livefreq-speech-load")
        await asyncio.shield(self._loading)

    async def _load(self) -> None:
        try:
            await asyncio.gather(start_engine(self.stt), self.tts.load())
        except Exception as exc:  # reported by /health and on every voice request
            self.error = f"{type(exc).__name__}: {exc}"
            log.error("speech engines failed to load: %s", self.error)
            raise
        self.ready = True
        log.info("speech ready: stt=%s tts=%s", self.stt.name, self.tts.name)

    def describe(self) -> dict[str, Any]:
        return {
            "stt": self.stt.name,
            "tts": self.tts.name,
            "voice": getattr(self.tts, "voice", None),
            "ready": self.ready,
            "error": self.error,
        }


def stt_context(session: Session, expected: list[str]) -> SttContext:
    """What the recognizer should expect now: the state's phrases, the callsign and the values issued."""
    variables = session.variables
    vocabulary: list[str] = []
    telephony = variables.get("callsign_spoken")
    if isinstance(telephony, str):
        vocabulary.append(telephony)
    for name, value in variables.items():
        if value is None or name.startswith("_"):
            continue
        if phraseology.kind_for_variable(name) in _VOCAB_KINDS:
            vocabulary.append(phraseology.display_value(phraseology.kind_for_variable(name), value))
    for key in ("airport_name", "destination_name"):
        if isinstance(variables.get(key), str):
            vocabulary.append(variables[key])
    return SttContext(expected_phrases=list(expected), vocabulary=vocabulary, speaker=session.session_id)
