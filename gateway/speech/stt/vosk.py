"""Vosk (Kaldi) STT: streaming `KaldiRecognizer` with a runtime grammar where the model allows it.

Needs an unpacked Vosk model directory named by `VOSK_MODEL_PATH` (or `model_path`); no model
ships with the gateway and none is ever downloaded. A missing or invalid model is a start-up
error naming the setting.

Runtime grammars work only with "lookahead" models (``graph/HCLr.fst`` + ``graph/Gr.fst``, e.g.
the small models); a model with a static ``HCLG.fst`` decodes with its own language model. The
grammar is a list of phrases that Vosk loops over, from `corpus_sentences`: the expected wording
with values drawn uniformly from their class (so the grammar is the same for 25L and 25R), and
every vocabulary and ICAO word as a one-word phrase. Words the model does not know are dropped
first (`Model.vosk_model_find_word`), because Vosk would drop them silently.

Hearing: the recognizer reports each word's confidence (`SetWords`: Kaldi's MBR word posterior,
0..1). The final's `Hearing` has their mean as `confidence` and, when any word is under
`WORD_CONFIDENCE_MIN`, the transcript with those words masked as "???" as its alternative (so a
value resting on an unsure word is asked again, not judged). Vosk's n-best
(`SetMaxAlternatives`) is not used: with it the result carries no word confidences, and its
scores are unnormalized lattice costs. The threshold is not calibrated on English (no English
model is at hand); 0.5 is half the posterior mass on another word.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.hearing import Hearing
from gateway.extras import install_hint
from gateway.speech.stt.base import (
    IncrementalStream,
    SharedModels,
    SttConfigError,
    SttContext,
    check_partial_every,
    corpus_sentences,
    masked_alternative,
    unique_alternatives,
)

MODEL_PATH_SETTING = "VOSK_MODEL_PATH"
PARTIAL_EVERY_S = 0.2
CHUNK_S = 0.1
UNKNOWN = "[unk]"  # Vosk's garbage word, kept in the grammar when the model has it
WORD_CONFIDENCE_MIN = 0.5  # a word under this confidence is masked in the final's alternative

_models = SharedModels()


def resolve_model_path(model_path: str | Path | None = None) -> Path:
    """The Vosk model directory from `model_path` or `VOSK_MODEL_PATH`, checked for the model files."""
    raw = str(model_path) if model_path else os.environ.get(MODEL_PATH_SETTING, "")
    if not raw.strip():
        raise SttConfigError(
            f"vosk STT needs a model: set {MODEL_PATH_SETTING} to an unpacked Vosk model directory "
            "(for example vosk-model-small-en-us-0.15)"
        )
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise SttConfigError(f"{MODEL_PATH_SETTING}={raw} is not a directory")
    if not ((path / "am" / "final.mdl").is_file() or (path / "final.mdl").is_file()):
        raise SttConfigError(f"{MODEL_PATH_SETTING}={raw} is not a Vosk model: no am/final.mdl in it")
    return path


def supports_grammar(path: Path) -> bool:
    """Whether the model at `path` can take a runtime grammar (a lookahead graph)."""
    graph = path / "graph"
    return (graph / "HCLr.fst").is_file() and (graph / "Gr.fst").is_file()


def build_grammar(context: SttContext, known: Callable[[str], bool]) -> list[str]:
    """Grammar phrases for `context`: each sentence with only the words `known` to the model.

    Empty when the model knows none of the words: the caller then decodes without a grammar.
    """
    phrases: list[str] = []
    seen: set[str] = set()
    for sentence in corpus_sentences(context):
        phrase = " ".join(word for word in sentence if known(word))
        if phrase and phrase not in seen:
            seen.add(phrase)
            phrases.append(phrase)
    if phrases and known(UNKNOWN):
        phrases.append(UNKNOWN)
    return phrases


class VoskEngine:
    """A shared `vosk.Model`; each transmission gets its own `KaldiRecognizer`."""

    name = "vosk"
    streaming = True

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        grammar: bool = True,
        partial_every_s: float = PARTIAL_EVERY_S,
    ) -> None:
        check_partial_every(partial_every_s)
        try:
            import vosk  # noqa: F401
        except ImportError as exc:
            raise SttConfigError(install_hint("vosk", "the vosk STT engine")) from exc
        self.model_path = resolve_model_path(model_path)
        self.grammar = grammar and supports_grammar(self.model_path)
        self.partial_every_s = partial_every_s
        self._model: Any = None

    def load(self) -> None:
        if self._model is not None:
            return
        import vosk

        key = str(self.model_path)

        def load_model() -> Any:
            vosk.SetLogLevel(-1)  # Kaldi's per-recognizer chatter; failures still raise
            try:
                return vosk.Model(key)
            except Exception as exc:  # vosk raises a bare Exception("Failed to create a model")
                raise SttConfigError(f"{MODEL_PATH_SETTING}={key}: Vosk could not load this model ({exc})") from exc

        self._model = _models.get(key, load_model)

    def knows(self, word: str) -> bool:
        """Whether the model's vocabulary holds `word`."""
        self.load()
        return bool(self._model.vosk_model_find_word(word) >= 0)

    def recognizer(self, context: SttContext) -> tuple[Any, list[str]]:
        """A recognizer for `context` and the grammar it uses ([] = the model's own LM)."""
        import vosk

        self.load()
        phrases = build_grammar(context, self.knows) if self.grammar else []
        if phrases:
            grammar = json.dumps(phrases, ensure_ascii=False)  # Vosk matches the words as UTF-8 text
            recognizer = vosk.KaldiRecognizer(self._model, float(context.sample_rate), grammar)
        else:
            recognizer = vosk.KaldiRecognizer(self._model, float(context.sample_rate))
        recognizer.SetWords(True)  # word confidences in every result (see the module docstring)
        return recognizer, phrases

    def open(self, context: SttContext) -> VoskStream:
        return VoskStream(self, context)

    def __repr__(self) -> str:
        return f"VoskEngine(model_path={str(self.model_path)!r}, grammar={self.grammar})"


