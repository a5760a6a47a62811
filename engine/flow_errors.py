"""Errors of flow loading, for people editing YAML.

Every `FlowLoadError` names the source, the line when it can be found, the path inside the document
(`states.CD_ISSUE.transitions[0].after_s`) and what is wrong; `FlowLoadErrors` gathers every flow
that failed in one `load_registry` call, so one run reports every broken file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["LoadProblem", "FlowLoadError", "FlowLoadErrors"]


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
