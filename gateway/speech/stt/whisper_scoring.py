"""Whisper's answer to `engine.value_query`'s question: how likely the transcript is with the issued value.

Each hypothesis (the transcript with the issued value in place) is decoded *forced*: CTranslate2's
`generate` takes the hypothesis's tokens as the prefix and, with `return_logits_vocab` and greedy
search, returns the model's whole next-token distribution at every forced position. One call
over the hypotheses and the transcript as heard (a batch on the same encoder output) gives both
numbers of a `ValueCheck`:

- `delta`: the hypothesis's log-probability (its tokens summed) minus the transcript's;
- `margin`: at each place of the value, the log-probability of the issued symbol's likeliest first
  token (any of its forms in `value_words.SYMBOLS`, lower, Capitalized, UPPER, or its numeral)
  minus the likeliest first token of any other symbol of its kind; the smallest over the value;
- `lowest`: that issued symbol's own log-probability, the smallest over the value.

First tokens can tie: " fife" and " fower" both start with " f", " niner" starts with the " n"
of any n-word. Where a place's first-token margin falls short of `value_check.MARGIN`, the
symbols that came within it are scored as whole words (`_whole_words`: one more forced batch,
each form of them written after the same words), and the place's margin is the issued symbol's
likeliest whole form against theirs. A first token bounds every word it starts, so this only
tells apart what the first tokens could not; it never makes another symbol less likely than
its whole word is.

A field no check passes at is heard again at other tempos (`TEMPOS`: the recording resampled as
a tape played slower or faster, pitch with it), each a new encoding and the same forced batch.
tiny.en's doubt about a digit in a voice it hears badly is partly about those very frames: on the
recorded say-again readbacks of seeds 15 and 16 (187 right fields, 117 changed or dropped), the
recording alone confirmed 50 right fields, any of four tempos 83; of 2,330 checks of changed or
dropped values at ten tempos none passed, the nearest 1.7 nats short. A value confirmed at one
tempo is confirmed, as a controller who plays the tape again believes what he then hears. The
held-out bench then found two that did pass, which the engine's rules now refuse: a prefix of
what was said (118.100 for "decimal one five": the digit after a value, `_end_margin`) and a
one-symbol value on a misheard word (5000 on "five" for "fly": twice the margin). A third, on
seed 35 ("one niner" written "one, I not", 18 confirmed at 0.83x), is why a check at another
tempo needs the stricter `value_check.TEMPO_SLACK`.

Measured on the voice bench's seed 16 (300 readbacks): 84 fields checked; one check (the
transcript and two spellings, with the biasing prompt of ~110 tokens) took 0.2-0.3 s on one
core; with whole words and the appended hypothesis, 0.37 s of CPU at the median of 60 queries
(0.26 s before them; p90 0.68 s), each further tempo about as much again. `align` gives the
same token probabilities without the distributions and cost 40 ms per hypothesis without the
prompt; scoring every alternative value as its own hypothesis would take seconds.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.hearing import ValueCheck
from engine.phraseology.transcript import normalize_transcript
from engine.value_check import FLOOR, MARGIN, margin_needed, passes
from engine.value_query import Hypothesis, ValueQuery
from engine.value_rivals import CITY_TEMPOS, RIVAL_SLACK
from engine.value_words import SYMBOLS
from gateway.audio.pcm import pcm_to_float32
from gateway.audio.resample import SPEECH_RATE, resample
from gateway.speech.stt.whisper_windows import fits_window

if TYPE_CHECKING:
    from gateway.speech.stt.whisper import WhisperEngine

MAX_LENGTH = 448  # whisper's context, in tokens
RIVALS = (
    3  # at a place, the other symbols scored as whole words (the likeliest first tokens); the rest keep their bound
)
# The tempos the audio is heard at, in turn, while a field's checks all fall short: as recorded,
# then slower, faster, a little faster (resampled: a tape played at another speed, pitch with it)
TEMPOS = (1.0, 1 / 1.2, 1.25, 1 / 0.9)
REACH_NATS = 6.0  # what the words after a city may gain its rival over the name as written (`_within_reach`)
PROPOSALS = 3  # at a city's place, whisper's own likeliest other names tried as rivals too (`_proposed`)
PROPOSAL_TOKENS = 6  # a proposed name's tokens at most


@lru_cache(maxsize=4)
def _symbol_forms(tokenizer: Any) -> dict[str, dict[str, tuple[tuple[int, ...], ...]]]:
    """kind -> symbol -> the tokens of each of its forms (" five", " Five", " FIVE", " 5"...)."""
    table: dict[str, dict[str, tuple[tuple[int, ...], ...]]] = {}
    for cls, symbols in SYMBOLS.items():
        table[cls] = {}
        for symbol, forms in symbols.items():
            written = {t for f in forms for v in (f, f.capitalize(), f.upper()) for t in _spelt(tokenizer, v)}
            if cls == "digit":
                written.add(tuple(tokenizer.encode(" " + symbol)))
            table[cls][symbol] = tuple(sorted(written))
    return table


def _spelt(tokenizer: Any, word: str) -> set[tuple[int, ...]]:
    """The tokens whisper may write `word` in: the tokenizer's own (" fo" "xt" "rot") and each
    split after a first token of three letters or more (" fox" "trot"), which whisper writes as
    often: scored by the tokenizer's alone, a "foxtrot" whisper had written scored -4.6 nats."""
    out = {tuple(tokenizer.encode(" " + word))}
    for cut in range(3, len(word)):
        head = tokenizer.encode(" " + word[:cut])
        if len(head) == 1:
            out.add((head[0], *tokenizer.encode(word[cut:])))
    return out


