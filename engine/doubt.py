"""Why a value of a readback is unsure: a kind the trace and the bench can count, and words a
person reads.

A controller asks again what he could not make out. Whether that doubt is the recognizer's (it
lost or garbled the value, an n-best hypothesis heard another) or the engine's own caution (a
value heard right whose rivals are still to be ruled out in the audio) decides where the fix
lies, so each reason carries its kind as data, never to be parsed back out of its words.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Doubt(StrEnum):
    """The kind of reason a value is asked again. Only `HEARD_RIGHT_ALTERNATIVE_OTHERWISE`,
    `RIVALS` and `CORRECTED_ELSEWHERE` doubt a value the best transcript heard as issued."""

    HEARD_RIGHT_ALTERNATIVE_OTHERWISE = "heard_right_alternative_otherwise"
    HEARD_GARBLED_ALTERNATIVE_OTHERWISE = "heard_garbled_alternative_otherwise"
    HEARD_OTHER_ALTERNATIVE_OTHERWISE = "heard_other_alternative_otherwise"
    HEARD_ONLY_BY_ALTERNATIVE = "heard_only_by_alternative"
    HEARD_GARBLED = "heard_garbled"
    RIVALS = "rivals"
    LOST = "lost"
    CORRECTED_ELSEWHERE = "corrected_elsewhere"


# The best transcript's verdict on a field -> the kind when an n-best hypothesis disagrees.
AGAINST_ALTERNATIVE: dict[str, Doubt] = {
    "ok": Doubt.HEARD_RIGHT_ALTERNATIVE_OTHERWISE,
    "unsure": Doubt.HEARD_GARBLED_ALTERNATIVE_OTHERWISE,
    "wrong": Doubt.HEARD_OTHER_ALTERNATIVE_OTHERWISE,
    "missing": Doubt.HEARD_ONLY_BY_ALTERNATIVE,
}


class Reason(BaseModel):
    """One field's reason to be asked again: its `kind`, and `text` for the trace."""

    model_config = ConfigDict(frozen=True)

    kind: Doubt
    text: str
