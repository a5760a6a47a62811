"""The radio's vocabulary: every word a pilot or controller says on frequency in these flows.

Two parts use it. The recognizer's second hearing may write only these words (a closed
vocabulary, `gateway.speech.stt.lexicon`), and the readback check treats a word outside them,
written right after a value, as the recognizer guessing at sounds it could not place
(`engine.readback`): "runway one nays" for "one eight". Both need the same list, so it lives
here, made from the flows themselves (every controller text, textbook pilot phrase and router
trigger), the ICAO words, every airline telephony we know and `PILOT_WORDS`, the small words
pilots wrap a readback in. It is value-neutral by construction: every digit, letter, side and
unit is in it whatever the controller issued.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from engine.phraseology.callsigns import AIRLINES
from engine.phraseology.numbers import DIGIT_WORDS
from engine.registry import FlowRegistry

# Words a pilot may use in any transmission, whatever the state expects.
ICAO_WORDS: tuple[str, ...] = (
    *DIGIT_WORDS,
    "three five nine hundred thousand decimal point",
    "alfa bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november",
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu",
    "left right center runway taxiway holding point short line up wait cleared takeoff land",
    "climb descend maintain flight level feet altitude heading degrees speed knots turn direct",
    "squawk ident qnh information atis contact tower ground approach departure radar delivery",
    "roger wilco affirm negative say again request ready via cross hold position stand gate",
    "to for and at of on with when passing until leaving expect after before behind",
)
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


def words_in(text: str) -> list[str]:
    """The lower-case words of `text` (letters only: digits and punctuation left out)."""
    return _LETTERS.findall(text.lower())


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
        words.update(w for w in words_in(_TEMPLATE_VARIABLE.sub(" ", text)) if len(w) > 1 or w in ("a", "i"))
    return words


def _templates(values: Iterable[object]) -> list[str]:
    return [v for v in values if isinstance(v, str) and "{{" in v]


@lru_cache(maxsize=1)
def base_vocabulary() -> frozenset[str]:
    """The words of the radio in any flows: ICAO words, airline telephonies, `PILOT_WORDS`."""
    words = {w for line in ICAO_WORDS for w in line.split()}
    words.update(w for names in AIRLINES.values() for name in names for w in words_in(name))
    words.update(PILOT_WORDS)
    return frozenset(words)


@lru_cache(maxsize=8)
def radio_vocabulary(registry: FlowRegistry) -> frozenset[str]:
    """`base_vocabulary` and every word of `registry`'s flows; made once per registry."""
    return base_vocabulary() | flow_words(registry)
