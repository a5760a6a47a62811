"""Serving code never imports tooling.

engine/, gateway/ and assistant/ serve the radio; tooling/ (benchmarks, load tester, corpus,
scripted pilots, terminal chat, the `livefreq` command line) drives them from outside. An import
of `tooling` from serving code, even one deferred inside a function, would make the server carry
the benchmarks' code and dependencies, so this reads every serving module's syntax tree (no
import is executed) and fails on any `import tooling...`, `from tooling... import ...` or
`importlib.import_module("tooling...")` / `__import__("tooling...")`, wherever it stands.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from engine.guards import parse_retrying

ROOT = Path(__file__).resolve().parents[1]
SERVING = ("engine", "gateway", "assistant")
TOOLING = "tooling"


def _is_tooling(name: str | None) -> bool:
    return name is not None and (name == TOOLING or name.startswith(TOOLING + "."))


def tooling_imports(source: str, filename: str = "<string>") -> list[tuple[int, str]]:
    """(line, imported name) of every import of the tooling package in `source`, at module level,
    in functions, in classes, under `if TYPE_CHECKING:` or through importlib."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(parse_retrying(source, filename=filename)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if _is_tooling(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and _is_tooling(node.module):
                found.append((node.lineno, str(node.module)))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            first = node.args[0]
            if called in ("import_module", "__import__") and isinstance(first, ast.Constant) and isinstance(first.value, str):
                if _is_tooling(first.value):
                    found.append((node.lineno, first.value))
    return found


def serving_modules() -> list[Path]:
    return sorted(path for package in SERVING for path in (ROOT / package).rglob("*.py"))


def test_the_scan_covers_every_serving_package() -> None:
    modules = serving_modules()
    for package in SERVING:
        assert ROOT / package / "__init__.py" in modules, f"{package}/ is not a package any more: update SERVING"
    assert len(modules) > 50, "the serving packages hold far more modules than were found"


@pytest.mark.parametrize(
    "source",
    [
        "import tooling",
        "import tooling.bench.engine as bench",
        "from tooling.cli import main",
        "from tooling import voicekit",
        "def f():\n    from tooling.load.run import run_load\n",
        "class C:\n    def m(self):\n        import tooling.corpus\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tooling.chat import VirtualClock\n",
        "import importlib\nimportlib.import_module('tooling.fly')\n",
        "__import__('tooling')\n",
    ],
)
def test_the_scan_finds_a_tooling_import_wherever_it_stands(source: str) -> None:
    assert len(tooling_imports(source)) == 1


@pytest.mark.parametrize(
    "source",
    [
        "import toolingx",
        "from toolings import x",
        "from gateway.client import RadioClient",
        "from . import tooling_helpers",
        "importlib.import_module('gateway.app')",
    ],
)
def test_names_that_only_resemble_tooling_are_not_flagged(source: str) -> None:
    assert tooling_imports(source) == []


def test_serving_code_never_imports_tooling() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: imports {name}"
        for path in serving_modules()
        for line, name in tooling_imports(path.read_text(encoding="utf-8"), str(path))
    ]
    assert not offenders, "serving code imports tooling (move the function it needs into serving code):\n" + "\n".join(offenders)


def test_the_command_tree_is_built_without_importing_any_command() -> None:
    """`livefreq serve` must not pay for the benchmarks: the parser names handlers, `main` imports
    the one module a command lives in. Checked in a fresh interpreter (this one has imported
    everything already)."""
    import subprocess
    import sys

    code = (
        "import sys; from tooling.cli.parser import build_parser; build_parser(); "
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('tooling.'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    loaded = set(done.stdout.split())
    assert {"tooling.cli.common", "tooling.cli.parser"} <= loaded
    commands = {m for m in loaded if m.startswith(("tooling.cli.", "tooling.bench", "tooling.load"))} - {"tooling.cli.common", "tooling.cli.parser"}
    assert not commands, f"building the parser imported {sorted(commands)}"