@lru_cache(maxsize=4)
def _symbol_tokens(tokenizer: Any) -> dict[str, dict[str, frozenset[int]]]:
    """kind -> symbol -> the first tokens of its forms."""
    forms = _symbol_forms(tokenizer)
    return {cls: {symbol: frozenset(f[0] for f in fs) for symbol, fs in table.items()} for cls, table in forms.items()}


@lru_cache(maxsize=4)
def _end_tokens(tokenizer: Any) -> tuple[int, ...]:
    """The tokens that are a digit's plain word or numeral by themselves (" five", " Five", " 5"):
    one of them right after a value means the pilot said more of it ("decimal one five" for
    118.100). Homophones (" to", " for") begin other words too, and are left out."""
    words = [w for symbol, forms in SYMBOLS["digit"].items() for w in (forms[0], symbol)]
    written = {tuple(tokenizer.encode(" " + v)) for w in words for v in (w, w.capitalize(), w.upper())}
    return tuple(sorted(t[0] for t in written if len(t) == 1))


def _end_margin(row: np.ndarray, digits: tuple[int, ...]) -> float:
    """How much likelier it is that no digit follows (1 minus their probability) than the
    likeliest digit that would (nats)."""
    return _no_digit(row, digits) - float(row[list(digits)].max())


def _no_digit(row: np.ndarray, digits: tuple[int, ...]) -> float:
    """The log-probability that no digit is the next word (`row`: whisper's next-token log-probabilities)."""
    return float(np.log1p(-min(float(np.exp(row[list(digits)]).sum()), 1.0 - 1e-9)))


def _no_digit_after(rows: list[np.ndarray], at: int, digits: tuple[int, ...]) -> float:
    """`_no_digit` after the forced tokens (`at` of them), where whisper gave a row after them; 0
    where it did not."""
    return _no_digit(rows[at], digits) if at < len(rows) else 0.0


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


