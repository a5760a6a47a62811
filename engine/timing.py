"""Timing: when the engine must act without being spoken to.

Silence prompts, the timer transitions of a state just entered and telemetry conditions that must
hold for a while. The timer records live in the session (engine/timers.py); this part decides when
to arm, defer and fire them. It never changes the flow: a due timer or a held condition is handed
back to the engine, which has the orchestrator take the transition (engine/orchestrator.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import timers
from engine.guards import session_holds
from engine.models import Flow, FlowFrame, Role, Session, State, Transition, TransitionKind
from engine.registry import FlowRegistry
from engine.triggers import telemetry_true


@dataclass(slots=True)
class HeldCondition:
    """A telemetry `auto` transition whose condition held long enough: it is taken now."""

    origin: str  # "active" or "parallel"
    frame: FlowFrame
    transition: Transition
    detail: str  # for the trace: how long it held, and what


def locate(session: Session, flow: str, state: str) -> tuple[str, FlowFrame] | None:
    """The frame (active or parallel) that is in `flow:state` now, or None when it was left."""
    if session.active.flow == flow and session.active.state == state:
        return "active", session.active
    for f in session.parallel_flows:
        if f.flow == flow and f.state == state:
            return "parallel", f
    return None


class Timing:
    """Arms, defers and reports the session's timers and telemetry holds."""

    def __init__(self, registry: FlowRegistry) -> None:
        self.registry = registry

    def arm_silence(
        self, session: Session, flow: Flow, state: State, now: float, *, force: bool, after_atc: bool = False
    ) -> None:
        """Start the silence clock of a pilot turn (after the controller spoke, or when `force`d)."""
        if state.role is not Role.PILOT:
            return
        enabled = state.silence_prompt if state.silence_prompt is not None else (force or after_atc)
        if not enabled or flow.policies.silence_prompt_s <= 0:
            return
        timers.cancel_state(session, flow.slug, state.id, kind="silence")
        timers.schedule(
            session, kind="silence", flow=flow.slug, state=state.id, due=now + flow.policies.silence_prompt_s
        )

    @staticmethod
    def pilot_spoke(session: Session) -> None:
        """The pilot transmitted: the silence clock of the current turn stops."""
        active = session.active
        timers.cancel_state(session, active.flow, active.state, kind="silence")
        session.silence_prompts = 0

    @staticmethod
    def next_prompt(session: Session, flow: Flow, state: State, now: float) -> None:
        """After a silence prompt: the next one, until the flow's maximum is reached."""
        if session.silence_prompts < flow.policies.silence_prompts_max:
            timers.schedule(
                session, kind="silence", flow=flow.slug, state=state.id, due=now + flow.policies.silence_prompt_s
            )

    @staticmethod
    def arm_transitions(session: Session, flow: Flow, state: State, now: float) -> None:
        """The `timer` transitions of a state the session (re-)entered."""
        for i, t in enumerate(state.transitions):
            if t.kind is TransitionKind.TIMER and t.after_s is not None:
                timers.schedule(
                    session, kind="transition", flow=flow.slug, state=state.id, due=now + t.after_s, transition_index=i
                )

    def defer_silence(self, session: Session, now: float) -> bool:
        """Restart the silence clock of the pilot's turn from `now`; True when a prompt was pending."""
        moved = False
        for rec in timers.pending(session):
            if rec.kind != "silence" or locate(session, rec.flow, rec.state) is None:
                continue
            due = now + self.registry.get(rec.flow).policies.silence_prompt_s
            if due != rec.due:
                rec.due = due
                moved = True
        return moved

    def next_wakeup(self, session: Session) -> float | None:
        """When `tick` must run next (timer due or telemetry hold end)."""
        cands = [t for t in [timers.next_due(session)] if t is not None]
        for key, since in session.telemetry_since.items():
            hold = self._hold_of(session, key)
            if hold is not None:
                cands.append(since + hold)
        return min(cands) if cands else None

    def held_condition(self, session: Session, now: float) -> HeldCondition | None:
        """The first telemetry `auto` transition whose condition held for its `hold_s`, if any.

        Conditions that hold start their hold clock (`session.telemetry_since`); those that stop
        holding lose it; the one returned clears the clocks of its state."""
        frames: list[tuple[str, FlowFrame]] = [("active", session.active)] + [
            ("parallel", f) for f in session.parallel_flows
        ]
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
                if not holds or not session_holds(session, t.guard):
                    session.telemetry_since.pop(key, None)
                    continue
                since = session.telemetry_since.setdefault(key, now)
                hold = max((tr.hold(session.variables) for tr in tele), default=0.0)
                if now - since < hold:
                    continue
                self._clear_holds(session, f"{flow.slug}:{state.id}:")
                detail = (
                    f"telemetry condition held {now - since:g}s (>= {hold:g}s): {[tr.expr for tr in tele] or t.guard}"
                )
                return HeldCondition(origin, frame, t, detail)
        return None

    @staticmethod
    def _clear_holds(session: Session, prefix: str) -> None:
        for key in [k for k in session.telemetry_since if k.startswith(prefix)]:
            del session.telemetry_since[key]

    def _hold_of(self, session: Session, key: str) -> float | None:
        slug, state_id, idx = key.rsplit(":", 2)
        flow = self.registry.flows.get(slug)
        if flow is None or state_id not in flow.states:
            return None
        t = flow.states[state_id].transitions[int(idx)]
        return max((tr.hold(session.variables) for tr in t.triggers if tr.kind == "telemetry"), default=0.0)
