"""Readback and corrections: how a readback weighs in the routing, and what a bad one leads to.

The evaluator (engine/readback.py) says which values were heard right, wrong, unsure or missing.
This part applies it to a pilot state: it scores the state's ok/bad routes (adding the implicit
"controller correction" route when the flow has none), tells a readback that was never heard
(say again) from one without values (corrected), and counts bad readbacks against the flow's
policy. It only writes the decision and the session's readback counters and variables; the
engine says the messages and the orchestrator moves the flow.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from functools import lru_cache
from typing import Any

from engine import phraseology, value_check, value_query
from engine.candidates import Candidate
from engine.corrections import correction_text, say_again_text
from engine.doubt import Doubt, Reason
from engine.hearing import Hearing, ValueCheck
from engine.models import Decision, Flow, ReadbackResult, Role, Session, State, Transition, TransitionKind
from engine.phraseology.designators import LETTER_ANCHORS
from engine.readback import ReadbackEvaluator
from engine.value_rivals import short_frequencies, written_longer
from engine.value_words import RADIO_WORDS, said_symbols

NOISE_KEYS = ("callsign_spoken", "station_name", "airport_name", "destination_name")
# The words a pilot says right before a value of each kind. Heard by voice with the value missing
# ("... circuits and information. The by ..."), the recognizer lost the value: the pilot said it.
VALUE_ANCHORS: dict[str, frozenset[str]] = {
    "letter": LETTER_ANCHORS,
    "squawk": frozenset({"squawk", "squawking"}),
    "qnh": frozenset({"qnh", "altimeter"}),
    "designator": frozenset({"stand", "gate"}),  # a stand; a holding point's "point" is also a decimal
}


@lru_cache(maxsize=4096)
def _noise_words_of(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w for name in names for w in phraseology.normalize_transcript(name).split())


def noise_words(ctx: dict[str, Any]) -> frozenset[str]:
    """Words of the callsign and station names: they say who talks, not what is wanted."""
    names = tuple(ctx.get(k) if isinstance(ctx.get(k), str) else "" for k in NOISE_KEYS)
    return _noise_words_of(names)


def exchange_words(expected_phrases: Iterable[str], noise: frozenset[str]) -> frozenset[str]:
    """Words of the exchange beyond who is talking: the expected phrases and the radio words a
    readback carries ("wilco", "roger"), without the callsign and station names (`noise`)."""
    words = set(RADIO_WORDS)
    for phrase in expected_phrases:
        words.update(phraseology.normalize_transcript(phrase).split())
    return frozenset(words - noise)


def unheard(
    state: State,
    rb: ReadbackResult,
    text: str,
    hearing: Hearing | None,
    expected_words: frozenset[str] = frozenset(),
    noise_words: frozenset[str] = frozenset(),
) -> bool:
    """Nothing of the readback came through (an empty, cut-off or garbled transcript): the
    controller says "say again" instead of correcting a readback it never heard."""
    if not state.readback_required:
        return False
    if not text.strip() or (hearing is not None and hearing.cut_off):
        return True
    if not all(rb.fields.get(n) == "missing" for n in state.readback_required):
        return False
    if hearing is not None:
        return True  # by voice, a readback with nothing of it in the transcript was not heard
    # typed: "wilco, Lufthansa 359" or the callsign alone is a readback without values
    # (corrected); words that have nothing to do with the exchange ("Lufthansa 359, banana
    # pancakes") are not understood
    said = set(phraseology.normalize_transcript(text).split()) - noise_words
    return bool(said) and not (said & expected_words)


class BadReadback(StrEnum):
    """What follows a bad readback (see `ReadbackPolicy.bad_readback`)."""

    FLOW_ROUTE = "flow_route"  # the flow's own bad route is taken (it speaks)
    SAY_AGAIN_ITEMS = "say_again_items"  # values heard unsure: asked again, not counted
    CORRECT = "correct"  # the controller corrects, the state is kept
    END = "end"  # the controller corrects and the flow ends (on_max_bad=end)


class ReadbackPolicy:
    """The readback check of a pilot state and the bad-readback policy."""

    def __init__(self, evaluator: ReadbackEvaluator | None = None) -> None:
        self.evaluator = evaluator or ReadbackEvaluator()

    def check(
        self,
        session: Session,
        d: Decision,
        flow: Flow,
        state: State,
        text: str,
        cands: list[Candidate],
        ctx: dict[str, Any],
        hearing: Hearing | None = None,
    ) -> ReadbackResult | None:
        """The readback check (engine/readback.py): the state's required values, and every value
        the controller issued whenever the pilot says one of its kind, in any pilot state.

        Scores the ok/bad candidates of the active state; None when nothing is to be checked."""
        issued = session.issued.get(flow.slug, {})
        if state.role is not Role.PILOT or not (state.readback_required or issued):
            return None
        # an answer to "say again" is weighed against what the transmissions asked again heard
        again = session.readback_state == f"{flow.slug}:{state.id}"
        doubted = session.readback_otherwise if again and hearing is not None else []
        earlier = session.readback_margins if again and hearing is not None else {}
        if doubted or earlier:
            d.trace.add(
                "readback",
                f"asked again before at this state: heard otherwise {doubted}, held by the audio {earlier}",
                otherwise=list(doubted),
                margins=dict(earlier),
            )
        rb = self.evaluator.evaluate(
            state.readback_required,
            ctx,
            text,
            issued=issued,
            alternatives=hearing.alternatives if hearing else (),
            traffic=session.traffic,
            spoken=hearing is not None,
            doubted=doubted,
            told=hearing is not None and hearing.told,
        )
        # checks before the pilot's own correction weigh a value he called an error (value_query.checks_from)
        start = value_query.checks_from(text, hearing.alternatives) if hearing else 0
        checks = value_query.counted_checks(hearing.checks, start) if hearing else []
        if hearing is not None and hearing.checks and not rb.ok and value_query.said_twice(text):
            d.trace.add("readback", "checks in the audio not counted: the transcript says its words twice (a loop)")
        elif hearing is not None and hearing.checks and not rb.ok and not checks:
            d.trace.add("readback", "checks in the audio not counted: the pilot corrected himself after them")
        elif hearing is not None and checks and not rb.ok:
            # values the recognizer was asked to check in the audio (engine/value_query.py)
            expected = value_query.expected_values(rb, ctx, issued)
            callsign = str(ctx.get("callsign_spoken") or "")
            # a value said again otherwise after the words checked: the check of the first decides nothing
            all_issued = value_query.issued_values([*rb.fields, *issued], ctx, issued).values()
            accounted = {said_symbols(*value) for value in all_issued} | {value_query.callsign_symbols(callsign)}
            superseded = value_query.said_again_otherwise(text, checks, expected, accounted)
            checks = _not_counted(d, checks, superseded, "another value said after them")
            # a value tried run together with a digit beside it: the check is not of the value said alone
            beside = value_query.run_on(text, checks, expected)
            checks = _not_counted(d, checks, beside, "a digit right before the value, heard at another tempo")
            # a frequency written short is confirmed only where its rival allows (engine/value_rivals.py)
            rivals = short_frequencies([text, *hearing.alternatives], expected)
            # heard only as another value in the answer and in the transmission asked again: no check confirms
            # it, nor one another hearing may have the pilot correct (engine/pilot_correction.py)
            elsewhere = {name for name, why in rb.why.items() if why.kind is Doubt.CORRECTED_ELSEWHERE}
            twice = set(doubted) & set(rb.otherwise)
            # nor a frequency one hearing wrote short and another longer (engine/value_rivals.py)
            longer = set(written_longer([text, *hearing.alternatives], expected))
            unheard = twice | elsewhere
            rb, checked = value_check.apply_checks(rb, checks, expected, callsign, earlier, rivals, unheard, longer)
            if checked:
                confirmed = [c["field"] for c in checked if c["confirmed"]]
                d.trace.add("readback", f"checked in the audio: confirmed {confirmed}", checks=checked)
            asked = {c.field for c in checks} & set(rb.contradicted)
            held = sorted(f for f in asked if rb.fields.get(f) in ("unsure", "missing"))
            if held:
                d.trace.add("readback", f"not confirmed by the audio, the best transcript heard another value: {held}")
            otherwise = sorted(({c.field for c in checks} & twice) - asked)
            if otherwise:
                d.trace.add("readback", f"not confirmed by the audio, heard only as another value twice: {otherwise}")
            shorter = sorted(({c.field for c in checks} & longer) - asked)
            if shorter:
                d.trace.add("readback", f"not confirmed by the audio, a hearing wrote a digit more: {shorter}")
        if state.readback_required:
            rb = _keep_heard(session, f"{flow.slug}:{state.id}", rb, ctx, issued, d)
        if (
            hearing is not None
            and rb.missing
            and not rb.wrong
            and (any(v == "ok" for v in rb.fields.values()) or _anchor_heard(text, rb.missing))
        ):
            # By voice, a value missing from a readback that was otherwise heard, or whose own
            # anchor word was heard ("we have information." with the letter lost), is more likely
            # misheard than left out: the controller asks for it again ("say again departure")
            # instead of correcting a readback it did not hear whole.
            fields = {n: ("unsure" if v == "missing" else v) for n, v in rb.fields.items()}
            text = "not heard in a readback otherwise heard: misheard, not left out"
            lost = dict.fromkeys(rb.missing, Reason(kind=Doubt.LOST, text=text))
            rb = rb.model_copy(
                update={"fields": fields, "unsure": [*rb.unsure, *rb.missing], "missing": [], "why": {**rb.why, **lost}}
            )
        if not state.readback_required and rb.ok:
            if rb.fields:
                d.trace.add(
                    "readback", f"issued values heard and consistent: {sorted(rb.fields)}", fields=dict(rb.fields)
                )
            return None  # nothing required, nothing contradicted: routing as usual
        d.readback = rb
        d.trace.readback = rb
        heard = sum(1 for v in rb.fields.values() if v != "missing")
        share = heard / max(1, len(rb.fields))
        wrong = [w["field"] for w in rb.wrong]
        d.trace.add(
            "readback",
            "readback correct"
            if rb.ok
            else f"readback not correct: missing {rb.missing}, wrong {wrong}, unsure {rb.unsure}",
            fields=dict(rb.fields),
            alternatives=len(hearing.alternatives) if hearing else 0,
        )
        self._score(cands, rb, flow, state, 60.0 + 40.0 * share if heard else 0.0, 60.0 + 40.0 * share)
        return rb

    @staticmethod
    def _score(
        cands: list[Candidate], rb: ReadbackResult, flow: Flow, state: State, bad_score: float, ok_score: float
    ) -> None:
        """Eliminate or score the ok/bad routes; add the implicit correction route if none."""
        has_bad = False
        for c in cands:
            if c.origin != "active" or c.eliminated:
                continue
            kind = c.transition.kind
            if kind is TransitionKind.OK:
                if not rb.ok:
                    c.eliminate("readback not correct")
                else:
                    c.score = ok_score
            elif kind is TransitionKind.BAD:
                has_bad = True
                if rb.ok:
                    c.eliminate("readback correct")
                else:
                    c.score = bad_score
        if not has_bad and not rb.ok:
            implicit = Candidate(
                Transition(kind=TransitionKind.BAD, to=state.id, label="controller correction", intent="readback"),
                flow.slug,
                state.id,
                "active",
                flow.slug,
                state.id,
                score=bad_score,
            )
            cands.append(implicit)

    @staticmethod
    def bad_readback(
        session: Session,
        d: Decision,
        flow: Flow,
        state: State,
        rb: ReadbackResult,
        chosen: Candidate,
        heard: dict[str, str] | None = None,
    ) -> BadReadback:
        """Count the bad readback and apply the policy.

        A value heard unsure (and none wrong) is asked again and not counted. A wrong or missing
        value never moves the state on: after `max_bad_readbacks` the controller repeats every
        required item (correct_and_continue) or only the wrong ones (repeat), or ends the flow.
        Sets `say_again_items` or `corrections` for the template the engine says next."""
        key = f"{flow.slug}:{state.id}"
        _at_state(session, key)
        session.readback_heard = dict(heard or {})  # kept for a readback in parts (`heard_right`)
        # by voice, a value heard right but kept for no later transmission (`NOT_KEPT_BY_VOICE`) is
        # asked for or said again now, with the rest: asked later, the controller would ask twice
        unkept = (
            [] if heard is None else [n for n in state.readback_required if rb.fields.get(n) == "ok" and n not in heard]
        )
        if unkept:
            d.trace.add(
                "readback", f"heard right, said with the rest: {unkept} (by voice, kept for no later transmission)"
            )
        if rb.unsure and not rb.wrong:
            asked = list(dict.fromkeys([*rb.unsure, *rb.missing, *unkept]))
            _remember_doubt(session, rb, asked)
            items = say_again_text(asked)
            session.variables["say_again_items"] = items
            d.intent = "say_again_items"
            why = {name: rb.why[name] for name in rb.unsure if name in rb.why}
            because = "".join(f"; {name}: {reason.text}" for name, reason in why.items())
            d.trace.add(
                "readback",
                f"unsure hearing of {rb.unsure}: controller asks to say again {items}{because}",
                asked=asked,
                why={name: reason.text for name, reason in why.items()},
                doubt={name: str(reason.kind) for name, reason in why.items()},
            )
            return BadReadback.SAY_AGAIN_ITEMS
        session.readback_otherwise, session.readback_margins = [], {}  # corrected: the value was said to the pilot
        session.bad_readbacks += 1
        policy = flow.policies
        at_max = session.bad_readbacks >= policy.max_bad_readbacks
        everything = at_max and policy.on_max_bad == "correct_and_continue"
        shown = rb.model_copy(update={"fields": {**rb.fields, **dict.fromkeys(unkept, "missing")}}) if unkept else rb
        corrections = correction_text(state.readback_required, session.variables, shown, everything=everything)
        session.variables["corrections"] = corrections
        explicit = chosen.transition.to != state.id or chosen.transition.label != "controller correction"
        d.trace.add(
            "readback", f"bad readback {session.bad_readbacks}/{policy.max_bad_readbacks} at {key}: {corrections}"
        )
        if not at_max or policy.on_max_bad != "end":
            if explicit and not at_max:
                return BadReadback.FLOW_ROUTE
            if at_max:
                d.trace.add(
                    "policy", f"on_max_bad={policy.on_max_bad} after {session.bad_readbacks} bad readbacks: state kept"
                )
                session.bad_readbacks = 0
            return BadReadback.CORRECT
        d.trace.add("policy", f"on_max_bad=end after {session.bad_readbacks} bad readbacks")
        session.clear_readback()
        return BadReadback.END


def _not_counted(d: Decision, checks: list[ValueCheck], dropped: list[ValueCheck], why: str) -> list[ValueCheck]:
    """`checks` without those `dropped` (by identity: two checks may be equal), the fields
    dropped and `why` in the trace: each rule that sets checks aside says so the same way."""
    if not dropped:
        return checks
    d.trace.add("readback", f"checks in the audio not counted: {why}: {sorted({c.field for c in dropped})}")
    return [c for c in checks if not any(c is x for x in dropped)]


def remember_unheard(session: Session, key: str, rb: ReadbackResult) -> None:
    """A readback of which nothing was heard clearly, asked again whole ("say again"): what its
    hearings and checks held against the values is kept for the answer, as for one asked again
    for items (`_remember_doubt`; held-out seed 126 #85: "papa nineteen" for P9 E1, every check
    of the first transmission 4.3 or more against P9 E1, then one check of the answer, after a
    transcript that lost the route, passing by 3.4 at 1.25x)."""
    _at_state(session, key)
    _remember_doubt(session, rb, list(dict.fromkeys([*rb.unsure, *rb.missing])))


def _at_state(session: Session, key: str) -> None:
    """The readback's count and doubts are the state `key`'s: another state's are dropped."""
    if session.readback_state != key:
        session.clear_readback()
        session.readback_state = key