def check_values(
    engine: WhisperEngine,
    pcm: bytes,
    prompt: str | None,
    query: ValueQuery,
    until: float | None = None,
    rival_prompt: str | None = None,
) -> list[ValueCheck]:
    """The `ValueCheck`s of `query`'s fields: per field and placement (in place, appended) its
    better spelling by `delta`, heard at each tempo of `TEMPOS` in turn while a field has no
    check that passes (`value_check.passes`, at the margin the engine will ask of its value), and
    a frequency's rival (`Hypothesis.rival`, against its own words) at every tempo, a city's
    (`Hypothesis.unprompted`) at the first (`CITY_TEMPOS`);
    none for audio past one window. `until` (`time.monotonic()`): no further tempo is started
    that would end after it, by how long the first took. Runs in the calling thread (a CPU pool
    worker). A hypothesis `unprompted` (a city rival) is scored, with its `against`, after
    `rival_prompt` (every city named alike, `whisper_prompt.rival_prompt`) instead."""
    checks: list[ValueCheck] = []
    started = time.monotonic()
    for tempos_heard, tempo in enumerate(TEMPOS):
        # a frequency's rival (engine/value_rivals.py) is heard at every tempo: it speaks against
        # the value; a city's only as recorded (`CITY_TEMPOS`)
        asked = [
            h
            for h in query.hypotheses
            if (h.rival and (not h.unprompted or tempos_heard < CITY_TEMPOS))
            or (not h.rival and not any(c.field == h.field and not c.rival and passes(c, _needs(h, c)) for c in checks))
        ]
        now = time.monotonic()
        per_tempo = (now - started) / tempos_heard if tempos_heard else 0.0
        if not asked or (tempos_heard and until is not None and now + per_tempo > until):
            break
        view = pcm if tempo == 1.0 else resample(pcm, round(SPEECH_RATE * tempo), SPEECH_RATE)
        checks += _check_view(engine, view, prompt, query.model_copy(update={"hypotheses": asked}), tempo, rival_prompt)
    return checks


def _needs(hypothesis: Hypothesis, check: ValueCheck) -> float:
    """The margin the engine will ask of `check`, of `hypothesis`'s value (`value_check.margin_needed`)."""
    return margin_needed("".join(slot.symbol for slot in hypothesis.slots), check)


def _check_view(
    engine: WhisperEngine,
    pcm: bytes,
    prompt: str | None,
    query: ValueQuery,
    tempo: float,
    rival_prompt: str | None = None,
) -> list[ValueCheck]:
    """`check_values` on one view of the audio (`pcm` played at `tempo`)."""
    import ctranslate2

    samples = pcm_to_float32(pcm)
    if not query.hypotheses or not fits_window(len(samples)):
        return []
    engine.load()
    model = engine.ct2_model()
    tokenizer = engine.tokenizer()
    start = engine.prompt_tokens(prompt)
    rival_start = engine.prompt_tokens(rival_prompt) if rival_prompt is not None else start
    features = engine.window_input(samples, start, 0).features  # the audio's: the same for any prompt
    encoded = np.asarray(model.encode(ctranslate2.StorageView.from_array(features[None]), to_cpu=True))
    # whether each start carries a previous-text prompt: CTranslate2 counts lengths after it otherwise
    previous, rival_previous = (first[0] == tokenizer.sot_prev for first in (start, rival_start))
    query, decoded = _within_reach(model, encoded, rival_start, tokenizer, query, rival_previous)
    # a rival is scored against its own words (`Hypothesis.against`), forced after the hypotheses,
    # each such words once (every city rival of a limit weighs against the transcript as written)
    againsts = list(dict.fromkeys((tuple(h.against), h.unprompted) for h in query.hypotheses if h.against))
    sequences = [(query.heard, False), *((h.words, h.unprompted) for h in query.hypotheses), *againsts]
    written = [_tokens(tokenizer, list(words)) for words, _ in sequences]
    results: list[Any] = [None] * len(written)
    n = len(query.hypotheses)
    for i, key in enumerate(againsts, start=1 + n):
        results[i] = decoded.get(key)  # decoded already to choose the city rivals within reach
    # the transcript as heard is scored where a hypothesis weighs against it (not a rival's)
    heard_needed = any(not h.against for h in query.hypotheses)
    # CTranslate2 decodes one batch after one prompt length: the city rivals' is a batch of its own
    for first, unprompted, after_text in ((start, False, previous), (rival_start, True, rival_previous)):
        batch = [
            i for i, (_, u) in enumerate(sequences) if u == unprompted and results[i] is None and (i or heard_needed)
        ]
        forced = _forced(model, encoded, first, [written[i][0] for i in batch], after_text)
        for i, result in zip(batch, forced, strict=True):
            results[i] = result
    rows: list[list[np.ndarray]] = []
    for (tokens, _), result in zip(written, results, strict=True):
        if result is None:  # the transcript as heard, not needed
            rows.append([])
            continue
        if list(result.sequences_ids[0][: len(tokens)]) != tokens or len(result.logits[0]) < len(tokens):
            return []  # not decoded as forced: no answer rather than a wrong one
        # one row more where there is one: what whisper would write after the last forced word
        rows.append([_log_softmax(logits) for logits in result.logits[0][: len(tokens) + 1]])
    heard_score = _score(written[0][0], rows[0]) if heard_needed else 0.0
    digits = _end_tokens(tokenizer)
    # a rival and its value said once each end with no further digit: at the end of the transcript
    # the rival's extra digit is otherwise weighed against nothing (seed 103: "decimal one" last)
    against_scores = {
        key: _score(tokens, lp) + _no_digit_after(lp, len(tokens), digits)
        for key, (tokens, _), lp in zip(againsts, written[1 + n :], rows[1 + n :], strict=True)
    }
    bases = [against_scores[(tuple(h.against), h.unprompted)] if h.against else heard_score for h in query.hypotheses]
    written, rows = written[: 1 + n], rows[: 1 + n]
    table = _symbol_tokens(tokenizer)
    places: list[list[_Place]] = []
    for hypothesis, (tokens, starts), lp in zip(query.hypotheses, written[1:], rows[1:], strict=True):
        places.append(
            [
                _Place(slot.cls, slot.symbol, tokens[: starts[slot.word]], lp[starts[slot.word]], table)
                for slot in hypothesis.slots
            ]
        )
    # the places whose first tokens left the margin short; one under the floor fails anyway
    short = [p for ps in places for p in ps if p.margin < MARGIN and p.own >= FLOOR]
    _whole_words(model, encoded, start, previous, short, _symbol_forms(tokenizer))
    best: dict[tuple[str, bool, bool], ValueCheck] = {}
    for hypothesis, (tokens, starts), lp, slots, base in zip(
        query.hypotheses, written[1:], rows[1:], places, bases, strict=True
    ):
        score = _score(tokens, lp) + (_no_digit_after(lp, len(tokens), digits) if hypothesis.against else 0.0)
        margins = [p.margin for p in slots]
        if hypothesis.end is not None:  # and no further digit said after the value
            at = starts[hypothesis.end] if hypothesis.end < len(starts) else len(tokens)
            margins.append(_end_margin(lp[at], digits) if at < len(lp) else -np.inf)
        check = ValueCheck(
            field=hypothesis.field,
            value=hypothesis.value,
            # a city rival has no symbol places: its delta alone speaks (engine/value_rivals.py)
            margin=round(max(min(margins, default=0.0), -99.0), 3),
            lowest=round(min((p.own for p in slots), default=0.0), 3),
            delta=round(score - base, 3),
            appended=hypothesis.appended,
            tempo=tempo,
            rival=hypothesis.rival,
            place=None if hypothesis.appended else hypothesis.place,
        )
        kind = (hypothesis.field, hypothesis.appended, hypothesis.rival)
        kept = best.get(kind)
        if kept is None or check.delta > kept.delta:
            best[kind] = check
    return list(best.values())


