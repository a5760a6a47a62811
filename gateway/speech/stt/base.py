"""The speech-to-text interface, the context that biases it, and the worker pool every engine shares.

A transmission is one `SttStream`: the audio path `feed`s 20 ms frames as they arrive (cheap: it
only appends), asks for `partial()` transcripts while the pilot talks, and awaits `final()` once the
transmission ends. Decoding is CPU work; it runs on the shared CPU pool (`gateway.speech.cpu`,
finals before partials), never on the event loop.

`SttContext` carries what the current state expects, so engines can bias recognition towards it.
Biasing is also a risk (a biased recognizer can "hear" a correct readback that was wrong). The
closed-vocabulary engines (sphinx, vosk) therefore bias the wording only: `corpus_sentences`
turns each expected phrase into `value_variants` whose digits, sides, letters and climb/descend
are drawn uniformly from their class, and adds every ICAO word once. On synthesized readbacks
(piper voice through the radio effect, levels 3-5) the earlier value-biased model turned
"two five left" into the expected "right" and FL120 into FL100; this one never did.
"""

from __future__ import annotations

import asyncio
import random
import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from engine.hearing import Hearing
from engine.phraseology import DIGIT_WORDS, speak_text
from engine.phraseology.alphabet import LETTER_WORDS
from engine.vocabulary import ICAO_WORDS as ICAO_WORDS  # re-exported: every closed-vocabulary corpus holds them
from gateway.audio.pcm import check_pcm
from gateway.speech.cpu import Priority, cpu_count, cpu_pool, run_cpu  # noqa: F401 - cpu_count, run_cpu: re-exported

T = TypeVar("T")

STT_SAMPLE_RATE = 16000  # what the audio path delivers and what every bundled model expects

_PLAIN_DIGITS = {"tree": "three", "fife": "five", "niner": "nine"}

# Words that carry a readback's values. A language model or grammar built from the expected phrase
# gives every member of a class the same weight wherever the phrase has one, so it biases towards
# the phrase's wording, never towards its values ("two fife left" is as likely as "... right").
VARIANTS_PER_MEMBER = 8  # sampled sentences per member of the largest class in a phrase
VALUE_CLASSES: tuple[frozenset[str], ...] = (
    frozenset(DIGIT_WORDS) | frozenset(_PLAIN_DIGITS.values()),
    frozenset({"left", "right", "center"}),
    frozenset(word.lower() for word in LETTER_WORDS.values()),
    frozenset({"climb", "descend"}),
)
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d")  # letters of any script, or one digit


from engine.hearing import UNSURE_WORD  # noqa: E402 (re-exported: the engine reads it too)


@dataclass(frozen=True, slots=True)
class SttResult:
    """A final transcript and what the recognizer was unsure of in it (`engine.models.Hearing`).

    `hearing.alternatives` are other transcripts of the same audio (an engine's n-best within its
    margin, or `text` with its low-confidence words masked as `UNSURE_WORD`), never `text` itself;
    `hearing.confidence` is the engine's confidence in `text` (0..1) where it has one. `cut_off`
    is the audio path's to set (it knows when the key was released mid-speech), not the engine's.
    """

    text: str
    hearing: Hearing = field(default_factory=Hearing)


def masked_alternative(words: list[tuple[str, float]], min_confidence: float) -> str | None:
    """The transcript of `words` (word, confidence) with every word under `min_confidence`
    replaced by `UNSURE_WORD`, or None when every word is sure enough."""
    if all(conf >= min_confidence for _word, conf in words):
        return None
    return " ".join(UNSURE_WORD if conf < min_confidence else word for word, conf in words)


def unique_alternatives(text: str, candidates: list[str]) -> list[str]:
    """`candidates` without blanks, repeats and `text` itself, in order."""
    seen = {text.strip()}
    out: list[str] = []
    for candidate in candidates:
        candidate = candidate.strip()
        if candidate and candidate not in seen:
            seen.add(candidate)
            out.append(candidate)
    return out


class SttError(RuntimeError):
    """Recognition failed (engine crash, unusable audio)."""


class SttConfigError(SttError):
    """The engine cannot start as configured; the message names the setting or package to fix."""


