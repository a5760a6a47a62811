"""`livefreq bench voice`, in process: speech to text (real-time factor, final transcript delay
with 20 ms frames in real time, word error rate) and text to speech (first audio piece and
real-time factor, cold and cached) on the synthetic pilot's recordings."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gateway.speech.stt.base import SttContext, SttEngine, start_engine
from tooling.bench.common import Progress
from tooling.voicekit import FRAME_MS, frames, pcm_seconds, pilot_pcm, word_errors

if TYPE_CHECKING:
    from gateway.speech.tts.base import TtsEngine

__all__ = ["STT_RATE", "Utterance", "measure_stt", "measure_tts"]

STT_RATE = 16000
PARTIAL_EVERY_S = 0.5  # how often the WebSocket handler asks the recognizer for a partial
WARMUP_TEXT = "Radio check, how do you read."


@dataclass(frozen=True)
class Utterance:
    """A pilot phrase a state expects, and what the recognizer is told to expect there."""

    phrase: str
    context: SttContext
    flow: str
    state: str


async def measure_stt(stt: SttEngine, utterances: Sequence[Utterance], progress: Progress) -> dict[str, Any]:
    """Per utterance: whole-recording decode (RTF, transcript, WER), then the same audio fed in
    real time as 20 ms frames with partials polled every 0.5 s and the final awaited at its end."""
    await start_engine(stt)
    recordings = [await asyncio.to_thread(pilot_pcm, u.phrase, STT_RATE) for u in utterances]
    if recordings:
        await _decode_whole(stt, recordings[0], utterances[0].context)  # warm-up, not a sample
    samples: list[dict[str, Any]] = []
    edits = words = 0
    for done, (utterance, pcm) in enumerate(zip(utterances, recordings), start=1):
        audio_s = pcm_seconds(pcm, STT_RATE)
        text, decode_s = await _decode_whole(stt, pcm, utterance.context)
        errors, count = word_errors(utterance.phrase, text)
        edits, words = edits + errors, words + count
        streamed, after_end_s, partials = await _decode_streaming(stt, pcm, utterance.context)
        samples.append(
            {
                "flow": utterance.flow,
                "state": utterance.state,
                "phrase": utterance.phrase,
                "audio_s": round(audio_s, 3),
                "transcript": text,
                "decode_ms": _ms(decode_s),
                "rtf": round(decode_s / audio_s, 4),
                "word_errors": errors,
                "words": count,
                "wer": round(errors / count, 4) if count else None,
                "streamed_transcript": streamed,
                "final_after_end_ms": _ms(after_end_s),
                "partials": partials,
            }
        )
        progress.update(done)
    progress.done()
    return {"engine": stt.name, "samples": samples, "corpus_wer": round(edits / words, 4) if words else None}


async def _decode_whole(stt: SttEngine, pcm: bytes, context: SttContext) -> tuple[str, float]:
    stream = stt.open(context)
    try:
        stream.feed(pcm)
        started = time.perf_counter()
        text = await stream.final()
        return text.strip(), time.perf_counter() - started
    finally:
        await stream.aclose()


async def _decode_streaming(stt: SttEngine, pcm: bytes, context: SttContext) -> tuple[str, float, int]:
    """(final transcript, seconds from the end of the audio to the final, partials produced)."""
    stream = stt.open(context)
    partials = 0
    fed = 0

    async def poll() -> None:
        nonlocal partials
        while True:
            await asyncio.sleep(PARTIAL_EVERY_S)
            if fed and await stream.partial():
                partials += 1

    poller = asyncio.create_task(poll(), name="bench-partials")
    loop = asyncio.get_running_loop()
    try:
        start = loop.time()
        for k, frame in enumerate(frames(pcm, STT_RATE, FRAME_MS)):
            delay = start + k * FRAME_MS / 1000 - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            stream.feed(frame)
            fed += len(frame)
        delay = start + pcm_seconds(pcm, STT_RATE) - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)  # the speaker releases the key when the audio ends
        ended = time.perf_counter()
        poller.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await poller
        text = await stream.final()
        return text.strip(), time.perf_counter() - ended, partials
    finally:
        poller.cancel()
        await stream.aclose()


async def measure_tts(engine: TtsEngine, texts: Sequence[str], progress: Progress) -> dict[str, Any]:
    """Cold: `engine` (which must have no cache) speaks each text; warm: the same texts through a
    fresh `CachedTts` over `engine`, primed with each text before it is timed."""
    from gateway.speech.tts.cache import CachedTts, TtsCache

    await engine.load()
    await _speak(engine, WARMUP_TEXT)  # warm-up, not a sample
    cold: list[dict[str, Any]] = []
    for done, text in enumerate(texts, start=1):
        cold.append(await _speak(engine, text))
        progress.update(done)
    cached = CachedTts(engine, TtsCache())
    warm: list[dict[str, Any]] = []
    for done, text in enumerate(texts, start=len(texts) + 1):
        await cached.synthesize(text)
        warm.append(await _speak(cached, text))
        progress.update(done)
    progress.done()
    return {"engine": engine.name, "voice": engine.voice, "sample_rate": engine.sample_rate, "cold": cold, "warm": warm}


async def _speak(engine: TtsEngine, text: str) -> dict[str, Any]:
    started = time.perf_counter()
    first: float | None = None
    nbytes = pieces = 0
    async for pcm in engine.stream(text):
        if first is None:
            first = time.perf_counter() - started
        nbytes += len(pcm)
        pieces += 1
    total = time.perf_counter() - started
    audio_s = nbytes / 2 / engine.sample_rate
    return {
        "text": text,
        "pieces": pieces,
        "audio_s": round(audio_s, 3),
        "first_audio_ms": _ms(first) if first is not None else None,
        "total_ms": _ms(total),
        "rtf": round(total / audio_s, 4) if audio_s else None,
    }


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 1)
