"""What the recognizer was unsure of in one voice transmission, as the engine reads it.

The voice side of the domain model (engine/models.py holds flows, sessions and decisions): the
recognizer's other transcripts and its answers about issued values checked in the audio. Typed
text has none of it. The gateway's speech engines fill these in; the readback check
(engine/readback.py, engine/value_check.py) decides from them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from engine.models import Decision, DomainModel, FieldStatus

UNSURE_WORD = "???"  # stands for a word the recognizer was unsure of, in a `Hearing` alternative

# Which hearing of the voice chain (gateway/speech/hearing_chain.py) wrote a transcript: the
# recognizer's final with its n-best ("first"), the same audio in the radio's words ("second"),
# whisper base's where the engine would still not accept it ("third"), and whisper base's on a
# readback the engine would accept ("confirming").
HearingStep = Literal["first", "second", "third", "confirming"]


class ValueCheck(DomainModel):
    """The recognizer's answer about one issued value it was asked to check in the audio
    (engine/value_check.py): how much likelier the issued symbols are than any other at each
    place (`margin`, the smallest, nats), how likely they are themselves (`lowest`), and the
    transcript with the value than as heard (`delta`, nats); `appended` when the value was put
    after the whole transcript rather than in place of words of it; `tempo` the speed the audio
    was played at for it (1.0 as recorded). The engine decides from them, the recognizer nothing."""

    field: str
    value: str
    margin: float
    lowest: float  # the issued symbols' lowest log-probability, over the value's places
    delta: float
    appended: bool = False  # checked after the whole transcript, not in place of words of it
    tempo: float = 1.0  # the audio as recorded (1.0), or played this much faster (>1) or slower
    bigger: bool = False  # scored by the third hearing's model (whisper base), not the first's
    # not the issued value but its rival, a value the pilot may have said that the transcript
    # would write as the issued one (engine/value_rivals.py): only its `delta` counts, against it
    rival: bool = False
    # the words of the transcript the value was put in place of (`value_query.Hypothesis.place`;
    # None after the transcript, or in a record from before it was kept): a recorded check can be
    # told from one today's question would put elsewhere
    place: tuple[int, int] | None = None


class Hearing(DomainModel):
    """What the recognizer was unsure of in one transmission (voice only; typed text has none).

    `alternatives` are other transcripts of the same audio: the recognizer's n-best, or the best
    one with its low-confidence words masked as "???". A readback value is judged only when every
    transcript agrees on it; otherwise the controller asks "say again" for that item.
    `cut_off` says the audio ended mid-speech (key released early, length limit).
    `open_transcript` is set when the transcript is a second, closed-vocabulary hearing: the first
    (open) one it replaced, which is among the alternatives too. `checks` are issued values the
    recognizer was asked to check in the audio where the transcript left them unsure or missing
    (engine/value_check.py): a value they confirm is heard right."""

    alternatives: list[str] = Field(default_factory=list)
    cut_off: bool = False
    confidence: float | None = None  # mean word confidence of the best transcript, 0..1, if known
    open_transcript: str | None = None
    checks: list[ValueCheck] = Field(default_factory=list)  # issued values checked in the audio
    # the recognizer was told the issued place by name (whisper's prompt names the clearance
    # limit's city; set by the gateway unless LIVEFREQ_CITY_RIVALS=false): heard as issued, it waits for
    # its rivals (engine/value_rivals.py)
    told: bool = False
    # which hearing wrote the transcript, and each alternative a later hearing brought (an
    # alternative not named here is the first hearing's: its n-best, or its unsure words masked):
    # the trace can then tell whisper base's reading from tiny.en's; the verdict reads them alike
    by: HearingStep = "first"
    heard_by: dict[str, HearingStep] = Field(default_factory=dict)

    def source(self, alternative: str) -> HearingStep:
        """The hearing that wrote `alternative`."""
        return self.heard_by.get(alternative, "first")


class HeardVerdict(DomainModel):
    """What the engine would decide of one hearing, in brief: what the voice hearing chain
    (gateway/speech/hearing_chain.py) asks of a dry run on a copy of the session before it spends
    a decode. `settled`: understood as heard (`Decision.settled`); `fields`: the readback's verdict
    per field (empty: no readback). One answer per hearing, so no step asks the same twice."""

    settled: bool = True  # no session, or nothing expected: nothing to hear again
    fields: dict[str, FieldStatus] = Field(default_factory=dict)

    @classmethod
    def of(cls, decision: Decision | None) -> HeardVerdict:
        """`decision` in brief (None: the dry run had nothing to decide)."""
        if decision is None:
            return cls()
        fields = dict(decision.readback.fields) if decision.readback is not None else {}
        return cls(settled=decision.settled, fields=fields)

    @property
    def heard_ok(self) -> bool:
        """Some readback value was heard right: worth confirming by a bigger model's ear."""
        return "ok" in self.fields.values()

    @property
    def heard_wrong(self) -> bool:
        """Some readback value was heard as another."""
        return "wrong" in self.fields.values()