@dataclass(frozen=True, slots=True)
class NameChoice:
    """A name a readback is judged on (a SID's fix): the issued one's words (lower case) and every
    name that could have been issued in its place, the issued one among them."""

    issued: frozenset[str]
    choices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SttContext:
    """What the current state expects, used to bias recognition.

    `expected_phrases` are written the way templates render them ("DLH359, runway 25R, cleared for
    takeoff"); engines speak them in ICAO form themselves. `vocabulary` holds single words or short
    items: ICAO words, the callsign telephony ("Lufthansa"), values issued ("25R", "121.8").
    `speaker` names who talks (one pilot per session), for engines that adapt to the voice and
    microphone from one transmission to the next (pocketsphinx's cepstral mean). `lexicon` is the
    radio's closed vocabulary (`gateway.speech.stt.lexicon`) for an engine's second hearing; empty:
    no second hearing.

    Names a readback is judged on (a SID's fix; `gateway.speech.stack.name_choices` says why not
    the clearance limit's city) are offered alike:
    per name (`names`, a `NameChoice` each) the issued one's words leave the phrases and the
    vocabulary, and every name the controller could have issued there stands in its place.
    Prompted with "via CHARL departure", whisper wrote "Charon" for a spoken "Kerun": a wrong SID
    accepted. Prompted with none, it could not spell a right one ("zuber fi" for SOBRA).
    """

    expected_phrases: list[str] = field(default_factory=list)
    vocabulary: list[str] = field(default_factory=list)
    sample_rate: int = STT_SAMPLE_RATE
    speaker: str | None = None  # e.g. the session id: lets an engine carry its adaptation over
    callsign: str | None = None  # our own callsign as said ("Lufthansa 359"): who is talking, not a readback value
    lexicon: frozenset[str] = frozenset()
    names: tuple[NameChoice, ...] = ()
    # the words of the issued places the prompt names alone (the clearance limit's city): left out
    # of the prompt a city rival is scored under (`whisper_prompt.unprompted`, engine/value_rivals.py)
    told: frozenset[str] = frozenset()
    # every place a told one is weighed against, the issued one's names among them, as written:
    # named alike in that prompt (`whisper_prompt.rival_prompt`)
    places: tuple[str, ...] = ()

    @property
    def issued_names(self) -> frozenset[str]:
        """The words of every issued name, lower case."""
        return frozenset(w for choice in self.names for w in choice.issued)

    def spoken_phrases(self) -> list[str]:
        """The expected phrases in ICAO speech ("runway two fife right")."""
        return [spoken for phrase in self.expected_phrases if (spoken := speak_text(phrase).strip())]

    def spoken_vocabulary(self) -> list[str]:
        """The vocabulary items in ICAO speech ("25R" -> "two fife right")."""
        return [spoken for item in self.vocabulary if (spoken := speak_text(item).strip())]


def words_of(text: str) -> list[str]:
    """Lower-case words of spoken text; a stray digit becomes its ICAO word."""
    return [DIGIT_WORDS[int(w)] if w.isdigit() else w for w in _WORD.findall(text.lower())]


def corpus_sentences(context: SttContext) -> list[list[str]]:
    """Word sequences a closed-vocabulary engine should know, most specific first.

    Each expected phrase comes in two forms, with ICAO digits ("tree fife niner") and plain ones
    ("three five nine"), because trainees say both, each as its `value_variants`; then every word
    of the vocabulary and of `ICAO_WORDS` once, alone and sorted, so any word stays recognizable
    and an issued value ("25R" in the vocabulary) adds no count to its own words. The result is
    the same for any values the context expects, as long as its wording is the same; a SID's
    fix is such a value (`SttContext.names`).
    """
    sentences: list[list[str]] = []
    issued = context.issued_names
    # a name a readback is judged on is a value too: its slot is drawn among every name that
    # could have been issued (`SttContext.names`), as a digit's is among the digits
    names = tuple(frozenset(w for n in c.choices for w in words_of(n)) for c in context.names if c.choices)
    for phrase in context.spoken_phrases():
        words = words_of(phrase)
        plain = [_PLAIN_DIGITS.get(w, w) for w in words]
        for form in [words, plain] if plain != words else [words]:
            sentences.extend(value_variants(form, names))
    singles = {w for item in context.spoken_vocabulary() for w in words_of(item) if w not in issued}
    singles.update(w for c in context.names for n in c.choices for w in words_of(n))
    singles.update(w for line in ICAO_WORDS for w in line.split())
    sentences.extend([w] for w in sorted(singles))
    return [s for s in sentences if s]


def value_variants(words: list[str], names: tuple[frozenset[str], ...] = ()) -> list[list[str]]:
    """Copies of `words` with every value word drawn independently and uniformly from its class.

    Only the wording survives: each value position is equally likely to hold any member of its
    class. The sampling is seeded with the wording alone (values masked), so "runway two fife
    right" and "runway two fife left" give the very same sentences: whatever the expected value,
    the model is the same, and cannot favour it. A phrase without value words is its own only
    variant. `names`: more classes of one-word values (the fixes of the airport's SIDs).
    """
    classes = [next((sorted(c) for c in (*VALUE_CLASSES, *names) if word in c), None) for word in words]
    sizes = [len(members) for members in classes if members]
    if not sizes:
        return [list(words)]
    wording = " ".join(f"<{members[0]}>" if members else word for word, members in zip(words, classes, strict=True))
    rng = random.Random(wording)
    return [
        [rng.choice(members) if members else word for word, members in zip(words, classes, strict=True)]
        for _ in range(VARIANTS_PER_MEMBER * max(sizes))
    ]