def _forced(model: Any, encoded: np.ndarray, first: list[int], sequences: list[list[int]], previous: bool) -> list[Any]:
    """CTranslate2's results of `sequences` forced after `first` (a prompt's start; `previous`:
    with a previous-text prompt), with the distribution at every token and one past the longest
    (none asked: none)."""
    import ctranslate2

    if not sequences:
        return []
    return list(
        model.generate(
            ctranslate2.StorageView.from_array(np.ascontiguousarray(np.repeat(encoded, len(sequences), axis=0))),
            [first + tokens for tokens in sequences],
            max_length=_max_length(first, max(len(tokens) for tokens in sequences) + 1, previous),
            beam_size=1,
            return_logits_vocab=True,
            suppress_blank=False,
            suppress_tokens=[],
        )
    )


def _max_length(first: list[int], outputs: int, previous: bool) -> int:
    """CTranslate2's `max_length` for `outputs` tokens (the forced ones among them) after `first`.
    Measured on 4.8.5 with tiny.en and base (docs/performance.md, stop 58): after a
    previous-text prompt it counts the start and then each output once; without one, each output
    after the first twice (base then gives one more). A longer limit decodes on, greedily, past
    what is read: a proposed city's completion ran to the end of the transcript, 13 tokens past
    the 6 read."""
    return min(MAX_LENGTH, len(first) + (outputs - 1) * (1 if previous else 2))


