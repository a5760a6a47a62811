"""The radio's closed vocabulary: the words a pilot says on frequency, for a second hearing.

Whisper writes whatever English it hears: a robot or accented "zero seven" comes out "near o
salmon", "heading" comes out "having". A second decode that may only write the words of the
radio (`WhisperEngine.closed_result`) writes "zero seven" there. The vocabulary is value-neutral
by construction: every digit, letter, side and unit is in it whatever the controller issued, so
it can make a garbled value legible but never prefers the issued one over another.

The words come from the flows themselves (every controller text, textbook pilot phrase and
router trigger), the ICAO words, every airline telephony we know (nearby traffic must stay
hearable), the session's own context (callsign, airports, SIDs) and `PILOT_WORDS`, the small
words pilots wrap a readback in ("we have", "request", "thank you").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from engine.phraseology.callsigns import AIRLINES
from engine.registry import FlowRegistry
from gateway.speech.stt.base import ICAO_WORDS, SttContext, words_of

# The words around a readback that no flow phrase holds: measured on the readback bench's
# independent pilot, whose phrasing is its own ("we have information mike", "wilco, thank you").
PILOT_WORDS: tuple[str, ...] = tuple(
    """okay ok and to the with for of a an uh um er ah hectopascals hectopascal millibars inches
    feet foot thousand hundred flight level information request requesting ready copy copied will
    good day bye thanks thank you we have has i am are is at on in by be just now got go going out
    off up down this that it my our your again say please continue continuing back next then when
    after before until yes no""".split()
)
_TEMPLATE_VARIABLE = re.compile(r"\{\{[^}]*\}\}")
_LETTERS = re.compile(r"[a-z]+")
_REGEX_ESCAPE = re.compile(r"\\[A-Za-z]")  # \b, \s, \d in a trigger: no word of the radio


def flow_words(registry: FlowRegistry) -> set[str]:
    """Every word of every flow's controller texts, textbook pilot phrases and regex triggers
    (variables and regex syntax left out)."""
    texts: list[str] = []
    for flow in registry:
        texts.extend(template for template in _templates(flow.policies.model_dump().values()))
        for state in flow.states.values():
            texts.extend(t for t in (state.say_tpl, state.utterance_tpl) if t)
            texts.extend(_REGEX_ESCAPE.sub(" ", t.pattern) for t in state.triggers if t.pattern)
            for transition in state.transitions:
                if transition.utterance_tpl:
                    texts.append(transition.utterance_tpl)
                texts.extend(_REGEX_ESCAPE.sub(" ", t.pattern) for t in transition.triggers if t.pattern)
    words: set[str] = set()
    for text in texts:
        words.update(
            w for w in _LETTERS.findall(_TEMPLATE_VARIABLE.sub(" ", text).lower()) if len(w) > 1 or w in ("a", "i")
        )
    return words


def _templates(values: Iterable[object]) -> list[str]:
    return [v for v in values if isinstance(v, str) and "{{" in v]


@lru_cache(maxsize=8)
def radio_lexicon(registry: FlowRegistry) -> frozenset[str]:
    """The closed vocabulary of every session on this registry (see the module doc); made once
    per registry."""
    words = flow_words(registry)
    words.update(w for line in ICAO_WORDS for w in line.split())
    words.update(w for names in AIRLINES.values() for name in names for w in words_of(name))
    words.update(PILOT_WORDS)
    return frozenset(words)


def own_words(context: SttContext) -> frozenset[str]:
    """This transmission's own words (callsign, airports, procedures), beside the shared lexicon."""
    return frozenset(w for text in (*context.spoken_phrases(), *context.spoken_vocabulary()) for w in words_of(text))
