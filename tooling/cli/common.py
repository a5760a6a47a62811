"""What every `livefreq` command shares: exit codes, the error a user can fix, settings from the
environment with command-line overrides, a plain text table and a JSON report file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from gateway.settings import Settings

__all__ = ["EXIT_FAILED", "EXIT_OK", "LOG_LEVELS", "CliError", "load_settings", "print_table", "write_report"]

EXIT_OK = 0
EXIT_FAILED = 1
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


class CliError(Exception):
    """A problem the user can fix (missing directory, unknown flow): printed without a traceback."""


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment (LIVEFREQ_*), with the options given on the command line."""
    from pydantic import ValidationError

    from gateway.settings import Settings

    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        raise CliError(f"invalid settings: {exc}") from None


def print_table(head: tuple[str, ...], rows: list[tuple[str, ...]], out: TextIO, right: tuple[int, ...] = ()) -> None:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: tuple[str, ...]) -> str:
        parts = [str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(parts).rstrip()

    print(line(head), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in rows:
        print(line(row), file=out)


def write_report(json_path: str, report: dict[str, Any]) -> Path:
    """Write a benchmark's JSON report (creating its directory); the path written."""
    path = Path(json_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return path