def _remember_doubt(session: Session, rb: ReadbackResult, asked: list[str]) -> None:
    """What this transmission, asked again for `asked`, heard against their issued values, kept
    for the answer (`Session.readback_otherwise`, `readback_margins`): heard as another value by
    a transcript, and the margin its checks held against the value per question (model and
    placement), added to what transmissions asked again before held (negative evidence only: a
    margin short of confirming is no proof).
    The same pilot says the same words again; the answer is weighed with them (held-out seeds 93
    and 94: a changed taxi route and runway accepted in the answer, on one hearing of the issued
    value where the first transmission's transcripts, or all of its checks, heard another)."""
    otherwise = set(session.readback_otherwise) | set(rb.otherwise)
    session.readback_otherwise = [name for name in asked if name in otherwise]
    margins: dict[str, dict[str, float]] = {}
    for name in asked:
        before, now = session.readback_margins.get(name, {}), rb.margins.get(name, {})
        held = {q: min(0.0, before.get(q, 0.0) + now.get(q, 0.0)) for q in {*before, *now}}
        if any(m < 0 for m in held.values()):
            margins[name] = {q: m for q, m in held.items() if m < 0}
    session.readback_margins = margins


def _anchor_heard(text: str, missing: list[str]) -> bool:
    """Whether the anchor word of a missing value's kind (`VALUE_ANCHORS`) was heard."""
    words = set(phraseology.tokenize(text).words)
    return any(words & VALUE_ANCHORS.get(phraseology.kind_for_variable(name), frozenset()) for name in missing)


