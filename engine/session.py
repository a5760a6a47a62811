"""SessionEngine: the deterministic decision algorithm of seed 000, one input at a time.

Every input (start, pilot transmission, clock tick, telemetry, tune) goes through the same steps:
build candidates, eliminate by guards and triggers, check the readback, route, apply updates
through the orchestrator, auto-advance through atc/system states to the next pilot turn, and
return a `Decision` with ordered controller messages and a trace. The engine mutates the session
it is given and does no I/O; time is always passed in (`now`, seconds), so tests use a virtual
clock and the gateway its event loop's clock.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from engine import identity, phraseology, timers
from engine.candidates import Candidate, build_candidates
from engine.corrections import correction_text, say_again_text
from engine.guards import holds as guard_holds
from engine.messages import build_message, frequency_var, render_text, speaking_context, station_frequency
from engine.models import (
    CandidateTrace,
    Decision,
    DecisionRecord,
    Flow,
    FlowFrame,
    FlowMode,
    Hearing,
    ReadbackResult,
    Role,
    Session,
    TELEMETRY_KEYS,
    State,
    Transition,
    TransitionKind,
)
from engine.orchestrator import FlowChange, FlowOrchestrator
from engine.readback import ReadbackEvaluator, record_issued
from engine.registry import FlowRegistry
from engine.router import DeterministicRouter, RouteRequest, RouteResult, Router, Routing
from engine.router_llm import (
    ConsultReason,
    FallbackPolicy,
    RouterQuery,
    RouterVerdict,
    build_query,
    consult_reason,
    json_type,
    offered,
)
from engine.templates import template_vars
from engine.triggers import first_word_hit, intent_hit, telemetry_true, word_triggers

MAX_HOPS = 40
HISTORY_LIMIT = 500
_SAY_AGAIN_MAX_WORDS = 8
_OPEN_KINDS = (TransitionKind.NEXT, TransitionKind.AUTO, TransitionKind.OK, TransitionKind.RETURN)


_RADIO_WORDS = ("wilco", "roger", "copied", "copy", "readback", "read", "back", "affirm", "cleared", "correct", "okay", "ok")
_NOISE_KEYS = ("callsign_spoken", "station_name", "airport_name", "destination_name")


@lru_cache(maxsize=4096)
def _noise_words_of(names: tuple[str, ...]) -> frozenset[str]:
    """Words of the callsign and station names: they say who talks, not what is wanted."""
    return frozenset(w for name in names for w in phraseology.normalize_transcript(name).split())


class SessionEngine:
    """Plays flows for sessions. Holds only immutable configuration; sessions are passed in."""

    def __init__(
        self,
        registry: FlowRegistry,
        *,
        router: Router | None = None,
        readback: ReadbackEvaluator | None = None,
        max_hops: int = MAX_HOPS,
        llm_fallback: FallbackPolicy = "say_again",
    ) -> None:
        self.registry = registry
        self.router: Router = router or DeterministicRouter()
        self.llm_fallback: FallbackPolicy = llm_fallback  # when the LLM router's answer is unusable
        self.readback = readback or ReadbackEvaluator()
        self.orchestrator = FlowOrchestrator(registry)
        self.max_hops = max_hops

    # ------------------------------------------------------------------ public API

    def start(
        self,
        *,
        variables: dict[str, Any],
        session_id: str,
        flow: str | None = None,
        now: float = 0.0,
        seed: int | None = None,
    ) -> tuple[Session, Decision]:
        """Create a session at the start of `flow` (default: the registry's main flow) and play
        the controller's opening messages, if any."""
        slug = flow or self.registry.main_flow
        first = self.registry.get(slug)
        session = Session(
            session_id=session_id,
            main_flow=slug,
            active=FlowFrame(flow=slug, state=first.start_state, mode=FlowMode.MAIN),
            variables=dict(variables),
            created_at=now,
            updated_at=now,
            seed=seed,
        )
        return session, self._restart(session, now, "start")

    def reset(self, session: Session, now: float) -> Decision:
        """Start the session's scenario again from its first flow, keeping its variables."""
        slug = session.start_flow or session.main_flow
        session.active = FlowFrame(flow=slug, state=self.registry.get(slug).start_state)
        session.main_flow = slug
        session.flow_stack.clear()
        session.parallel_flows.clear()
        session.timers.clear()
        session.flags.clear()
        session.telemetry_since.clear()
        session.completed = False
        return self._restart(session, now, "reset")

    def transmit(
        self,
        session: Session,
        text: str,
        now: float,
        llm: RouterVerdict | None = None,
        *,
        hearing: Hearing | None = None,
    ) -> Decision:
        """One pilot transmission (typed, or a final transcript).

        `llm` is the LLM router's verdict on `route_query(session, text)`, when the gateway asked
        one: it is used only if the question is still the same (see engine/router_llm.py).
        `hearing` is what the recognizer was unsure of (voice only): a readback value that the
        alternatives disagree on is not judged but asked again."""
        return self.decide(session, text, now, llm, hearing=hearing)[0]

    def decide(
        self,
        session: Session,
        text: str,
        now: float,
        llm: RouterVerdict | None = None,
        *,
        hearing: Hearing | None = None,
    ) -> tuple[Decision, Routing | None]:
        """`transmit`, and how the transmission was routed (None when it was not: a say again,
        a completed session), for adapters that explain a decision."""
        session.transmissions += 1
        d = self._begin(session, "transmit", now)
        d.transmission_id = f"{session.session_id}-x{session.transmissions}"
        d.pilot_text = text
        if llm is not None:  # tokens are spent whatever becomes of the answer
            usage = session.llm
            usage.calls += 1
            usage.prompt_tokens += llm.exchange.prompt_tokens
            usage.completion_tokens += llm.exchange.completion_tokens
            usage.total_tokens += llm.exchange.total_tokens
        norm = phraseology.normalize_transcript(text)
        d.trace.add("input", f"normalized transcript: {norm!r}")
        routing: Routing | None = None
        if session.completed:
            d.recognized = False
            d.trace.add("error", "session already completed; nothing to decide")
            d.trace.errors.append("session_completed")
            self._unused(session, d, llm, "the session completed meanwhile")
            return self._finish(session, d), None
        active = session.active
        timers.cancel_state(session, active.flow, active.state, kind="silence")
        session.silence_prompts = 0
        if self._is_say_again(norm):
            self._unused(session, d, llm, "the pilot asked to say again")
            self._say_again(session, d, now)
            return self._finish(session, d), None
        who = identity.screen(session, self.registry, text, hearing)  # who is talking (engine/identity.py)
        d.trace.add("callsign", who.reason, **who.trace_data())
        if who.refuse:  # another aircraft's callsign, or none on first contact: nothing is applied
            flow = self.registry.get(active.flow)
            state = flow.states[active.state]
            d.recognized, d.intent = False, "station_calling"
            self._unused(session, d, llm, "the controller asked who is calling")
            self._say(session, d, flow, state, flow.policies.station_calling_tpl, now)
            self._arm_silence(session, flow, state, now, force=True)
            return self._finish(session, d), None
        routing = self._decide(session, d, text, norm, now, llm, hearing)
        return self._finish(session, d), routing

    def route_query(self, session: Session, text: str) -> RouterQuery | None:
        """The question for the LLM router if `text` were transmitted now, or None when the
        deterministic router decides it alone. Changes nothing: the gateway asks the model with
        it, then calls `transmit(..., llm=verdict)`."""
        if session.completed:
            return None
        norm = phraseology.normalize_transcript(text)
        if self._is_say_again(norm) or identity.screen(session, self.registry, text).refuse:
            return None
        flow = self.registry.get(session.active.flow)
        state = flow.states[session.active.state]
        scratch = self._begin(session, "transmit", session.updated_at)
        cands, _rb, result, ctx = self._route(session, scratch, flow, state, text, norm)
        reason = consult_reason(result, cands)
        if reason is None:
            return None
        return self._query(session, flow, state, text, norm, cands, result, reason, ctx)

    @staticmethod
    def _is_say_again(norm: str) -> bool:
        return len(norm.split()) <= _SAY_AGAIN_MAX_WORDS and intent_hit("say_again", norm)

    def tick(self, session: Session, now: float) -> list[Decision]:
        """Fire every due timer exactly once and take telemetry transitions whose hold elapsed."""
        out: list[Decision] = []
        auto = self._check_auto(session, now, "tick")
        if auto is not None:
            out.append(auto)
        while (rec := timers.take_due(session, now)) is not None:
            located = self._locate(session, rec.flow, rec.state)
            if located is None:
                continue  # the state was left: the record is consumed and does nothing
            origin, frame = located
            flow = self.registry.get(frame.flow)
            state = flow.states[frame.state]
            d = self._begin(session, "tick", now)
            d.trace.add("timer", f"timer {rec.id} ({rec.kind}) due at {rec.due:g}s fired at {now:g}s", timer=rec.id)
            if rec.kind == "silence":
                self._silence_prompt(session, d, flow, state, now)
            elif rec.transition_index is not None and rec.transition_index < len(state.transitions):
                t = state.transitions[rec.transition_index]
                if self._guard_ok(session, t.guard):
                    self._take(session, d, frame.flow, t, now, origin)
                else:
                    d.trace.add("guard", f"timer transition to {t.to} blocked by guard {t.guard!r}")
            out.append(self._finish(session, d))
        return out

    def telemetry(self, session: Session, data: dict[str, Any], now: float) -> Decision | None:
        """Aircraft state from a simulator; may satisfy telemetry triggers (held for hold_s)."""
        for key in TELEMETRY_KEYS:
            if key in data:
                session.telemetry[key] = data[key]
        return self._check_auto(session, now, "telemetry")

    def tune(self, session: Session, frequency: str, now: float) -> Decision | None:
        """The pilot changed frequency; recorded as telemetry `com1` for guards and triggers."""
        vals = phraseology.extract("frequency", f"frequency {frequency}")
        session.telemetry["com1"] = vals[0] if vals else frequency
        session.frequency = session.telemetry["com1"]
        return self._check_auto(session, now, "tune")

    def expected_pilot(self, session: Session) -> list[str]:
        """Example phrases for the pilot's turn (rendered text), main route first."""
        flow = self.registry.get(session.active.flow)
        state = flow.states[session.active.state]
        if state.role is not Role.PILOT or session.completed:
            return []
        ctx = self._render_ctx(session, flow, state)
        out: list[str] = []
        for tpl in [state.utterance_tpl, *(t.utterance_tpl for t in state.transitions)]:
            if tpl:
                text = render_text(tpl, ctx)
                if text not in out:
                    out.append(text)
        return out

    def defer_silence(self, session: Session, now: float) -> bool:
        """Restart the silence clock of the pilot's turn from `now`.

        The gateway calls it when the controller's audio ends (the pilot cannot answer a call
        still being spoken) and while the pilot holds the key; True when a prompt was pending.
        """
        moved = False
        for rec in timers.pending(session):
            if rec.kind != "silence" or self._locate(session, rec.flow, rec.state) is None:
                continue
            due = now + self.registry.get(rec.flow).policies.silence_prompt_s
            if due != rec.due:
                rec.due = due
                moved = True
        return moved

    def next_wakeup(self, session: Session) -> float | None:
        """When the gateway's clock must call `tick` next (timer due or telemetry hold end)."""
        cands = [t for t in [timers.next_due(session)] if t is not None]
        for key, since in session.telemetry_since.items():
            hold = self._hold_of(session, key)
            if hold is not None:
                cands.append(since + hold)
        return min(cands) if cands else None

    # ------------------------------------------------------------------ deciding

    def _route(
        self, session: Session, d: Decision, flow: Flow, state: State, text: str, norm: str, hearing: Hearing | None = None
    ) -> tuple[list[Candidate], ReadbackResult | None, RouteResult, dict[str, Any]]:
        """Candidates, guards, triggers, the readback and the deterministic router; only `d` is
        written (trace, readback), never the session."""
        cands = build_candidates(self.registry, session)
        d.trace.add("candidates", f"{len(cands)} candidate(s) from {flow.slug}:{state.id}")
        ctx = self._render_ctx(session, flow, state)
        for c in cands:
            self._screen(session, c, norm, ctx)
        rb = self._readback(session, d, flow, state, text, cands, hearing)
        request = RouteRequest(norm, cands, flow.policies.match_threshold, self._noise_words(session, ctx))
        return cands, rb, self.router.route(request), ctx

    def _decide(
        self,
        session: Session,
        d: Decision,
        text: str,
        norm: str,
        now: float,
        llm: RouterVerdict | None,
        hearing: Hearing | None = None,
    ) -> Routing:
        flow = self.registry.get(session.active.flow)
        state = flow.states[session.active.state]
        cands, rb, result, ctx = self._route(session, d, flow, state, text, norm, hearing)
        rule = result.rule  # the deterministic rule, kept when the LLM decides after it
        consult = consult_reason(result, cands)
        if consult is not None:
            query = self._query(session, flow, state, text, norm, cands, result, consult, ctx)
            result = self._consult(session, d, query, result, cands, llm)
        else:
            self._unused(session, d, llm, "the deterministic router decides this transmission now")
        d.trace.router = {
            "name": result.router,
            "scores": result.scores,
            "threshold": flow.policies.match_threshold,
            "reason": result.reason,
            "ambiguous": result.ambiguous,
            "rule": rule,  # seed 000 steps 7/8 (engine/router.py)
            "consult": consult,
            "llm": result.llm,
            "fallback": result.fallback,
        }
        chosen = result.chosen
        bad = next((c for c in cands if c.transition.kind is TransitionKind.BAD and not c.eliminated), None)
        if rb is not None and (rb.wrong or rb.unsure) and bad is not None and (chosen is None or chosen.origin != "interrupt"):
            if chosen is not bad:  # a wrong or unsure value is never accepted, whatever else was said
                what = "a wrong value" if rb.wrong else "a value heard unsure"
                d.trace.add("select", f"{what} outranks {chosen.id if chosen else 'no route'}: correction, no state change")
            chosen = bad
        elif chosen is None and rb is not None and not rb.ok:
            noise = self._noise_words(session, ctx)
            if self._unheard(state, rb, text, hearing, self._exchange_words(session, flow, state, ctx), noise):
                d.trace.add("select", "nothing of the readback was heard clearly: say again")
            else:
                chosen = bad
                if chosen is not None:
                    d.trace.add("select", "nothing else recognized: treated as an incomplete readback")
        d.trace.candidates = [self._trace_cand(c) for c in cands]
        routing = Routing(cands, result, chosen, flow.policies.match_threshold)
        if chosen is None:
            d.recognized = False
            d.trace.add("select", f"unrecognized ({result.reason}): controller asks to say again")
            self._say(session, d, flow, state, flow.policies.say_again_tpl, now)
            self._arm_silence(session, flow, state, now, force=True)
            return routing
        if chosen is result.chosen:
            for name, value in result.updates.items():  # the LLM's, validated against llm_updates
                session.variables[name] = value
                d.updates[name] = value
        if chosen.transition.kind not in (TransitionKind.OK, TransitionKind.BAD):
            d.readback = None  # not answered as a readback (e.g. a radio check); the trace keeps it
        d.intent = chosen.transition.intent or chosen.transition.label or chosen.transition.kind.value
        d.trace.add("select", f"selected {chosen.id} ({chosen.transition.kind.value}, {chosen.origin}) score {chosen.score:g}")
        if chosen.origin == "interrupt":
            session.variables["interrupt_intent"] = chosen.heard  # e.g. "mayday" vs "pan_pan"
            d.updates["interrupt_intent"] = chosen.heard
            change = self.orchestrator.enter(session, chosen.target_flow, None, FlowMode.INTERRUPT)
            self._after_change(session, d, change, now)
            return routing
        if chosen.transition.kind is TransitionKind.BAD and rb is not None:
            if self._bad_readback(session, d, flow, state, rb, chosen, now):
                return routing
        self._take(session, d, chosen.flow, chosen.transition, now, chosen.origin)
        return routing

    # ------------------------------------------------------------------ the LLM router

    def _query(
        self,
        session: Session,
        flow: Flow,
        state: State,
        text: str,
        norm: str,
        cands: list[Candidate],
        result: RouteResult,
        reason: ConsultReason,
        ctx: dict[str, Any],
    ) -> RouterQuery:
        """The LLM router's question: the state, the words, the survivors and the variables
        they mention (never the whole scenario)."""
        names: set[str] = {"callsign", "callsign_spoken", "station_name", *state.readback_required}
        for tpl in (state.say_tpl, state.utterance_tpl, *(c.transition.utterance_tpl for _, c in offered(cands))):
            names.update(template_vars(tpl))
        variables = {n: ctx[n] for n in sorted(names) if isinstance(ctx.get(n), str | int | float | bool)}
        last = session.message_history[-1].text if session.message_history else None
        return build_query(
            flow=flow.slug,
            state=state.id,
            state_name=state.name,
            summary=state.summary,
            phase=state.phase,
            station=session.station,
            controller_said=last,
            transcript=text,
            normalized=norm,
            reason=reason,
            result=result,
            candidates=cands,
            threshold=flow.policies.match_threshold,
            variables=variables,
            updatable={name: json_type(flow.variables.get(name)) for name in flow.policies.llm_updates},
        )

    def _consult(
        self,
        session: Session,
        d: Decision,
        query: RouterQuery,
        result: RouteResult,
        cands: list[Candidate],
        llm: RouterVerdict | None,
    ) -> RouteResult:
        """Apply the LLM router's verdict to an ambiguous or below-threshold result."""
        why = "a near tie" if query.reason == "ambiguous" else f"no score reached {query.threshold:g}"
        if llm is None:
            d.trace.add("llm", f"{why}; no LLM router asked: the deterministic result stands", consult=query.reason)
            return result
        view = llm.trace_view(query.reason)
        by_id = dict(offered(cands))
        if llm.fingerprint != query.fingerprint or (llm.choice is not None and llm.choice not in by_id):
            view["outcome"] = "stale"
            return self._fallback(session, d, result, view, "stale", "the session moved on while the LLM answered")
        if llm.outcome == "chosen" and llm.choice is not None:
            chosen = by_id[llm.choice]
            d.trace.add("llm", f"{why}; the LLM chose {llm.choice}", choice=llm.choice, tokens=view["tokens"])
            return RouteResult(
                chosen, "llm", result.scores, f"LLM chose {llm.choice} ({query.reason})", llm=view, updates=dict(llm.updates)
            )
        if llm.outcome == "none":
            d.trace.add("llm", f"{why}; the LLM found no candidate that fits", tokens=view["tokens"])
            return RouteResult(None, "llm", result.scores, "LLM: no candidate fits", llm=view)
        return self._fallback(session, d, result, view, llm.outcome, llm.detail)

    def _fallback(
        self, session: Session, d: Decision, result: RouteResult, view: dict[str, Any], reason: str, detail: str
    ) -> RouteResult:
        """The LLM's answer is unusable: the configured policy decides, and the trace says why."""
        session.llm.fallbacks += 1
        fallback = {"reason": reason, "detail": detail, "policy": self.llm_fallback}
        d.trace.add("llm", f"LLM fallback ({reason}: {detail}); policy {self.llm_fallback}", fallback=fallback)
        if self.llm_fallback == "deterministic":
            return RouteResult(
                result.chosen, result.router, result.scores, f"{result.reason}; LLM fallback ({reason})",
                ambiguous=result.ambiguous, llm=view, fallback=fallback,
            )
        return RouteResult(None, "fallback", result.scores, f"LLM fallback ({reason}): say again", llm=view, fallback=fallback)

    def _unused(self, session: Session, d: Decision, llm: RouterVerdict | None, why: str) -> None:
        """A verdict for a question no longer asked (the session moved on): counted and traced."""
        if llm is None:
            return
        session.llm.fallbacks += 1
        d.trace.add("llm", f"LLM answer not used: {why}", reason="stale", outcome=llm.outcome)

    def _screen(self, session: Session, c: Candidate, norm: str, ctx: dict[str, Any]) -> None:
        """Guards, target conditions and word triggers: eliminate or mark a trigger hit."""
        t = c.transition
        if t.guard and not self._guard_ok(session, t.guard):
            c.eliminate(f"guard false: {t.guard}")
            return
        target = self.registry.flows.get(c.target_flow)
        tstate = target.states.get(c.target_state) if target else None
        if tstate is not None:
            for cond in tstate.conditions:
                if not self._guard_ok(session, cond):
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
        if example is None and (not words or not self._has_main_route(source, t)):
            example = source.utterance_tpl  # the state's phrase belongs to its main route
        if example:
            c.examples.append(render_text(example, ctx))

    @staticmethod
    def _has_main_route(state: State, t: Transition) -> bool:
        """True when `t` is a side route: another untriggered next/ok route owns the state's phrase."""
        return any(
            o is not t and o.kind in (TransitionKind.NEXT, TransitionKind.OK) and not o.triggers and not o.utterance_tpl
            for o in state.transitions
        )

    def _readback(
        self,
        session: Session,
        d: Decision,
        flow: Flow,
        state: State,
        text: str,
        cands: list[Candidate],
        hearing: Hearing | None = None,
    ) -> ReadbackResult | None:
        """The readback check (engine/readback.py): the state's required values, and every value
        the controller issued whenever the pilot says one of its kind, in any pilot state."""
        issued = session.issued.get(flow.slug, {})
        if state.role is not Role.PILOT or not (state.readback_required or issued):
            return None
        ctx = self._render_ctx(session, flow, state)
        rb = self.readback.evaluate(
            state.readback_required,
            ctx,
            text,
            issued=issued,
            alternatives=hearing.alternatives if hearing else (),
            traffic=session.traffic,
        )
        if hearing is not None and rb.missing and not rb.wrong and any(v == "ok" for v in rb.fields.values()):
            # By voice, a value missing from a readback that was otherwise heard is more likely
            # misheard than left out: the controller asks for it again ("say again departure")
            # instead of correcting a readback it did not hear whole.
            fields = {n: ("unsure" if v == "missing" else v) for n, v in rb.fields.items()}
            rb = rb.model_copy(update={"fields": fields, "unsure": [*rb.unsure, *rb.missing], "missing": []})
        if not state.readback_required and rb.ok:
            if rb.fields:
                d.trace.add("readback", f"issued values heard and consistent: {sorted(rb.fields)}", fields=dict(rb.fields))
            return None  # nothing required, nothing contradicted: routing as usual
        d.readback = rb
        d.trace.readback = rb
        heard = sum(1 for v in rb.fields.values() if v != "missing")
        share = heard / max(1, len(rb.fields))
        d.trace.add(
            "readback",
            "readback correct"
            if rb.ok
            else f"readback not correct: missing {rb.missing}, wrong {[w['field'] for w in rb.wrong]}, unsure {rb.unsure}",
            fields=dict(rb.fields),
            alternatives=len(hearing.alternatives) if hearing else 0,
        )
        has_bad = False
        for c in cands:
            if c.origin != "active" or c.eliminated:
                continue
            kind = c.transition.kind
            if kind is TransitionKind.OK:
                if not rb.ok:
                    c.eliminate("readback not correct")
                else:
                    c.score = 60.0 + 40.0 * share
            elif kind is TransitionKind.BAD:
                has_bad = True
                if rb.ok:
                    c.eliminate("readback correct")
                else:
                    c.score = 60.0 + 40.0 * share if heard else 0.0
        if not has_bad and not rb.ok:
            implicit = Candidate(
                Transition(kind=TransitionKind.BAD, to=state.id, label="controller correction", intent="readback"),
                flow.slug,
                state.id,
                "active",
                flow.slug,
                state.id,
                score=60.0 + 40.0 * share if heard else 0.0,
            )
            cands.append(implicit)
        return rb

    def _bad_readback(
        self, session: Session, d: Decision, flow: Flow, state: State, rb: ReadbackResult, chosen: Candidate, now: float
    ) -> bool:
        """Count the bad readback and apply the policy; True when handled here (no transition).

        A value heard unsure (and none wrong) is asked again and not counted. A wrong or missing
        value never moves the state on: after `max_bad_readbacks` the controller repeats every
        required item (correct_and_continue) or only the wrong ones (repeat), or ends the flow."""
        key = f"{flow.slug}:{state.id}"
        if session.readback_state != key:
            session.readback_state, session.bad_readbacks = key, 0
        if rb.unsure and not rb.wrong:
            items = say_again_text([*rb.unsure, *rb.missing])
            session.variables["say_again_items"] = items
            d.intent = "say_again_items"
            d.trace.add("readback", f"unsure hearing of {rb.unsure}: controller asks to say again {items}")
            self._say(session, d, flow, state, flow.policies.say_again_items_tpl, now)
            self._arm_silence(session, flow, state, now, force=True)
            return True
        session.bad_readbacks += 1
        policy = flow.policies
        at_max = session.bad_readbacks >= policy.max_bad_readbacks
        everything = at_max and policy.on_max_bad == "correct_and_continue"
        corrections = correction_text(state.readback_required, session.variables, rb, everything=everything)
        session.variables["corrections"] = corrections
        explicit = chosen.transition.to != state.id or chosen.transition.label != "controller correction"
        d.trace.add("readback", f"bad readback {session.bad_readbacks}/{policy.max_bad_readbacks} at {key}: {corrections}")
        if not at_max or policy.on_max_bad != "end":
            if explicit and not at_max:
                return False  # the flow's own bad route speaks
            if at_max:
                d.trace.add("policy", f"on_max_bad={policy.on_max_bad} after {session.bad_readbacks} bad readbacks: state kept")
                session.bad_readbacks = 0
            self._say(session, d, flow, state, policy.correction_tpl, now)
            self._arm_silence(session, flow, state, now, force=True)
            return True
        d.trace.add("policy", f"on_max_bad=end after {session.bad_readbacks} bad readbacks")
        session.readback_state, session.bad_readbacks = None, 0
        self._say(session, d, flow, state, policy.correction_tpl, now)
        change = self.orchestrator.finish(session)
        self._after_change(session, d, change, now)
        return True

    @staticmethod
    def _unheard(
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

    # ------------------------------------------------------------------ moving

    def _take(self, session: Session, d: Decision, flow_slug: str, t: Transition, now: float, origin: str) -> None:
        """Follow one transition out of a state of `flow_slug`, then auto-advance."""
        self._apply_updates(session, d, t)
        if t.kind is TransitionKind.OK or t.kind is TransitionKind.NEXT:
            session.readback_state, session.bad_readbacks = None, 0
        parallel = flow_slug if origin == "parallel" else None
        if t.kind is TransitionKind.RETURN and not t.flow:
            if parallel:
                self.orchestrator.end_parallel(session, parallel)
                d.trace.add("flow", f"parallel flow {parallel} returned")
                return
            self._after_change(session, d, self.orchestrator.finish(session), now)
            return
        if t.flow and not parallel:
            change = self.orchestrator.enter(session, t.flow, t.to, t.mode, t.return_to)
            self._after_change(session, d, change, now)
            return
        frame = self._frame(session, parallel)
        if frame is None or not t.to or t.to not in self.registry.get(frame.flow).states:
            d.trace.add("error", f"transition from {flow_slug} to unknown state {t.to!r}")
            d.trace.errors.append("no_target")
            return
        timers.cancel_state(session, frame.flow, frame.state)
        frame.state = t.to
        self._advance(session, d, now, parallel)

    def _after_change(self, session: Session, d: Decision, change: FlowChange, now: float) -> None:
        d.trace.add("flow", f"{change.op} {change.flow}:{change.state}")
        if change.op == "complete":
            self._complete(session, d)
            return
        if change.op == "parallel":
            self._defaults(session, change.flow)
            self._advance(session, d, now, change.flow)
            return
        if change.resumed and not change.reenter:
            self._resume(session, d, now)
            return
        self._defaults(session, change.flow)
        self._advance(session, d, now, None)

    def _advance(self, session: Session, d: Decision, now: float, parallel: str | None) -> None:
        """Enter the frame's current state and run on through atc/system states to a pilot turn."""
        visited: set[str] = set()
        spoke = False
        while True:
            frame = self._frame(session, parallel)
            if frame is None:
                return
            flow = self.registry.get(frame.flow)
            state = flow.states[frame.state]
            key = f"{flow.slug}:{state.id}"
            if len(visited) >= self.max_hops:
                self._loop_error(d, f"max hops ({self.max_hops}) reached at {key}")
                return
            if key in visited and not state.repeatable:
                self._loop_error(d, f"loop detected: {key} visited twice in one advance")
                return
            visited.add(key)
            d.trace.auto_advance.append(key)
            spoke = self._on_enter(session, d, flow, state, now, spoke) or spoke
            if self.orchestrator.is_end(flow.slug, state.id):
                if self._end_flow(session, d, now, parallel, f"{flow.slug} ended at {state.id}", visited):
                    continue
                return
            if state.role is Role.PILOT:
                return
            for t in state.transitions:  # fork: parallel launches are taken alongside the main route
                if t.flow and t.mode is FlowMode.PARALLEL and self._guard_ok(session, t.guard):
                    change = self.orchestrator.enter(session, t.flow, t.to, FlowMode.PARALLEL)
                    self._after_change(session, d, change, now)
            t = self._first_open(session, state)
            if t is None:
                waits = [x for x in state.transitions if x.kind in (TransitionKind.TIMER, TransitionKind.AUTO)]
                d.trace.add("advance", f"waiting at {key}" if waits else f"stuck at {key}: no open transition")
                if not waits:
                    d.trace.errors.append(f"stuck:{key}")
                return
            self._apply_updates(session, d, t)
            if t.kind is TransitionKind.RETURN and not t.flow:
                if self._end_flow(session, d, now, parallel, f"return from {flow.slug}", visited):
                    continue
                return
            if t.flow and not parallel:
                change = self.orchestrator.enter(session, t.flow, t.to, t.mode, t.return_to)
                d.trace.add("flow", f"{change.op} {change.flow}:{change.state}")
                self._defaults(session, change.flow)
                if change.op == "complete":
                    self._complete(session, d)
                    return
                visited.discard(f"{change.flow}:{change.state}")
                continue
            timers.cancel_state(session, frame.flow, frame.state)
            frame.state = t.to or frame.state

    def _end_flow(self, session: Session, d: Decision, now: float, parallel: str | None, why: str, visited: set[str]) -> bool:
        """The frame's flow ended. True when auto-advance goes on in a `return_to` state."""
        if parallel:
            self.orchestrator.end_parallel(session, parallel)
            d.trace.add("flow", f"parallel flow {parallel}: {why}")
            return False
        change = self.orchestrator.finish(session)
        d.trace.add("flow", f"{why}; {change.op} {change.flow}:{change.state}")
        if change.reenter:
            visited.discard(f"{change.flow}:{change.state}")
            return True
        if change.op == "complete":
            self._complete(session, d)
        else:
            self._resume(session, d, now)
        return False

    def _first_open(self, session: Session, state: State) -> Transition | None:
        """The route an atc/system state takes by itself: first untriggered next/auto/ok whose
        guard holds (telemetry autos and timers wait for their own inputs)."""
        for t in state.transitions:
            if t.kind not in _OPEN_KINDS or (t.flow and t.mode is FlowMode.PARALLEL):
                continue
            if t.triggers and t.kind is TransitionKind.AUTO:
                ctx_ok = all(
                    telemetry_true(tr, session.variables, session.flags, session.telemetry)
                    for tr in t.triggers
                    if tr.kind == "telemetry" and tr.hold(session.variables) <= 0
                ) and not any(tr.kind != "telemetry" or tr.hold(session.variables) > 0 for tr in t.triggers)
                if not ctx_ok:
                    continue
            elif t.triggers:
                continue
            if self._guard_ok(session, t.guard):
                return t
        return None

    def _on_enter(self, session: Session, d: Decision, flow: Flow, state: State, now: float, spoke: bool) -> bool:
        """Actions, handoff, the controller's words and the state's timers. True if ATC spoke."""
        said = False
        ctx = self._render_ctx(session, flow, state)
        for action in state.actions:
            for name, value in action.set.items():
                session.variables[name] = render_text(value, ctx) if isinstance(value, str) else value
                d.updates[name] = session.variables[name]
            for name, value in action.flags.items():
                session.flags[name] = value
                d.flags[name] = value
            if action.tune:
                self._handoff(session, d, flow, action.tune, None)
        if state.role is Role.ATC and state.say_tpl:
            self._say(session, d, flow, state, state.say_tpl, now)
            said = True
        if state.handoff is not None:
            self._handoff(session, d, flow, state.handoff.to, state.handoff.freq, ctx)
        for i, t in enumerate(state.transitions):
            if t.kind is TransitionKind.TIMER and t.after_s is not None:
                timers.schedule(session, kind="transition", flow=flow.slug, state=state.id, due=now + t.after_s, transition_index=i)
        session.silence_prompts = 0
        if state.role is Role.PILOT:
            self._arm_silence(session, flow, state, now, force=False, after_atc=said or spoke)
        return said

    def _resume(self, session: Session, d: Decision, now: float) -> None:
        """Back in a stacked frame: re-arm its timers without speaking its state again."""
        frame = session.active
        flow = self.registry.get(frame.flow)
        state = flow.states[frame.state]
        d.trace.add("flow", f"resumed {flow.slug}:{state.id}")
        for i, t in enumerate(state.transitions):
            if t.kind is TransitionKind.TIMER and t.after_s is not None:
                timers.schedule(session, kind="transition", flow=flow.slug, state=state.id, due=now + t.after_s, transition_index=i)
        if state.role is Role.PILOT:
            self._arm_silence(session, flow, state, now, force=False, after_atc=True)
        elif not self.orchestrator.is_end(flow.slug, state.id):
            self._advance_from_resumed(session, d, now)

    def _advance_from_resumed(self, session: Session, d: Decision, now: float) -> None:
        state = self.registry.get(session.active.flow).states[session.active.state]
        t = self._first_open(session, state)
        if t is not None:
            self._take(session, d, session.active.flow, t, now, "active")

    def _complete(self, session: Session, d: Decision) -> None:
        session.completed = True
        d.completed = True
        timers.cancel_state(session, session.active.flow, session.active.state)
        d.trace.add("flow", "session completed")

    def _restart(self, session: Session, now: float, cause: str) -> Decision:
        d = self._begin(session, cause, now)  # type: ignore[arg-type]
        self._defaults(session, session.active.flow)
        session.start_flow = session.start_flow or session.active.flow
        self._advance(session, d, now, None)
        return self._finish(session, d)

    # ------------------------------------------------------------------ speaking

    def _say(self, session: Session, d: Decision, flow: Flow, state: State | None, template: str, now: float) -> None:
        msg, missing = build_message(session, flow, state, template, now, host=self._host(session, flow))
        names = template_vars(template)
        if names:  # what the controller just said is what later transmissions are checked against
            ctx = self._render_ctx(session, flow, state)
            record_issued(session.issued.setdefault(flow.slug, {}), {n: ctx.get(n) for n in names})
        if missing:
            d.trace.add("error", f"template of {msg.state} has no value for {missing}", missing=missing)
            d.trace.errors.append(f"missing_variables:{','.join(missing)}")
        session.message_history.append(msg)
        if len(session.message_history) > HISTORY_LIMIT:
            del session.message_history[: len(session.message_history) - HISTORY_LIMIT]
        d.messages.append(msg)

    def _say_again(self, session: Session, d: Decision, now: float) -> None:
        d.intent = "say_again"
        flow = self.registry.get(session.active.flow)
        state = flow.states[session.active.state]
        last = session.message_history[-1] if session.message_history else None
        if last is None:
            d.trace.add("select", "say again, but nothing was said yet: controller answers 'go ahead'")
            self._say(session, d, flow, state, "{{callsign_spoken}}, {{station_name}}, go ahead.", now)
            return
        session.seq += 1
        repeat = last.model_copy(update={"seq": session.seq, "message_id": f"{session.session_id}-m{session.seq}", "at": now})
        session.message_history.append(repeat)
        d.messages.append(repeat)
        d.trace.add("select", f"say again: repeated message {last.message_id}")
        self._arm_silence(session, flow, state, now, force=True)

    def _silence_prompt(self, session: Session, d: Decision, flow: Flow, state: State, now: float) -> None:
        session.silence_prompts += 1
        d.intent = "silence_prompt"
        self._say(session, d, flow, state, flow.policies.silence_prompt_tpl, now)
        if session.silence_prompts < flow.policies.silence_prompts_max:
            timers.schedule(session, kind="silence", flow=flow.slug, state=state.id, due=now + flow.policies.silence_prompt_s)

    def _arm_silence(self, session: Session, flow: Flow, state: State, now: float, *, force: bool, after_atc: bool = False) -> None:
        if state.role is not Role.PILOT:
            return
        enabled = state.silence_prompt if state.silence_prompt is not None else (force or after_atc)
        if not enabled or flow.policies.silence_prompt_s <= 0:
            return
        timers.cancel_state(session, flow.slug, state.id, kind="silence")
        timers.schedule(session, kind="silence", flow=flow.slug, state=state.id, due=now + flow.policies.silence_prompt_s)

    def _handoff(self, session: Session, d: Decision, flow: Flow, station: str, freq: str | None, ctx: dict[str, Any] | None = None) -> None:
        value = render_text(freq, ctx or session.variables) if freq else session.variables.get(frequency_var(flow, station))
        session.station = station
        session.frequency = str(value) if value is not None else None
        d.trace.add("handoff", f"pilot now on {station} {session.frequency}")

    # ------------------------------------------------------------------ telemetry

    def _check_auto(self, session: Session, now: float, cause: str) -> Decision | None:
        frames: list[tuple[str, FlowFrame]] = [("active", session.active)] + [("parallel", f) for f in session.parallel_flows]
        for origin, frame in frames:
            flow = self.registry.get(frame.flow)
            state = flow.states.get(frame.state)
            if state is None or session.completed:
                continue
            for i, t in enumerate(state.transitions):
                if t.kind is not TransitionKind.AUTO:
                    continue
                tele = [tr for tr in t.triggers if tr.kind == "telemetry"]
                if not tele and (t.triggers or not t.guard):
                    continue
                key = f"{flow.slug}:{state.id}:{i}"
                holds = all(telemetry_true(tr, session.variables, session.flags, session.telemetry) for tr in tele)
                if not holds or not self._guard_ok(session, t.guard):
                    session.telemetry_since.pop(key, None)
                    continue
                since = session.telemetry_since.setdefault(key, now)
                hold = max((tr.hold(session.variables) for tr in tele), default=0.0)
                if now - since < hold:
                    continue
                self._clear_holds(session, f"{flow.slug}:{state.id}:")
                d = self._begin(session, cause, now)  # type: ignore[arg-type]
                d.intent = t.intent or "telemetry"
                d.trace.add("trigger", f"telemetry condition held {now - since:g}s (>= {hold:g}s): {[tr.expr for tr in tele] or t.guard}")
                self._take(session, d, frame.flow, t, now, origin)
                return self._finish(session, d)
        return None

    def _clear_holds(self, session: Session, prefix: str) -> None:
        for key in [k for k in session.telemetry_since if k.startswith(prefix)]:
            del session.telemetry_since[key]

    def _hold_of(self, session: Session, key: str) -> float | None:
        slug, state_id, idx = key.rsplit(":", 2)
        flow = self.registry.flows.get(slug)
        if flow is None or state_id not in flow.states:
            return None
        t = flow.states[state_id].transitions[int(idx)]
        return max((tr.hold(session.variables) for tr in t.triggers if tr.kind == "telemetry"), default=0.0)

    # ------------------------------------------------------------------ helpers

    def _begin(self, session: Session, cause: str, now: float) -> Decision:
        return Decision(cause=cause, from_flow=session.active.flow, from_state=session.active.state, at=now)  # type: ignore[arg-type]

    def _finish(self, session: Session, d: Decision) -> Decision:
        d.to_flow, d.to_state = session.active.flow, session.active.state
        d.completed = session.completed
        d.expected_pilot = self.expected_pilot(session)
        session.updated_at = max(session.updated_at, d.at)
        session.decision_history.append(
            DecisionRecord(
                transmission_id=d.transmission_id,
                cause=d.cause,
                pilot_text=d.pilot_text,
                from_state=d.from_state,
                to_state=d.to_state,
                readback_ok=d.readback.ok if d.readback else None,
                at=d.at,
            )
        )
        if len(session.decision_history) > HISTORY_LIMIT:
            del session.decision_history[: len(session.decision_history) - HISTORY_LIMIT]
        timers.prune(session)
        return d

    def _frame(self, session: Session, parallel: str | None) -> FlowFrame | None:
        if parallel is None:
            return session.active
        return next((f for f in session.parallel_flows if f.flow == parallel), None)

    def _locate(self, session: Session, flow: str, state: str) -> tuple[str, FlowFrame] | None:
        if session.active.flow == flow and session.active.state == state:
            return "active", session.active
        for f in session.parallel_flows:
            if f.flow == flow and f.state == state:
                return "parallel", f
        return None

    def _guard_ok(self, session: Session, guard: str | None) -> bool:
        if not guard:
            return True
        return guard_holds(guard, session.variables, session.flags, session.telemetry)

    def _apply_updates(self, session: Session, d: Decision, t: Transition) -> None:
        for name, value in t.updates.items():
            session.variables[name] = render_text(value, session.variables) if isinstance(value, str) else value
            d.updates[name] = session.variables[name]
        for name, value in t.flags.items():
            session.flags[name] = value
            d.flags[name] = value

    def _defaults(self, session: Session, slug: str) -> None:
        flow = self.registry.get(slug)
        for k, v in flow.variables.items():
            session.variables.setdefault(k, v)
        for k, v in flow.flags.items():
            session.flags.setdefault(k, v)
        if flow.station and slug == session.active.flow and session.station is None:
            session.station = flow.station
            session.frequency = station_frequency(flow, flow.station, session.variables)

    def _render_ctx(self, session: Session, flow: Flow, state: State | None) -> dict[str, Any]:
        _, derived = speaking_context(session, flow, state, self._host(session, flow))
        return {**session.variables, **derived}

    def _host(self, session: Session, flow: Flow) -> Flow:
        """The flow whose airport a station-less flow speaks for: the one it interrupted."""
        if flow.station or not session.flow_stack:
            return flow
        return self.registry.get(session.flow_stack[-1].flow)

    def _exchange_words(self, session: Session, flow: Flow, state: State, ctx: dict[str, Any]) -> frozenset[str]:
        """Words of the exchange beyond who is talking: the expected phrases and the radio words a
        readback carries ("wilco", "roger"), without the callsign and station names."""
        words = set(_RADIO_WORDS)
        for phrase in self.expected_pilot(session):
            words.update(phraseology.normalize_transcript(phrase).split())
        return frozenset(words - self._noise_words(session, ctx))

    def _noise_words(self, session: Session, ctx: dict[str, Any]) -> frozenset[str]:
        names = tuple(ctx.get(k) if isinstance(ctx.get(k), str) else "" for k in _NOISE_KEYS)
        return _noise_words_of(names)

    def _loop_error(self, d: Decision, message: str) -> None:
        d.trace.add("error", message)
        d.trace.errors.append("auto_advance_loop")

    @staticmethod
    def _trace_cand(c: Candidate) -> CandidateTrace:
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