@runtime_checkable
class SttStream(Protocol):
    """One transmission being recognized. Not safe for concurrent `feed` from several tasks."""

    def feed(self, pcm: bytes) -> None:
        """Append PCM16 mono audio at the context's sample rate (cheap: no decoding here)."""
        ...

    async def partial(self) -> str | None:
        """A new hypothesis of the audio so far, or None when there is nothing new to say."""
        ...

    async def final(self) -> str:
        """The transcript of everything fed; the stream is finished afterwards."""
        ...

    async def final_result(self) -> SttResult:
        """`final()` with what the recognizer was unsure of (same transcript; either may be called)."""
        ...

    async def aclose(self) -> None:
        """Abandon the stream without a transcript and free what it holds (idempotent)."""
        ...


@runtime_checkable
class SttEngine(Protocol):
    """A speech-to-text engine; one instance (and one loaded model) serves every session."""

    name: str  # "whisper", "sphinx", "vosk"
    streaming: bool  # True when partials come from incremental decoding, not re-transcription

    def load(self) -> None:
        """Load the model now (blocking, idempotent); raises `SttConfigError` when it cannot."""
        ...

    def open(self, context: SttContext) -> SttStream:
        """Start recognizing one transmission biased by `context` (cheap: no decoding here)."""
        ...


async def start_engine(engine: SttEngine) -> None:
    """Load `engine`'s model on the worker pool, so start-up fails early and the first pilot does not wait."""
    await run_cpu(engine.load)


async def transcribe(engine: SttEngine, pcm: bytes, context: SttContext | None = None) -> str:
    """The final transcript of one complete recording (e.g. a posted push-to-talk clip)."""
    return (await transcribe_result(engine, pcm, context)).text


async def transcribe_result(engine: SttEngine, pcm: bytes, context: SttContext | None = None) -> SttResult:
    """`transcribe` with what the recognizer was unsure of."""
    stream = engine.open(context or SttContext())
    try:
        stream.feed(pcm)
        return await final_result(stream)
    finally:
        await stream.aclose()


async def final_result(stream: SttStream) -> SttResult:
    """`stream.final_result()`, or its `final()` with nothing known about the hearing for a
    stream that predates `SttResult` (a third-party engine)."""
    method = getattr(stream, "final_result", None)
    if method is not None:
        return await method()
    return SttResult(await stream.final())


def pool_saturated() -> bool:
    """Whether the CPU pool (`gateway.speech.cpu`) has no worker to spare beside one kept free
    for the next final. Streams skip optional work (a partial transcript) then: under load the
    CPU goes to the finals pilots wait for, and a final never queues behind a partial."""
    return not cpu_pool().spare()


def check_partial_every(partial_every_s: float | None, *, optional: bool = False) -> None:
    """Reject a partial cadence that is not a positive number of seconds (None: finals only, where `optional`)."""
    if partial_every_s is None and optional:
        return
    if partial_every_s is None or partial_every_s <= 0:
        raise ValueError(f"partial_every_s must be positive{' or None' if optional else ''}, got {partial_every_s}")


def check_sample_rate(context: SttContext, model: str) -> None:
    """Reject a context whose audio rate is not the one `model` was trained on (`STT_SAMPLE_RATE`)."""
    if context.sample_rate != STT_SAMPLE_RATE:
        raise ValueError(f"{model} needs {STT_SAMPLE_RATE} Hz audio, got {context.sample_rate}")


class SharedModels:
    """Loaded models by settings, one per process: a model takes seconds and many MB to load, and
    every engine instance with the same settings can use the same one (thread-safe)."""

    def __init__(self) -> None:
        self._models: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, load: Callable[[], T]) -> T:
        """The model under `key`; `load()` makes it (under the lock) the first time; a failure is not kept."""
        with self._lock:
            model = self._models.get(key)
            if model is None:
                model = self._models[key] = load()
            return model


