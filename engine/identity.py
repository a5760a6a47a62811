"""Who is talking: is a transmission ours, another aircraft's, or of no stated callsign?

A controller answers a transmission only when it knows who made it. `identify` reads the
callsigns a transcript names (`engine.phraseology.callsigns.find`) and compares them with the
session's own (`callsign`, and the telephony of `callsign_spoken`) and with the callsigns of nearby
traffic (`Session.traffic`). Verdicts:

- ``ours``: our callsign, as issued ("Scandinavian tree seven two", "SAS 372", "sierra alfa sierra
  372"; a registration in full, or abbreviated once the controller has abbreviated it).
- ``garbled``: ours as the recognizer mangled it, taken as ours: the telephony misspelled
  ("skandinavian 372", "scandinavia 372"; more loosely, "jupin air 1113", when the flight number
  follows exactly), the flight number one character off while the telephony is ours
  ("scandinavian 373", unless exactly that callsign is nearby traffic) or cut or run on ("scandinavian
  tree, seven two" heard as SAS3; "... six six four one two five" as AUI664125), a registration
  abbreviated before the controller did, or only another transcript of the same audio (the
  recognizer's alternatives) naming ours. A loose match (ours misspelled, or nearby traffic's)
  never takes the words of a callsign named exactly: "... to Warsaw, Easy one" is easyJet 1, not
  Topswiss 1 misheard from "to Warsaw ... one". A flight number taken as ours loosely that
  nearby traffic's fits as loosely is neither's for sure, so ``other``: "Wizz Air niner, five
  thousand feet" from WZZ9, written WZZ95000, is our WZZ95 run on and WZZ9's too. By voice, so
  is ours heard exactly beside traffic whose flight number is ours with more digits, where no
  clear word follows it (`_digit_lost`): the recognizer may have lost the traffic's last digit.
- ``other``: another aircraft's: a callsign of nearby traffic (never applied to us, even beside
  ours, nor where only another transcript of the same audio names it: the recognizer was unsure
  whose callsign it heard), or a callsign that is not ours while ours is not named ("Lufthansa
  359"; "Scandinavian 827" when we are 372).
- ``missing``: no callsign at all.

A foreign callsign whose telephony is also a phonetic letter ("delta 5", Delta Air Lines) is not
taken as a callsign unless it is nearby traffic: taxi routes and holding points say "delta 5".

`screen` applies the rule of the engine (see docs/architecture.md "Who is talking"): ``other`` is
always refused with "station calling <station>, say again your callsign"; ``missing`` only where
the controller needs the callsign: on first contact (the pilot state opens contact,
`engine.first_contact`: the first pilot state of a flow the pilot calls in, or a pilot state reached
after a handoff, and the controller has not yet spoken to us in that state), and whenever nearby
traffic is listed (`Session.traffic`): with another aircraft on frequency a readback without a
callsign could be either's, the classic callsign confusion. A MAYDAY, PAN PAN or radio check (an
interrupt flow's trigger) is answered all the same. Alone on frequency, a readback or any reply
to the controller without a callsign is judged as usual (real controllers accept it); the trace
says the callsign was missing.

Everything here is pure: it reads the session, never changes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from rapidfuzz.distance import Levenshtein

from engine.first_contact import first_contact
from engine.hearing import Hearing
from engine.models import Session
from engine.phraseology.alphabet import WORD_LETTERS, letter_of
from engine.phraseology.callsigns import (
    AIRLINES,
    ParsedCallsign,
    abbreviated_registration,
    find,
    parse_callsign,
)
from engine.phraseology.context import Context
from engine.phraseology.number_passes import DIGITS
from engine.phraseology.transcript import Transcript, normalize_transcript, tokenize
from engine.triggers import first_word_hit, word_triggers
from engine.vocabulary import base_vocabulary, radio_vocabulary

if TYPE_CHECKING:
    from engine.registry import FlowRegistry

MAX_TRAFFIC = 50  # callsigns of nearby traffic a session keeps
MAX_FLIGHT_EDITS = 1  # flight number characters the recognizer may get wrong in our callsign
_DIGIT_SOUNDS = frozenset({"won", "ate", "fore"})  # words recognizers write for a digit, more than one edit from it

# Designators whose telephony is also a phonetic letter ("Delta"): "delta 5" is a taxiway first.
_LETTER_TELEPHONY = frozenset(code for code, (tel, _) in AIRLINES.items() if tel.casefold() in WORD_LETTERS)


class Verdict(StrEnum):
    OURS = "ours"
    GARBLED = "garbled"  # ours, as the recognizer mangled it
    OTHER = "other"  # another aircraft's
    MISSING = "missing"  # no callsign named


@dataclass(frozen=True, slots=True)
class Identity:
    verdict: Verdict
    reason: str
    heard: str | None = None  # the callsign the verdict rests on (canonical), if any
    named: tuple[str, ...] = ()  # every callsign the transcript names, in order
    traffic: bool = False  # `heard` is a callsign of nearby traffic

    @property
    def is_ours(self) -> bool:
        return self.verdict in (Verdict.OURS, Verdict.GARBLED)


@dataclass(frozen=True, slots=True)
class Screening:
    """`identify` plus the engine's rule: whether the controller refuses the transmission."""

    identity: Identity
    first_contact: bool
    refuse: bool
    reason: str

    def trace_data(self) -> dict[str, Any]:
        return {
            "verdict": self.identity.verdict.value,
            "heard": self.identity.heard,
            "named": list(self.identity.named),
            "traffic": self.identity.traffic,
            "first_contact": self.first_contact,
            "refused": self.refuse,
        }


