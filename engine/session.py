"""SessionEngine: the deterministic decision algorithm of seed 000, one input at a time.

Every input (start, pilot transmission, clock tick, telemetry, tune) goes through the same steps:
build candidates, eliminate by guards and triggers, check the readback, route, apply updates
through the orchestrator, auto-advance through atc/system states to the next pilot turn, and
return a `Decision` with ordered controller messages and a trace. The engine mutates the session
it is given and does no I/O; time is always passed in (`now`, seconds), so tests use a virtual
clock and the gateway its event loop's clock.

This class is a facade: each step is a part of its own, testable alone —
routing (engine/routing.py), readback and corrections (engine/readback_policy.py), speaking
(engine/speaking.py), LLM consultation (engine/consult.py), timers (engine/timing.py) and the
orchestrator, the one place the flow changes (engine/orchestrator.py).
"""

from __future__ import annotations

from typing import Any

from engine import identity, phraseology, readback_policy, timers, value_query
from engine.consult import LlmConsultation
from engine.guards import session_holds
from engine.hearing import Hearing
from engine.models import TELEMETRY_KEYS, Decision, DecisionRecord, Flow, Session, State, TransitionKind
from engine.orchestrator import MAX_HOPS, FlowOrchestrator
from engine.readback import ReadbackEvaluator
from engine.readback_policy import BadReadback, ReadbackPolicy
from engine.registry import FlowRegistry, UnknownFlow
from engine.router import Router, Routing
from engine.router_llm import FallbackPolicy, RouterQuery, RouterVerdict, consult_reason
from engine.routing import RouteChooser, is_say_again, is_unable, trace_candidate
from engine.speaking import HISTORY_LIMIT, Speaker
from engine.timing import Timing, locate
from engine.value_query import ValueQuery
from engine.value_rivals import place_names, short_frequencies, told_places

