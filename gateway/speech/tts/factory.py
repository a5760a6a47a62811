"""`make_tts`: the one place that turns a configured engine name into a ready `TtsEngine`."""

from __future__ import annotations

from typing import Any

from gateway.speech.tts.base import TtsEngine
from gateway.speech.tts.cache import CachedTts, TtsCache

ENGINES = ("piper", "espeak", "edge-tts")
_ALIASES = {"piper": "piper", "espeak": "espeak", "espeak-ng": "espeak", "edge-tts": "edge-tts", "edge": "edge-tts"}


class UnknownTtsEngine(ValueError):
    """A TTS engine name that is not one of `ENGINES`."""


def make_tts(
    name: str,
    *,
    cache: TtsCache | None = None,
    fallback: str | None = "piper",
    retry_after_s: float = 60.0,
    **options: Any,
) -> TtsEngine:
    """Build the engine `name` ("piper" | "espeak" | "edge-tts") with its engine `options`.

    `options` go to the engine's constructor (e.g. ``voice=``, ``length_scale=`` for piper,
    ``speed_wpm=`` for espeak, ``rate=`` for edge-tts). With `cache`, every concrete engine is
    wrapped in `CachedTts`. "edge-tts" is online, so unless `fallback` is None it is wrapped in a
    `FailoverTts` that speaks with the `fallback` engine (default options) when the network fails.
    """
    engine_name = _ALIASES.get(name.strip().lower())
    if engine_name is None:
        raise UnknownTtsEngine(f"unknown TTS engine {name!r}; choose one of: {', '.join(ENGINES)}")
    if engine_name == "piper":
        from gateway.speech.tts.piper import PiperTts

        engine: TtsEngine = PiperTts(**options)
    elif engine_name == "espeak":
        from gateway.speech.tts.espeak import EspeakTts

        engine = EspeakTts(**options)
    else:
        from gateway.speech.tts.edge import EdgeTts, FailoverTts

        engine = EdgeTts(**options)
        if fallback is not None:
            if _ALIASES.get(fallback.strip().lower()) == "edge-tts":
                raise ValueError("edge-tts cannot be its own fallback: choose piper or espeak")
            backup = make_tts(fallback, cache=cache)
            primary = CachedTts(engine, cache) if cache is not None else engine
            return FailoverTts(primary, backup, retry_after_s=retry_after_s)
    return CachedTts(engine, cache) if cache is not None else engine
