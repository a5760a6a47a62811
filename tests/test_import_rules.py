"""The import graph of engine/, gateway/ and assistant/: no circles, and the engine stays pure.

Static (ast over the source files, nothing is imported): an import anywhere in a module counts,
at module level or inside a function, since a function-level import only hides a circle until
that function runs. Imports under ``if TYPE_CHECKING:`` are exempt (they never run). An edge
goes to the module imported (``from gateway import metrics`` -> ``gateway.metrics``; ``from
gateway.store import StoredSession`` -> ``gateway.store``), not to the packages above it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from engine.guards import parse_retrying

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "gateway", "assistant", "tooling")


def module_files() -> dict[str, Path]:
    """Every module of the packages, by dotted name (a package by its name, not ``.__init__``)."""
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, outside ``if TYPE_CHECKING:`` blocks (their ``else`` counts)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _imports(node)


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the three packages it imports."""
    files = module_files()
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        tree = parse_retrying(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                source = _absolute(name, is_package, node)
                targets = [
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in files else source for alias in node.names
                ]
            for target in targets:
                while target and target not in files and "." in target:
                    target = target.rsplit(".", 1)[0]  # `import a.b.c` of a name inside a.b
                if target in files and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def test_the_graph_sees_known_edges() -> None:
    """The parser resolves the import forms the code uses (else an empty graph would pass)."""
    graph = import_graph()
    assert "engine.models" in graph["engine.session"]
    assert "gateway.metrics" in graph["gateway.radio.connection"]  # `from gateway import metrics`
    assert "gateway.store" in graph["gateway.service.core"]  # a name from a package's __init__


def test_no_import_circles() -> None:
    found = circles(import_graph())
    assert found == [], "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_engine_imports_neither_gateway_nor_assistant() -> None:
    graph = import_graph()
    wrong = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if name.split(".")[0] == "engine"
        for target in targets
        if target.split(".")[0] != "engine"
    )
    assert wrong == []


def test_radio_never_imports_its_transports() -> None:
    """gateway/radio is the pilot's radio; WebSocket and WebRTC are adapters over it, not under it."""
    graph = import_graph()
    wrong = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if name.startswith("gateway.radio")
        for target in targets
        if target.startswith(("gateway.ws", "gateway.webrtc"))
    )
    assert wrong == []
