"""Whisper finals queued at the same time decode in one CTranslate2 call.

Why: under load the recognizer queue is the latency (issue 17: 100 pilots on 2 cores, speech end
to final transcript p50 1.36 s). tiny.en's decoder steps are small matrix products (beam 2, one
token at a time); a batch of B windows makes each step one larger product, for less CPU per
utterance. So when every CPU pool worker is busy (`gateway.speech.cpu.BatchJob`: with a worker
idle, finals run side by side, sooner), the worker that takes a final whisper job takes the finals
of the same shape queued behind it, up to `BATCH_MAX`: only what is queued already, so a lone
pilot's final starts at once, as before.

What may share a call. CTranslate2's whisper `generate` takes one array of mel windows (one
length for all) and refuses prompts whose <|startoftranscript|> is not at the same position in
every item. Making them alike changes what whisper writes: padded with silence to the longest
window of the batch and their prompts cut to the shortest, 13 to 29 of 64 piper readbacks came
out otherwise than alone (a comma, "approve"/"approved", a loop one sentence longer; `livefreq
bench decode`, column "differ"). So only finals of one *shape* decode together: the same window
length (`whisper.window_samples`) and the same prompt length in tokens (`WindowInput.shape`); then
each result is bit for bit the one a decode alone gives (transcript, n-best scores, no-speech
probability: 33 of 33 bench utterances whose shapes coincided, and tests/test_decode_batching).
Each item keeps its own output cap (`max_new`): the call runs to the largest, and an item whose
hypotheses reached its own smaller cap is decoded again alone (a runaway loop; rare). One item
that cannot be decoded fails alone: its error goes to its own caller, and a call that fails as a
whole is redone item by item.

How often shapes meet is the limit. The prompt holds the pilot's callsign and the state's
wording, so 64 utterances of the bench flows have 43 distinct shapes: with 8 finals queued the
head one finds ~0.2 others of its shape on average, with 32 about 0.9. All 64 queued at once on
the pool decode in 44 calls instead of 64, with the same transcripts: final after submission p50
2.62 s instead of 2.96 s on a quiet machine, but 5.1 s against 3.6 s in a run while other work
started (reports/bench-decode-run2.json): a gain within the noise of a shared machine. Batching
never changes a final's result nor holds one waiting for company, and what it gains grows with
the queue; making most finals batch needs one prompt length in tokens and a coarser window
step, which change the single decode and need `livefreq bench readback --mode voice` first
(the bench's WER column, where batches are shaped alike: 4.0-5.7 % against 4.3 % alone on 64
utterances, too few to decide).

`BATCH_MAX` = 4, from `livefreq bench decode` (reports/bench-decode.json and .png: 2 cores with
little other load, 64 piper readbacks of 3-9 s, 3 interleaved rounds, two workers of one
CTranslate2 thread each, as the gateway runs). Seconds of audio per CPU second: 34.5 alone, 39.4
in batches of 2, 42.8 of 4 (+24 %), 42.6 of 8, 38.3 of 16; utterances per second 11.1 alone, 12.3,
13.2 (+19 %), 12.4, 10.8. Past 4 nothing more is gained, while a call, which the first final of a
batch waits for whole, grows: p50 0.17 s alone, 0.31 s for 2, 0.53 s for 4, 1.1 s for 8, 2.4 s
for 16. One worker of two threads did worse than two of one (6.2 against 9.9 utterances/s in
batches of 4, busier machine), so the thread counts stay: one replica of one thread per core.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gateway.audio.pcm import pcm_to_float32
from gateway.speech.cpu import BatchJob
from gateway.speech.stt.whisper_windows import max_new_tokens

if TYPE_CHECKING:
    from gateway.speech.stt.base import SttResult
    from gateway.speech.stt.whisper import WhisperEngine

__all__ = ["BATCH_MAX", "WindowInput", "decode_finals", "decode_windows", "final_job"]

BATCH_MAX = 4  # finals of one shape decoded in one call, at most (see the module docstring)


@dataclass(frozen=True, slots=True, eq=False)
class WindowInput:
    """One short-window decode: mel `features` [n_mels, frames], the decoder's start `tokens`
    (prompt, then start of transcript) and the most tokens it may write."""

    features: np.ndarray
    tokens: list[int]
    max_new: int

    @property
    def shape(self) -> tuple[int, int]:
        """What must be equal for windows to share a `generate` call: frames and start tokens."""
        return int(self.features.shape[-1]), len(self.tokens)


def final_job(engine: WhisperEngine, pcm: bytes, tokens: list[int], window: int) -> BatchJob:
    """The final decode of `pcm` (16 kHz PCM16, `window` samples once padded) with the decoder
    start `tokens`, as a pool job that runs with queued finals of the same shape and engine model.
    Its result is (SttResult, seconds of decoding to account to this stream)."""
    key = ("whisper-final", id(engine._model), engine.beam_size, window, len(tokens))
    return BatchJob(key, (pcm, tokens), functools.partial(decode_finals, engine), engine.batch_max)


def decode_finals(
    engine: WhisperEngine, items: list[tuple[bytes, list[int]]]
) -> list[tuple[SttResult, float] | BaseException]:
    """Decode finals of one shape together; per item its result and its share of the time, or
    its own error."""
    started = time.perf_counter()
    out: list[tuple[SttResult, float] | BaseException | None] = [None] * len(items)
    ready: list[tuple[int, WindowInput]] = []
    for index, (pcm, tokens) in enumerate(items):
        try:
            samples = pcm_to_float32(pcm)
            ready.append((index, engine.window_input(samples, tokens, max_new_tokens(len(samples)))))
        except Exception as exc:  # this item's audio: its caller hears of it, the others decode
            out[index] = exc
    results = decode_windows(engine, [item for _index, item in ready])
    share = (time.perf_counter() - started) / max(1, len(items))
    for (index, _item), result in zip(ready, results, strict=True):
        out[index] = result if isinstance(result, BaseException) else (result, share)
    return [item if item is not None else RuntimeError("item not decoded") for item in out]


def decode_windows(engine: WhisperEngine, inputs: Sequence[WindowInput]) -> list[SttResult | BaseException]:
    """`inputs` (one shape) in one `generate` call; each result as a decode alone gives it."""
    if not inputs:
        return []
    if len({item.shape for item in inputs}) > 1:
        raise ValueError(f"windows of different shapes cannot decode together: {sorted({i.shape for i in inputs})}")
    try:
        raw = engine.generate_windows(inputs)
    except Exception as exc:
        if len(inputs) == 1:
            return [exc]
        return [decode_windows(engine, [item])[0] for item in inputs]  # find the one that fails
    cap = max(item.max_new for item in inputs)
    out: list[SttResult | BaseException] = []
    for item, result in zip(inputs, raw, strict=True):
        if item.max_new < cap and _reached(result, item.max_new):
            out.append(decode_windows(engine, [item])[0])  # alone it would have stopped sooner
            continue
        try:
            out.append(engine.window_result(result))
        except Exception as exc:
            out.append(exc)
    return out


def _reached(result: Any, max_new: int) -> bool:
    """Whether a hypothesis of `result` is as long as `max_new` tokens (a decode capped there
    could have ended otherwise)."""
    return any(len(ids) >= max_new for ids in result.sequences_ids)
