"""FlowOrchestrator: the only place where a session changes flow or state.

States declare flow operations (`flow:` + `mode:` on a transition, `return` transitions, interrupt
flows); this module carries them out on the session's frames: the active frame, the flow stack
(linear and interrupt flows push, their end pops) and the parallel frames. It also follows
transitions: apply their updates, enter the target state (its actions, handoff, the controller's
words and timers) and auto-advance through atc/system states to the next pilot turn. Every write
to `session.active`, a frame's state, the flow stack, the parallel frames, `main_flow`,
`start_flow` and `completed` is in this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import timers
from engine.candidates import Candidate
from engine.guards import session_holds
from engine.messages import frequency_var, render_text, station_frequency
from engine.models import Decision, Flow, FlowFrame, FlowMode, Role, Session, State, Transition, TransitionKind
from engine.registry import FlowRegistry
from engine.speaking import Speaker
from engine.timing import Timing
from engine.triggers import telemetry_true

MAX_HOPS = 40
_OPEN_KINDS = (TransitionKind.NEXT, TransitionKind.AUTO, TransitionKind.OK, TransitionKind.RETURN)


@dataclass(slots=True)
class FlowChange:
    """What a flow operation did, for the trace."""

    op: str  # enter | replace | parallel | return | complete
    flow: str
    state: str
    resumed: bool = False  # the session came back to a stacked frame (do not re-enter its state)
    reenter: bool = False  # ...unless the flow named a `return_to` state: that one is entered


class FlowOrchestrator:
    """Moves sessions through their flows; speaks and arms timers through its parts."""

    def __init__(
        self,
        registry: FlowRegistry,
        *,
        speaker: Speaker | None = None,
        timing: Timing | None = None,
        max_hops: int = MAX_HOPS,
    ) -> None:
        self.registry = registry
        self.timing = timing or (speaker.timing if speaker is not None else Timing(registry))
        self.speaker = speaker or Speaker(registry, self.timing)
        self.max_hops = max_hops

    # ------------------------------------------------------------------ the session's frames

    def open(self, *, session_id: str, flow: str, variables: dict[str, Any], now: float, seed: int | None) -> Session:
        """A new session at the start state of `flow` (nothing entered yet: see `restart`)."""
        return Session(
            session_id=session_id,
            main_flow=flow,
            active=FlowFrame(flow=flow, state=self.registry.get(flow).start_state, mode=FlowMode.MAIN),
            variables=dict(variables),
            created_at=now,
            updated_at=now,
            seed=seed,
        )

    def rewind(self, session: Session) -> None:
        """Back to the start of the session's scenario, keeping its variables."""
        slug = session.start_flow or session.main_flow
        session.active = FlowFrame(flow=slug, state=self.registry.get(slug).start_state)
        session.main_flow = slug
        session.flow_stack.clear()
        session.parallel_flows.clear()
        session.timers.clear()
        session.flags.clear()
        session.telemetry_since.clear()
        session.completed = False

    def enter(
        self, session: Session, slug: str, state: str | None, mode: FlowMode | None, return_to: str | None = None
    ) -> FlowChange:
        """Switch into `slug` according to `mode` (default: the flow's own entry mode, else main)."""
        flow = self.registry.get(slug)
        target = state or flow.start_state
        mode = mode or flow.entry_mode
        if mode is FlowMode.PARALLEL:
            session.parallel_flows = [f for f in session.parallel_flows if f.flow != slug]
            session.parallel_flows.append(FlowFrame(flow=slug, state=target, mode=mode))
            return FlowChange("parallel", slug, target)
        self._leave_active(session)
        if mode in (FlowMode.LINEAR, FlowMode.INTERRUPT):
            session.flow_stack.append(session.active.model_copy())
            session.active = FlowFrame(flow=slug, state=target, mode=mode, return_to=return_to)
            return FlowChange("enter", slug, target)
        # main: the new flow replaces the whole stack
        session.flow_stack.clear()
        session.main_flow = slug
        session.active = FlowFrame(flow=slug, state=target, mode=FlowMode.MAIN)
        return FlowChange("replace", slug, target)

    def finish(self, session: Session) -> FlowChange:
        """The active flow ended (end state or `return`): resume the stacked frame or complete."""
        ended = session.active
        self._leave_active(session)
        if session.flow_stack:
            frame = session.flow_stack.pop()
            if ended.return_to:
                frame.state = ended.return_to
            session.active = frame
            return FlowChange("return", frame.flow, frame.state, resumed=True, reenter=bool(ended.return_to))
        session.completed = True
        return FlowChange("complete", ended.flow, ended.state)

    def end_parallel(self, session: Session, slug: str) -> None:
        session.parallel_flows = [f for f in session.parallel_flows if f.flow != slug]

    def is_end(self, flow_slug: str, state_id: str) -> bool:
        flow = self.registry.get(flow_slug)
        state = flow.states[state_id]
        return state_id in flow.end_states or not state.transitions

    @staticmethod
    def frame(session: Session, parallel: str | None) -> FlowFrame | None:
        """The active frame, or the parallel frame of flow `parallel`."""
        if parallel is None:
            return session.active
        return next((f for f in session.parallel_flows if f.flow == parallel), None)

    @staticmethod
    def _move(session: Session, frame: FlowFrame, to: str) -> None:
        timers.cancel_state(session, frame.flow, frame.state)
        frame.state = to

    @staticmethod
    def _complete(session: Session, d: Decision) -> None:
        session.completed = True
        d.completed = True
        timers.cancel_state(session, session.active.flow, session.active.state)
        d.trace.add("flow", "session completed")

    @staticmethod
    def _leave_active(session: Session) -> None:
        timers.cancel_state(session, session.active.flow, session.active.state)

    # ------------------------------------------------------------------ following transitions

    def restart(self, session: Session, d: Decision, now: float) -> None:
        """Enter the active frame's state (a new or rewound session) and run to the pilot's turn."""
        self._defaults(session, session.active.flow)
        session.start_flow = session.start_flow or session.active.flow
        self.advance(session, d, now, None)

    def take(self, session: Session, d: Decision, flow_slug: str, t: Transition, now: float, origin: str) -> None:
        """Follow one transition out of a state of `flow_slug`, then auto-advance."""
        self._apply_updates(session, d, t)
        if t.kind is TransitionKind.OK or t.kind is TransitionKind.NEXT:
            session.clear_readback()
        parallel = flow_slug if origin == "parallel" else None
        if t.kind is TransitionKind.RETURN and not t.flow:
            if parallel:
                self.end_parallel(session, parallel)
                d.trace.add("flow", f"parallel flow {parallel} returned")
                return
            self.after_change(session, d, self.finish(session), now)
            return
        if t.flow and not parallel:
            change = self.enter(session, t.flow, t.to, t.mode, t.return_to)
            self.after_change(session, d, change, now)
            return
        frame = self.frame(session, parallel)
        if frame is None or not t.to or t.to not in self.registry.get(frame.flow).states:
            d.trace.add("error", f"transition from {flow_slug} to unknown state {t.to!r}")
            d.trace.errors.append("no_target")
            return
        self._move(session, frame, t.to)
        self.advance(session, d, now, parallel)

    def interrupt(self, session: Session, d: Decision, chosen: Candidate, now: float) -> None:
        """An interrupt flow's trigger was heard (mayday, pan pan): its flow is entered."""
        session.variables["interrupt_intent"] = chosen.heard  # e.g. "mayday" vs "pan_pan"
        d.updates["interrupt_intent"] = chosen.heard
        change = self.enter(session, chosen.target_flow, None, FlowMode.INTERRUPT)
        self.after_change(session, d, change, now)

    def end_active(self, session: Session, d: Decision, now: float) -> None:
        """The active flow ends now (a policy said so): resume the stacked frame or complete."""
        self.after_change(session, d, self.finish(session), now)

    def after_change(self, session: Session, d: Decision, change: FlowChange, now: float) -> None:
        d.trace.add("flow", f"{change.op} {change.flow}:{change.state}")
        if change.op == "complete":
            self._complete(session, d)
            return
        if change.op == "parallel":
            self._defaults(session, change.flow)
            self.advance(session, d, now, change.flow)
            return
        if change.resumed and not change.reenter:
            self._resume(session, d, now)
            return
        self._defaults(session, change.flow)
        self.advance(session, d, now, None)

    def advance(self, session: Session, d: Decision, now: float, parallel: str | None) -> None:
        """Enter the frame's current state and run on through atc/system states to a pilot turn."""
        visited: set[str] = set()
        spoke = False
        while True:
            frame = self.frame(session, parallel)
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
            if self.is_end(flow.slug, state.id):
                if self._end_flow(session, d, now, parallel, f"{flow.slug} ended at {state.id}", visited):
                    continue
                return
            if state.role is Role.PILOT:
                return
            for fork in state.transitions:  # parallel launches are taken alongside the main route
                if fork.flow and fork.mode is FlowMode.PARALLEL and session_holds(session, fork.guard):
                    change = self.enter(session, fork.flow, fork.to, FlowMode.PARALLEL)
                    self.after_change(session, d, change, now)
            t = self.first_open(session, state)
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
                change = self.enter(session, t.flow, t.to, t.mode, t.return_to)
                d.trace.add("flow", f"{change.op} {change.flow}:{change.state}")
                self._defaults(session, change.flow)
                if change.op == "complete":
                    self._complete(session, d)
                    return
                visited.discard(f"{change.flow}:{change.state}")
                continue
            self._move(session, frame, t.to or frame.state)

    @staticmethod
    def first_open(session: Session, state: State) -> Transition | None:
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
            if session_holds(session, t.guard):
                return t
        return None

    def _end_flow(
        self, session: Session, d: Decision, now: float, parallel: str | None, why: str, visited: set[str]
    ) -> bool:
        """The frame's flow ended. True when auto-advance goes on in a `return_to` state."""
        if parallel:
            self.end_parallel(session, parallel)
            d.trace.add("flow", f"parallel flow {parallel}: {why}")
            return False
        change = self.finish(session)
        d.trace.add("flow", f"{why}; {change.op} {change.flow}:{change.state}")
        if change.reenter:
            visited.discard(f"{change.flow}:{change.state}")
            return True
        if change.op == "complete":
            self._complete(session, d)
        else:
            self._resume(session, d, now)
        return False

    def _resume(self, session: Session, d: Decision, now: float) -> None:
        """Back in a stacked frame: re-arm its timers without speaking its state again."""
        frame = session.active
        flow = self.registry.get(frame.flow)
        state = flow.states[frame.state]
        d.trace.add("flow", f"resumed {flow.slug}:{state.id}")
        self.timing.arm_transitions(session, flow, state, now)
        if state.role is Role.PILOT:
            self.timing.arm_silence(session, flow, state, now, force=False, after_atc=True)
        elif not self.is_end(flow.slug, state.id):
            t = self.first_open(session, state)
            if t is not None:
                self.take(session, d, session.active.flow, t, now, "active")

    def _on_enter(self, session: Session, d: Decision, flow: Flow, state: State, now: float, spoke: bool) -> bool:
        """Actions, handoff, the controller's words and the state's timers. True if ATC spoke."""
        said = False
        ctx = self.speaker.render_ctx(session, flow, state)
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
            self.speaker.say(session, d, flow, state, state.say_tpl, now)
            said = True
        if state.handoff is not None:
            self._handoff(session, d, flow, state.handoff.to, state.handoff.freq, ctx)
        self.timing.arm_transitions(session, flow, state, now)
        session.silence_prompts = 0
        if state.role is Role.PILOT:
            self.timing.arm_silence(session, flow, state, now, force=False, after_atc=said or spoke)
        return said

    @staticmethod
    def _apply_updates(session: Session, d: Decision, t: Transition) -> None:
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

    @staticmethod
    def _handoff(
        session: Session, d: Decision, flow: Flow, station: str, freq: str | None, ctx: dict[str, Any] | None = None
    ) -> None:
        value = (
            render_text(freq, ctx or session.variables) if freq else session.variables.get(frequency_var(flow, station))
        )
        session.station = station
        session.frequency = str(value) if value is not None else None
        d.trace.add("handoff", f"pilot now on {station} {session.frequency}")

    @staticmethod
    def _loop_error(d: Decision, message: str) -> None:
        d.trace.add("error", message)
        d.trace.errors.append("auto_advance_loop")
