"""Lint of loaded flows: what loads but would misbehave in a session.

Unknown variables in templates, readbacks and guards, unreachable states, transitions to states
that do not exist, unknown telemetry and intent names, pilot states without an example phrase.
Errors block (`livefreq flows lint` exits non-zero); warnings are reported.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from engine.guards import GuardError, compile_guard
from engine.models import Flow, FlowMode, Role, State, Transition, TransitionKind, Trigger
from engine.registry import KNOWN_SCENARIO_VARIABLES, KNOWN_TELEMETRY, FlowRegistry
from engine.templates import template_vars, unknown_placeholders
from engine.triggers import INTENT_PATTERNS

__all__ = ["LintIssue", "lint_flow", "lint_registry"]


@dataclass(frozen=True, slots=True)
class LintIssue:
    """One lint finding; `str()` is `file: STATE.field: message` (severity is a separate field)."""

    severity: Literal["error", "warning"]
    file: str
    flow: str
    state: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = ".".join(p for p in (self.state, self.field) if p)
        return f"{self.file}: {where}: {self.message}" if where else f"{self.file}: {self.message}"


@dataclass(frozen=True, slots=True)
class _Vocabulary:
    """Names known across the registry: variables (scenario ∪ set anywhere) and flags."""

    variables: frozenset[str]
    flags: frozenset[str]


def _vocabulary(registry: FlowRegistry, known_variables: Iterable[str]) -> _Vocabulary:
    variables = set(known_variables)
    flags: set[str] = set()
    for flow in registry:
        flags.update(flow.flags)
        for state in flow.states.values():
            for action in state.actions:
                variables.update(action.set)
                flags.update(action.flags)
            for t in state.transitions:
                variables.update(t.updates)
                flags.update(t.flags)
    return _Vocabulary(frozenset(variables), frozenset(flags))


def lint_flow(
    flow: Flow, registry: FlowRegistry, *, known_variables: Iterable[str] = KNOWN_SCENARIO_VARIABLES
) -> list[LintIssue]:
    """Every problem in one flow, judged against the whole registry (see `_FlowLinter`)."""
    return _FlowLinter(flow, registry, _vocabulary(registry, known_variables)).run()


def lint_registry(registry: FlowRegistry, known_variables: Iterable[str] = KNOWN_SCENARIO_VARIABLES) -> list[LintIssue]:
    """Every problem in every flow, plus registry-level ones (no flows, no main flow)."""
    issues: list[LintIssue] = []
    if not len(registry):
        return [LintIssue("error", "(registry)", "", None, None, "no flows found")]
    if registry.main_flow is None:
        issues.append(LintIssue("error", "(registry)", "", None, None, "no flow has entry_mode: main"))
    vocabulary = _vocabulary(registry, known_variables)
    for flow in registry:
        issues += _FlowLinter(flow, registry, vocabulary).run()
    return issues


class _FlowLinter:
    """Checks one flow. Known variables for templates, readbacks and guards are the scenario
    vocabulary, this flow's `variables`, and every name set by an action or transition update in
    the registry; guard bare names may also be flags. Errors block (`flows lint` exits non-zero);
    warnings are unknown guard names, unknown telemetry/intent names, pilot states without an
    example phrase and ignored fields.
    """

    def __init__(self, flow: Flow, registry: FlowRegistry, vocabulary: _Vocabulary) -> None:
        self.flow = flow
        self.registry = registry
        self.file = registry.source_of(flow.slug)
        self.known = vocabulary.variables | frozenset(flow.variables)
        self.flags = vocabulary.flags
        self.issues: list[LintIssue] = []

    def error(self, state: str | None, field: str | None, message: str) -> None:
        self.issues.append(LintIssue("error", self.file, self.flow.slug, state, field, message))

    def warning(self, state: str | None, field: str | None, message: str) -> None:
        self.issues.append(LintIssue("warning", self.file, self.flow.slug, state, field, message))

    def run(self) -> list[LintIssue]:
        flow = self.flow
        if flow.start_state not in flow.states:
            self.error(None, "start_state", f"unknown state {flow.start_state!r}")
        for i, end in enumerate(flow.end_states):
            if end not in flow.states:
                self.error(None, f"end_states[{i}]", f"unknown state {end!r}")
        self.check_interrupt()
        for name in ("silence_prompt_tpl", "say_again_tpl", "correction_tpl"):
            self.template(None, f"policies.{name}", getattr(flow.policies, name))
        for i, name in enumerate(flow.policies.llm_updates):
            if name not in flow.variables:  # the declared default gives the type the LLM must keep
                self.error(None, f"policies.llm_updates[{i}]", f"{name!r} is not declared in this flow's variables")
        for sid, state in flow.states.items():
            self.check_state(sid, state)
        self.check_reachability()
        return self.issues

    # flow level ------------------------------------------------------------------------------

    def check_interrupt(self) -> None:
        flow = self.flow
        if flow.entry_mode is FlowMode.INTERRUPT:
            if flow.interrupt is None or not flow.interrupt.triggers:
                self.error(None, "interrupt.triggers", "interrupt flow without interrupt.triggers can never be entered")
        elif flow.interrupt is not None:
            self.warning(None, "interrupt", "ignored: entry_mode is not interrupt")
        if flow.interrupt is not None:
            for i, trigger in enumerate(flow.interrupt.triggers):
                self.trigger(None, f"interrupt.triggers[{i}]", trigger)

    def check_reachability(self) -> None:
        """BFS over in-flow routes of every kind from start_state and from cross-flow entries."""
        flow = self.flow
        roots = [flow.start_state] if flow.start_state in flow.states else []
        for other in self.registry:
            for state in other.states.values():
                for t in state.transitions:
                    if t.flow == flow.slug and t.to:
                        roots.append(t.to)
                    elif t.kind is TransitionKind.RETURN and not t.flow and t.to and other.slug != flow.slug:
                        roots.append(t.to)  # resumes a stacked flow; any flow may be the one stacked
        seen: set[str] = set()
        queue = deque(r for r in roots if r in flow.states)
        while queue:
            sid = queue.popleft()
            if sid in seen:
                continue
            seen.add(sid)
            for t in flow.states[sid].transitions:
                if not t.flow and t.kind is not TransitionKind.RETURN and t.to in flow.states and t.to not in seen:
                    queue.append(t.to)
        if not roots:
            return  # a missing start_state is already an error; every state would be reported
        for sid in flow.states:
            if sid not in seen:
                self.error(sid, None, f"unreachable from start_state {flow.start_state!r}")

    # state level -----------------------------------------------------------------------------

    def check_state(self, sid: str, state: State) -> None:
        self.template(sid, "say_tpl", state.say_tpl)
        self.template(sid, "utterance_tpl", state.utterance_tpl)
        self.template(sid, "frequency", state.frequency)
        if state.handoff is not None:
            self.template(sid, "handoff.freq", state.handoff.freq)
        for i, action in enumerate(state.actions):
            for key, value in action.set.items():
                if isinstance(value, str):
                    self.template(sid, f"actions[{i}].set.{key}", value)
        for i, name in enumerate(state.readback_required):
            if name not in self.known:
                self.error(sid, f"readback_required[{i}]", f"readback field {name!r} is not a known variable")
        for i, condition in enumerate(state.conditions):
            self.guard(sid, f"conditions[{i}]", condition)
        for i, trigger in enumerate(state.triggers):
            self.trigger(sid, f"triggers[{i}]", trigger)
        for i, transition in enumerate(state.transitions):
            self.transition(sid, f"transitions[{i}]", transition)
        if not state.transitions and sid not in self.flow.end_states:
            self.error(sid, "transitions", "no transitions and not an end state: the flow stops here")
        if state.role is Role.PILOT and not state.utterance_tpl and not any(t.utterance_tpl for t in state.transitions):
            self.warning(sid, "utterance_tpl", "pilot state without an example phrase (expect / utterance_tpl)")

    def transition(self, sid: str, where: str, t: Transition) -> None:
        flow = self.flow
        if t.flow:
            if t.flow not in self.registry:
                self.error(sid, f"{where}.flow", f"unknown flow {t.flow!r}")
            elif t.to and t.to not in self.registry.get(t.flow).states:
                self.error(sid, f"{where}.to", f"unknown state {t.to!r} in flow {t.flow!r}")
        elif t.kind is TransitionKind.INTERRUPT:
            self.error(sid, f"{where}.flow", "interrupt transition without a flow to enter")
        elif t.kind is TransitionKind.RETURN:
            pass  # `to`, when given, names a state of whichever flow is stacked
        elif not t.to:
            self.error(sid, where, f"{t.kind.value} transition without a target ('to' or 'flow')")
        elif t.to not in flow.states:
            self.error(sid, f"{where}.to", f"unknown state {t.to!r}")
        if t.mode is not None and not t.flow:
            self.warning(sid, f"{where}.mode", "ignored without 'flow'")
        if t.kind is TransitionKind.TIMER and t.after_s is None:
            self.error(sid, f"{where}.after_s", "timer transition without after_s")
        if t.after_s is not None:
            if t.after_s < 0:
                self.error(sid, f"{where}.after_s", f"negative delay {t.after_s}")
            elif t.kind is not TransitionKind.TIMER:
                self.warning(sid, f"{where}.after_s", f"ignored on a {t.kind.value} transition")
        if t.guard is not None:
            self.guard(sid, f"{where}.guard", t.guard)
        for i, trigger in enumerate(t.triggers):
            self.trigger(sid, f"{where}.triggers[{i}]", trigger)
        self.template(sid, f"{where}.utterance_tpl", t.utterance_tpl)
        for key, value in t.updates.items():
            if isinstance(value, str):
                self.template(sid, f"{where}.updates.{key}", value)

    # leaves ------------------------------------------------------------------------------------

    def template(self, sid: str | None, where: str, text: str | None) -> None:
        for name in template_vars(text):
            if name not in self.known:
                self.error(sid, where, f"unknown variable {name!r}")
        for placeholder in unknown_placeholders(text):
            self.error(sid, where, f"{placeholder} is not a variable name (templates substitute plain names only)")

    def hold(self, sid: str | None, where: str, name: str) -> None:
        """A hold time set by a variable: the flow declares it with a number of seconds."""
        if name not in self.flow.variables:
            self.error(sid, where, f"hold_s variable {name!r} must be declared in the flow's variables with a default")
            return
        default = self.flow.variables[name]
        if isinstance(default, bool) or not isinstance(default, int | float) or default < 0:
            self.error(sid, where, f"hold_s variable {name!r} must default to zero or more seconds, not {default!r}")

    def guard(self, sid: str | None, where: str, expr: str) -> None:
        try:
            guard = compile_guard(expr)
        except GuardError as exc:
            column = f" (column {exc.column})" if exc.column is not None else ""
            self.error(sid, where, f"invalid guard {expr!r}: {exc.reason}{column}")
            return
        for name in sorted(guard.names):
            if name not in self.known and name not in self.flags:
                self.warning(sid, where, f"unknown name {name!r} in guard (evaluates to None)")
        for name in sorted(guard.var_names - self.known):
            self.warning(sid, where, f"unknown variable 'vars.{name}' in guard (evaluates to None)")
        for name in sorted(guard.flag_names - self.flags):
            self.warning(sid, where, f"flag 'flags.{name}' is never declared or set")
        for name in sorted(guard.telemetry_names - KNOWN_TELEMETRY):
            self.warning(sid, where, f"unknown telemetry 'telemetry.{name}'")

    def trigger(self, sid: str | None, where: str, trigger: Trigger) -> None:
        if trigger.kind == "regex":
            if not trigger.pattern:
                self.error(sid, where, "regex trigger without a pattern")
                return
            try:
                re.compile(trigger.pattern, re.IGNORECASE)
            except re.error as exc:
                self.error(sid, where, f"invalid regex {trigger.pattern!r}: {exc}")
        elif trigger.kind == "telemetry":
            if not trigger.expr:
                self.error(sid, where, "telemetry trigger without an expression")
            else:
                self.guard(sid, where, trigger.expr)
            if trigger.hold_var is not None:
                self.hold(sid, f"{where}.hold_s", trigger.hold_var)
        elif not trigger.intent:
            self.error(sid, where, "intent trigger without an intent name")
        elif trigger.intent not in INTENT_PATTERNS:
            self.warning(sid, where, f"unknown intent {trigger.intent!r} (known: {', '.join(sorted(INTENT_PATTERNS))})")
