"""Text-to-speech: piper (default, offline), edge-tts (online, fails over to piper), espeak-ng.

Callers build an engine with `make_tts(settings_name, ...)` and only use the `TtsEngine`
interface; engine modules (and their heavy imports) load only when chosen.
"""

from gateway.speech.tts.base import TtsEngine, TtsError, TtsUnavailable, split_for_speech
from gateway.speech.tts.cache import CachedTts, TtsCache
from gateway.speech.tts.factory import ENGINES, UnknownTtsEngine, make_tts

__all__ = [
    "ENGINES",
    "CachedTts",
    "TtsCache",
    "TtsEngine",
    "TtsError",
    "TtsUnavailable",
    "UnknownTtsEngine",
    "make_tts",
    "split_for_speech",
]
