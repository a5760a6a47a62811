"""Routing: which transition a pilot transmission asks for.

Builds the candidates of the current states (engine/candidates.py), eliminates them by guards,
target conditions and word triggers, lets the readback check score the readback routes, asks the
deterministic router (engine/router.py), and finally settles the choice the readback decides: a
wrong or unsure value is never accepted, and a readback that was not heard is asked again. Only
the decision (trace, readback) is written, never the session.

By voice, a route other than the readback's is taken only where another transcript of the same
audio (`Hearing.alternatives`: the recognizer's n-best, a masked best, the earlier hearings)
routes there too (`heard_alike`): unsure hearing is no verdict, for what the pilot asks as for
the values read back. Found on the voice bench (seed 55, Kokoro): a readback of our callsign
alone ("Egyptair tree two", the heading dropped), heard by whisper base as "Egyptair, cancel."
while every other transcript had "tree two", cancelled the emergency and ended the flow.
"""

from __future__ import annotations

from typing import Any

from engine import phraseology, readback_policy
from engine.candidates import Candidate, build_candidates
from engine.guards import session_holds
from engine.hearing import Hearing
from engine.messages import render_text
from engine.models import (
    CandidateTrace,
    Decision,
    Flow,
    ReadbackResult,
    Session,
    State,
    Transition,
    TransitionKind,
)
from engine.readback import ReadbackEvaluator
from engine.readback_policy import ReadbackPolicy
from engine.registry import FlowRegistry
from engine.router import DeterministicRouter, Router, RouteRequest, RouteResult, similarity
from engine.speaking import Speaker
from engine.triggers import first_word_hit, intent_hit, word_triggers
from engine.vocabulary import radio_vocabulary

SAY_AGAIN_MAX_WORDS = 8
# By voice, a route the LLM chose stands where another transcript has the same words as the best
# (rapidfuzz, as the router scores phrases): "engine" for "engines" is 98, "pushback" for
# "engines" 79, so one differing word of a short request is not the same words.
LLM_SAME_WORDS = 90.0


def is_say_again(norm: str) -> bool:
    """A short transmission asking the controller to repeat (a long one says more than that)."""
    return len(norm.split()) <= SAY_AGAIN_MAX_WORDS and intent_hit("say_again", norm)


def is_unable(norm: str, state: State, chosen: Candidate) -> bool:
    """The pilot said "unable" where a readback is due, and the flow routes no "unable" of its
    own: the pilot declines the clearance, which is no readback of it, whatever values were said
    ("unable flight level two four zero" read every value right)."""
    return (
        bool(state.readback_required)
        and chosen.transition.kind in (TransitionKind.OK, TransitionKind.BAD)
        and intent_hit("unable", norm)
    )


def trace_candidate(c: Candidate) -> CandidateTrace:
    """A candidate as the decision's trace shows it."""
    return CandidateTrace(
        id=c.id,
        flow=c.target_flow,
        kind=c.transition.kind.value,
        label=c.transition.label or c.transition.intent,
        score=c.score,
        eliminated=c.eliminated,
        reason=c.reason,
        status=c.status,
        evidence=c.evidence,
    )


def has_main_route(state: State, t: Transition) -> bool:
    """True when `t` is a side route: another untriggered next/ok route owns the state's phrase."""
    return any(
        o is not t and o.kind in (TransitionKind.NEXT, TransitionKind.OK) and not o.triggers and not o.utterance_tpl
        for o in state.transitions
    )


