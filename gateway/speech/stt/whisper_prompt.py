"""Whisper's biasing prompt: the wording the state expects, never the values a readback is judged on.

Whisper reads a prompt as the text said before the audio, and writes what fits it: the prompt can
teach the radio's spelling ("tree", "fife", "niner", a fix name), and it can turn a wrong value
into the right one. `build_prompt` says how it does one and never the other.
"""

from __future__ import annotations

from dataclasses import replace

from engine.phraseology import speak_text
from gateway.speech.stt.base import VALUE_CLASSES, NameChoice, SttContext, words_of

PROMPT_MAX_WORDS = 100  # whisper keeps at most 223 prompt tokens; short prompts bias less blindly

# The prompt's value sentences: every ICAO digit, phonetic letter, side and vertical direction once,
# so the prompt teaches their spelling ("tree", "fife", "niner", "foxtrot") without favouring any value.
DIGITS_SENTENCE = (
    "Digits zero one two tree four fife six seven eight niner. Letters alfa bravo charlie delta echo foxtrot golf "
    "hotel india juliett kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey "
    "xray yankee zulu. Climb or descend, left or right or center."
)


def _wording(words: list[str]) -> list[str]:
    """The words of a phrase without its values (digits, runway sides, phonetic letters, single
    letters, climb/descend), in any case: the same for any value the controller issued. A
    capitalized "Foxtrot" once stayed in the prompt ("... holding point Foxtrot, Jetblue" for
    F11) and whisper wrote "Foxtrot one one" for a spoken "alfa one one": a wrong holding point
    accepted (`livefreq bench readback --mode voice --seed 7`, the bias's only flip in 7 seeds)."""
    return [w for w in words if not _is_value_word(w.lower())]


def _is_value_word(word: str) -> bool:
    return (len(word) == 1 and word.isalpha()) or any(word in members for members in VALUE_CLASSES)


def _issued_name(word: str, context: SttContext) -> bool:
    """Whether `word` ("CHARL,") is a word of an issued name (`SttContext.issued_names`)."""
    return any(w in context.issued_names for w in words_of(word))


def _named_alike(words: list[str], context: SttContext) -> list[str]:
    """`words` with the issued names out, and where each first stood every name that could have
    been issued, joined by "or" ("via CHARL or COLEM or GEDER departure"): the phrase keeps its
    shape and favours none. A list sentence of them ("Names CHARL, COLEM, ...") made whisper
    continue the list over the readback ("RANOS, TELOS, GEDER, GEDER, TELOS")."""
    out: list[str] = []
    offered: set[int] = set()
    for word in words:
        said = set(words_of(word))
        at = next((i for i, choice in enumerate(context.names) if said & choice.issued), None)
        if at is None:
            out.append(word)
        elif at not in offered:
            offered.add(at)
            out.extend(" or ".join(context.names[at].choices).split())
    return out


def build_prompt(context: SttContext, max_words: int = PROMPT_MAX_WORDS) -> str | None:
    """The biasing prompt: the wording of the expected phrases, never their values.

    A prompt holding the expected readback ("... runway one eight") once made whisper write "one
    eight" for a spoken "one seven" (`livefreq bench readback --mode voice --bias both`: 1 wrong
    readback of 103 accepted with the values in the prompt, 0 without): the prompt now carries
    the phrases with every value word left out (`_wording`), the ICAO digits, letters, sides and
    climb/descend once each (`DIGITS_SENTENCE`), our own callsign whole (who talks, not a value;
    left out beside nearby traffic it could be taken for, `engine.identity.confusable`),
    and vocabulary words the phrases lack, so it is the same whatever value was issued and cannot
    turn a wrong value into the right one. Names a readback is judged on are values too: the
    issued ones leave the phrases, and every one that could have been issued there is named alike
    (`SttContext.names`: "via CHARL or COLEM or GEDER departure", `_named_alike`). Sentences, not a bare word list:
    a prompt ending in "left, right" makes whisper continue the list over noisy audio. The whole
    prompt stops at `max_words`.
    """
    parts: list[str] = [DIGITS_SENTENCE]
    used: set[str] = set(words_of(DIGITS_SENTENCE))
    budget = max_words - len(DIGITS_SENTENCE.split())
    own = speak_text(context.callsign).strip(" .") if context.callsign else ""
    if own:  # our callsign whole: it says who talks, it is no value a readback is judged on
        parts.append(own + ".")
        used.update(words_of(own))
        budget -= len(own.split())
    for phrase in context.spoken_phrases():
        words = _named_alike(_wording(phrase.replace(",", " ,").split()), context)
        text = " ".join(words).replace(" ,", ",").strip(" ,.")
        text = ", ".join(p.strip() for p in text.split(",") if p.strip())
        if not text or len(text.split()) > budget:
            continue
        parts.append(text + ".")
        used.update(words_of(text))
        budget -= len(text.split())
    extra: list[str] = []
    for item in context.spoken_vocabulary():
        item_words = [
            w
            for w in item.replace(",", " ").split()
            if _wording(words_of(w)) and not set(words_of(w)) <= used and not _issued_name(w, context)
        ]
        if not item_words or len(item_words) > budget:
            continue
        extra.append(" ".join(item_words))
        used.update(w for word in item_words for w in words_of(word))
        budget -= len(item_words)
    if extra:
        parts.append(", ".join(extra) + ".")
    return " ".join(parts) or None


def unprompted(context: SttContext) -> SttContext:
    """`context` with the places its prompt names alone (`SttContext.told`, the clearance limit's
    city) as issued names offered among none (`NameChoice`, `_named_alike`): they leave the
    phrases and the vocabulary. The prompt a city rival is scored under (engine/value_rivals.py):
    under the prompt naming Dusseldorf, seed 119's spoken "to Oslo" scored Oslo 0.3 to 4.9 nats
    likelier than Dusseldorf; without the name, 20 to 25."""
    return replace(context, names=(*context.names, NameChoice(context.told))) if context.told else context


def rival_prompt(context: SttContext) -> str | None:
    """The prompt a city rival is scored under (engine/value_rivals.py): `unprompted`'s, with every
    place of `SttContext.places` named alike after the digits ("Destinations Amsterdam, Barcelona,
    ..."). With no city named, whisper's prior for a long name decided: the product's own voice
    reading back Dusseldorf right scored Warsaw 3.7 and 10.1 nats likelier, and every such
    readback was asked again; with all named alike, the cities said scored 13.8 and 4.4 nats
    likelier than the issued one written, the right ones' best rival -5.9 at most
    (docs/performance.md, stop 55)."""
    prompt = build_prompt(unprompted(context))
    if prompt is None or not context.places:
        return prompt
    listed = f"Destinations {', '.join(context.places)}."
    return f"{DIGITS_SENTENCE} {listed}{prompt.removeprefix(DIGITS_SENTENCE)}"