# --------------------------------------------------------------------------- identify


def own_codes(callsign: Any, callsign_spoken: Any = None) -> tuple[ParsedCallsign | None, frozenset[str]]:
    """Our callsign parsed, and every code that is ours: "DLH359", and the code its spoken form
    parses to when the scenario gave another telephony ("Hansa 359" stays DLH359 via `find`)."""
    own = parse_callsign(callsign) if isinstance(callsign, str) and callsign.strip() else None
    codes: set[str] = set()
    if own is not None:
        codes.add(own.letters)
        spoken = (
            parse_callsign(callsign_spoken) if isinstance(callsign_spoken, str) and callsign_spoken.strip() else None
        )
        if spoken is not None and spoken.flight == own.flight:
            codes.add(spoken.letters)
    return own, frozenset(codes)


def _letters(code: str) -> str:
    return code.replace("-", "").upper()


def identify(
    transcript: Transcript | str,
    *,
    callsign: Any,
    callsign_spoken: Any = None,
    abbreviated: bool = False,
    traffic: Iterable[str] = (),
    spoken: bool = False,
    vocabulary: frozenset[str] | None = None,
) -> Identity:
    """Whose callsign `transcript` names (see the module docstring for the verdicts); `spoken`:
    the transcript is a recognizer's, `vocabulary` the radio's words (`_digit_lost`)."""
    t = transcript if isinstance(transcript, Transcript) else tokenize(transcript)
    own, mine = own_codes(callsign, callsign_spoken)
    nearby = {_letters(p.code): p for c in traffic if (p := parse_callsign(str(c))) is not None}
    for code in mine:
        nearby.pop(code, None)  # a list naming ourselves: we are never traffic

    found: dict[int, str] = {h.index: h.value for h in find(t, Context())}  # written/spoken, any airline
    exact = dict(found)
    exact_own: set[int] = {i for i, code in found.items() if _letters(code) in mine}
    if own is not None:
        variables = {"callsign_spoken": callsign_spoken} if isinstance(callsign_spoken, str) else {}
        for hit in find(t, Context(own.code, variables)):  # fuzzy telephony, registrations
            if hit.index not in found and _inside_another(t, hit.index, exact, mine):
                continue  # "... to Warsaw, Easy one" is easyJet 1 said right, not Topswiss 1 misheard
            if hit.index not in found or _letters(hit.value) in mine:
                found[hit.index] = hit.value
    for parsed in nearby.values():  # traffic misspelled or spelled ("lufthanza 359", registrations)
        for hit in find(t, Context(parsed.code)):
            if _letters(hit.value) != _letters(parsed.code) or hit.index in exact_own:
                continue
            if hit.index not in exact and _inside_another(t, hit.index, exact, frozenset({_letters(parsed.code)})):
                continue  # "... to Warsaw, Tomjet one" is ours said right, not Westjet 1 misheard
            found[hit.index] = hit.value
    for j in sorted(found):  # "nor shuttle 359" names NAX359, not also SHT359 from its second word
        heard = parse_callsign(found[j]) if j in found else None
        words = len(heard.telephony.split()) if heard is not None and heard.telephony else 1
        for i in range(j + 1, j + words):
            found.pop(i, None)
            exact_own.discard(i)
    named = tuple(dict.fromkeys(found[i] for i in sorted(found)))

    traffic_hits = [code for code in named if _letters(code) in nearby]
    if traffic_hits:
        also = " (our callsign too: who is calling is unclear)" if any(_letters(c) in mine for c in named) else ""
        return Identity(Verdict.OTHER, f"names {traffic_hits[0]}, nearby traffic{also}", traffic_hits[0], named, True)
    if own is None:
        return Identity(Verdict.OURS, "the session has no callsign of its own to check", None, named)

    ours: list[tuple[Verdict, str, str, int]] = []  # (verdict, code, why, index)
    others: list[str] = []
    for i in sorted(found):
        code = found[i]
        verdict, why = _judge(t, i, code, own, mine, abbreviated, i in exact_own)
        if verdict is None:
            continue
        if verdict is Verdict.OTHER:
            others.append(code)
        else:
            ours.append((verdict, code, why, i))
    if ours:
        best = next((o for o in ours if o[0] is Verdict.OURS), ours[0])
        loose = best[0] is Verdict.GARBLED and _letters(best[1]) not in mine  # the flight number not exact
        alike = None
        if loose:
            alike = _traffic_alike(t, best, nearby)
        elif spoken:
            alike = _digit_lost(t, best, nearby, vocabulary or base_vocabulary())
        if alike is not None:
            why = f"heard {best[1]}: ours or nearby {alike}'s, misheard, cut or run on: who is calling is unclear"
            return Identity(Verdict.OTHER, why, alike, named, True)
        extra = f"; also names {', '.join(others)}" if others else ""
        return Identity(best[0], f"{best[2]}{extra}", best[1], named)
    if others:
        return Identity(Verdict.OTHER, f"names {others[0]}, not our {own.code}", others[0], named)
    return Identity(Verdict.MISSING, f"no callsign named (ours is {own.code})", None, named)


