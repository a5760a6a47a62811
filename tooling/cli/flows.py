"""`livefreq flows lint` and `livefreq flows list`: load a flow directory, report every problem as
`file[:line]: STATE.field: severity: message`, list what loaded."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tooling.cli.common import EXIT_FAILED, EXIT_OK, CliError, load_settings, print_table

if TYPE_CHECKING:
    from engine.loader import FlowLoadError
    from engine.registry import FlowRegistry

__all__ = ["cmd_flows_lint", "cmd_flows_list"]


def _flows_dir(args: argparse.Namespace) -> Path:
    if args.flows_dir is not None:
        return Path(args.flows_dir)
    return Path(load_settings().flows_dir)


def _load_flows(args: argparse.Namespace) -> tuple[FlowRegistry, list[FlowLoadError]]:
    """The flows of the directory the options name, and the errors of the files that did not load."""
    from engine.loader import load_registry
    from gateway.flows_source import DirectoryFlowSource

    directory = _flows_dir(args)
    if not directory.is_dir():
        raise CliError(f"flow directory not found: {directory}")
    load_errors: list[FlowLoadError] = []
    registry = load_registry(DirectoryFlowSource(directory), errors=load_errors)
    return registry, load_errors


def cmd_flows_lint(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Load every flow (collecting load errors), lint the ones that loaded, print and count."""
    from engine.loader import LoadProblem, lint_registry
    from engine.registry import KNOWN_SCENARIO_VARIABLES

    out = out or sys.stdout
    registry, load_errors = _load_flows(args)
    issues = lint_registry(registry, KNOWN_SCENARIO_VARIABLES)
    errors = 0
    for exc in load_errors:
        for problem in exc.problems or [LoadProblem(str(exc))]:
            head = _display_path(exc.source) + (f":{problem.line}" if problem.line is not None else "")
            print(_issue_line(head, problem.location, "error", problem.message), file=out)
            errors += 1
    for issue in issues:
        where = ".".join(p for p in (issue.state, issue.field) if p) or None
        print(_issue_line(_display_path(issue.file), where, issue.severity, issue.message), file=out)
        if issue.severity == "error":
            errors += 1
    warnings = sum(1 for i in issues if i.severity == "warning")
    states = sum(len(flow.states) for flow in registry)
    flows = len(registry) + len(load_errors)
    print(f"{flows} flows, {states} states, {errors} errors, {warnings} warnings", file=out)
    return EXIT_FAILED if errors else EXIT_OK


def _issue_line(head: str, where: str | None, severity: str, message: str) -> str:
    """`file[:line]: STATE.field: error: message`, the shape editors and CI logs link."""
    return f"{head}: {where}: {severity}: {message}" if where else f"{head}: {severity}: {message}"


def _display_path(source: str) -> str:
    """A flow's file relative to the working directory when it is below it (shorter lines)."""
    try:
        return str(Path(source).resolve().relative_to(Path.cwd()))
    except (ValueError, OSError):
        return source


def cmd_flows_list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """One line per loaded flow; flows that fail to load are named on stderr (exit 1)."""
    out = out or sys.stdout
    registry, load_errors = _load_flows(args)
    rows = [
        (
            flow.slug + (" *" if flow.slug == registry.main_flow else ""),
            flow.name,
            flow.entry_mode.value,
            str(len(flow.states)),
        )
        for flow in registry
    ]
    print_table(("flow", "name", "entry", "states"), rows, out, right=(3,))
    if registry.main_flow:
        print(f"* main flow: {registry.main_flow}", file=out)
    for exc in load_errors:
        print(f"livefreq: cannot load {exc.source} (run `livefreq flows lint`)", file=sys.stderr)
    return EXIT_FAILED if load_errors else EXIT_OK
