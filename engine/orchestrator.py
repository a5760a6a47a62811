"""FlowOrchestrator: the only place where a session changes flow.

States declare flow operations (`flow:` + `mode:` on a transition, `return` transitions, interrupt
flows); this module carries them out on the session's frames: the active frame, the flow stack
(linear and interrupt flows push, their end pops) and the parallel frames.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import timers
from engine.models import FlowFrame, FlowMode, Session
from engine.registry import FlowRegistry


@dataclass(slots=True)
class FlowChange:
    """What a flow operation did, for the trace."""

    op: str  # enter | replace | parallel | return | complete
    flow: str
    state: str
    resumed: bool = False  # the session came back to a stacked frame (do not re-enter its state)
    reenter: bool = False  # ...unless the flow named a `return_to` state: that one is entered


class FlowOrchestrator:
    def __init__(self, registry: FlowRegistry) -> None:
        self.registry = registry

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
    def _leave_active(session: Session) -> None:
        timers.cancel_state(session, session.active.flow, session.active.state)
