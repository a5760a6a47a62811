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

The clearance limit has rivals too (`told_places`). Whisper cannot spell most cities unless its
prompt names them, so the prompt names the issued one (`gateway.speech.stack.name_choices`), and
under it whisper writes the issued city for another one said: held-out seed 119's "to Oslo"
written "to Dusseldorf", seed 4's "cleared to Vienna" the same. So by voice a clearance limit
heard as issued is unsure until each other city the scenarios issue (`LIMIT_RIVALS`), put in its
place (`place_span`), was scored against the transcript as written, under a prompt that names no
city alone but every one alike (`Hypothesis.unprompted`; `gateway.speech.stt.whisper_prompt.
rival_prompt`), as recorded (`CITY_TEMPOS`), and none came within `RIVAL_SLACK`. A city said
that no list holds is weighed too: the gateway scores the other names whisper itself would write
there under that prompt the same way (`gateway.speech.stt.whisper_scoring._proposed`: "Bremen",
said and written "Berlin", proposed and +5.7 nats likelier). Under the
radio's own prompt the city said scored only 0.3 to 4.9 nats likelier on seed 119; with no city
named, whisper's prior for a long name decided instead (a right "Dusseldorf" in the product's own
voice lost to Warsaw by 3.7 and 10.1, and was asked again every time). With every city named
alike, over 120 readbacks in the bench's voices with the transcript written as issued
(docs/performance.md, stop 55), the 60 cities said scored 3.5 to 25.9 nats likelier than the
issued one, and 54 of 60 right ones had no rival within the slack. Only where the recognizer was
told the city (`Hearing.told`, which the gateway sets unless `LIVEFREQ_CITY_RIVALS=false`); pocketsphinx,
vosk and the recorded runs of the replay were not, and their hearing of it stands as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rapidfuzz import fuzz

from engine.hearing import ValueCheck
from engine.phraseology.frequencies import is_channel
from engine.phraseology.transcript import tokenize
from engine.value_words import words_of

RIVAL_SLACK = 1.0  # nats: a rival within e^1 of the value said once may be what was said
RIVAL_TEMPOS = 3  # the rival scored at this many tempos at least (seed 114: likelier at the 2nd and 3rd)
# a city rival is scored as recorded only: there the cities said scored +13 and +25, the right ones
# -2.7 at most (bar one garbled transcript); the other tempos found no wrong city more and asked a
# right one again (seed 122 #236: Berlin +0.8 at 1.25x, -4.9 as recorded). docs/performance.md, stop 55
CITY_TEMPOS = 1
TOLD_KINDS = frozenset({"airport"})  # whose issued value the recognizer's prompt names
# The cities the scenarios issue as clearance limits (`engine.scenario.DESTINATIONS`, their short
# names in the airport dataset; tests/test_value_rivals.py holds them equal): a limit heard as
# issued is weighed against each of them said instead.
LIMIT_RIVALS: tuple[str, ...] = (
    "Munich", "Hamburg", "Berlin", "Dusseldorf", "London", "Paris", "Amsterdam", "Zurich", "Vienna", "Copenhagen",
    "Oslo", "Stockholm", "Helsinki", "Warsaw", "Prague", "Brussels", "Madrid", "Barcelona", "Rome", "Lisbon", "Dublin",
)  # fmt: skip
SPAN_SCORE = 80.0  # rapidfuzz ratio from which written words are the issued city ("dsseldorf", its "ü" lost)


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


def written_longer(transcripts: Iterable[str], fields: Mapping[str, tuple[str, str]]) -> list[str]:
    """The frequency fields of `fields` (field -> (kind, issued value)) that one of `transcripts`
    wrote short ("133.2" for 133.200) where another wrote the same decimals and more ("133.25"):
    that hearing wrote the digit the short one lost, and a check of the issued value in place
    cannot weigh a digit the transcript holds no place for. Fresh seed 165 #79: "one three three
    point two five" (133.250 for the issued 133.200) written "point two. I'm" by the best hearing
    and "point two five" by the three others; whisper base's check of 133.200 in place passed by
    3.0, and the rival said twice (133.220) was nowhere near. No check confirms such a field."""
    words = [w for transcript in transcripts for w in tokenize(transcript).words]
    out: list[str] = []
    for name, (kind_name, value) in fields.items():
        if kind_name != "frequency":
            continue
        short = {w.partition(".")[2] for w in words if written_short(w, value)}
        if any(_extends(w, value, decimals) for w in words for decimals in short):
            out.append(name)
    return sorted(out)