def _issued_value(name: str, ctx: dict[str, Any], issued: dict[str, Any]) -> str:
    """The value of `name` the controller issued, as it is now (a value issued again differs)."""
    return str(ctx.get(name, issued.get(name)))


# Kinds whose value, heard by voice, is kept for no later transmission: the recognizer is prompted
# with the clearance limit's city (gateway.speech.stack.name_choices: without it whisper cannot
# write the city) and may write it for another one said. Judged in the transmission it is heard
# in, as before; kept, a leak there would complete a readback in parts (recorded seed 4:
# "cleared to Vienna" written "Cleared to Dusseldorf", issued, in a readback asked again).
NOT_KEPT_BY_VOICE = frozenset({"airport"})


def heard_right(
    rb: ReadbackResult, required: list[str], ctx: dict[str, Any], issued: dict[str, Any], spoken: bool
) -> dict[str, str]:
    """The required values `rb` heard right (or kept), with the value each was issued as: what a
    bad readback leaves in `Session.readback_heard`; by voice (`spoken`), none of a kind
    `NOT_KEPT_BY_VOICE`."""
    return {
        name: _issued_value(name, ctx, issued)
        for name in required
        if rb.fields.get(name) == "ok" and not (spoken and phraseology.kind_for_variable(name) in NOT_KEPT_BY_VOICE)
    }


