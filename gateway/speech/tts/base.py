"""The text-to-speech interface, sentence splitting and the worker pool every engine shares.

A controller message must start playing long before the whole message is synthesized, so engines
speak piece by piece: `split_for_speech` cuts the text at sentence and clause punctuation and
`stream` yields each piece's audio as soon as it exists. Synthesis is CPU-bound (ONNX inference,
audio decoding); it runs on the shared CPU pool (`gateway.speech.cpu`), never on the event loop.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from typing import Protocol, TypeVar, runtime_checkable

from gateway.speech.cpu import run_cpu  # noqa: F401 - the engines import it from here

T = TypeVar("T")

MIN_PIECE_CHARS = 12  # a clause shorter than this is spoken together with the next one


class TtsError(RuntimeError):
    """Synthesis failed (network error, engine crash, bad voice)."""


class TtsUnavailable(TtsError):
    """The engine cannot run on this machine; the message names what to install or configure."""


@runtime_checkable
class TtsEngine(Protocol):
    """A text-to-speech engine producing PCM16 little-endian mono at `sample_rate`."""

    name: str  # engine id: "piper", "espeak", "edge-tts"
    voice: str  # voice id within the engine (plus non-default options that change the sound)
    sample_rate: int

    async def load(self) -> None:
        """Warm up (load models) off the event loop; idempotent. Call at start-up so the first
        controller message is not seconds late."""
        ...

    async def synthesize(self, text: str) -> bytes:
        """All audio of `text`."""
        ...

    def stream(self, text: str) -> AsyncIterator[bytes]:
        """Audio of `text` piece by piece (see `split_for_speech`), each yielded once synthesized."""
        ...


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_CLAUSE_END = re.compile(r"(?<=[,:])\s+|(?<= [-–—])\s+")  # text is whitespace-normalized first


def split_for_speech(text: str, min_chars: int = MIN_PIECE_CHARS) -> list[str]:
    """Cut `text` into speakable pieces at sentence ends (. ! ? ;) and clause marks (, : dashes).

    Punctuation stays with its piece so the voice keeps its pauses and intonation; a decimal point
    ("118.7") is no boundary because a boundary needs whitespace after the mark. Pieces shorter
    than `min_chars` are joined to the next one ("Roger, DLH359." stays whole) so no piece is too
    short to sound natural. Splitting a piece again returns it unchanged.
    """
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(" ".join(text.split())):
        in_sentence: list[str] = []
        pending = ""
        for clause in _CLAUSE_END.split(sentence):
            if not clause:
                continue
            pending = f"{pending} {clause}" if pending else clause
            if len(pending) >= min_chars:
                in_sentence.append(pending)
                pending = ""
        if pending and in_sentence:
            in_sentence[-1] = f"{in_sentence[-1]} {pending}"  # a short tail stays with its sentence
        elif pending:
            in_sentence.append(pending)  # the whole sentence is short ("Roger.")
        pieces.extend(in_sentence)
    return pieces


class PieceTts(ABC):
    """Base for engines that synthesize one piece of text per call.

    Subclasses set `name`, `voice`, `sample_rate` and implement `synthesize_piece`; streaming is
    lazy: each piece is synthesized when the consumer asks for the next chunk, so a consumer that
    stops early (the pilot keyed the mic) costs no further synthesis.
    """

    name: str
    voice: str
    sample_rate: int

    async def load(self) -> None:
        """Nothing to warm up by default."""

    @abstractmethod
    async def synthesize_piece(self, text: str) -> bytes:
        """PCM16 mono audio at `sample_rate` for one piece of text."""

    async def stream(self, text: str) -> AsyncIterator[bytes]:
        for piece in split_for_speech(text):
            pcm = await self.synthesize_piece(piece)
            if pcm:
                yield pcm

    async def synthesize(self, text: str) -> bytes:
        return b"".join([chunk async for chunk in self.stream(text)])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(voice={self.voice!r}, sample_rate={self.sample_rate})"