def confusable(callsign: Any, traffic: Iterable[str]) -> tuple[str, ...]:
    """The listed traffic a recognizer may hear as us or us as it: another airline with our
    flight number, our airline with a flight number one character off, cut or run on, or a
    registration one letter off ours. Beside such traffic who is talking is itself the value
    heard, so the recognizer is not told our callsign whole (`gateway.speech.stack.stt_context`:
    told it, whisper wrote a garbled "LOT seven zero four" as our "Edelweiss seven zero four",
    `livefreq bench callsign --mode voice`, seed 0)."""
    own = parse_callsign(callsign) if isinstance(callsign, str) and callsign.strip() else None
    if own is None:
        return ()
    out: list[str] = []
    for code in traffic:
        other = parse_callsign(str(code))
        if other is None or _letters(other.code) == own.letters:
            continue
        if own.is_registration or other.is_registration:
            alike = own.is_registration and other.is_registration and _near(own.letters, other.letters)
        elif other.airline == own.airline:
            alike = _near(other.flight, own.flight) or _cut_or_run_on(other.flight, own.flight)
        else:
            alike = other.flight == own.flight
        if alike:
            out.append(other.code)
    return tuple(out)


def _traffic_alike(
    t: Transcript, garbled: tuple[Verdict, str, str, int], nearby: dict[str, ParsedCallsign]
) -> str | None:
    """Nearby traffic that a callsign taken as ours garbled fits as loosely: "Wizz Air niner,
    five thousand feet" from WZZ9 is heard WZZ95000, our WZZ95 run on and WZZ9's as well (`livefreq
    bench callsign`, by text). Traffic named exactly never gets here (`identify` refuses it first),
    nor ours heard with its flight number exact and the telephony misheard: as ours said exactly,
    it stays ours beside traffic."""
    _verdict, code, _why, i = garbled
    for parsed in nearby.values():
        if _judge(t, i, code, parsed, frozenset({_letters(parsed.code)}), False, False)[0] is Verdict.GARBLED:
            return parsed.code
    return None


def _digit_lost(
    t: Transcript, ours: tuple[Verdict, str, str, int], nearby: dict[str, ParsedCallsign], vocabulary: frozenset[str]
) -> str | None:
    """By voice, nearby traffic of our airline whose flight number is ours with digits added at
    its end, where ours is heard with no clear word after it: the transcript's end, a word like
    a digit ("to", "for", "free") or a word the radio does not use. Traffic's last digit may be
    lost there: "Jetblue four tree eight two, descending" from JBU4382 was written "jetblue four
    tree eight to descend", and "... three eight nine five, climb" from JBU3895 "... eight niner.
    I'm climb" (`livefreq bench callsign --mode voice`, seed 0), each taken as ours."""
    _verdict, code, _why, i = ours
    own = parse_callsign(code)
    if own is None or own.is_registration:
        return None
    longer = [p.code for p in nearby.values() if p.airline == own.airline and p.flight.startswith(own.flight)]
    if not longer:
        return None
    end = _flight_at(t, i)
    if end is None:
        return None
    after = t.words[end + 1] if end + 1 < len(t.words) else None
    unclear = after is None or after not in vocabulary or _like_a_digit(after)
    return longer[0] if unclear else None