def _extends(word: str, value: str, decimals: str) -> bool:
    """`word` ("133.25") is a frequency of `value`'s whole part whose decimals start with
    `decimals` ("2") and go on to a channel a controller assigns (`is_channel`), not `value`
    itself. A digit more that names no channel is a word after the value run into it (seed 166
    #128: "decimal seven five eight seven", the "eight seven" our callsign's "two eight seven")."""
    whole, dot, said = word.partition(".")
    issued_whole, _, issued_decimals = value.partition(".")
    longer = bool(dot) and whole.isdigit() and said.isdigit() and len(decimals) < len(said) <= 3
    other = f"{whole[-3:]}.{said.ljust(3, '0')}"
    return longer and whole[-3:] == issued_whole and said.startswith(decimals) and other != value and is_channel(other)


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


def rival_tempos(kind_name: str) -> int:
    """How many tempos the rivals of a field of `kind_name` are scored at, at least: a clearance
    limit's (`TOLD_KINDS`) `CITY_TEMPOS`, a frequency's `RIVAL_TEMPOS`."""
    return CITY_TEMPOS if kind_name in TOLD_KINDS else RIVAL_TEMPOS


def rival_allows(field: str, checks: Iterable[ValueCheck], floor: float, tempos: int = RIVAL_TEMPOS) -> bool:
    """Whether the rival checks of `field` (`ValueCheck.rival`) let its issued value be heard:
    scored at `tempos` tempos at least (`rival_tempos`), and at none said (within `RIVAL_SLACK` of the value
    said once, with each of its symbols at least as likely as `floor`, the issued value's own
    `value_check.FLOOR`: a rival whose doubled digit is unlikely itself gains its delta elsewhere,
    "decimal seven roger" of seed 101 at +0.4 with "seven" said twice at -5.8)."""
    rivals = [c for c in checks if c.rival and c.field == field]
    said = any(c.delta >= -RIVAL_SLACK and c.lowest >= floor for c in rivals)
    return len({c.tempo for c in rivals}) >= tempos and not said


def told_places(fields: Mapping[str, tuple[str, str]]) -> list[str]:
    """The fields of `fields` (field -> (kind, issued value)) whose kind the recognizer's prompt
    names as issued (`TOLD_KINDS`): by voice, heard as issued they wait for their rivals."""
    return sorted(name for name, (kind_name, _value) in fields.items() if kind_name in TOLD_KINDS)


def place_names(field: str, variables: Mapping[str, Any]) -> tuple[str, ...]:
    """The names the issued place of `field` goes by (`<field>_name`, `<field>_aliases`)."""
    aliases = variables.get(f"{field}_aliases")
    names = [variables.get(f"{field}_name"), *(aliases if isinstance(aliases, list | tuple) else ())]
    return tuple(str(n) for n in names if isinstance(n, str) and n.strip())


def place_span(words: list[str], names: Iterable[str]) -> tuple[int, int] | None:
    """The words of `words` (as `words_of` writes them) that name one of `names`: the same words,
    else the one to three words likest a name run together, from `SPAN_SCORE` ("d sseldorf")."""
    best: tuple[float, int, int] | None = None
    for name in names:
        said = words_of(name)
        for start in range(len(words)):
            if said and words[start : start + len(said)] == said:
                return start, start + len(said)
            for end in range(start + 1, min(start + 3, len(words)) + 1):
                score = fuzz.ratio("".join(words[start:end]), "".join(said))
                if score >= SPAN_SCORE and (best is None or score > best[0]):
                    best = (score, start, end)
    return None if best is None else (best[1], best[2])


def limit_rivals(names: Iterable[str]) -> list[str]:
    """`LIMIT_RIVALS` but the issued place's own `names` (EGLL and EGKK are both "London")."""
    issued = {" ".join(words_of(n)) for n in names}
    return [city for city in LIMIT_RIVALS if " ".join(words_of(city)) not in issued]
