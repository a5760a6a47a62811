"""Whisper's answer to `engine.value_check`: how likely the transcript is with the issued value.

Each hypothesis (the transcript with the issued value in place) is decoded *forced*: CTranslate2's
`generate` takes the hypothesis's tokens as the prefix and, with `return_logits_vocab` and greedy
search, returns the model's whole next-token distribution at every forced position. One call
over the hypotheses and the transcript as heard (a batch on the same encoder output) gives both
numbers of a `ValueCheck`:

- `delta`: the hypothesis's log-probability (its tokens summed) minus the transcript's;
- `margin`: at each place of the value, the log-probability of the issued symbol's likeliest first
  token (any of its forms in `value_check.SYMBOLS`, lower, Capitalized, UPPER, or its numeral)
  minus the likeliest first token of any other symbol of its kind; the smallest over the value;
- `lowest`: that issued symbol's own log-probability, the smallest over the value.

Measured on the voice bench's seed 16 (300 readbacks): 84 fields checked; one check (the
transcript and two spellings, with the biasing prompt of ~110 tokens) takes 0.2-0.3 s on one
core. `align` gives the same token probabilities without the distributions and cost 40 ms per
hypothesis without the prompt; scoring every alternative value as its own hypothesis would take
seconds.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.models import ValueCheck
from engine.value_check import SYMBOLS, ValueQuery
from gateway.audio.pcm import pcm_to_float32
from gateway.speech.stt.whisper_windows import fits_window

if TYPE_CHECKING:
    from gateway.speech.stt.whisper import WhisperEngine

MAX_LENGTH = 448  # whisper's context, in tokens


@lru_cache(maxsize=4)
def _symbol_tokens(tokenizer: Any) -> dict[str, dict[str, frozenset[int]]]:
    """kind -> symbol -> the first tokens of its forms (" five", " Five", " FIVE", " 5"...)."""
    table: dict[str, dict[str, frozenset[int]]] = {}
    for cls, symbols in SYMBOLS.items():
        table[cls] = {}
        for symbol, forms in symbols.items():
            firsts = {tokenizer.encode(" " + v)[0] for f in forms for v in (f, f.capitalize(), f.upper())}
            if cls == "digit":
                firsts.add(tokenizer.encode(" " + symbol)[0])
            table[cls][symbol] = frozenset(firsts)
    return table


def _tokens(tokenizer: Any, words: list[str]) -> tuple[list[int], list[int]]:
    """The tokens of `words` (each with its leading space) and where each word's first token is."""
    tokens: list[int] = []
    starts: list[int] = []
    for word in words:
        starts.append(len(tokens))
        tokens.extend(tokenizer.encode(" " + word))
    return tokens, starts


def _log_softmax(logits: Any) -> np.ndarray:
    row = np.asarray(logits, dtype=np.float32)
    top = row.max()
    return np.asarray(row - top - np.log(np.exp(row - top).sum()), dtype=np.float32)


def check_values(engine: WhisperEngine, pcm: bytes, prompt: str | None, query: ValueQuery) -> list[ValueCheck]:
    """One `ValueCheck` per field of `query` (its better spelling by `delta`); none for audio
    past one window. Runs in the calling thread (a CPU pool worker)."""
    import ctranslate2

    samples = pcm_to_float32(pcm)
    if not query.hypotheses or not fits_window(len(samples)):
        return []
    engine.load()
    model = engine.ct2_model()
    tokenizer = engine.tokenizer()
    start = engine.prompt_tokens(prompt)
    features = engine.window_input(samples, start, 0).features
    encoded = np.asarray(model.encode(ctranslate2.StorageView.from_array(features[None]), to_cpu=True))
    written = [_tokens(tokenizer, words) for words in [query.heard, *(h.words for h in query.hypotheses)]]
    results = model.generate(
        ctranslate2.StorageView.from_array(np.ascontiguousarray(np.repeat(encoded, len(written), axis=0))),
        [start + tokens for tokens, _ in written],
        # room for the forced tokens and their end; CTranslate2 counts this length differently
        # with and without a previous-text prompt (measured: twice the tokens without one)
        max_length=min(MAX_LENGTH, len(start) + 2 * (max(len(tokens) for tokens, _ in written) + 2)),
        beam_size=1,
        return_logits_vocab=True,
        suppress_blank=False,
        suppress_tokens=[],
    )
    rows: list[list[np.ndarray]] = []
    for (tokens, _), result in zip(written, results, strict=True):
        if list(result.sequences_ids[0][: len(tokens)]) != tokens or len(result.logits[0]) < len(tokens):
            return []  # not decoded as forced: no answer rather than a wrong one
        rows.append([_log_softmax(logits) for logits in result.logits[0][: len(tokens)]])
    heard_score = _score(written[0][0], rows[0])
    table = _symbol_tokens(tokenizer)
    best: dict[str, ValueCheck] = {}
    for hypothesis, (tokens, starts), lp in zip(query.hypotheses, written[1:], rows[1:], strict=True):
        margins, owns = [], []
        for slot in hypothesis.slots:
            row = lp[starts[slot.word]]
            symbols = table[slot.cls]
            own = max(float(row[t]) for t in symbols[slot.symbol])
            other = max(float(row[t]) for symbol, ids in symbols.items() if symbol != slot.symbol for t in ids)
            margins.append(own - other)
            owns.append(own)
        check = ValueCheck(
            field=hypothesis.field,
            value=hypothesis.value,
            margin=round(min(margins), 3),
            lowest=round(min(owns), 3),
            delta=round(_score(tokens, lp) - heard_score, 3),
        )
        kept = best.get(hypothesis.field)
        if kept is None or check.delta > kept.delta:
            best[hypothesis.field] = check
    return list(best.values())


def _score(tokens: list[int], rows: list[np.ndarray]) -> float:
    return float(sum(row[token] for token, row in zip(tokens, rows, strict=True)))
