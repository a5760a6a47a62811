"""YAML flows → `Flow` models, the registry of a curriculum, and lint.

Reading files is an adapter's job (`gateway.flows_source.DirectoryFlowSource`); the engine only sees
text through the `FlowSource` protocol, so the same loader serves a directory, a package, a database
or a test's dict (`MemoryFlowSource`).

Errors are for people editing YAML: every `FlowLoadError` names the source, the line when it can be
found, the path inside the document (`states.CD_ISSUE.transitions[0].after_s`) and what is wrong.
`load_registry` reads every flow before failing, so one run reports every broken file.

Schema versions: "1" (seed 000's field names: `say_tpl`, `utterance_tpl`, `readback_required`,
`next`/`ok_next`/`bad_next`/`timer_next`/`auto_transitions`) and "2" (`say`, `expect`, `readback`,
`transitions`). `engine.models.State` folds both into one model, so the version only gates what is
accepted; a file without `schema_version` is read as the current version.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import yaml
from pydantic import ValidationError

from engine.guards import GuardError, compile_guard
from engine.models import Flow, FlowMode, Role, State, Transition, TransitionKind, Trigger
from engine.registry import KNOWN_SCENARIO_VARIABLES, KNOWN_TELEMETRY, FlowRegistry, UnknownFlow
from engine.templates import template_vars, unknown_placeholders
from engine.triggers import INTENT_PATTERNS

__all__ = [
    "SLUG_RE",
    "SUPPORTED_SCHEMA_VERSIONS",
    "LoadProblem",
    "FlowLoadError",
    "FlowLoadErrors",
    "FlowSource",
    "MemoryFlowSource",
    "load_flow_text",
    "load_registry",
    "LintIssue",
    "lint_flow",
    "lint_registry",
]

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
SUPPORTED_SCHEMA_VERSIONS: tuple[str, ...] = ("1", "2")
_LEGACY_LIST_KEYS = ("next", "ok_next", "bad_next", "timer_next", "auto_transitions", "interrupts")


# --------------------------------------------------------------------------- errors


@dataclass(frozen=True, slots=True)
class LoadProblem:
    """One thing wrong in one flow document."""

    message: str
    location: str | None = None  # path in the document, e.g. "states.CD_ISSUE.say"
    line: int | None = None  # 1-based line in the source, when known

    def render(self, source: str) -> str:
        head = f"{source}:{self.line}" if self.line is not None else source
        return f"{head}: {self.location}: {self.message}" if self.location else f"{head}: {self.message}"


class FlowLoadError(Exception):
    """A flow document that could not be loaded; `problems` lists every issue found in it."""

    def __init__(self, source: str, problems: Iterable[LoadProblem]) -> None:
        self.source = source
        self.problems: list[LoadProblem] = list(problems)
        super().__init__("\n".join(p.render(source) for p in self.problems))

    @classmethod
    def single(cls, source: str, message: str, location: str | None = None, line: int | None = None) -> FlowLoadError:
        return cls(source, [LoadProblem(message, location, line)])

    @property
    def message(self) -> str:
        return self.problems[0].message if self.problems else ""

    @property
    def location(self) -> str | None:
        return self.problems[0].location if self.problems else None


class FlowLoadErrors(Exception):
    """Every flow that failed to load in one `load_registry` call."""

    def __init__(self, errors: Iterable[FlowLoadError]) -> None:
        self.errors: list[FlowLoadError] = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


# --------------------------------------------------------------------------- sources


class FlowSource(Protocol):
    """Where flow texts come from. The engine never opens files itself."""

    def list(self) -> list[str]:
        """Slugs of the available flows."""
        ...

    def read(self, slug: str) -> tuple[str, str]:
        """(YAML text, source name for messages) of one flow."""
        ...


class MemoryFlowSource:
    """Flow texts held in memory, keyed by slug (tests, embedded curricula)."""

    def __init__(self, texts: Mapping[str, str], prefix: str = "flows/") -> None:
        self._texts = dict(texts)
        self._prefix = prefix

    def list(self) -> list[str]:
        return sorted(self._texts)

    def read(self, slug: str) -> tuple[str, str]:
        return self._texts[slug], f"{self._prefix}{slug}.yaml"


# --------------------------------------------------------------------------- YAML


# A flow document expanded (aliases followed) may have at most this many YAML nodes. The shipped
# flows have at most a few thousand; "billion laughs" (aliases of aliases of lists) loads as a few
# shared objects, and then explodes when a session copies the flow's variables or the runtime
# API writes the flow out as JSON.
MAX_EXPANDED_NODES = 200_000


class _StrictLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` (plain data only: no Python objects, no code) that refuses duplicate
    keys (two states with one id would silently merge) and documents that expand past
    `MAX_EXPANDED_NODES` through aliases."""

    def construct_document(self, node: yaml.Node) -> Any:
        size = _expanded_size(node, {})
        if size > MAX_EXPANDED_NODES:
            raise yaml.constructor.ConstructorError(
                None, None, f"the document expands to {size} nodes through aliases (at most {MAX_EXPANDED_NODES})",
                node.start_mark,
            )
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue  # unhashable keys are rejected by the base constructor
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key!r}",
                        key_node.start_mark,
                    )
        return super().construct_mapping(node, deep=deep)


