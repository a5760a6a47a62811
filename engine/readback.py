"""The one readback check: is every value the pilot said one the controller issued, by meaning?

Two questions are asked of every transmission in a state that expects a readback:

1. **Required values** (the state's `readback:` list): each must be heard, by meaning, in any word
   order ("ok"), else it is "missing"; a value of its kind that was heard but is not the issued one
   makes it "wrong" (25L for 25R, squawk 4712 for 4721, "climb four thousand" for 5000).
2. **Every other issued value** (`issued`: what the controller has said and not superseded, see
   `record_issued`): whenever the pilot says a value of that kind, it must be one the controller
   issued. "heading 230, runway 26 left" when 26R was issued is wrong for the runway even where
   only the heading is required. An unrequired value the pilot does not mention is no concern.

A heard value is acceptable when it equals some issued or required value of its kind (the
pilot may say the ground and the tower frequency in one breath); each field is "ok" only when
its own value was heard and no value of its kind contradicts the issued ones. After the word
"correction", values heard after it replace those heard before it, so "runway two five right,
correction, two five left" is wrong; a bare one ("squawk 3553, correction, 3535") replaces the
last value said before it (`engine.pilot_correction`). In a readback, the words of an instruction
are checked too (`engine.phraseology.instructions`): "climb" for "descend", "cleared for takeoff"
for "line up and wait" is wrong. Numbers inside a callsign (ours or nearby traffic's) are
never values, so "Swiss one five eight" is not an altitude or a heading.

A heard value its kind cannot have ("QNH one zero zero", a three-digit squawk:
`engine.phraseology.plausible`), or one its finder heard garbled (a runway whose side was
misheard, a heading heard as zero: `engine.phraseology.hits`), is a transmission cut short or
misheard: that field is "unsure", never "wrong" and never "ok". By voice (`spoken`), so is the
issued value with its end lost, or heard as no controller says it (`engine.readback_voice`): the
runway's number without its side ("... runway two three" for 23L), a SID with its fix name
misspelt, a frequency with only its first decimals ("decimal niner. Zero fife" for 119.905) or
one that names no voice channel, a heading's first digits as the last word or a heading off the
fives, a taxi route or a holding point with its end or digits lost, an altitude in feet above
18,000 ft; and any other value written right before a word the radio never uses ("runway one
nays"): the recognizer was guessing there. And by voice the issued frequency written short
("decimal five" for 136.500) is unsure until the audio rules out its last digit said twice,
and so is the clearance limit heard as issued (the recognizer's prompt names it) until the audio
rules out every other city said there (`ReadbackResult.rivalled`, `engine.value_rivals`).

**Unsure hearing** (voice): given `alternatives` (other transcripts of the same audio: n-best, or
the best one with unsure words masked as "???"), a field whose verdict differs between the best
transcript and any alternative is "unsure": the controller asks "say again" for that item
instead of accepting or refusing it. An alternative that heard no value of the kind at all (or
none the kind can have) where the best one heard the issued value contradicts nothing
(`_disagrees`): "one way three six" beside "runway three six" is no doubt about the runway. That
holds for the n-best only: in a masked alternative, a value not heard is a word the recognizer
doubted, and stays a disagreement. A wrong value is never accepted. An alternative whose words
are only the first words of the best transcript (the beam stopped early: "Edelweiss seven zero
four." beside "Edelweiss seven zero four, roger, QNH one zero one six"), or its words with other
commas, heard nothing the best one did not: it is no disagreement (`is_truncation`) and is left
out. Nor does it hold in the answer to "say again" for a field that the transmission asked again
heard only as another value (`ReadbackResult.otherwise`, kept as `Session.readback_otherwise`):
the same pilot says the same words again, and one hearing of the issued value among hearings of
none is not enough against it (held-out seed 93). Nor, by voice, for the clearance limit: the
recognizer's prompt names the issued city alone (whisper cannot spell it otherwise), so the best
transcript's hearing of it is no evidence against an n-best that heard no place there (`_named_alone`,
held-out seed 119: "to Oslo" written "to Dusseldorf" beside "to last").
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.doubt import AGAINST_ALTERNATIVE, Doubt, Reason
from engine.hearing import UNSURE_WORD
from engine.models import FieldStatus, ReadbackResult
from engine.phraseology import callsign_hint, kind_for_variable, tokenize
from engine.phraseology.callsigns import equal as callsign_equal
from engine.phraseology.callsigns import find as find_callsigns
from engine.phraseology.callsigns import parse_callsign
from engine.phraseology.context import Context
from engine.phraseology.designators import listed_fixes
from engine.phraseology.handlers import Kind, canonical_of, kind
from engine.phraseology.hits import Found, Hit
from engine.phraseology.instructions import contradictions as instruction_contradictions
from engine.phraseology.plausible import plausible
from engine.phraseology.transcript import Transcript
from engine.pilot_correction import corrected_elsewhere, corrections, last_correction, splice_bare
from engine.readback_voice import Voice, garbled_by_voice
from engine.value_query import checks_from, issued_values
from engine.value_rivals import TOLD_KINDS, short_frequencies, told_places
from engine.vocabulary import base_vocabulary

_SPOKEN = re.compile(r"[^\W_]+")  # the words of a transcript, without its punctuation

# Kinds the controller issues as instructions or clearances: they are checked whenever heard.
ISSUED_KINDS = frozenset(
    {
        "runway",
        "heading",
        "turn",
        "circuit",
        "facing",
        "altitude",
        "flight_level",
        "speed",
        "squawk",
        "frequency",
        "qnh",
        "designator",
        "route",
        "sid",
        "star",
        "airport",
        "waypoint",
    }
)
# Kinds of which several values stand side by side (the ground and the tower frequency, a stand
# and a holding point): a new one supersedes only the same variable. For the others a new value
# supersedes every earlier one of its group (one runway, one vertical clearance at a time).
_SIDE_BY_SIDE = frozenset({"frequency", "designator", "waypoint"})
_GROUP = {"flight_level": "vertical", "altitude": "vertical"}
# Words after which an altitude is the pilot's report of where the aircraft is, not a clearance.
_REPORT_WORDS = frozenset({"passing", "leaving", "through", "out"})

Status = FieldStatus  # "unsure": heard garbled, a value its kind cannot have, or heard otherwise by an alternative


def issued_kind(name: str) -> str | None:
    """The kind of a variable if it is one the controller issues as a value, else None."""
    k = kind_for_variable(name)
    return k if k in ISSUED_KINDS else None


def record_issued(issued: dict[str, Any], said: Mapping[str, Any]) -> None:
    """Remember the values a controller message carried (`said`: variable -> value), newest last.

    A value supersedes earlier ones of its group ("climb FL120" supersedes "5000 feet"), except
    for kinds that stand side by side, where only the same variable is replaced."""
    for name, value in said.items():
        k = issued_kind(name)
        if k is None or value is None or value == "" or canonical_of(kind(k), value) is None:
            continue
        if k not in _SIDE_BY_SIDE:
            group = _GROUP.get(k, k)
            for old in [n for n in issued if _GROUP.get(kind_for_variable(n), kind_for_variable(n)) == group]:
                del issued[old]
        issued.pop(name, None)
        issued[name] = value


def is_truncation(alternative: str, best: str, callsign: str | None = None) -> bool:
    """True when `alternative` says, word for word, only the first words of `best` (up to a
    whole word, never inside a number), as written or with the commas of both left out
    (whisper's: "ground one two, one point nine zero five" beside "ground one two one point nine
    zero five"): a hypothesis the recognizer ended early or punctuated otherwise, which heard no
    word `best` did not. "QNH one zero one" beside "QNH one zero one six" heard 101: no cut.
    A masked alternative ("???" for doubted words) is never one: its gaps are doubts."""
    if UNSURE_WORD in alternative:
        return False
    for said, heard in ((alternative, best), (" ".join(_SPOKEN.findall(alternative)), " ".join(_SPOKEN.findall(best)))):
        alt, full = tokenize(said, callsign=callsign).words, tokenize(heard, callsign=callsign).words
        if 0 < len(alt) <= len(full) and full[: len(alt)] == alt:
            return True
    return False


@dataclass(frozen=True, slots=True)
class _Heard:
    """Values of one kind heard in a transcript (after the last "correction"), canonical."""

    values: tuple[str, ...]


class ReadbackEvaluator:
    """Stateless; one instance may serve every session. `vocabulary`: the radio's words
    (`engine.vocabulary`; the flows' own words beside the base ones), for `engine.readback_voice`."""

    def __init__(self, vocabulary: frozenset[str] | None = None) -> None:
        self.vocabulary = vocabulary if vocabulary is not None else base_vocabulary()

    def evaluate(
        self,
        required: list[str],
        variables: Mapping[str, Any],
        transcript: str,
        *,
        issued: Mapping[str, Any] | None = None,
        alternatives: Sequence[str] = (),
        traffic: Iterable[str] = (),
        spoken: bool = False,
        doubted: Collection[str] = (),
        told: bool = False,
    ) -> ReadbackResult:
        """Judge one transmission (see the module docstring); `issued` adds the contradiction
        check over every issued value, `alternatives` the unsure-hearing check, `traffic` the
        callsigns of other aircraft whose numbers are never values, `spoken` that the transcript
        is a recognizer's (`engine.readback_voice`), `doubted` the fields an earlier transmission
        asked again heard as another value (`Session.readback_otherwise`): there an alternative
        that heard none of the field leaves it unsure too, `told` that the recognizer was told the
        issued place by name (`Hearing.told`): heard as issued, it waits for its rivals."""
        traffic = tuple(traffic)
        hint = callsign_hint(variables)
        alternatives = [alt for alt in alternatives if not is_truncation(alt, transcript, hint)]
        best = self._judge(required, variables, transcript, issued or {}, traffic, spoken=spoken, others=alternatives)
        others = [
            (self._judge(required, variables, alt, issued or {}, traffic), UNSURE_WORD in alt) for alt in alternatives
        ]
        fields: dict[str, Status] = {}
        missing: list[str] = []
        wrong: list[dict[str, str]] = []
        unsure: list[str] = []
        why: dict[str, Reason] = {}  # each unsure field's reason, for the trace
        for name, (status, expected, heard) in best.items():
            verdicts = [(other.get(name, ("missing", "", ""))[::2], masked) for other, masked in others]
            doubt = name in doubted or _named_alone(name, spoken)
            against = next((v for v, masked in verdicts if _disagrees((status, heard), v, masked or doubt)), None)
            if against is not None:
                fields[name] = "unsure"
                unsure.append(name)
                text = f"heard {_shown_status(status, heard)}, an alternative {_shown_status(*against)}"
                why[name] = Reason(kind=AGAINST_ALTERNATIVE[status], text=text)
            elif status == "unsure":  # heard garbled or a value its kind cannot have (_plausible_split)
                fields[name] = "unsure"
                unsure.append(name)
                text = f"heard garbled or as a value its kind cannot have ({heard})"
                why[name] = Reason(kind=Doubt.HEARD_GARBLED, text=text)
            elif status == "wrong":
                fields[name] = "wrong"
                wrong.append({"field": name, "expected": expected, "heard": heard})
            elif status == "missing":
                fields[name] = "missing"
                missing.append(name)
            else:
                fields[name] = "ok"
        for other, _masked in others:  # a field only an alternative heard (the best one did not) is unsure
            for name, (status, _e, heard) in other.items():
                if name not in fields and status != "missing":
                    fields[name] = "unsure"
                    unsure.append(name)
                    text = f"heard only by an alternative, {_shown_status(status, heard)}"
                    why[name] = Reason(kind=Doubt.HEARD_ONLY_BY_ALTERNATIVE, text=text)
        # by voice, another hearing may have the pilot correct a value: which one is not known
        elsewhere: set[str] = set()
        if spoken:  # typed, no hearing was cut: the transcripts are not split again
            cut = [o for (o, _m), alt in zip(others, alternatives, strict=True) if is_truncation(transcript, alt)]
            elsewhere = corrected_elsewhere(best, cut, checks_from(transcript, alternatives) is None)
        for name in sorted(elsewhere):
            if best[name][0] in ("ok", "wrong"):
                wrong = [w for w in wrong if w["field"] != name]
                unsure += [name] if fields[name] != "unsure" else []
                fields[name] = "unsure"
                text = "heard, but another hearing has the pilot correct himself after it"
                why[name] = Reason(kind=Doubt.CORRECTED_ELSEWHERE, text=text)
        contradicted = [name for name, (status, _e, _h) in best.items() if status == "wrong"]
        heard_ok = issued_values([n for n, s in fields.items() if s == "ok"], variables, issued or {}) if spoken else {}
        rivalled = sorted({*short_frequencies([transcript], heard_ok), *(told_places(heard_ok) if told else ())})
        for name in rivalled:  # heard right, written short or told: its rivals decide (engine/value_rivals.py)
            fields[name] = "unsure"
            unsure.append(name)
            text = "heard as issued, but its rivals are checked in the audio first (engine/value_rivals.py)"
            why[name] = Reason(kind=Doubt.RIVALS, text=text)
        ok = all(s == "ok" for s in fields.values())
        hearings = [best, *(other for other, _masked in others)]
        otherwise = [n for n in fields if _only_another_value([h.get(n, ("missing", "", ""))[0] for h in hearings])]
        return ReadbackResult(
            ok=ok,
            fields=fields,
            missing=missing,
            wrong=wrong,
            unsure=unsure,
            contradicted=contradicted,
            otherwise=otherwise,
            rivalled=rivalled,
            why=why,
        )

    # ------------------------------------------------------------------ one transcript

    def _judge(
        self,
        required: list[str],
        variables: Mapping[str, Any],
        transcript: str,
        issued: Mapping[str, Any],
        traffic: tuple[str, ...],
        spoken: bool = False,
        others: Sequence[str] = (),
    ) -> dict[str, tuple[Status, str, str]]:
        """name -> (status, expected shown, heard shown) for the required fields and for every
        issued value whose kind was heard; `spoken` (the best transcript by voice) applies
        `engine.readback_voice`, with the radio's words and this session's as the words it knows."""
        t = tokenize(transcript, callsign=callsign_hint(variables))  # numbers after our callsign
        masked = _callsign_words(t, variables, traffic)
        said_at = corrections(t)  # last first: "squawk 3553, correction, 3535" reads "squawk 3535"
        finders = _finders(required, variables, issued) if said_at else []
        for at in said_at:
            hits = [h.index for _n, handler, ctx in finders for h in handler.find(t, ctx)]
            spliced = splice_bare(t, at, masked, hits)
            if spliced is not None:
                t, masked = spliced, _callsign_words(spliced, variables, traffic)
        correction = last_correction(t)  # one said with its keyword: values after it replace those of their kind
        out: dict[str, tuple[Status, str, str]] = {}
        acceptable = _acceptable(required, variables, issued)
        values = (*variables.values(), *issued.values())
        voice = None
        if spoken:  # the airport's SID names, for a SID heard as none of them (`readback_voice._garbled_sid`)
            voice = Voice(self.vocabulary, values, acceptable, tuple(others), listed_fixes(variables))
        for name in required:
            if name in out:
                continue
            handler = kind(kind_for_variable(name))
            value = variables.get(name)
            expected = canonical_of(handler, value)
            if expected is None and value is not None and value != "":
                handler = kind("text")  # a value its kind cannot parse is checked as its words
                expected = canonical_of(handler, value)
            if expected is None:
                out[name] = ("missing", "", "")
                continue
            found = _heard(handler, t, Context(expected, variables, name), correction, masked, voice)
            heard, garbled = _plausible_split(handler, found)
            others = acceptable.get(handler.name, [])
            foreign = [v for v in heard if not any(handler.equal(a, v) for a in [expected, *others])]
            if foreign:
                out[name] = ("wrong", _shown(handler, expected), _shown(handler, foreign[0]))
            elif garbled:  # "QNH one zero zero": cut or misheard, asked again, never corrected
                out[name] = ("unsure", _shown(handler, expected), garbled[0])
            elif any(handler.equal(expected, v) for v in heard):
                out[name] = ("ok", "", "")
            elif heard:
                out[name] = ("wrong", _shown(handler, expected), _shown(handler, heard[0]))
            else:
                out[name] = ("missing", "", "")
        checked: set[str] = {kind(kind_for_variable(n)).name for n in required}
        for name in reversed(list(issued)):  # newest first: one contradiction per kind
            k = issued_kind(name)
            if k is None or name in out or k in checked:
                continue
            handler = kind(k)
            expected = canonical_of(handler, issued[name])
            if expected is None:
                continue
            checked.add(k)
            found = [
                h
                for h in _heard(
                    handler, t, Context(expected, variables, name, required=False), correction, masked, voice
                )
                if not _report(t, h.value, handler)
            ]
            heard, garbled = _plausible_split(handler, found)
            if not heard and not garbled:
                continue
            foreign = [v for v in heard if not any(handler.equal(a, v) for a in acceptable.get(k, []))]
            if foreign:
                out[name] = ("wrong", _shown(handler, expected), _shown(handler, foreign[0]))
            else:
                out[name] = ("unsure", _shown(handler, expected), garbled[0]) if garbled else ("ok", "", "")
        if required:  # a readback: "climb" for "descend", "cleared for takeoff" for "line up and wait"
            for key, (given, said) in instruction_contradictions(t.words, issued, correction).items():
                out[key] = ("wrong", given, said)
        return out


def _finders(
    required: list[str], variables: Mapping[str, Any], issued: Mapping[str, Any]
) -> list[tuple[str, Kind, Context]]:
    """(name, handler, context) for every required and every issued value whose kind can read it:
    what the check listens for in a transmission."""
    out: list[tuple[str, Kind, Context]] = []
    for name, value, req in [
        *((n, variables.get(n), True) for n in required),
        *((n, v, False) for n, v in issued.items()),
    ]:
        k = kind_for_variable(name) if req else issued_kind(name)
        if k is None:
            continue
        handler = kind(k)
        expected = canonical_of(handler, value)
        if expected is None and req and value is not None and value != "":
            handler = kind("text")
            expected = canonical_of(handler, value)
        if expected is not None:
            out.append((name, handler, Context(expected, variables, name, required=req)))
    return out


def _acceptable(required: list[str], variables: Mapping[str, Any], issued: Mapping[str, Any]) -> dict[str, list[str]]:
    """kind -> canonical values the pilot may say: every issued and every required value."""
    out: dict[str, list[str]] = {}
    for name, value in [*issued.items(), *((n, variables.get(n)) for n in required)]:
        handler = kind(kind_for_variable(name))
        canon = canonical_of(handler, value)
        if canon is not None:
            out.setdefault(handler.name, []).append(canon)
    return out


def _heard(
    handler: Kind, t: Transcript, ctx: Context, correction: int, masked: frozenset[int], voice: Voice | None
) -> Found:
    """The handler's hits outside callsigns, after the last "correction", and by voice
    (`voice`) with the issued value's cut or misheard forms marked garbled (`engine.readback_voice`)."""
    found = [h for h in handler.find(t, ctx) if handler.name == "callsign" or h.index not in masked]
    after = [h for h in found if h.index > correction] if correction >= 0 else []
    found = after or found
    return garbled_by_voice(handler, t, found, ctx.expected, voice) if voice is not None and ctx.expected else found


def _only_another_value(statuses: list[Status]) -> bool:
    """Whether the transcripts of one audio heard a field as another value and none as the issued
    one: what the answer to "say again" is weighed against (held-out seed 93: "via hotel two,
    golf two" for D2 G2, heard so by the n-best and asked again; the answer written "Vayo, delta,
    two golf two" by the best transcript alone)."""
    return "wrong" in statuses and "ok" not in statuses


def _named_alone(name: str, spoken: bool) -> bool:
    """Whether, by voice, the best transcript's hearing of `name` may be the prompt's (a kind of
    `value_rivals.TOLD_KINDS`: `gateway.speech.stack.name_choices` keeps the clearance limit's
    city alone in whisper's prompt, as whisper cannot spell it otherwise): a limit written as the
    issued city stands only where no n-best hypothesis heard no place there.
    Held-out seed 119: the answer "China Eastern seven four to Oslo" was written "... to
    Dusseldorf" (the city the prompt names) and accepted, beside an n-best "... to last"."""
    return spoken and kind(kind_for_variable(name)).name in TOLD_KINDS


def _shown_status(status: Status, heard: str) -> str:
    """A field's verdict in one hearing, for the trace: "ok", "missing", "wrong (2000)"."""
    return f"{status} ({heard})" if heard and status != "ok" else status


def _disagrees(best: tuple[Status, str], other: tuple[Status, str], masked: bool) -> bool:
    """Whether an alternative's (verdict, value heard) on a field makes the best one's unsure. An
    n-best hypothesis that heard no value of the field's kind, or none its kind can have ("one way
    three six" for "runway three six", "QNH one zero one for"), contradicts nothing the best one
    heard right; every other difference does, a wrong value heard otherwise too ("tango one
    fife" beside "tango one fall": T15 and T1 for T14), a field the best one did not hear right
    stays unsure, and in a `masked` alternative (doubted words as "???") a value not heard is a
    doubted one."""
    (status, heard), (other_status, other_heard) = best, other
    if status == "ok" and other_status in ("missing", "unsure") and not masked:
        return False
    return other_status != status or (status == "wrong" and other_heard != heard)


def _plausible_split(handler: Kind, hits: Found) -> tuple[list[str], list[str]]:
    """(values that can be of the handler's kind, values heard garbled or that cannot be: runway
    "25?", heading "000", QNH 100, squawk 325), each in the order heard."""
    fine = [h.value for h in hits if _sound(handler, h)]
    return fine, [h.value for h in hits if not _sound(handler, h)]


def _sound(handler: Kind, hit: Hit) -> bool:
    return not hit.garbled and plausible(handler.name, hit.value)


def _report(t: Transcript, value: str, handler: Kind) -> bool:
    """An altitude the pilot reports passing ("passing 3000") is not a readback of a clearance."""
    if handler.name not in ("altitude", "flight_level"):
        return False
    for i, w in enumerate(t.words):
        if w in _REPORT_WORDS and any(value in (t.word(j), f"FL{t.word(j).zfill(3)}") for j in range(i + 1, i + 5)):
            return True
    return False


def _callsign_words(t: Transcript, variables: Mapping[str, Any], traffic: tuple[str, ...]) -> frozenset[int]:
    """Indexes of the words of any callsign heard (ours, nearby traffic's, any airline's): the
    flight number of "Swiss one five eight" is not a heading, an altitude or a runway."""
    found: Found = []
    for code, ctx_vars in [(variables.get("callsign"), variables), *((c, {}) for c in traffic)]:
        parsed = parse_callsign(str(code)) if code else None
        if parsed is not None:  # that callsign only, found with the tolerance its finder allows
            found += [
                h for h in find_callsigns(t, Context(parsed.code, ctx_vars)) if callsign_equal(h.value, parsed.code)
            ]
    # Any other airline callsign, except one whose telephony is a phonetic letter: "delta two" is
    # taxiway D2 far more often than Delta Air Lines 2; and except where a known one starts, which
    # is as long as we know it to be: read as any callsign, "Egyptair 287, lima papa papa tango"
    # is MSR287LP, and the spelled clearance limit (LPPT) was lost.
    known = {h.index for h in found}
    found += [h for h in find_callsigns(t, Context()) if t.letter(h.index) is None and h.index not in known]
    masked: set[int] = set()
    for hit in found:
        parsed = parse_callsign(hit.value)
        if parsed is None or parsed.is_registration:
            continue  # a registration is letters only: no number to mistake for a value
        start = j = hit.index
        while j < len(t.words) and j - start <= 4 and not t.words[j][:1].isdigit():
            masked.add(j)
            j += 1
        if j < len(t.words) and t.words[j].isdigit():
            masked.add(j)
            letters = len(parsed.flight) - len(parsed.flight.rstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
            masked.update(range(j + 1, min(len(t.words), j + 1 + letters)))
    return frozenset(masked)


def _shown(handler: Kind, value: str) -> str:
    canon = canonical_of(handler, value)
    return handler.display(canon) if canon is not None else value