def _like_a_digit(word: str) -> bool:
    """A word one edit from a digit word ("to", "for", "free", "fine"), or one of the words
    recognizers write for one further from it ("won", "ate", "fore")."""
    near = (Levenshtein.distance(word, d, score_cutoff=1) <= 1 for d in DIGITS if len(d) > 2)
    return word in _DIGIT_SOUNDS or any(near)


def _inside_another(t: Transcript, i: int, exact: dict[int, str], same: frozenset[str]) -> bool:
    """Whether a loose match of a callsign starting at word `i` (ours misspelled, or nearby
    traffic's) reaches into one named exactly (`exact`) that is not the same (`same`: its
    letters): the words up to its flight number belong to that other callsign, said right."""
    end = _flight_at(t, i)
    end = i if end is None else end
    return any(i < j <= end and _letters(code) not in same for j, code in exact.items())


def _judge(
    t: Transcript, i: int, code: str, own: ParsedCallsign, mine: frozenset[str], abbreviated: bool, exact: bool
) -> tuple[Verdict | None, str]:
    """One named callsign against ours: OURS, GARBLED, OTHER, or None (not taken as a callsign)."""
    heard = parse_callsign(code)
    if heard is None:
        return None, ""
    letters = _letters(code)
    if own.is_registration:
        if letters == own.letters:
            if _registration_run(t, i).startswith(own.letters):
                return Verdict.OURS, f"our callsign {own.code}"
            short = abbreviated_registration(own.code)
            if abbreviated:
                return Verdict.OURS, f"our callsign abbreviated as the controller did ({short})"
            return Verdict.GARBLED, f"our callsign abbreviated ({short}) before the controller did: taken as ours"
        if heard.is_registration and len(letters) == len(own.letters) and _near(letters, own.letters):
            return Verdict.GARBLED, f"heard {code}: our {own.code} with one letter misheard"
    elif letters in mine:
        if exact:
            return Verdict.OURS, f"our callsign {own.code}"
        return Verdict.GARBLED, f"heard our {own.code} with the telephony misheard"
    elif heard.airline == own.airline and _near(heard.flight, own.flight):
        return Verdict.GARBLED, f"heard {code}: our {own.code} with one character of the flight number misheard"
    elif heard.airline == own.airline and _cut_or_run_on(heard.flight, own.flight):
        return Verdict.GARBLED, f"heard {code}: our {own.code} with the flight number cut or run on"
    if heard.airline in _LETTER_TELEPHONY and heard.airline != own.airline:
        return None, ""  # "delta 5": a taxiway as likely as an airline
    return Verdict.OTHER, f"names {code}"


def _near(a: str, b: str) -> bool:
    return Levenshtein.distance(a, b) <= MAX_FLIGHT_EDITS


def _cut_or_run_on(a: str, b: str) -> bool:
    """One flight number is the other's start: its last digits lost, or more run into it."""
    return a.startswith(b) or b.startswith(a)


def _flight_at(t: Transcript, i: int) -> int | None:
    """The index of the flight number of a callsign whose first word is `i` (its first word in
    digits from there on), or None."""
    return next((j for j in range(i, len(t.words)) if t.words[j][:1].isdigit()), None)


def _registration_run(t: Transcript, i: int) -> str:
    """Letters and digits spelled from word i on ("delta echo alfa bravo charlie" -> "DEABC")."""
    run = ""
    for word in t.words[i : i + 8]:
        letter = letter_of(word)
        if letter:
            run += letter
        elif word.isalnum() and len(word) <= 6:
            run += word.upper()
        else:
            break
    return run


# --------------------------------------------------------------------------- when it is needed


def controller_abbreviated(session: Session) -> bool:
    """Whether the controller has abbreviated our registration (ICAO Doc 4444 12.3.1.9): the
    scenario's spoken callsign is the abbreviation, or a controller message said it."""
    own = parse_callsign(str(session.variables.get("callsign") or ""))
    if own is None or not own.is_registration:
        return False
    short = abbreviated_registration(own.code)
    if short.replace("-", "") == own.letters:
        return False  # too short to abbreviate
    spoken = str(session.variables.get("callsign_spoken") or "").upper().replace(" ", "")
    if spoken and spoken.replace("-", "") == short.replace("-", ""):
        return True
    return any(short in message.text.upper() for message in session.message_history[-50:])