def _expanded_size(node: yaml.Node, seen: dict[int, int]) -> int:
    """Nodes of `node` with every alias followed, counted once per shared node (linear time)."""
    known = seen.get(id(node))
    if known is not None:
        return known
    seen[id(node)] = 1  # a recursive alias counts once instead of forever
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, seen) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, seen) + _expanded_size(v, seen) for k, v in node.value)
    seen[id(node)] = size
    return size


def _yaml_problem(exc: yaml.YAMLError) -> LoadProblem:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        parts = [p for p in (exc.context, exc.problem) if p]
        message = "YAML error: " + ", ".join(parts) if parts else "YAML error"
        if mark is not None:
            return LoadProblem(f"{message} (column {mark.column + 1})", None, mark.line + 1)
        return LoadProblem(message)
    return LoadProblem(f"YAML error: {exc}")


def _format_loc(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _line_of(root: yaml.Node | None, loc: Iterable[Any]) -> int | None:
    """Best-effort source line of a pydantic error location (the deepest node that exists)."""
    if root is None:
        return None
    node = root
    for part in loc:
        child = None
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                    child = value_node
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            child = node.value[part]
        if child is None:
            break
        node = child
    return node.start_mark.line + 1


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _validation_problems(exc: ValidationError, text: str) -> list[LoadProblem]:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        root = None
    problems = []
    for err in exc.errors():
        loc = err.get("loc", ())
        kind = err.get("type", "")
        if kind == "extra_forbidden":
            message = "unknown field"
        elif kind == "missing":
            message = "required field is missing"
        else:
            message = err.get("msg", "invalid value")
            value = err.get("input")
            if value is None or isinstance(value, (str, int, float, bool)):
                message += f" (got {_short(value)})"
        problems.append(LoadProblem(message, _format_loc(loc) or None, _line_of(root, loc)))
    return problems


def _normalize_version(raw: Any) -> str | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    if isinstance(raw, str):
        return raw.strip()
    return None


def _check_legacy_lists(data: dict[str, Any]) -> list[LoadProblem]:
    """Seed 000 route lists must be lists of state ids or mappings; a lone id is read as a list."""
    problems: list[LoadProblem] = []
    states = data.get("states")
    if not isinstance(states, dict):
        return problems
    for sid, state in states.items():
        if not isinstance(state, dict):
            continue
        for key in _LEGACY_LIST_KEYS:
            value = state.get(key)
            if value is None:
                continue
            if isinstance(value, str):
                state[key] = [value]
                continue
            where = f"states.{sid}.{key}"
            if not isinstance(value, list):
                problems.append(LoadProblem("expected a list of state ids or transitions", where))
                continue
            for i, item in enumerate(value):
                if not isinstance(item, (str, dict)):
                    problems.append(LoadProblem(f"expected a state id or a transition (got {_short(item)})", f"{where}[{i}]"))
    return problems


# --------------------------------------------------------------------------- loading


def load_flow_text(text: str, source: str, *, expected_slug: str | None = None) -> Flow:
    """Parse and validate one flow document; raises `FlowLoadError`.

    `expected_slug` is the slug the flow was listed under (its file stem): the document's `slug`
    must equal it, and a document without `slug` takes it.
    """
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader: plain data only, no objects
    except yaml.YAMLError as exc:
        raise FlowLoadError(source, [_yaml_problem(exc)]) from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise FlowLoadError.single(source, "YAML error: the document is nested too deeply") from None
    if data is None:
        raise FlowLoadError.single(source, "empty flow document")
    if not isinstance(data, dict):
        raise FlowLoadError.single(source, f"a flow must be a mapping at the top level, not {type(data).__name__}")

    problems: list[LoadProblem] = []
    if "schema_version" in data:
        version = _normalize_version(data["schema_version"])
        if version not in SUPPORTED_SCHEMA_VERSIONS:
            supported = ", ".join(f'"{v}"' for v in SUPPORTED_SCHEMA_VERSIONS)
            problems.append(
                LoadProblem(
                    f"unsupported schema_version {_short(data['schema_version'])} (supported: {supported})",
                    "schema_version",
                    _line_of(yaml.compose(text, Loader=yaml.SafeLoader), ["schema_version"]),
                )
            )
        else:
            data["schema_version"] = version
    if expected_slug is not None and "slug" not in data:
        data["slug"] = expected_slug
    problems += _check_legacy_lists(data)
    if problems:
        raise FlowLoadError(source, problems)

    try:
        flow = Flow.model_validate(data)
    except ValidationError as exc:
        raise FlowLoadError(source, _validation_problems(exc, text)) from None
    except (TypeError, AttributeError) as exc:  # a legacy shape the model's folding could not read
        raise FlowLoadError.single(source, f"invalid flow structure: {exc}") from None

    if not SLUG_RE.match(flow.slug):
        raise FlowLoadError.single(source, f"invalid slug {flow.slug!r}: use lower case letters, digits, '_' and '-'", "slug")
    if expected_slug is not None and flow.slug != expected_slug:
        raise FlowLoadError.single(
            source, f"slug {flow.slug!r} does not match the file name {expected_slug!r}", "slug"
        )
    return flow


def load_registry(
    source: FlowSource,
    *,
    main_flow: str | None = None,
    errors: list[FlowLoadError] | None = None,
) -> FlowRegistry:
    """Load every flow of `source` into a `FlowRegistry`.

    Every flow is attempted. With `errors=None` any failure raises `FlowLoadErrors` listing all of
    them (a server must not start on a half-loaded curriculum). With a list, failures are appended
    to it and the registry holds the flows that did load (`livefreq flows lint` reports both).
    An unknown `main_flow` is an error of the same kind; in collecting mode the default is used.
    """
    collected: list[FlowLoadError] = []
    flows: list[Flow] = []
    sources: dict[str, str] = {}
    for slug in source.list():
        if not SLUG_RE.match(slug):
            collected.append(
                FlowLoadError.single(slug, f"invalid flow name {slug!r}: use lower case letters, digits, '_' and '-'")
            )
            continue
        name = slug
        try:
            text, name = source.read(slug)
            flow = load_flow_text(text, name, expected_slug=slug)
        except FlowLoadError as exc:
            collected.append(exc)
            continue
        except (OSError, UnicodeDecodeError, KeyError, ValueError) as exc:
            collected.append(FlowLoadError.single(name, f"cannot read flow: {exc}"))
            continue
        flows.append(flow)
        sources[flow.slug] = name
    try:
        registry = FlowRegistry(flows, main_flow, sources=sources)
    except UnknownFlow as exc:
        collected.append(FlowLoadError.single("(registry)", f"main flow {exc.slug!r} is not loaded"))
        registry = FlowRegistry(flows, None, sources=sources)
    if errors is not None:
        errors.extend(collected)
    elif collected:
        raise FlowLoadErrors(collected)
    return registry


# --------------------------------------------------------------------------- lint


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


def lint_registry(
    registry: FlowRegistry, known_variables: Iterable[str] = KNOWN_SCENARIO_VARIABLES
) -> list[LintIssue]:
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
        if (
            state.role is Role.PILOT
            and not state.utterance_tpl
            and not any(t.utterance_tpl for t in state.transitions)
        ):
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
