"""Checks around a whisper decode (`gateway.speech.stt.whisper`): a sentence whisper says again
on a short window (`collapse_repeats`), a transcript that compresses like a loop
(`compression_ratio`), and audio after a partial that holds no words (`silent_tail`)."""

from __future__ import annotations

import re
import zlib

import numpy as np

from gateway.audio.pcm import pcm_to_int16

__all__ = ["TAIL_SILENCE_DB", "collapse_repeats", "compression_ratio", "silent_tail"]

TAIL_SILENCE_DB = 35.0  # audio this far below the utterance's loudest 20 ms holds no words


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _sentence_key(sentence: str) -> str:
    return " ".join(re.findall(r"[\w']+", sentence.lower()))


def collapse_repeats(text: str) -> str:
    """`text` without a sentence that repeats the one before it, nor a trailing cut-off copy
    of it (whisper's loop on a short window, see `gateway.speech.stt.whisper`)."""
    sentences = [part.strip() for part in _SENTENCE_END.split(text.strip()) if _sentence_key(part)]
    kept: list[str] = []
    for index, sentence in enumerate(sentences):
        if kept:
            key, previous = _sentence_key(sentence), _sentence_key(kept[-1])
            cut_off = index == len(sentences) - 1 and not sentence.endswith((".", "!", "?"))
            if key == previous or (cut_off and previous.startswith(key)):
                continue
        kept.append(sentence)
    return " ".join(kept)


def compression_ratio(text: str) -> float:
    """How well `text` compresses (as faster-whisper rates segments): a loop repeating itself
    ("right, right, right...") compresses far better than speech."""
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data))


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