class RouteChooser:
    """Candidates, guards, the readback and the router: the route a transmission takes."""

    def __init__(
        self,
        registry: FlowRegistry,
        *,
        router: Router | None = None,
        readback: ReadbackPolicy | None = None,
        speaker: Speaker | None = None,
    ) -> None:
        self.registry = registry
        self.router: Router = router or DeterministicRouter()
        self.readback = readback or ReadbackPolicy(ReadbackEvaluator(radio_vocabulary(registry)))
        self.speaker = speaker or Speaker(registry)

    def route(
        self,
        session: Session,
        d: Decision,
        flow: Flow,
        state: State,
        text: str,
        norm: str,
        hearing: Hearing | None = None,
    ) -> tuple[list[Candidate], ReadbackResult | None, RouteResult, dict[str, Any]]:
        """Candidates, guards, triggers, the readback and the deterministic router; only `d` is
        written (trace, readback), never the session."""
        ctx = self.speaker.render_ctx(session, flow, state)
        cands = self.screened(session, norm, ctx)
        d.trace.add("candidates", f"{len(cands)} candidate(s) from {flow.slug}:{state.id}")
        rb = self.readback.check(session, d, flow, state, text, cands, ctx, hearing)  # reads ctx, never writes it
        request = RouteRequest(norm, cands, flow.policies.match_threshold, readback_policy.noise_words(ctx))
        return cands, rb, self.router.route(request), ctx

    def screened(self, session: Session, norm: str, ctx: dict[str, Any]) -> list[Candidate]:
        """The session's candidates, each screened against the words `norm` (`screen`)."""
        cands = build_candidates(self.registry, session)
        for c in cands:
            self.screen(session, c, norm, ctx)
        return cands

    def screen(self, session: Session, c: Candidate, norm: str, ctx: dict[str, Any]) -> None:
        """Guards, target conditions and word triggers: eliminate or mark a trigger hit."""
        t = c.transition
        if t.guard and not session_holds(session, t.guard):
            c.eliminate(f"guard false: {t.guard}")
            return
        target = self.registry.flows.get(c.target_flow)
        tstate = target.states.get(c.target_state) if target else None
        if tstate is not None:
            for cond in tstate.conditions:
                if not session_holds(session, cond):
                    c.eliminate(f"condition of {c.target_state} false: {cond}")
                    return
        words = word_triggers(t.triggers)
        if words:
            c.heard = first_word_hit(words, norm)
            c.trigger_hit = c.heard is not None
        if c.origin == "interrupt":
            if not c.trigger_hit:
                c.eliminate("interrupt trigger not heard")
            return
        if t.kind in (TransitionKind.OK, TransitionKind.BAD):
            return  # readback routes are scored by the readback evaluator
        source = self.registry.get(c.flow).states[c.state]
        example = t.utterance_tpl
        if example is None and (not words or not has_main_route(source, t)):
            example = source.utterance_tpl  # the state's phrase belongs to its main route
        if example:
            c.examples.append(render_text(example, ctx))

    def settle(
        self,
        session: Session,
        d: Decision,
        state: State,
        text: str,
        cands: list[Candidate],
        rb: ReadbackResult | None,
        result: RouteResult,
        ctx: dict[str, Any],
        hearing: Hearing | None = None,
    ) -> Candidate | None:
        """The route taken, once the readback had its say: a wrong or unsure value outranks
        anything else heard (correction), and a readback with nothing recognized is corrected
        unless nothing of it was heard at all (None: say again)."""
        chosen = result.chosen
        if chosen is not None and chosen.transition.kind not in (TransitionKind.OK, TransitionKind.BAD):
            if not self.heard_alike(session, chosen, text, hearing, ctx, by_llm=result.router == "llm"):
                d.trace.add("select", f"{chosen.id} is heard in no other transcript of the audio: not taken")
                chosen = None
        bad = next((c for c in cands if c.transition.kind is TransitionKind.BAD and not c.eliminated), None)
        if (
            rb is not None
            and (rb.wrong or rb.unsure)
            and bad is not None
            and (chosen is None or chosen.origin != "interrupt")
        ):
            if chosen is not bad:  # a wrong or unsure value is never accepted, whatever else was said
                what = "a wrong value" if rb.wrong else "a value heard unsure"
                d.trace.add(
                    "select", f"{what} outranks {chosen.id if chosen else 'no route'}: correction, no state change"
                )
            chosen = bad
        elif chosen is None and rb is not None and not rb.ok:
            noise = readback_policy.noise_words(ctx)
            expected = readback_policy.exchange_words(self.speaker.expected_pilot(session), noise)
            if readback_policy.unheard(state, rb, text, hearing, expected, noise):
                d.trace.add("select", "nothing of the readback was heard clearly: say again")
                if hearing is not None:  # by voice: the answer is weighed with what this one held
                    readback_policy.remember_unheard(session, f"{session.active.flow}:{state.id}", rb)
            else:
                chosen = bad
                if chosen is not None:
                    d.trace.add("select", "nothing else recognized: treated as an incomplete readback")
        return chosen

    def heard_alike(
        self,
        session: Session,
        chosen: Candidate,
        text: str,
        hearing: Hearing | None,
        ctx: dict[str, Any],
        by_llm: bool = False,
    ) -> bool:
        """Whether `chosen` stands by voice: no other transcript of the audio (typed text, or a
        hearing without alternatives), or one of them routes to it as well (it remains there).
        Chosen by the LLM (`by_llm`) from words the deterministic router could not place: one
        with the best transcript's words (`LLM_SAME_WORDS`), so the LLM would have read the same."""
        alternatives = [a for a in (hearing.alternatives if hearing else []) if a and a.strip()]
        if not alternatives:
            return True
        noise = readback_policy.noise_words(ctx)
        threshold = self.registry.get(session.active.flow).policies.match_threshold  # as `route` asked
        best = phraseology.normalize_transcript(text) if by_llm else ""
        for alternative in alternatives:
            norm = phraseology.normalize_transcript(alternative)
            if by_llm and similarity(best, norm, noise) >= LLM_SAME_WORDS:
                return True
            cands = self.screened(session, norm, ctx)
            self.router.route(RouteRequest(norm, cands, threshold, noise))
            if any(c.id == chosen.id and c.status == "remains" for c in cands):
                return True
        return False