class BufferedStream(ABC):
    """Shared plumbing of the engines' streams: the audio buffer, one decode at a time, metrics.

    `decode_s` adds up the time spent decoding in the pool (not waiting for a worker), so
    `decode_s / audio_s` is the stream's real-time factor.
    """

    def __init__(self, context: SttContext) -> None:
        self.context = context
        self._pcm = bytearray()
        self._lock = asyncio.Lock()  # one decode per stream at a time, in feed order
        self._finished = False
        self._last_partial: str | None = None
        self._final: SttResult | None = None  # the transcript, once `final_result()` has made it
        self.decode_s = 0.0
        self.partials = 0

    def feed(self, pcm: bytes) -> None:
        if self._finished:
            raise SttError("cannot feed a finished STT stream")
        check_pcm(pcm)
        self._pcm += pcm

    @property
    def audio_s(self) -> float:
        """Seconds of audio fed so far."""
        return len(self._pcm) / (2 * self.context.sample_rate)

    def _bytes_for(self, seconds: float) -> int:
        return int(seconds * self.context.sample_rate) * 2

    async def final(self) -> str:
        return (await self.final_result()).text

    @abstractmethod
    async def final_result(self) -> SttResult:
        """The final transcript and what the recognizer was unsure of (each engine's own decode)."""

    def _new_partial(self, text: str) -> str | None:
        """`text` counted as the next partial, or None when it is empty or says what the last one said."""
        if not text or text == self._last_partial:
            return None
        self._last_partial = text
        self.partials += 1
        return text

    async def _decode(
        self, fn: Callable[..., T], *args: object, level: Priority = Priority.FINAL, droppable: bool = False
    ) -> T:
        """Run one decode step on the CPU pool at `level` and account its time.

        Called with `_lock` held. A worker thread cannot be stopped, so when the awaiting task is
        cancelled (a partial poller cancelled at the end of a transmission) the step is still
        waited for before the lock is released: the next step must never run on the same decoder
        at the same time. A `droppable` step (a re-transcription nothing else depends on) that
        is still queued is dropped instead.
        """

        def timed() -> tuple[T, float]:
            start = time.perf_counter()
            result = fn(*args)
            return result, time.perf_counter() - start

        return await self._run_job(timed, level, droppable)

    async def _run_job(self, job: Callable[[], tuple[T, float]], level: Priority, droppable: bool = False) -> T:
        """`_decode` of a ready job returning (result, seconds of decoding to account), e.g. a
        `BatchJob` the pool may run together with others (whisper finals)."""
        future = cpu_pool().submit(job, level)
        waiting = asyncio.wrap_future(future)
        try:
            result, elapsed = await asyncio.shield(waiting)
        except asyncio.CancelledError:
            if not (droppable and future.cancel()):
                await asyncio.wait({waiting})
            raise
        self.decode_s += elapsed
        return result


class _Cadenced(Protocol):
    """An engine that sets how much new audio a partial waits for."""

    partial_every_s: float


class IncrementalStream(BufferedStream, ABC):
    """A stream whose decoder takes each piece of audio once, in order (sphinx, vosk).

    Every `partial_every_s` of new audio, `partial()` hands only that new audio to `_step`; `final()`
    hands it the rest with `last=True` (plus `_final_args()`), then calls `_release()`, which
    `aclose()` calls too. `_step` runs on the worker pool with `_lock` held.
    """

    def __init__(self, engine: _Cadenced, context: SttContext) -> None:
        super().__init__(context)
        self._cadence = engine  # read on every `partial()`, like the engine's own setting
        self._decoded = 0  # bytes of the buffer already handed to `_step`
        self._hearing = Hearing()  # set by the last `_step`: what the decoder was unsure of

    @abstractmethod
    def _step(self, pcm: bytes, last: bool) -> str:
        """Decode `pcm` after all audio before it; the text so far, or the final text when `last`
        (its hearing then in `_hearing`)."""

    def _final_args(self) -> tuple[object, ...]:
        """Extra arguments of the last `_step` (none unless an engine needs more than the new audio)."""
        return ()

    def _release(self) -> None:
        """Drop or give back the decoder; after the final and on `aclose()` (idempotent)."""

    def _pending(self) -> bytes:
        pending = bytes(self._pcm[self._decoded :])
        self._decoded += len(pending)
        return pending

    async def partial(self) -> str | None:
        if self._finished or len(self._pcm) - self._decoded < self._bytes_for(self._cadence.partial_every_s):
            return None
        async with self._lock:
            if self._finished:
                return None
            # not optional like a re-transcription: this audio is decoded once, here
            text = await self._decode(self._step, self._pending(), False, level=Priority.AHEAD)
        return self._new_partial(text)

    async def final_result(self) -> SttResult:
        async with self._lock:
            if self._final is None:
                self._finished = True
                pending = self._pending()
                text = await self._decode(self._step, pending, True, *self._final_args()) if self._pcm else ""
                self._final = SttResult(text, self._hearing if text else Hearing())
                self._release()
            return self._final

    async def aclose(self) -> None:
        async with self._lock:
            self._finished = True
            self._release()