def _within_reach(
    model: Any, encoded: np.ndarray, start: list[int], tokenizer: Any, query: ValueQuery, previous: bool
) -> tuple[ValueQuery, dict[tuple[tuple[str, ...], bool], Any]]:
    """`query` with only the city rivals (`Hypothesis.unprompted`) that could come within
    `RIVAL_SLACK` of the transcript as written: a rival's first token where the written name
    starts, against every token of the written name, plus `REACH_NATS` for the words after it
    (the rest of a rival's name can only lose), read from one decode of the transcript as written.
    The likeliest of each field is always kept: each tempo has its rival check. A 9 s clearance
    readback took 3.3 s a tempo scoring all twenty on a busy 2-core host; scoring those within
    reach 0.5 s there, 0.25 s idle (docs/performance.md, stop 54). Also returns those decodes, by
    `against` (the transcript as written is not decoded twice)."""
    cities = [h for h in query.hypotheses if h.unprompted]
    decoded: dict[tuple[tuple[str, ...], bool], Any] = {}
    if not cities:
        return query, decoded
    kept: set[int] = set()
    proposed: list[Hypothesis] = []
    for against in dict.fromkeys(tuple(h.against) for h in cities):
        group = [h for h in cities if tuple(h.against) == against]
        tokens, starts = _tokens(tokenizer, list(against))
        (result,) = _forced(model, encoded, start, [tokens], previous)
        decoded[(against, True)] = result
        name_start, name_end = group[0].place
        at, end = starts[name_start], starts[name_end] if name_end < len(starts) else len(tokens)
        if list(result.sequences_ids[0][: len(tokens)]) != tokens or len(result.logits[0]) < end:
            kept.update(id(h) for h in group)  # not decoded as forced: every rival is scored
            continue
        rows = [_log_softmax(logits) for logits in result.logits[0][at:end]]
        written = sum(float(row[token]) for row, token in zip(rows, tokens[at:end], strict=True))
        first = {id(h): tokenizer.encode(" " + h.words[name_start])[0] for h in group}  # each rival's first token
        reach = {id(h): float(rows[0][first[id(h)]]) - written + REACH_NATS for h in group}
        top = max(group, key=lambda h: reach[id(h)])
        kept.update(id(h) for h in group if h is top or reach[id(h)] >= -RIVAL_SLACK)
        firsts = {tokens[at], *first.values()}
        proposed += _proposed(model, encoded, start, previous, tokenizer, group, tokens[:at], rows[0], written, firsts)
    kept_query = query.model_copy(
        update={"hypotheses": [h for h in query.hypotheses if not h.unprompted or id(h) in kept] + proposed}
    )
    return kept_query, decoded


def _proposed(
    model: Any,
    encoded: np.ndarray,
    start: list[int],
    previous: bool,
    tokenizer: Any,
    group: list[Hypothesis],
    before: list[int],
    row: np.ndarray,
    written: float,
    firsts: set[int],
) -> list[Hypothesis]:
    """The names whisper itself would write at a city's place, under the prompt naming every listed
    city alike, as rivals like `group`'s (the listed cities' at one place): a city said that no list
    names is a rival too. `LIMIT_RIVALS` holds the scenarios' destinations only, and under the
    radio's prompt whisper wrote the issued "Berlin" for "Bremen"; there its own likeliest first
    token was " Bre" (-0.7 nats) and " Berlin" not among its first eight. Of the first tokens
    (`row`) that could reach the name as written (`written`, as `_within_reach`), the `PROPOSALS`
    likeliest that start a capitalized word and no listed name (`firsts`) are each completed by
    one greedy decode; a completion that is a word of letters is scored in place like a listed
    rival. They can only ask again: a rival said is doubt, never a value."""
    import ctranslate2

    chosen: list[int] = []
    for token in np.argsort(row)[::-1][:64]:
        if float(row[token]) - written + REACH_NATS < -RIVAL_SLACK or len(chosen) == PROPOSALS:
            break
        text = tokenizer.decode([int(token)])
        if int(token) not in firsts and text.startswith(" ") and text[1:2].isupper() and text[1:].isalpha():
            chosen.append(int(token))
    if not chosen:
        return []
    prefixes = [start + before + [token] for token in chosen]
    results = model.generate(
        ctranslate2.StorageView.from_array(np.ascontiguousarray(np.repeat(encoded, len(prefixes), axis=0))),
        prefixes,
        max_length=_max_length(start, len(before) + 1 + PROPOSAL_TOKENS, previous),
        beam_size=1,
    )
    listed = group[0]
    name_start, name_end = listed.place
    # the name as written and every listed one, as the engine reads names (lower case, accents
    # dropped: a proposed "Düsseldorf" is the written "Dusseldorf"): a proposal is another name
    written_name = " ".join(listed.against[name_start:name_end])
    known = {normalize_transcript(name) for name in (written_name, *(h.value for h in group))}
    out: list[Hypothesis] = []
    for token, result in zip(chosen, results, strict=True):
        ids = [token]
        for nxt in result.sequences_ids[0][len(before) + 1 : len(before) + 1 + PROPOSAL_TOKENS]:
            piece = tokenizer.decode([nxt])
            if not piece.isalpha():  # a space, a comma or the end: the word is whole
                break
            ids.append(nxt)
        name = tokenizer.decode(ids).strip()
        plain = normalize_transcript(name)
        if name.isalpha() and plain not in known:
            known.add(plain)
            words = [*listed.against[:name_start], name, *listed.against[name_end:]]  # as written but the name
            out.append(listed.model_copy(update={"value": name, "words": words}))
    return out


