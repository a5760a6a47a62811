"""`make_stt`: the one place that maps an engine name from settings to an STT engine.

Engines are imported on demand, so a deployment using whisper never imports vosk (or needs it).
"""

from __future__ import annotations

from typing import Any

from gateway.speech.stt.base import SttEngine

STT_ENGINES = ("whisper", "sphinx", "vosk")


def make_stt(name: str, **options: Any) -> SttEngine:
    """The engine called `name` ("whisper" | "sphinx" | "vosk"), built with `options`.

    Construction checks the configuration (model files present, `VOSK_MODEL_PATH` set) and raises
    `SttConfigError` naming what to fix; the model itself loads with `load()`/`start_engine`.
    """
    key = name.strip().lower()
    if key == "whisper":
        from gateway.speech.stt.whisper import WhisperEngine

        return WhisperEngine(**options)
    if key == "sphinx":
        from gateway.speech.stt.sphinx import SphinxEngine

        return SphinxEngine(**options)
    if key == "vosk":
        from gateway.speech.stt.vosk import VoskEngine

        return VoskEngine(**options)
    raise ValueError(f"unknown STT engine {name!r}; choose one of {', '.join(STT_ENGINES)}")
