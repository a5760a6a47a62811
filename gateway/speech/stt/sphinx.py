"""pocketsphinx STT: true streaming partials from a small language model built per transmission.

The `pocketsphinx` wheel carries a US-English acoustic model and CMUdict. For each transmission we
build an ARPA trigram model (pocketsphinx's own `ArpaBoLM`) from `corpus_sentences(context)`: the
wording of the expected phrases (ICAO and plain digits) biases the search while their values are
sampled uniformly, and every vocabulary and `ICAO_WORDS` word stays recognizable on its own.

How the pieces are shared, and why:

- The decoder is built with a *small* dictionary holding only the words the language models use.
  With the full 135k-word CMUdict, `add_lm` takes about 10 s (it maps every dictionary word);
  with a few hundred words it takes milliseconds. Pronunciations come from CMUdict parsed once per
  process (`Lexicon`), plus the ICAO words CMUdict lacks ("wilco", "juliett", "qnh", ...); an
  unknown compound ("speedbird") is split into known words; other unknown words are left out.
- Decoders are pooled and reused (`DecoderPool`): the Python API cannot share one acoustic model
  between decoders, and a pooled decoder skips the ~0.3 s model load on the next transmission.
- Live cepstral mean normalization (CMN) adapts to the voice and microphone over the first
  second of speech; starting each transmission from the model's default mean loses its first
  words ("climb flight level" -> "when"). So each transmission starts from the mean reached at
  the end of the same `speaker`'s previous one, else from the last transmission's (the same
  room and microphone, most likely). The very first transmission has neither: its partials
  stream as usual, and its final decodes the whole buffer once more from the mean its end
  reached. A pooled decoder's features are reset first, so a result never depends on which
  session used the decoder before.
- pocketsphinx holds the GIL while decoding, so audio is decoded in chunks of at most
  `CHUNK_S` (100 ms, about 10 ms of CPU) to keep the event loop responsive.

Hearing: after the final, `Decoder.seg()` gives each word's posterior probability from the
lattice (0.1 ms). The final's `Hearing` has their mean as `confidence` and, when any word is
under `WORD_CONFIDENCE_MIN`, the transcript with those words masked as "???" as its alternative.
On a synthesized "QNH one zero zero four" (piper, radio level 4) the decoder wrote "one two two
four" with 0.53 on the second "two" (said: "zero"); on "... zero zero five" it had 0.45 on
"fife" and 0.61 on the misheard "two": 0.6 masks the misheard words, while the words heard right
were at 0.7-1.0 except one callsign "fife" at 0.59. `Decoder.nbest()` is not used: its entries
differ by homophones ("two four" / "to for") and its scores are not comparable across lengths.
"""

from __future__ import annotations

import functools
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from engine.hearing import Hearing
from gateway.speech.stt.base import (
    STT_SAMPLE_RATE,
    IncrementalStream,
    SttConfigError,
    SttContext,
    check_partial_every,
    check_sample_rate,
    corpus_sentences,
    masked_alternative,
    unique_alternatives,
)

PARTIAL_EVERY_S = 0.2  # decode (and maybe report a new partial) every 200 ms of new audio
CHUNK_S = 0.1
MAX_DECODER_WORDS = 5000  # a pooled decoder whose dictionary grew past this is dropped
MAX_SPEAKERS = 512  # cepstral means remembered (least recently used dropped first)
SEARCH = "context"
WORD_CONFIDENCE_MIN = 0.6  # a word under this posterior is masked in the final's alternative
# Probability left for word sequences off the expected wording (ArpaBoLM's default); on
# synthesized readbacks 0.15..0.5 gave the same transcripts.
DISCOUNT_MASS = 0.5

# ARPAbet (CMUdict's phone set) for ICAO words CMUdict lacks.
ICAO_PRONUNCIATIONS: dict[str, tuple[str, ...]] = {
    "juliett": ("JH UW L IY EH T",),
    "xray": ("EH K S R EY",),
    "wilco": ("W IH L K OW",),
    "atis": ("EY T IH S", "AE T IH S"),
    "qnh": ("K Y UW EH N EY CH",),
    "qfe": ("K Y UW EH F IY",),
    "ils": ("AY EH L EH S",),
    "vfr": ("V IY EH F AA R",),
    "ifr": ("AY EH F AA R",),
    "vor": ("V IY OW AA R", "V AO R"),
    "dme": ("D IY EH M IY",),
    "ndb": ("EH N D IY B IY",),
    "tcas": ("T IY K AE S",),
}


def model_dir() -> Path:
    """The US-English model directory inside the `pocketsphinx` wheel."""
    try:
        import pocketsphinx
    except ImportError as exc:
        raise SttConfigError("sphinx STT needs pocketsphinx: pip install pocketsphinx") from exc
    return Path(pocketsphinx.get_model_path()) / "en-us"


