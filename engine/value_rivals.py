"""A frequency written short may hide a digit said twice: its rival, checked in the audio.

Pilots read back 136.500 as "one three six decimal five", and the transcript writes it so. But
tiny.en also writes a digit said twice once: held-out seed 114 by voice, "one tree six point fife
fife" (136.550, a wrong readback) was written "one three six point five" by the first two hearings,
read as the issued 136.500 and accepted. Nothing in those transcripts tells the two apart, and a
check of the issued value in the audio passes too (margin 3.4: whisper reads "five" there).

What tells them apart is the other reading (`rival`): the transcript that wrote it short, with
the value in place and its last decimal said twice, scored against the same with it said once
(`Hypothesis.against`, `ValueCheck.delta`), at every tempo. Where the pilot said it twice, whisper
finds it likelier (seed 114: +5.8 at 0.83x, +10.1 at 1.25x); where the pilot said it once, far
less likely (64 right readbacks of seeds 100-114 heard short: -3.4 at most, at any tempo).

So by voice a frequency heard as issued but written with fewer than three decimals, the last no
zero (`short_frequencies`), is unsure (`ReadbackResult.rivalled`) until its rival, scored at
`RIVAL_TEMPOS` tempos at least, was nowhere said (`rival_allows`): then it is heard right, with no
check of the issued value asked (it was heard). A value some other hearing wrote short (seed 114's
third wrote "point. I've I've") is confirmed by a check of the issued value only where its rival
allows it too. Where the recognizer cannot check, or no CPU worker is free, the controller asks
again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from engine.hearing import ValueCheck
from engine.phraseology.transcript import tokenize

RIVAL_SLACK = 1.0  # nats: a rival within e^1 of the value said once may be what was said
RIVAL_TEMPOS = 3  # the rival scored at this many tempos at least (seed 114: likelier at the 2nd and 3rd)


def short_frequencies(transcripts: Iterable[str], fields: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """The frequency fields of `fields` (field -> (kind, issued value)) whose issued value one of
    `transcripts` (the best one, then the other hearings) writes with fewer than three decimals
    ("136.5" for 136.500), each with the shortest transcript that does (the first of equals): its
    rival is tried in that transcript's words, where the digit may have been written once. Seed
    114's third hearing wrote "point. I've I've" where the first two wrote "point five"; seed 103's
    second wrote the readback twice over, whisper's loop, where nothing is said after the first
    copy and a digit said twice scored almost as likely as once (-0.6)."""
    out: dict[str, str] = {}
    for transcript in sorted(transcripts, key=lambda t: len(t.split())):
        words = tokenize(transcript).words
        for name, (kind_name, value) in fields.items():
            if name not in out and kind_name == "frequency" and any(written_short(w, value) for w in words):
                out[name] = transcript
    return out


def written_short(word: str, value: str) -> bool:
    """`word` ("136.5") is `value` ("136.500") written with fewer than three decimals, the last
    not a zero (said twice, a zero says the same frequency: "one one eight decimal zero")."""
    whole, dot, decimals = word.partition(".")
    if not dot or not whole.isdigit() or not decimals.isdigit() or not 0 < len(decimals) < 3 or decimals[-1] == "0":
        return False
    issued_whole, _, issued_decimals = value.partition(".")
    return whole[-3:] == issued_whole and issued_decimals == decimals.ljust(3, "0")


def rival_value(value: str, decimals_said: int) -> str:
    """The frequency `value` ("136.500") with its last of `decimals_said` decimals said twice ("136.550")."""
    whole, _, decimals = value.partition(".")
    said = decimals[:decimals_said]
    return f"{whole}.{(said + said[-1:]).ljust(3, '0')[:3]}"


def rival_allows(field: str, checks: Iterable[ValueCheck], floor: float) -> bool:
    """Whether the rival checks of `field` (`ValueCheck.rival`) let its issued value be heard:
    scored at `RIVAL_TEMPOS` tempos at least, and at none said (within `RIVAL_SLACK` of the value
    said once, with each of its symbols at least as likely as `floor`, the issued value's own
    `value_check.FLOOR`: a rival whose doubled digit is unlikely itself gains its delta elsewhere,
    "decimal seven roger" of seed 101 at +0.4 with "seven" said twice at -5.8)."""
    rivals = [c for c in checks if c.rival and c.field == field]
    said = any(c.delta >= -RIVAL_SLACK and c.lowest >= floor for c in rivals)
    return len({c.tempo for c in rivals}) >= RIVAL_TEMPOS and not said
