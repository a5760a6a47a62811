"""What every finder reports: where a value was heard, the value, and whether it was heard garbled.

A garbled hit is a value of the kind said so that it cannot be told for sure: a runway whose
side was misheard ("runway two five lift"), a heading heard as zero (a cut "zero tree zero").
It is reported, not dropped, so the readback check (engine/readback.py) asks "say again" for
that item instead of calling it missing or correcting the pilot for a value nobody said. The
flag says so; the value is only what a trace shows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class Hit:
    index: int  # word index in the transcript
    value: str  # canonical where valid, else as heard; a garbled one as shown ("25?", "000")
    garbled: bool = False


Found = list[Hit]
