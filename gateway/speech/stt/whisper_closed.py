"""Whisper's second hearing: the same audio decoded with only the radio's words allowed.

CTranslate2's `generate` takes a list of tokens to suppress but no logits processor, so the closed
vocabulary is a closed *token* set: every token of every spelling of every lexicon word (with and
without a leading space, lower, Capitalized, UPPER), digits, and the punctuation whisper writes.
Tokens combine freely, so an odd spelling can still come out ("nirro"); the tokenizer then hears
no value there, which is "say again", never a guess.

Measured with the readback bench's 300 recordings (seed 0; kokoro, espeak-ng and flite pilots)
decoded again offline: the closed decode alone writes fewer wrong words (WER 40 % -> 33 %) but
refuses more correct readbacks (21 -> 25), since garbage forced into radio words becomes a value.
Used as a second hearing only (`gateway.speech.rehearing`), it refuses fewer (21 -> 14) and asks
again less (61 -> 52), with no wrong readback accepted.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from gateway.speech.stt.base import SttContext, SttResult
from gateway.speech.stt.lexicon import own_words
from gateway.speech.stt.whisper_windows import fits_window, max_new_tokens

if TYPE_CHECKING:
    from gateway.speech.stt.whisper import WhisperEngine

PUNCTUATION: tuple[str, ...] = (".", ",", "?", "!", "-", "'")


def _spellings(tokenizer: Any, words: frozenset[str]) -> set[int]:
    """Every token of every spelling of `words` (with and without a leading space)."""
    allowed: set[int] = set()
    for word in words:
        for form in {word, word.capitalize(), word.upper()}:
            allowed.update(tokenizer.encode(" " + form))
            allowed.update(tokenizer.encode(form))
    return allowed


@lru_cache(maxsize=4)
def _shared(tokenizer: Any, lexicon: frozenset[str], default: tuple[int, ...]) -> tuple[frozenset[int], np.ndarray]:
    """(tokens the shared lexicon allows, the tokens it suppresses), made once per lexicon: every
    session shares it, so only the session's own few words are encoded per hearing (encoding the
    whole lexicon took 14-20 ms of a CPU worker, and a cache per session's word set churned past
    64 sessions)."""
    allowed = _spellings(tokenizer, lexicon)
    for mark in (*PUNCTUATION, *(str(d) for d in range(10))):
        allowed.update(tokenizer.encode(mark))
        allowed.update(tokenizer.encode(" " + mark))
    suppressed = sorted({*default, *(t for t in range(tokenizer.eot) if t not in allowed)})
    return frozenset(allowed), np.array(suppressed, dtype=np.int64)


def suppressed_tokens(
    tokenizer: Any, lexicon: frozenset[str], own: frozenset[str], default: tuple[int, ...]
) -> list[int]:
    """Every text token outside the spellings of `lexicon` and the session's `own` words, plus
    whisper's default suppressions (which stay suppressed whatever the words)."""
    allowed, suppressed = _shared(tokenizer, lexicon, default)
    extra = _spellings(tokenizer, own - lexicon) - allowed - set(default)
    if not extra:
        return suppressed.tolist()
    return suppressed[~np.isin(suppressed, np.fromiter(extra, dtype=np.int64))].tolist()


def closed_result(engine: WhisperEngine, pcm: bytes, prompt: str | None, context: SttContext) -> SttResult | None:
    """The transcript of `pcm` in the radio's words (`context.lexicon` and the session's
    `own_words`), or None where there is
    no second hearing: no lexicon, or audio past one short window (the chunked path)."""
    from faster_whisper.transcribe import get_suppressed_tokens

    from gateway.audio.pcm import pcm_to_float32

    samples = pcm_to_float32(pcm)
    if not context.lexicon or not len(samples) or not fits_window(len(samples)):
        return None
    tokenizer = engine.tokenizer()
    default = tuple(get_suppressed_tokens(tokenizer, [-1]))
    suppress = suppressed_tokens(tokenizer, context.lexicon, own_words(context), default)
    item = engine.window_input(samples, engine.prompt_tokens(prompt), max_new_tokens(len(samples)))
    return engine.window_result(engine.generate_windows([item], suppress)[0])