def _interrupts(registry: FlowRegistry, text: str) -> bool:
    """The transmission triggers an interrupt flow (MAYDAY, PAN PAN, radio check)."""
    norm = normalize_transcript(text)
    return any(
        f.interrupt is not None and first_word_hit(word_triggers(f.interrupt.triggers), norm) is not None
        for f in registry.interrupt_flows()
    )


def screen(session: Session, registry: FlowRegistry, text: str, hearing: Hearing | None = None) -> Screening:
    """`identify` on the session's transmission `text`, and whether the controller refuses it:
    always for another aircraft's callsign, for a missing one on first contact or beside traffic."""
    variables = session.variables
    kwargs: dict[str, Any] = {
        "callsign": variables.get("callsign"),
        "callsign_spoken": variables.get("callsign_spoken"),
        "abbreviated": controller_abbreviated(session),
        "traffic": session.traffic,
        "vocabulary": radio_vocabulary(registry),
    }
    who = identify(text, **kwargs, spoken=hearing is not None)
    alternatives = [a for a in (hearing.alternatives if hearing else []) if a and a.strip()]
    rescue = who.verdict in (Verdict.OTHER, Verdict.MISSING) and not who.traffic  # traffic named: never ours
    needed = alternatives and (rescue or (who.is_ours and session.traffic))
    others = [identify(alternative, **kwargs, spoken=True) for alternative in alternatives] if needed else []
    if rescue:
        for other in others:
            if other.is_ours:
                who = Identity(
                    Verdict.GARBLED,
                    f"the best transcript: {who.reason}; an alternative transcript names our {other.heard}",
                    other.heard,
                    who.named,
                )
                break
    if who.is_ours and session.traffic:  # heard as ours: unless the recognizer also heard traffic's
        for other in others:
            if other.traffic:
                who = Identity(
                    Verdict.OTHER,
                    f"the best transcript: {who.reason}; an alternative transcript names {other.heard}, nearby"
                    " traffic: unsure whose transmission it is",
                    other.heard,
                    who.named,
                    traffic=True,
                )
                break
    first = first_contact(session, registry)
    needs_callsign = first or bool(session.traffic)
    if needs_callsign and who.verdict is Verdict.MISSING and _interrupts(registry, text):
        return Screening(who, first, False, f"{who.reason}; a distress, urgency or radio check call is answered")
    if who.verdict is Verdict.OTHER:
        return Screening(who, first, True, f"{who.reason}: not ours, the controller asks who is calling")
    if who.verdict is Verdict.MISSING and needs_callsign:
        where = "on first contact" if first else "with nearby traffic on frequency"
        return Screening(who, first, True, f"{who.reason} {where}: the controller asks who is calling")
    if who.verdict is Verdict.MISSING:
        return Screening(who, first, False, f"{who.reason}; not first contact, no traffic listed: judged as usual")
    return Screening(who, first, False, who.reason)


def _traffic_pattern() -> str:
    """A regular expression every form `parse_callsign` reads for traffic matches, and nothing
    else: an ICAO callsign ("DLH359", "dlh 359"), a registration ("D-EABC"), or a known telephony
    with the flight ("Lufthansa 359"). Adapters validate with it and publish it in their schema,
    so the two can never disagree."""
    import re as _re

    from engine.phraseology.callsigns import AIRLINES

    names = sorted({tel for tel, _ in AIRLINES.values()}, key=len, reverse=True)
    spoken = "|".join("[ -]?".join(_re.escape(part) for part in name.split()) for name in names)
    flight = "[0-9][0-9A-Za-z]{0,5}"
    return rf"^(?:[A-Za-z][A-Za-z0-9]?-?[A-Za-z0-9]{{1,6}}|[A-Za-z]{{3}} ?{flight}|(?i:{spoken}) ?{flight})$"


TRAFFIC_PATTERN = _traffic_pattern()


def traffic_codes(values: Sequence[Any]) -> list[str]:
    """Canonical codes of a traffic list, in order, once each; ValueError names the first value
    that is no callsign (for adapters validating client input)."""
    if len(values) > MAX_TRAFFIC:
        raise ValueError(f"at most {MAX_TRAFFIC} traffic callsigns, got {len(values)}")
    out: list[str] = []
    for n, value in enumerate(values):
        parsed = parse_callsign(value) if isinstance(value, str) and 0 < len(value.strip()) <= 40 else None
        if parsed is None:
            raise ValueError(f"item {n} ({value!r}) is not a callsign (e.g. 'DLH359', 'Lufthansa 359', 'D-EABC')")
        if parsed.code not in out:
            out.append(parsed.code)
    return out
