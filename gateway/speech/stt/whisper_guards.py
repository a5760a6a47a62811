"""Checks around a whisper decode (`gateway.speech.stt.whisper`): a sentence or a run of words
whisper says again on a short window (`collapse_repeats`), digits it goes on saying past the
end of the speech (`mask_digit_loop`) and a transcript that compresses like a loop
(`compression_ratio`)."""

from __future__ import annotations

import re
import zlib

from engine.hearing import UNSURE_WORD
from engine.phraseology.number_passes import DIGITS

__all__ = ["collapse_repeats", "collapse_word_loop", "compression_ratio", "mask_digit_loop"]

# A loop without sentence marks ("runway one eight roger with air nine or five runway one eight
# roger ...") is a block of at least LOOP_MIN_WORDS words said LOOP_MIN_COPIES times in a row, or
# one time fewer and then cut off by the end of the transcript (whisper ran to the window's end).
# Measured on the readback bench's Kokoro voices: such loops came back as "" (the compression
# guard) for whole, rightly heard readbacks; a pilot never says a 3-word block three times over.
LOOP_MIN_WORDS = 3
LOOP_MIN_COPIES = 3
# Digits whisper goes on saying to the end of the window ("... Edelweiss seven zero seven zero
# seven zero ...", a Kokoro pilot's "seven zero four"): a block of up to DIGIT_LOOP_MAX_BLOCK digit
# words said again and again to the end, DIGIT_LOOP_MIN_WORDS words or more. No value a pilot
# reads is that long (a frequency has six digits, a squawk four), so it is a loop, but which of
# its first digits were said cannot be told: they are masked, as words the recognizer doubted.
DIGIT_LOOP_MIN_WORDS = 8
DIGIT_LOOP_MAX_BLOCK = 3
# A last sentence that is the tail of the one before it, this many words or more, is an echo.
TAIL_ECHO_WORDS = 4
_DIGIT_KEYS = frozenset(DIGITS) | frozenset("0123456789") | {"oh", "point", "decimal"}  # the tokenizer's digit words


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _sentence_key(sentence: str) -> str:
    return " ".join(re.findall(r"[\w']+", sentence.lower()))


def _said_words(sentence: str) -> list[str]:
    """The words of `sentence`, a digit word as its digit ("niner" and "nine" say the same)."""
    return [str(DIGITS.get(word, word)) for word in _sentence_key(sentence).split()]


def _echoes_tail(sentence: str, previous: str) -> bool:
    """Whether `sentence` says again the last words of `previous` (at least `TAIL_ECHO_WORDS`),
    and nothing else: whisper, past the end of the speech, reading the prompt's tail once more."""
    words, before = _said_words(sentence), _said_words(previous)
    return len(before) > len(words) >= TAIL_ECHO_WORDS and before[-len(words) :] == words


def collapse_repeats(text: str) -> str:
    """`text` without a sentence that repeats the one before it, nor a trailing cut-off copy
    of it, nor a last sentence that echoes its tail (whisper's loop on a short window, see
    `gateway.speech.stt.whisper`; the echo: "... squawk four seven two one, Lufthansa tree fife
    niner. Squawk four seven two one, Lufthansa three five nine."). An echo says the same
    words, digits included, so dropping it loses no value."""
    sentences = [part.strip() for part in _SENTENCE_END.split(text.strip()) if _sentence_key(part)]
    kept: list[str] = []
    for index, sentence in enumerate(sentences):
        if kept:
            key, previous = _sentence_key(sentence), _sentence_key(kept[-1])
            last = index == len(sentences) - 1
            cut_off = last and not sentence.endswith((".", "!", "?"))
            if key == previous or (cut_off and previous.startswith(key)) or (last and _echoes_tail(sentence, kept[-1])):
                continue
        kept.append(sentence)
    return mask_digit_loop(collapse_word_loop(" ".join(kept)))


def collapse_word_loop(text: str) -> str:
    """`text` with a block of words repeated `LOOP_MIN_COPIES` or more times in a row (or one time
    fewer, then cut off by the end) kept once (the first run found, shortest block first), and a
    cut-off copy after the run dropped (fewer words than a block, all of them the block's); words
    before and after the run stay. The copies say the same words, digits alike: no value is lost.
    Punctuation and case do not tell copies apart. A block of digits alone is never a loop:
    "one zero one, one zero one" may be a value."""
    tokens = text.split()
    keys = [_sentence_key(token) for token in tokens]
    n = len(keys)
    least = LOOP_MIN_COPIES - 1  # copies of a loop cut off by the end of the transcript
    for size in range(LOOP_MIN_WORDS, n // least + 1):
        for start in range(n - least * size + 1):
            block = keys[start : start + size]
            if all(key in _DIGIT_KEYS for key in block):
                continue
            copies = 1
            while keys[start + copies * size : start + (copies + 1) * size] == block:
                copies += 1
            after = start + copies * size
            rest = keys[after:]
            to_the_end = copies == least and 0 < len(rest) < size and rest == block[: len(rest)]
            if copies >= LOOP_MIN_COPIES or to_the_end:
                cut_off = len(rest) < size and set(rest) <= set(block)
                return " ".join(tokens[: start + size] + ([] if cut_off else tokens[after:]))
    return text


def mask_digit_loop(text: str) -> str:
    """`text` with a run of digit words that loops to its end (see `DIGIT_LOOP_MIN_WORDS`; a
    cut-off copy may end it) replaced by one doubted word, `UNSURE_WORD`: the words before it
    are kept, and no value is read from the run. Measured on the readback bench: such a loop
    made the whole transcript "" (the compression guard), so a readback heard right up to it
    was asked again whole."""
    tokens = text.split()
    keys = [_sentence_key(token) for token in tokens]
    n = len(keys)
    for size in range(1, DIGIT_LOOP_MAX_BLOCK + 1):
        for cut in range(size):  # words of a cut-off copy at the very end
            end = n - cut
            block = keys[end - size : end]
            if end < size or not all(key in _DIGIT_KEYS for key in block) or keys[end:] != block[:cut]:
                continue
            start = end
            while start >= size and keys[start - size : start] == block:
                start -= size
            first = start  # and the tail of a copy just before it ("seven | zero seven zero seven")
            while first > max(start - size + 1, 0) and keys[first - 1] == block[(first - 1 - start) % size]:
                first -= 1
            start = first
            if n - start >= DIGIT_LOOP_MIN_WORDS:
                return " ".join([*tokens[:start], UNSURE_WORD])
    return text


def compression_ratio(text: str) -> float:
    """How well `text` compresses (as faster-whisper rates segments): a loop repeating itself
    ("right, right, right...") compresses far better than speech."""
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data))
