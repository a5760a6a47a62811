"""The radio's closed vocabulary: the words a pilot says on frequency, for a second hearing.

Whisper writes whatever English it hears: a robot or accented "zero seven" comes out "near o
salmon", "heading" comes out "having". A second decode that may only write the words of the
radio (`WhisperEngine.closed_result`) writes "zero seven" there. The vocabulary is value-neutral
by construction: every digit, letter, side and unit is in it whatever the controller issued, so
it can make a garbled value legible but never prefers the issued one over another.

The words are the engine's (`engine.vocabulary`: the flows' own words, the ICAO words, every
airline telephony and the small words pilots wrap a readback in): the readback check reads a
word outside them after a value as a misheard value, so both use one list. Beside it, each
transmission adds its session's own words (`own_words`).
"""

from __future__ import annotations

from engine.registry import FlowRegistry
from engine.vocabulary import PILOT_WORDS as PILOT_WORDS  # re-exported
from engine.vocabulary import flow_words as flow_words  # re-exported
from engine.vocabulary import radio_vocabulary
from gateway.speech.stt.base import SttContext, words_of


def radio_lexicon(registry: FlowRegistry) -> frozenset[str]:
    """The closed vocabulary of every session on this registry (see the module doc); made once
    per registry."""
    return radio_vocabulary(registry)


def own_words(context: SttContext) -> frozenset[str]:
    """This transmission's own words (callsign, airports, procedures), beside the shared lexicon:
    of the names a readback is judged on, every one that could have been issued alike
    (`SttContext.names`), so the closed hearing cannot write the issued one for another."""
    texts = (*context.spoken_phrases(), *context.spoken_vocabulary())
    words = {w for text in texts for w in words_of(text) if w not in context.issued_names}
    return frozenset(words | {w for choice in context.names for name in choice.choices for w in words_of(name)})
