"""Reading flow YAML safely and saying where it is wrong.

A strict `yaml.SafeLoader` (no duplicate keys, no alias bombs), and the translation of YAML and
pydantic errors into `LoadProblem`s with a document path and a source line. Used by
engine/loader.py; nothing here builds a model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml
from pydantic import ValidationError

from engine.flow_errors import LoadProblem

LEGACY_LIST_KEYS = ("next", "ok_next", "bad_next", "timer_next", "auto_transitions", "interrupts")

# A flow document expanded (aliases followed) may have at most this many YAML nodes. The shipped
# flows have at most a few thousand; "billion laughs" (aliases of aliases of lists) loads as a few
# shared objects, and then explodes when a session copies the flow's variables or the runtime
# API writes the flow out as JSON.
MAX_EXPANDED_NODES = 200_000


class StrictLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` (plain data only: no Python objects, no code) that refuses duplicate
    keys (two states with one id would silently merge) and documents that expand past
    `MAX_EXPANDED_NODES` through aliases."""

    def construct_document(self, node: yaml.Node) -> Any:
        size = _expanded_size(node, {})
        if size > MAX_EXPANDED_NODES:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"the document expands to {size} nodes through aliases (at most {MAX_EXPANDED_NODES})",
                node.start_mark,
            )
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
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


def yaml_problem(exc: yaml.YAMLError) -> LoadProblem:
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


def line_of(root: yaml.Node | None, loc: Iterable[Any]) -> int | None:
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


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validation_problems(exc: ValidationError, text: str) -> list[LoadProblem]:
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
                message += f" (got {short(value)})"
        problems.append(LoadProblem(message, _format_loc(loc) or None, line_of(root, loc)))
    return problems


def normalize_version(raw: Any) -> str | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    if isinstance(raw, str):
        return raw.strip()
    return None


def check_legacy_lists(data: dict[str, Any]) -> list[LoadProblem]:
    """Seed 000 route lists must be lists of state ids or mappings; a lone id is read as a list."""
    problems: list[LoadProblem] = []
    states = data.get("states")
    if not isinstance(states, dict):
        return problems
    for sid, state in states.items():
        if not isinstance(state, dict):
            continue
        for key in LEGACY_LIST_KEYS:
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
                    problems.append(
                        LoadProblem(f"expected a state id or a transition (got {short(item)})", f"{where}[{i}]")
                    )
    return problems