class VoskStream(IncrementalStream):
    """Incremental decoding; Vosk's own endpointing may close segments, which are joined in order."""

    def __init__(self, engine: VoskEngine, context: SttContext) -> None:
        super().__init__(engine, context)
        self.engine = engine
        self.grammar: list[str] = []
        self._recognizer: Any = None
        self._segments: list[str] = []
        self._words: list[tuple[str, float]] = []  # (word, confidence) of the closed segments

    def _release(self) -> None:
        self._recognizer = None

    def _step(self, pcm: bytes, last: bool) -> str:
        """Decode `pcm` (in the pool); the text so far, or the final text when `last`."""
        if self._recognizer is None:
            self._recognizer, self.grammar = self.engine.recognizer(self.context)
        recognizer = self._recognizer
        chunk = self._bytes_for(CHUNK_S)  # small steps, so every endpoint closes its own segment
        for offset in range(0, len(pcm), chunk):
            if recognizer.AcceptWaveform(pcm[offset : offset + chunk]):
                self._close_segment(json.loads(recognizer.Result()))
        if last:
            self._close_segment(json.loads(recognizer.FinalResult()))
            text = _join(self._segments)
            self._hearing = hearing_of(text, self._words)
            return text
        return _join([*self._segments, json.loads(recognizer.PartialResult()).get("partial", "")])


    def _close_segment(self, result: dict[str, Any]) -> None:
        self._segments.append(result.get("text", ""))
        for word in result.get("result", []):
            if word.get("word"):
                self._words.append((str(word["word"]), float(word.get("conf", 1.0))))


def hearing_of(text: str, words: list[tuple[str, float]]) -> Hearing:
    """The `Hearing` of a final transcript from its words' confidences."""
    if not text or not words:
        return Hearing()
    masked = masked_alternative(words, WORD_CONFIDENCE_MIN)
    confidence = round(sum(conf for _word, conf in words) / len(words), 3)
    return Hearing(alternatives=unique_alternatives(text, [masked or ""]), confidence=confidence)


def _join(texts: list[str]) -> str:
    return " ".join(text.strip() for text in texts if text.strip())