def left_to_read(session: Session, flow: Flow, state: State, ctx: dict[str, Any]) -> list[str]:
    """The required values still to read back at `state` after a bad readback there: those the
    session does not hold as read back right (`Session.readback_heard`, at the value issued now).
    Empty with nothing held: then the whole readback is what the pilot says."""
    if session.readback_state != f"{flow.slug}:{state.id}" or not session.readback_heard:
        return []
    issued = session.issued.get(flow.slug, {})
    held = {n for n, v in session.readback_heard.items() if v == _issued_value(n, ctx, issued)}
    return [n for n in state.readback_required if n not in held]


def _keep_heard(
    session: Session, key: str, rb: ReadbackResult, ctx: dict[str, Any], issued: dict[str, Any], d: Decision
) -> ReadbackResult:
    """A readback in parts: a required value the pilot read back right earlier at this state
    (`Session.readback_heard`, which `bad_readback` leaves) and leaves out now is still read back.
    Asked "say again QNH", a pilot says the QNH, not the whole clearance again; corrected on one
    item, the corrected item. Only a value left out is kept: one said again is judged as said now
    (a wrong one is wrong, an unsure one asked again), and one issued anew since is not the value
    read back. Reads the session, never writes it (`route_query` routes on the live session)."""
    held = session.readback_heard if session.readback_state == key else {}
    kept = sorted(
        name
        for name, value in held.items()
        if rb.fields.get(name) == "missing" and value == _issued_value(name, ctx, issued)
    )
    if not kept:
        return rb
    fields = {**rb.fields, **dict.fromkeys(kept, "ok")}
    missing = [m for m in rb.missing if m not in kept]
    ok = all(status == "ok" for status in fields.values())
    d.trace.add("readback", f"read back right before at this state, kept: {kept}", kept=kept)
    return rb.model_copy(update={"fields": fields, "missing": missing, "ok": ok})
