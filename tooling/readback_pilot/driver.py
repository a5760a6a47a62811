"""`StateDriver`: brings a real `SessionEngine` session to a readback state by playing the flow
(expected pilot phrases, their alternatives, and the clock), never by setting the state; and
how to read a decision taken there (moved forward, took the ok route)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.models import Decision, Role, Session
from engine.session import SessionEngine

__all__ = ["DriveError", "Reached", "StateDriver", "last_atc_text", "moved_forward", "render_context", "took_ok_route"]

# Inputs the driver plays: ("say", index of the expected phrase), ("tick", seconds).
Action = tuple[str, int]
_TICK_S = 200


class DriveError(RuntimeError):
    pass


@dataclass
class Reached:
    """A session at a readback state, and the clock it is at."""

    session: Session
    now: float
    path: list[Action]


class StateDriver:
    """Brings sessions to readback states by playing the flow on a real engine.

    From the start of the state's flow it searches (breadth first, on copies of the session) the
    pilot's expected phrases, their alternatives (side routes such as "going around") and the
    clock (timers), until the session stands at the target state. The path found is kept per
    state and replayed for other scenarios (searched again if it does not lead there)."""

    def __init__(self, engine: SessionEngine, *, max_depth: int = 14, max_nodes: int = 4000) -> None:
        self.engine = engine
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.paths: dict[tuple[str, str], list[Action]] = {}
        self.starts: dict[tuple[str, str], str] = {}  # the flow each path starts in

    def reach(self, flow: str, state: str, variables: Mapping[str, Any], session_id: str = "readback") -> Reached:
        path = self.paths.get((flow, state))
        if path is not None:
            got = self._replay(self.starts[(flow, state)], flow, state, variables, path, session_id)
            if got is not None:
                return got
        starts = [flow, *sorted(f.slug for f in self.engine.registry if f.slug != flow)]
        for start in starts:  # a state entered only from another flow (a missed approach)
            try:
                got = self._search(start, flow, state, variables, session_id)
            except DriveError:
                continue
            self.paths[(flow, state)] = got.path
            self.starts[(flow, state)] = start
            return got
        raise DriveError(f"no way found from the start of any flow to {flow}:{state}")

    def _start(self, flow: str, variables: Mapping[str, Any], session_id: str) -> Session:
        session, _ = self.engine.start(variables=dict(variables), session_id=session_id, flow=flow, now=0.0)
        return session

    def _at(self, session: Session, flow: str, state: str) -> bool:
        return session.active.flow == flow and session.active.state == state and not session.completed

    def _apply(self, session: Session, now: float, action: Action) -> float:
        kind, arg = action
        if kind == "say":
            expected = self.engine.expected_pilot(session)
            now += 5.0
            self.engine.transmit(session, expected[arg], now)
        else:
            now += arg
            self.engine.tick(session, now)
        return now

    def _replay(
        self, start: str, flow: str, state: str, variables: Mapping[str, Any], path: list[Action], session_id: str
    ) -> Reached | None:
        session, now = self._start(start, variables, session_id), 0.0
        try:
            for action in path:
                now = self._apply(session, now, action)
        except IndexError:
            return None
        return Reached(session, now, list(path)) if self._at(session, flow, state) else None

    def _search(self, start: str, flow: str, state: str, variables: Mapping[str, Any], session_id: str) -> Reached:
        first = self._start(start, variables, session_id)
        queue: deque[tuple[Session, float, list[Action]]] = deque([(first, 0.0, [])])
        seen: set[tuple[str, str, int]] = set()
        nodes = 0
        while queue and nodes < self.max_nodes:
            session, now, path = queue.popleft()
            nodes += 1
            if self._at(session, flow, state):
                return Reached(session, now, path)
            key = (session.active.flow, session.active.state, session.bad_readbacks)
            if key in seen or len(path) >= self.max_depth or session.completed or session.active.flow not in (start, flow):
                continue
            seen.add(key)
            actions: list[Action] = [("say", i) for i in range(len(self.engine.expected_pilot(session)))]
            actions.append(("tick", _TICK_S))
            for action in actions:
                copy = session.model_copy(deep=True)
                t = self._apply(copy, now, action)
                queue.append((copy, t, [*path, action]))
        raise DriveError(f"no way found from the start of {start} to {flow}:{state}")


# --------------------------------------------------------------------------- outcomes

def moved_forward(decision: Decision, flow: str, state: str, session: Session) -> bool:
    """Whether a decision took the session on from the readback state (`flow`, `state`) other than
    by the flow's own bad-readback route: still there, or sent along an explicit `kind: bad`
    route (a flow's correction, e.g. the current ATIS letter), is not forward."""
    if session.active.flow == flow and session.active.state == state and not session.completed:
        return False
    for step in decision.trace.steps:
        if step.step == "policy":
            return True  # on_max_bad moved it on
    for step in decision.trace.steps:
        if step.step == "select" and "(bad," in step.detail:
            return False
    return True


def took_ok_route(decision: Decision) -> bool:
    """Whether the decision selected the state's `kind: ok` route."""
    return any(step.step == "select" and "(ok," in step.detail for step in decision.trace.steps)


def render_context(engine: SessionEngine, session: Session) -> dict[str, Any]:
    """The values the readback check compares with: the session's variables and the derived
    speaking context of its current state (what `SessionEngine` hands the evaluator)."""
    flow = engine.registry.get(session.active.flow)
    state = flow.states[session.active.state]
    return engine._render_ctx(session, flow, state)  # noqa: SLF001 - the evaluator's own view


def last_atc_text(session: Session) -> str:
    """The controller's last message to this session, as the pilot heard it ("" if none)."""
    return next((m.text for m in reversed(session.message_history) if m.role is Role.ATC), "")