class Lexicon:
    """Word -> pronunciations, from a CMUdict file plus `ICAO_PRONUNCIATIONS` (read once)."""

    def __init__(self, dict_path: Path) -> None:
        entries: dict[str, list[str]] = {}
        with dict_path.open(encoding="utf-8") as lines:
            for line in lines:
                word, _, phones = line.strip().partition(" ")
                if phones:
                    entries.setdefault(word.split("(", 1)[0], []).append(phones.strip())
        for word, prons in ICAO_PRONUNCIATIONS.items():
            entries.setdefault(word, list(prons))
        self._entries = entries

    def pronunciations(self, word: str) -> list[str]:
        """Pronunciations of `word`; a compound of two known words gets theirs joined; else []."""
        if word in self._entries:
            return self._entries[word]
        for cut in range(2, len(word) - 1):
            head, tail = self._entries.get(word[:cut]), self._entries.get(word[cut:])
            if head and tail:
                return [f"{head[0]} {tail[0]}"]
        return []


@functools.lru_cache(maxsize=4)
def shared_lexicon(dict_path: Path) -> Lexicon:
    """One parsed dictionary per file and process (CMUdict: about 0.2 s and 30 MB)."""
    return Lexicon(dict_path)


class _PooledDecoder:
    """A decoder and the words already in its dictionary."""

    def __init__(self, decoder: Any) -> None:
        self.decoder = decoder
        self.words: set[str] = set()
        self.in_utterance = False


class DecoderPool:
    """Idle pocketsphinx decoders for reuse by the next transmission (thread-safe)."""

    def __init__(self, hmm: Path) -> None:
        self.hmm = hmm
        self._idle: list[_PooledDecoder] = []
        self._lock = threading.Lock()

    def acquire(self) -> _PooledDecoder:
        with self._lock:
            pooled = self._idle.pop() if self._idle else None
        if pooled is None:
            from pocketsphinx import Decoder

            decoder = Decoder(hmm=str(self.hmm), dict=None, lm=None, samprate=STT_SAMPLE_RATE, loglevel="FATAL")
            pooled = _PooledDecoder(decoder)
        if pooled.in_utterance:  # abandoned mid-transmission
            pooled.decoder.end_utt()
            pooled.in_utterance = False
        pooled.decoder.reinit_feat()  # forget the previous user's cepstral mean
        return pooled

    def release(self, pooled: _PooledDecoder) -> None:
        if len(pooled.words) > MAX_DECODER_WORDS:
            return
        with self._lock:
            self._idle.append(pooled)


def arpa_text(sentences: Iterable[list[str]], discount_mass: float | None = None) -> str:
    """An ARPA back-off trigram model of `sentences` (with <s> and </s>), as text."""
    import io

    from pocketsphinx.lm import ArpaBoLM

    text = "\n".join(" ".join(words) for words in sentences)
    model = ArpaBoLM(text=text, add_start=True, discount_mass=discount_mass or DISCOUNT_MASS)
    model.compute()
    out = io.StringIO()
    model.write(out)
    return out.getvalue()


class SphinxEngine:
    """pocketsphinx with the wheel's US-English model; partials every `partial_every_s` of audio."""

    name = "sphinx"
    streaming = True

    def __init__(self, *, partial_every_s: float = PARTIAL_EVERY_S, model_path: str | Path | None = None) -> None:
        check_partial_every(partial_every_s)
        root = Path(model_path) if model_path else model_dir()
        self.hmm = root / "en-us"
        self.dict_path = root / "cmudict-en-us.dict"
        for needed in (self.hmm / "mdef", self.dict_path):
            if not needed.exists():
                raise SttConfigError(f"pocketsphinx model is incomplete: {needed} does not exist")
        self.partial_every_s = partial_every_s
        self._lexicon: Lexicon | None = None
        self._pool = DecoderPool(self.hmm)
        self._load_lock = threading.Lock()
        self._cmn: OrderedDict[str | None, str] = OrderedDict()  # speaker (None: anyone) -> mean
        self._cmn_lock = threading.Lock()

    def load(self) -> None:
        with self._load_lock:
            if self._lexicon is None:
                self._lexicon = shared_lexicon(self.dict_path)
                self._pool.release(self._pool.acquire())  # the acoustic model, loaded once now

    @property
    def lexicon(self) -> Lexicon:
        self.load()
        assert self._lexicon is not None
        return self._lexicon

    def open(self, context: SttContext) -> SphinxStream:
        check_sample_rate(context, "pocketsphinx en-us")
        return SphinxStream(self, context)

    def prepare(self, context: SttContext) -> tuple[_PooledDecoder, list[str], bool]:
        """A decoder searching `context`'s language model, in an utterance; the words left out;
        and whether it starts from an adapted cepstral mean."""
        lexicon = self.lexicon
        known: list[list[str]] = []
        unknown: list[str] = []
        pooled = self._pool.acquire()
        try:
            for sentence in corpus_sentences(context):
                kept = []
                for word in sentence:
                    prons = lexicon.pronunciations(word)
                    if not prons:
                        unknown.append(word)
                        continue
                    if word not in pooled.words:
                        for n, phones in enumerate(prons, start=1):
                            pooled.decoder.add_word(word if n == 1 else f"{word}({n})", phones, False)
                        pooled.words.add(word)
                    kept.append(word)
                if kept:
                    known.append(kept)
            self._set_language_model(pooled.decoder, arpa_text(known))
            cmn = self.cepstral_mean(context.speaker)
            if cmn is not None:
                pooled.decoder.set_cmn(cmn)
            pooled.decoder.start_utt()
            pooled.in_utterance = True
        except BaseException:
            self._pool.release(pooled)
            raise
        return pooled, sorted(set(unknown)), cmn is not None

    @staticmethod
    def _set_language_model(decoder: Any, arpa: str) -> None:
        from pocketsphinx import NGramModel

        fd, path = tempfile.mkstemp(suffix=".arpa", prefix="livefreq-")  # NGramModel reads files only
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(arpa)
            decoder.add_lm(SEARCH, NGramModel(decoder.config, decoder.logmath, path))
        finally:
            os.unlink(path)
        decoder.activate_search(SEARCH)

    def cepstral_mean(self, speaker: str | None) -> str | None:
        """The mean to start `speaker`'s next transmission from (see the module docstring)."""
        with self._cmn_lock:
            for key in (speaker, None):
                if key in self._cmn:
                    self._cmn.move_to_end(key)
                    return self._cmn[key]
        return None

    def finish(self, pooled: _PooledDecoder, speaker: str | None) -> None:
        """Remember the mean a finished transmission reached, and pool its decoder."""
        cmn = pooled.decoder.get_cmn(True)
        with self._cmn_lock:
            for key in {speaker, None}:
                self._cmn[key] = cmn
                self._cmn.move_to_end(key)
            while len(self._cmn) > MAX_SPEAKERS:
                self._cmn.popitem(last=False)
        self._pool.release(pooled)

    def release(self, pooled: _PooledDecoder) -> None:
        self._pool.release(pooled)

    def __repr__(self) -> str:
        return f"SphinxEngine(hmm={str(self.hmm)!r}, partial_every_s={self.partial_every_s})"