class _Place:
    """One place of a value in a hypothesis: the words before it, the next-token distribution
    there, and each symbol's score (its likeliest first token, until `_whole_words` refines it)."""

    def __init__(
        self, cls: str, symbol: str, before: list[int], row: np.ndarray, table: dict[str, dict[str, frozenset[int]]]
    ) -> None:
        self.cls, self.symbol, self.before, self.row = cls, symbol, before, row
        self.scores = {s: max(float(row[t]) for t in ids) for s, ids in table[cls].items()}
        self.own = self.scores[symbol]  # first token: the `lowest` the engine floors

    @property
    def margin(self) -> float:
        return self.scores[self.symbol] - max(v for s, v in self.scores.items() if s != self.symbol)


def _whole_words(
    model: Any,
    encoded: np.ndarray,
    start: list[int],
    previous: bool,
    short: list[_Place],
    forms: dict[str, dict[str, tuple[tuple[int, ...], ...]]],
) -> None:
    """Score as whole words, in one forced batch, the symbols that came within `MARGIN` of the
    issued one at each place of `short` (the issued one too), and update the places' scores."""
    asks: list[tuple[_Place, str, tuple[int, ...]]] = []
    for place in short:
        own = place.scores[place.symbol]
        rivals = sorted(
            (s for s, v in place.scores.items() if v > own - MARGIN and s != place.symbol), key=place.scores.__getitem__
        )
        for symbol in [place.symbol, *rivals[-RIVALS:]]:
            whole = [float(place.row[f[0]]) for f in forms[place.cls][symbol] if len(f) == 1]
            longer = [f for f in forms[place.cls][symbol] if len(f) > 1]
            # a longer form is decoded where its first token could change the margin; the rest
            # count at their bound for a rival and not at all for the issued symbol (both cautious)
            pending = [f for f in longer if place.row[f[0]] > max([*whole, own - 2 * MARGIN])]
            bounds = [float(place.row[f[0]]) for f in longer if f not in pending and symbol != place.symbol]
            place.scores[symbol] = max([*whole, *bounds], default=-np.inf)
            asks.extend((place, symbol, f) for f in pending)
    if not asks:
        return
    results = _forced(model, encoded, start, [place.before + list(form) for place, _, form in asks], previous)
    for (place, symbol, form), result in zip(asks, results, strict=True):
        at = len(place.before)
        logits = result.logits[0]
        if len(logits) < at + len(form):  # not decoded as forced: a rival keeps its bound
            if symbol != place.symbol:
                place.scores[symbol] = max(place.scores[symbol], float(place.row[form[0]]))
            continue
        score = sum(float(_log_softmax(logits[at + k])[token]) for k, token in enumerate(form))
        place.scores[symbol] = max(place.scores[symbol], score)


def _score(tokens: list[int], rows: list[np.ndarray]) -> float:
    return float(sum(row[token] for token, row in zip(tokens, rows[: len(tokens)], strict=True)))