__all__ = ["HISTORY_LIMIT", "MAX_HOPS", "SessionEngine"]


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
        self.timing = Timing(registry)
        self.speaker = Speaker(registry, self.timing)
        self.orchestrator = FlowOrchestrator(registry, speaker=self.speaker, timing=self.timing, max_hops=max_hops)
        policy = ReadbackPolicy(readback) if readback else None  # None: the evaluator with the flows' words
        self.routing = RouteChooser(registry, router=router, readback=policy, speaker=self.speaker)
        self.consultation = LlmConsultation(llm_fallback)

    # the configuration as attributes, as before the parts existed
    @property
    def router(self) -> Router:
        return self.routing.router

    @router.setter
    def router(self, value: Router) -> None:
        self.routing.router = value

    @property
    def readback(self) -> ReadbackEvaluator:
        return self.routing.readback.evaluator

    @readback.setter
    def readback(self, value: ReadbackEvaluator) -> None:
        self.routing.readback.evaluator = value

    @property
    def llm_fallback(self) -> FallbackPolicy:
        """What decides when the LLM router's answer is unusable."""
        return self.consultation.fallback_policy

    @llm_fallback.setter
    def llm_fallback(self, value: FallbackPolicy) -> None:
        self.consultation.fallback_policy = value

    @property
    def max_hops(self) -> int:
        return self.orchestrator.max_hops

    @max_hops.setter
    def max_hops(self, value: int) -> None:
        self.orchestrator.max_hops = value

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
        if slug is None:  # a registry without a main flow, and none named
            raise UnknownFlow(slug)  # type: ignore[arg-type]  # as FlowRegistry.get(None) did
        session = self.orchestrator.open(session_id=session_id, flow=slug, variables=variables, now=now, seed=seed)
        return session, self._restart(session, now, "start")

    def reset(self, session: Session, now: float) -> Decision:
        """Start the session's scenario again from its first flow, keeping its variables."""
        self.orchestrator.rewind(session)
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
        self.consultation.count(session, llm)
        norm = phraseology.normalize_transcript(text)
        d.trace.add("input", f"normalized transcript: {norm!r}")
        if session.completed:
            d.recognized = False
            d.trace.add("error", "session already completed; nothing to decide")
            d.trace.errors.append("session_completed")
            self.consultation.unused(session, d, llm, "the session completed meanwhile")
            return self._finish(session, d), None
        self.timing.pilot_spoke(session)
        if is_say_again(norm):
            self.consultation.unused(session, d, llm, "the pilot asked to say again")
            self.speaker.say_again(session, d, now)
            return self._finish(session, d), None
        who = identity.screen(session, self.registry, text, hearing)  # who is talking (engine/identity.py)
        d.trace.add("callsign", who.reason, **who.trace_data())
        if who.refuse:  # another aircraft's callsign, or none on first contact: nothing is applied
            flow, state = self._current(session)
            d.recognized, d.intent = False, "station_calling"
            self.consultation.unused(session, d, llm, "the controller asked who is calling")
            self.speaker.ask(session, d, flow, state, flow.policies.station_calling_tpl, now)
            return self._finish(session, d), None
        routing = self._decide(session, d, text, norm, now, llm, hearing)
        return self._finish(session, d), routing

    def value_query(self, session: Session, text: str, now: float, hearing: Hearing | None) -> ValueQuery | None:
        """The issued values to check in the audio (engine/value_query.py) where the voice
        transmission `text` would leave a readback value unsure or missing and none wrong; None
        when there is nothing to check. Decides on a copy: changes nothing."""
        if session.completed:
            return None
        if value_query.said_twice(text):
            return None  # a loop: no check of it counts (value_query.said_twice)
        if value_query.checks_from(text, hearing.alternatives if hearing else ()) is None:
            return None  # the pilot corrected himself where the best transcript stops: no check counts
        rb = self.transmit(session.model_copy(deep=True), text, now, hearing=hearing).readback
        if rb is None or rb.ok or rb.wrong:
            return None
        flow, state = self._current(session)
        ctx = self._render_ctx(session, flow, state)
        issued = session.issued.get(flow.slug, {})
        fields = value_query.expected_values(rb, ctx, issued)
        if not fields:
            return None
        heard_right = value_query.expected_values(rb, ctx, issued, statuses=("ok",))
        heard_other = value_query.issued_values(rb.contradicted, ctx, issued)
        callsign = str(ctx.get("callsign_spoken") or "")
        rivals = short_frequencies([text, *(hearing.alternatives if hearing else ())], fields)
        told = {name: place_names(name, ctx) for name in told_places(fields) if name in rb.rivalled}
        return value_query.query(
            text,
            fields,
            heard_right,
            callsign,
            heard_other,
            by_check=rb.confirmed,
            rivals=rivals,
            rivalled=rb.rivalled,
            told=told,
        )

    def route_query(self, session: Session, text: str) -> RouterQuery | None:
        """The question for the LLM router if `text` were transmitted now, or None when the
        deterministic router decides it alone. Changes nothing: the gateway asks the model with
        it, then calls `transmit(..., llm=verdict)`."""
        if session.completed:
            return None
        norm = phraseology.normalize_transcript(text)
        if is_say_again(norm) or identity.screen(session, self.registry, text).refuse:
            return None
        flow, state = self._current(session)
        scratch = self._begin(session, "transmit", session.updated_at)
        cands, _rb, result, ctx = self.routing.route(session, scratch, flow, state, text, norm)
        reason = consult_reason(result, cands)
        if reason is None:
            return None
        return self.consultation.query(session, flow, state, text, norm, cands, result, reason, ctx)

    def tick(self, session: Session, now: float) -> list[Decision]:
        """Fire every due timer exactly once and take telemetry transitions whose hold elapsed."""
        out: list[Decision] = []
        auto = self._check_auto(session, now, "tick")
        if auto is not None:
            out.append(auto)
        while (rec := timers.take_due(session, now)) is not None:
            located = locate(session, rec.flow, rec.state)
            if located is None:
                continue  # the state was left: the record is consumed and does nothing
            origin, frame = located
            flow = self.registry.get(frame.flow)
            state = flow.states[frame.state]
            d = self._begin(session, "tick", now)
            d.trace.add("timer", f"timer {rec.id} ({rec.kind}) due at {rec.due:g}s fired at {now:g}s", timer=rec.id)
            if rec.kind == "silence":
                self.speaker.silence_prompt(session, d, flow, state, now)
            elif rec.transition_index is not None and rec.transition_index < len(state.transitions):
                t = state.transitions[rec.transition_index]
                if session_holds(session, t.guard):
                    self.orchestrator.take(session, d, frame.flow, t, now, origin)
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
        return self.speaker.expected_pilot(session)

    def defer_silence(self, session: Session, now: float) -> bool:
        """Restart the silence clock of the pilot's turn from `now`.

        The gateway calls it when the controller's audio ends (the pilot cannot answer a call
        still being spoken) and while the pilot holds the key; True when a prompt was pending.
        """
        return self.timing.defer_silence(session, now)

    def next_wakeup(self, session: Session) -> float | None:
        """When the gateway's clock must call `tick` next (timer due or telemetry hold end)."""
        return self.timing.next_wakeup(session)

    # ------------------------------------------------------------------ one transmission

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
        """Route the transmission (asking the LLM's verdict when the router is unsure), then
        answer it: say again, a correction, or the route taken by the orchestrator."""
        flow, state = self._current(session)
        cands, rb, result, ctx = self.routing.route(session, d, flow, state, text, norm, hearing)
        rule = result.rule  # the deterministic rule, kept when the LLM decides after it
        consult = consult_reason(result, cands)
        if consult is not None:
            query = self.consultation.query(session, flow, state, text, norm, cands, result, consult, ctx)
            result = self.consultation.consult(session, d, query, result, cands, llm)
        else:
            self.consultation.unused(session, d, llm, "the deterministic router decides this transmission now")
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
        chosen = self.routing.settle(session, d, state, text, cands, rb, result, ctx, hearing)
        d.trace.candidates = [trace_candidate(c) for c in cands]
        routing = Routing(cands, result, chosen, flow.policies.match_threshold)
        if chosen is None:
            d.recognized = False
            d.trace.add("select", f"unrecognized ({result.reason}): controller asks to say again")
            self.speaker.ask(session, d, flow, state, flow.policies.say_again_tpl, now)
            return routing
        if chosen.origin != "interrupt" and is_unable(norm, state, chosen):  # before any of the route's updates
            d.readback, d.intent = None, "unable"  # declined: no verdict on its values, no bad readback
            d.trace.add("select", "the pilot said unable: no readback; the clearance stands and the state waits")
            self.speaker.ask(session, d, flow, state, flow.policies.unable_tpl, now)
            return routing
        if chosen is result.chosen:
            for name, value in result.updates.items():  # the LLM's, validated against llm_updates
                session.variables[name] = value
                d.updates[name] = value
        if chosen.transition.kind not in (TransitionKind.OK, TransitionKind.BAD):
            d.readback = None  # not answered as a readback (e.g. a radio check); the trace keeps it
        d.intent = chosen.transition.intent or chosen.transition.label or chosen.transition.kind.value
        d.trace.add(
            "select", f"selected {chosen.id} ({chosen.transition.kind.value}, {chosen.origin}) score {chosen.score:g}"
        )
        if chosen.origin == "interrupt":
            self.orchestrator.interrupt(session, d, chosen, now)
            return routing
        if chosen.transition.kind is TransitionKind.BAD and rb is not None:
            issued = session.issued.get(flow.slug, {})
            heard = readback_policy.heard_right(rb, state.readback_required, ctx, issued, hearing is not None)
            outcome = self.routing.readback.bad_readback(session, d, flow, state, rb, chosen, heard)
            if outcome is BadReadback.SAY_AGAIN_ITEMS:
                self.speaker.ask(session, d, flow, state, flow.policies.say_again_items_tpl, now)
                return routing
            if outcome is BadReadback.CORRECT:
                self.speaker.ask(session, d, flow, state, flow.policies.correction_tpl, now)
                return routing
            if outcome is BadReadback.END:
                self.speaker.say(session, d, flow, state, flow.policies.correction_tpl, now)
                self.orchestrator.end_active(session, d, now)
                return routing
        self.orchestrator.take(session, d, chosen.flow, chosen.transition, now, chosen.origin)
        return routing

    # ------------------------------------------------------------------ decisions

    def _check_auto(self, session: Session, now: float, cause: str) -> Decision | None:
        held = self.timing.held_condition(session, now)
        if held is None:
            return None
        d = self._begin(session, cause, now)
        d.intent = held.transition.intent or "telemetry"
        d.trace.add("trigger", held.detail)
        self.orchestrator.take(session, d, held.frame.flow, held.transition, now, held.origin)
        return self._finish(session, d)

    def _restart(self, session: Session, now: float, cause: str) -> Decision:
        d = self._begin(session, cause, now)
        self.orchestrator.restart(session, d, now)
        return self._finish(session, d)

    def _current(self, session: Session) -> tuple[Flow, State]:
        flow = self.registry.get(session.active.flow)
        return flow, flow.states[session.active.state]

    @staticmethod
    def _begin(session: Session, cause: str, now: float) -> Decision:
        return Decision(cause=cause, from_flow=session.active.flow, from_state=session.active.state, at=now)

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

    def _render_ctx(self, session: Session, flow: Flow, state: State | None) -> dict[str, Any]:
        """The evaluator's view of a state (tooling/readback_pilot/ reads it)."""
        return self.speaker.render_ctx(session, flow, state)