class SphinxStream(IncrementalStream):
    """A transmission decoded incrementally: each `partial()` decodes only the new audio."""

    def __init__(self, engine: SphinxEngine, context: SttContext) -> None:
        super().__init__(engine, context)
        self.engine = engine
        self.unknown_words: list[str] = []  # words of the context the decoder cannot recognize
        self._pooled: _PooledDecoder | None = None
        self._adapted = False  # started from a cepstral mean learned on earlier speech

    def _final_args(self) -> tuple[object, ...]:
        return (bytes(self._pcm),)  # the `whole` buffer, for a final from the adapted mean

    def _release(self) -> None:
        if self._pooled is not None:  # None after a final: its last `_step` gave the decoder back
            self.engine.release(self._pooled)  # the pool ends its utterance on next use
            self._pooled = None

    def _step(self, pcm: bytes, last: bool, whole: bytes = b"") -> str:
        """Decode `pcm` (in the pool); end the utterance and give the decoder back when `last`.

        A transmission that started from the model's default cepstral mean (the first one in
        this process) lost its first words to it; its final decodes the `whole` buffer again
        from the mean reached at its end, once.
        """
        if self._pooled is None:
            self._pooled, self.unknown_words, self._adapted = self.engine.prepare(self.context)
        decoder = self._pooled.decoder
        self._process(decoder, pcm)
        if last:
            decoder.end_utt()
            if not self._adapted and whole:
                adapted = decoder.get_cmn(True)
                decoder.reinit_feat()
                decoder.set_cmn(adapted)
                decoder.start_utt()
                self._process(decoder, whole)
                decoder.end_utt()
            self._pooled.in_utterance = False
        hypothesis = decoder.hyp()
        text = hypothesis.hypstr.strip() if hypothesis is not None else ""
        if last:
            self._hearing = hearing_of(text, decoder) if text else Hearing()
            self.engine.finish(self._pooled, self.context.speaker)
            self._pooled = None
        return text

    def _process(self, decoder: Any, pcm: bytes) -> None:
        chunk = self._bytes_for(CHUNK_S)
        for offset in range(0, len(pcm), chunk):
            decoder.process_raw(pcm[offset : offset + chunk], False, False)


def hearing_of(text: str, decoder: Any) -> Hearing:
    """The `Hearing` of a final transcript from the word posteriors of the decoder's last utterance."""
    words: list[tuple[str, float]] = []
    for segment in decoder.seg():
        word = segment.word.split("(", 1)[0]
        if word and word[0] not in "<[+":  # <s>, </s>, <sil>, [NOISE], +filler+
            words.append((word, float(segment.prob)))
    if not words:
        return Hearing()
    masked = masked_alternative(words, WORD_CONFIDENCE_MIN)
    confidence = round(sum(conf for _word, conf in words) / len(words), 3)
    return Hearing(alternatives=unique_alternatives(text, [masked or ""]), confidence=confidence)
