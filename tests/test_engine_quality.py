"""engine/ stays linted, formatted and typed: ruff and mypy, configured in pyproject.toml.

They run as subprocesses from the repository root (as CI and a developer would run them), so the
configuration that counts is the project's own; a failure shows the tool's findings.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize(
    "command",
    [("ruff", "check", "engine"), ("ruff", "format", "--check", "engine"), ("mypy", "engine")],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_engine_passes(command: tuple[str, ...]) -> None:
    done = _run(*command)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
