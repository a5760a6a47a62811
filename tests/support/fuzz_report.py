"""Budget and report of a fuzz suite: how many inputs it tried, on the terminal and in ``reports/``.

CI runs the fuzz suites on every build, so their budget is bounded (examples per target, scaled
by ``LIVEFREQ_FUZZ_SCALE``, default 1; e.g. 10 for a longer nightly run) and each suite says what
it did: a line in pytest's terminal summary (shown with or without ``-s``) and
``reports/fuzz-<name>.json``.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from gateway.settings import REPO_ROOT

REPORTS = REPO_ROOT / "reports"


def budget(examples: int) -> int:
    """`examples` scaled by ``LIVEFREQ_FUZZ_SCALE`` (at least 1)."""
    scale = float(os.environ.get("LIVEFREQ_FUZZ_SCALE", "1") or 1)
    return max(1, round(examples * scale))


class FuzzReport:
    """Counters of one suite; `finish` writes the JSON report and queues the terminal line."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.counts: Counter[str] = Counter()
        self.started = time.perf_counter()

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] += n

    def finish(self, config: pytest.Config, headline: str, **extra: Any) -> Path:
        seconds = round(time.perf_counter() - self.started, 1)
        data = {"suite": self.name, "seconds": seconds, **extra, "counts": dict(sorted(self.counts.items()))}
        REPORTS.mkdir(exist_ok=True)
        path = REPORTS / f"fuzz-{self.name}.json"
        path.write_text(json.dumps(data, indent=2) + "\n")
        line = f"fuzz-{self.name}: {headline} in {seconds:g} s (report: {path.relative_to(REPO_ROOT)})"
        config.pluginmanager.register(_SummaryLine(line), name=f"livefreq-fuzz-{self.name}-{id(self)}")
        return path


class _SummaryLine:
    """A pytest plugin that adds one line to the terminal summary."""

    def __init__(self, line: str) -> None:
        self.line = line

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        terminalreporter.write_line(self.line)


class ErrorLog(logging.Handler):
    """Every ERROR the in-process server logs while installed: an exception the gateway caught and
    answered with a 4xx, or one uvicorn caught, would otherwise pass unseen."""

    LOGGERS = ("", "uvicorn")  # the root logger, and uvicorn's own (it does not propagate)

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    @property
    def messages(self) -> list[str]:
        """Each record as "logger: message", with its exception's traceback when it has one."""
        out = []
        for record in self.records:
            text = f"{record.name}: {record.getMessage()}"
            if record.exc_info:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
            out.append(text)
        return out

    def __enter__(self) -> ErrorLog:
        for name in self.LOGGERS:
            logging.getLogger(name).addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).removeHandler(self)
