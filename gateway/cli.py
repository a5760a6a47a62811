"""`livefreq`: the command line of the gateway (serve, flows, chat, bench).

One argparse parser, one small function per subcommand. Heavy imports (uvicorn, the app, the
service) happen inside the commands, so `livefreq flows lint` in CI stays quick and does not need
the server's dependencies to be importable. Every command returns its exit code: 0 success,
1 a failure the command found (lint errors, a broken flow directory), 2 a usage error (argparse).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import logging
import math
import os
import platform
import pstats
import shlex
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from engine.models import ControllerMessage, Decision, ReadbackResult, Session
    from engine.registry import FlowRegistry
    from gateway.service import RadioService
    from gateway.settings import Settings

__all__ = ["main", "build_parser"]

log = logging.getLogger("livefreq.cli")

EXIT_OK = 0
EXIT_FAILED = 1
BENCH_TARGET_TX_PER_S = 2000.0  # in process, one core (the issue's target)
BENCHMARKS: dict[str, str] = {
    "engine": "transmissions per second and decision time: in process, and over HTTP with --http",
}


class CliError(Exception):
    """A problem the user can fix (missing directory, unknown flow): printed without a traceback."""


# --------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree; `main` dispatches on the `handler` default each subparser sets."""
    parser = argparse.ArgumentParser(
        prog="livefreq",
        description="Real-time voice gateway for ATC radio training.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the HTTP/WebSocket gateway (uvicorn)", description="Run the gateway with uvicorn.")
    serve.add_argument("--host", default=None, help="interface to bind (default: LIVEFREQ_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="TCP port (default: LIVEFREQ_PORT or 8765)")
    serve.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug", "trace"],
        help="uvicorn and application log level (default: info)",
    )
    serve.set_defaults(handler=cmd_serve)

    flows = sub.add_parser("flows", help="check and list the YAML flows", description="Check and list the YAML flows.")
    flows_sub = flows.add_subparsers(dest="flows_command", metavar="ACTION")
    lint = flows_sub.add_parser(
        "lint",
        help="load and lint every flow; exit 1 on any error",
        description="Load and lint every flow of a directory. Prints each issue as "
        "'file: STATE.field: message' and a summary; exits 1 when a flow fails to load or has a lint error.",
    )
    lint.add_argument("--dir", dest="flows_dir", default=None, help="flow directory (default: LIVEFREQ_FLOWS_DIR or flows)")
    lint.set_defaults(handler=cmd_flows_lint)
    listing = flows_sub.add_parser("list", help="list flows: slug, name, entry mode, states", description="List the flows.")
    listing.add_argument("--dir", dest="flows_dir", default=None, help="flow directory (default: LIVEFREQ_FLOWS_DIR or flows)")
    listing.set_defaults(handler=cmd_flows_list)
    flows.set_defaults(handler=_usage(flows))

    chat = sub.add_parser(
        "chat",
        help="interactive text trainer in the terminal",
        description="Talk to the controller by typing. Lines starting with ':' are commands: "
        ":trace, :hint, :state, :wait N, :reset, :help, :quit. Reads piped stdin too, one line per transmission.",
    )
    chat.add_argument("--flow", default=None, help="flow slug to start in (default: the curriculum's main flow)")
    chat.add_argument("--seed", type=int, default=None, help="scenario seed (same seed, same scenario)")
    chat.add_argument("--airport", default=None, metavar="ICAO", help="departure airport, e.g. EDDF")
    chat.add_argument("--callsign", default=None, help="ICAO callsign, e.g. DLH359")
    chat.add_argument("--trace", action="store_true", help="print the decision trace after every transmission")
    chat.add_argument(
        "--speech", action=argparse.BooleanOptionalAction, default=True, help="show the ICAO spoken form of each message"
    )
    chat.add_argument("--dir", dest="flows_dir", default=None, help="flow directory (default: LIVEFREQ_FLOWS_DIR or flows)")
    chat.set_defaults(handler=cmd_chat)

    bench = sub.add_parser("bench", help="benchmarks (run without a target to list them)", description="Run a benchmark.")
    bench_sub = bench.add_subparsers(dest="bench_command", metavar="BENCHMARK")
    engine = bench_sub.add_parser(
        "engine",
        help=BENCHMARKS["engine"],
        description="Drive scripted sessions through the flows (each pilot turn sends the engine's own "
        "expected phrase) and measure transmissions per second and p50/p99 decision time.",
    )
    engine.add_argument("--n", type=_positive_int, default=2000, help="transmissions per mode (default: 2000)")
    engine.add_argument("--http", action="store_true", help="also measure through the HTTP API on a local uvicorn server")
    engine.add_argument("--json", dest="json_path", default="reports/bench-engine.json", metavar="PATH", help="where to write the JSON report (default: reports/bench-engine.json)")
    engine.add_argument("--flow", default=None, help="flow to start each session in (default: the main flow)")
    engine.add_argument("--profile", action="store_true", help="profile the in-process engine loop with cProfile and print the hot spots")
    engine.add_argument("--dir", dest="flows_dir", default=None, help="flow directory (default: LIVEFREQ_FLOWS_DIR or flows)")
    engine.set_defaults(handler=cmd_bench_engine)
    bench.set_defaults(handler=cmd_bench_list)
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {value}")
    return value


def _usage(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """Handler for a command group called without its action: help on stderr, usage error."""

    def show(_: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return show


def main(argv: list[str] | None = None) -> int:
    """Console entry point (`livefreq = "gateway.cli:main"`); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(handler(args))
    except CliError as exc:
        print(f"livefreq: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130


# --------------------------------------------------------------------------- settings


def _settings(**overrides: Any) -> Settings:
    """Settings from the environment (LIVEFREQ_*), with the options given on the command line."""
    from gateway.settings import Settings

    return Settings(**{k: v for k, v in overrides.items() if v is not None})


# --------------------------------------------------------------------------- serve


def cmd_serve(args: argparse.Namespace) -> int:
    """Run uvicorn on the app built from the settings (env, then command-line options)."""
    import uvicorn

    from gateway.app import create_app

    settings = _settings(host=args.host, port=args.port)
    logging.basicConfig(level=args.log_level.upper() if args.log_level != "trace" else "DEBUG", format="%(levelname)s:     %(message)s")
    app = create_app(settings)
    shown = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    log.info("livefreq gateway on http://%s:%d (flows from %s)", _url_host(shown), settings.port, settings.flows_dir)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=args.log_level)
    return EXIT_OK


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


# --------------------------------------------------------------------------- flows


def _flows_dir(args: argparse.Namespace) -> Path:
    if args.flows_dir is not None:
        return Path(args.flows_dir)
    return Path(_settings().flows_dir)


def cmd_flows_lint(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Load every flow (collecting load errors), lint the ones that loaded, print and count."""
    from engine.loader import FlowLoadError, LoadProblem, lint_registry, load_registry
    from engine.registry import KNOWN_SCENARIO_VARIABLES
    from gateway.flows_source import DirectoryFlowSource

    out = out or sys.stdout
    directory = _flows_dir(args)
    if not directory.is_dir():
        raise CliError(f"flow directory not found: {directory}")
    load_errors: list[FlowLoadError] = []
    registry = load_registry(DirectoryFlowSource(directory), errors=load_errors)
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
    from engine.loader import FlowLoadError, load_registry
    from gateway.flows_source import DirectoryFlowSource

    out = out or sys.stdout
    directory = _flows_dir(args)
    if not directory.is_dir():
        raise CliError(f"flow directory not found: {directory}")
    load_errors: list[FlowLoadError] = []
    registry = load_registry(DirectoryFlowSource(directory), errors=load_errors)
    rows = [
        (flow.slug + (" *" if flow.slug == registry.main_flow else ""), flow.name, flow.entry_mode.value, str(len(flow.states)))
        for flow in registry
    ]
    _table(("flow", "name", "entry", "states"), rows, out, right=(3,))
    if registry.main_flow:
        print(f"* main flow: {registry.main_flow}", file=out)
    for exc in load_errors:
        print(f"livefreq: cannot load {exc.source} (run `livefreq flows lint`)", file=sys.stderr)
    return EXIT_FAILED if load_errors else EXIT_OK


def _table(head: tuple[str, ...], rows: list[tuple[str, ...]], out: TextIO, right: tuple[int, ...] = ()) -> None:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: tuple[str, ...]) -> str:
        parts = [str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(parts).rstrip()

    print(line(head), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in rows:
        print(line(row), file=out)


# --------------------------------------------------------------------------- chat


class VirtualClock:
    """The trainer's clock, in seconds from the start of the session; only `:wait` moves it.

    The service reads it for every decision, so `:wait 20` makes timers and silence prompts due
    exactly as if the pilot had kept quiet for 20 seconds, without sleeping, and a scripted run
    prints the same times on every machine.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def __call__(self) -> float:
        return self._now

    def advance_to(self, t: float) -> None:
        """Move the clock forward to `t` (never backwards)."""
        self._now = max(self._now, t)


class Style:
    """ANSI colors, or nothing when the output is not a terminal (pipes, files, NO_COLOR)."""

    _CODES = {"atc": "36;1", "pilot": "33;1", "dim": "2", "ok": "32", "bad": "31;1", "warn": "33", "head": "1"}

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: TextIO) -> Style:
        isatty = getattr(stream, "isatty", None)
        return cls(bool(isatty and isatty()) and "NO_COLOR" not in os.environ)

    def __call__(self, kind: str, text: str) -> str:
        code = self._CODES.get(kind)
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled and code else text

    def prompt(self, kind: str, text: str) -> str:
        """Like calling the style, with the escapes marked invisible (\\001..\\002) so
        readline measures the prompt's width right."""
        code = self._CODES.get(kind)
        return f"\001\x1b[{code}m\002{text}\001\x1b[0m\002" if self.enabled and code else text


BAR = "│"
GUTTER = 31  # "ATC  Frankfurt Delivery 121.900"
CHAT_SESSION_TTL_S = 10.0 * 365 * 24 * 3600
CHAT_HELP = """commands:
  :hint        what the controller expects you to say (every accepted phrasing)
  :trace       why the last transmission went where it went (candidates, readback, router)
  :state       flow, state, frequency, flags and pending timers
  :wait N      let N seconds pass without transmitting (timers, "how do you read?")
  :reset       start the scenario again from its first flow
  :quit        end the session and print the summary
anything else is a transmission on the frequency."""


@dataclass
class ChatStats:
    """What the end-of-scenario summary counts."""

    transmissions: int = 0
    readbacks: int = 0
    readbacks_ok: int = 0
    not_understood: int = 0
    messages: int = 0


@dataclass
class ChatTrainer:
    """The terminal trainer: feeds lines to the `RadioService`, prints what the controller says.

    All output goes to `out`, so the trainer runs the same on a terminal, a pipe or in a test.
    """

    service: RadioService
    clock: VirtualClock
    out: TextIO
    style: Style
    speech: bool = True
    trace: bool = False
    session_id: str = ""
    last: Decision | None = None  # the last decision of a transmission (for :trace)
    expected: list[str] = field(default_factory=list)
    stats: ChatStats = field(default_factory=ChatStats)
    finished: bool = False
    gutter: int = GUTTER  # width of the label column; grows to the longest station label

    # ---------------------------------------------------------------- lifecycle

    def start(self, *, flow: str | None, scenario: dict[str, Any], seed: int | None) -> None:
        session, decision, _token = self.service.create(flow=flow, scenario=scenario or None, seed=seed)
        self.session_id = session.session_id
        self._print_scenario(session)
        self._show(decision)

    def run(self, lines: Iterator[str]) -> int:
        """Handle input lines until :quit, end of input or the end of the scenario."""
        for raw in lines:
            if not self.handle(raw):
                break
        self.print_summary()
        return EXIT_OK

    def handle(self, raw: str) -> bool:
        """One input line; False when the trainer should stop."""
        line = raw.strip()
        if not line or line.startswith("#"):
            return True
        if line.startswith(":"):
            return self._command(line)
        from gateway.service import ServiceError

        try:
            decision = self.service.transmit(self.session_id, line)
        except ServiceError as exc:
            self._say("error", exc.message)
            return True
        self.stats.transmissions += 1
        self.last = decision
        if decision.readback is not None:
            self.stats.readbacks += 1
            self.stats.readbacks_ok += int(decision.readback.ok)
        if not decision.recognized:
            self.stats.not_understood += 1
        self._show(decision)
        return not decision.completed

    def _command(self, line: str) -> bool:
        try:
            name, *rest = shlex.split(line[1:])
        except ValueError as exc:
            self._say("error", f"cannot read command: {exc}")
            return True
        name = name.lower() if name else ""
        if name in ("q", "quit", "exit"):
            return False
        if name in ("h", "help", "?"):
            print(CHAT_HELP, file=self.out)
        elif name == "hint":
            self._print_hint(all_phrases=True)
        elif name == "trace":
            if self.last is None:
                self._say("trace", "no transmission yet")
            else:
                self._print_trace(self.last)
        elif name == "state":
            self._print_state()
        elif name == "wait":
            return self._wait(rest)
        elif name == "reset":
            self.last = None
            self._say("reset", "scenario restarted")
            self._show(self.service.reset(self.session_id))
        else:
            self._say("error", f"unknown command :{name} (:help lists them)")
        return True

    def _wait(self, rest: list[str]) -> bool:
        try:
            seconds = float(rest[0]) if rest else 15.0
        except ValueError:
            self._say("error", f":wait takes seconds, not {rest[0]!r}")
            return True
        if seconds < 0 or not math.isfinite(seconds):
            self._say("error", ":wait takes a positive number of seconds")
            return True
        decisions = self._advance(seconds)
        self._say("wait", f"{seconds:g} s later (t={self.clock():.0f} s): {len(decisions) or 'no'} event(s)")
        for decision in decisions:
            self._show(decision)
            if decision.completed:
                return False
        return True

    def _advance(self, seconds: float) -> list[Decision]:
        """Run the clock through the next `seconds`, stopping at each wake-up the engine asks for,
        so every timer fires at its own due time (a silence prompt re-armed inside the window
        fires too), exactly as the gateway's background clock would play it."""
        engine = self.service.engine
        target = self.clock() + seconds
        out: list[Decision] = []
        last: float | None = None
        while (due := engine.next_wakeup(self.service.get(self.session_id))) is not None and due <= target:
            if due == last:
                break  # the engine asked again for a moment that produced nothing: no progress
            last = due
            self.clock.advance_to(due)
            out += [d for sid, d in self.service.tick_all() if sid == self.session_id]
        self.clock.advance_to(target)
        return out

    # ---------------------------------------------------------------- printing

    def _say(self, label: str, text: str) -> None:
        self._row(label, text, text_kind="bad" if label == "error" else "")

    def _row(self, label: str, text: str, *, label_kind: str = "dim", text_kind: str = "") -> None:
        """One line of the radio log: the label right-aligned in the gutter, a bar, the text."""
        self.gutter = max(self.gutter, len(label))
        shown = self.style(text_kind, text) if text_kind else text
        print(f"{self.style(label_kind, label.rjust(self.gutter))} {BAR} {shown}", file=self.out)

    def _print_scenario(self, session: Session) -> None:
        v = session.variables
        flow = self.service.registry.get(session.active_flow)
        s = self.style
        print(s("head", f"livefreq chat · {flow.name or flow.slug} ({flow.slug})") + (f" · seed {session.seed}" if session.seed is not None else ""), file=self.out)
        rows = [
            ("callsign", f"{v.get('callsign', '?')} ({v.get('callsign_spoken', '')})"),
            ("airport", _join(v.get("airport"), v.get("airport_name"), _pair("runway", v.get("runway")), _pair("wind", v.get("wind")), _pair("QNH", v.get("qnh")), _pair("information", v.get("atis_letter")))),
            ("stand", _join(v.get("stand"), _pair("to", v.get("destination")), v.get("destination_name"))),
            ("frequencies", " · ".join(f"{name} {v[f'{name}_freq']}" for name in ("delivery", "ground", "tower", "departure") if v.get(f"{name}_freq"))),
        ]
        for label, value in rows:
            if value:
                print(f"  {label:<12} {value}", file=self.out)
        print(s("dim", "Type what you say on the radio; :help lists the commands."), file=self.out)

    def _show(self, decision: Decision) -> None:
        for msg in decision.messages:
            self._print_message(msg)
        for step in decision.trace.steps:
            if step.step == "handoff":  # "pilot now on ground 121.805": the pilot changes frequency
                self._row("tune", step.detail, text_kind="dim")
        if decision.readback is not None:
            self._print_readback(decision.readback)
        if decision.cause == "transmit" and not decision.recognized:
            self._row("note", "not understood (:trace shows why)", text_kind="warn")
        if self.trace and decision.cause == "transmit":
            self._print_trace(decision)
        changed = decision.expected_pilot != self.expected
        self.expected = list(decision.expected_pilot)
        if decision.completed:
            print(self.style("ok", "Scenario complete."), file=self.out)
            self.finished = True
        elif decision.cause != "tick" or changed:  # a silence prompt does not repeat the hint
            self._print_hint(all_phrases=False)

    def _print_message(self, msg: ControllerMessage) -> None:
        self.stats.messages += 1
        label = f"ATC  {self._station_label(msg)}"
        self.gutter = max(self.gutter, len(label))
        print(f"{self.style('atc', label.ljust(self.gutter))} {BAR} {msg.text}", file=self.out)
        if self.speech:
            self._row("spoken", msg.speech, text_kind="dim")

    def _station_label(self, msg: ControllerMessage) -> str:
        """"Frankfurt Delivery 121.900": the engine's own station naming for the message's flow."""
        from engine.messages import station_context

        name = msg.station or "ATC"
        if msg.flow and msg.flow in self.service.registry:
            session = self.service.get(self.session_id)
            ctx = station_context(self.service.registry.get(msg.flow), msg.station, session.variables)
            name = ctx.get("station_name") or name
        return f"{name} {msg.frequency}" if msg.frequency else name

    def _print_readback(self, rb: ReadbackResult) -> None:
        s = self.style
        verdict = s("ok", "readback correct") if rb.ok else s("bad", "readback not correct")
        self._row("readback", verdict)
        wrong = {w.get("field", ""): w for w in rb.wrong}
        width = max((len(name) for name in rb.fields), default=0)
        for name, status in rb.fields.items():
            detail = ""
            if status == "wrong" and name in wrong:
                detail = f"  expected {wrong[name].get('expected', '?')}, heard {wrong[name].get('heard', '?')}"
            elif status == "missing":
                detail = "  not read back"
            color = {"ok": "ok", "wrong": "bad", "missing": "warn"}.get(status, "dim")
            self._row("", f"  {name:<{width}}  {s(color, f'{status:<7}')}{detail}".rstrip())

    def _print_hint(self, *, all_phrases: bool) -> None:
        if not self.expected:
            if all_phrases:
                self._row("hint", "nothing expected from you now (:wait lets time pass)")
            return
        phrases = self.expected if all_phrases else self.expected[:1]
        for i, phrase in enumerate(phrases):
            label = "say" if i == 0 else "or"
            self._row(label, phrase, text_kind="dim")

    def _print_trace(self, d: Decision) -> None:
        out, s = self.out, self.style
        print(s("head", f"trace  {d.from_flow}:{d.from_state} -> {d.to_flow}:{d.to_state}  ({d.cause}, intent {d.intent or '-'})"), file=out)
        if d.trace.candidates:
            print("  candidates:", file=out)
            width = max(len(c.id) for c in d.trace.candidates)
            for c in sorted(d.trace.candidates, key=lambda c: (c.eliminated, -(c.score or 0.0))):
                score = f"{c.score:5.1f}" if c.score is not None else "    -"
                status = s("bad", f"eliminated: {c.reason}") if c.eliminated else (c.reason or "")
                print(f"    {score}  {c.kind:<9} {c.id:<{width}}  {c.label or '':<18} {status}".rstrip(), file=out)
        rb = d.trace.readback or d.readback
        if rb is not None:
            fields = ", ".join(f"{k}={v}" for k, v in rb.fields.items())
            print(f"  readback: {'ok' if rb.ok else 'not ok'} ({fields})", file=out)
            for w in rb.wrong:
                print(f"    {w.get('field')}: expected {w.get('expected')!r}, heard {w.get('heard')!r}", file=out)
        if d.trace.router:
            r = d.trace.router
            scores = ", ".join(f"{k} {v:.1f}" if isinstance(v, (int, float)) else f"{k} {v}" for k, v in (r.get("scores") or {}).items())
            print(f"  router: {r.get('name')} threshold {r.get('threshold')}: {r.get('reason') or '-'}" + (f" [{scores}]" if scores else ""), file=out)
        if d.trace.auto_advance:
            print(f"  advanced: {' -> '.join(d.trace.auto_advance)}", file=out)
        for step in d.trace.steps:
            print(f"  {step.step:<10} {step.detail}", file=out)
        for err in d.trace.errors:
            print(s("bad", f"  error: {err}"), file=out)

    def _print_state(self) -> None:
        from engine import timers

        session = self.service.get(self.session_id)
        flow = self.service.registry.get(session.active_flow)
        state = flow.states.get(session.current_state)
        role = f"{state.role.value}, phase {state.phase}" if state is not None else "?"
        print(self.style("head", f"state  {session.active_flow}:{session.current_state} ({role})"), file=self.out)
        now = self.clock()
        print(f"  frequency {session.station or '-'} {session.frequency or ''} · clock {now:.0f} s · transmissions {session.transmissions}" + (" · completed" if session.completed else ""), file=self.out)
        if session.flow_stack:
            print("  stacked: " + ", ".join(f"{f.flow}:{f.state}" for f in session.flow_stack), file=self.out)
        if session.parallel_flows:
            print("  parallel: " + ", ".join(f"{f.flow}:{f.state}" for f in session.parallel_flows), file=self.out)
        if session.flags:
            print("  flags: " + ", ".join(f"{k}={'on' if v else 'off'}" for k, v in sorted(session.flags.items())), file=self.out)
        for rec in timers.pending(session):
            print(f"  timer {rec.kind} in {rec.flow}:{rec.state} due at {rec.due:.0f} s (in {max(0.0, rec.due - now):.0f} s)", file=self.out)

    def print_summary(self) -> None:
        st = self.stats
        rb = f"{st.readbacks_ok}/{st.readbacks}" if st.readbacks else "none"
        print(
            self.style("head", "summary")
            + f"  transmissions {st.transmissions} · readbacks correct {rb} · not understood {st.not_understood}"
            + f" · controller messages {st.messages} · {self.clock():.0f} s on the clock",
            file=self.out,
        )


def _pair(label: str, value: Any) -> str | None:
    return f"{label} {value}" if value not in (None, "") else None


def _join(*parts: Any) -> str:
    return ", ".join(str(p) for p in parts if p not in (None, ""))


def _input_lines(stdin: TextIO, out: TextIO, style: Style, prompt: Callable[[], str]) -> Iterator[str]:
    """Lines from a terminal (with a prompt and line editing) or from a pipe (echoed after the
    prompt, so a scripted run reads like a transcript)."""
    if stdin.isatty() and out.isatty():
        try:
            import readline  # noqa: F401  (line editing and history for input())
        except ImportError:
            pass
        while True:
            try:
                yield input(style.prompt("pilot", prompt()))
            except EOFError:
                print(file=out)
                return
    for line in stdin:
        text = line.rstrip("\n")
        if text.strip() and not text.lstrip().startswith("#"):
            print(f"{style('pilot', prompt())}{text}", file=out)
        yield text


def cmd_chat(args: argparse.Namespace) -> int:
    from gateway.service import RadioService, ServiceError

    out = sys.stdout
    # A trainer session lives as long as the terminal does, however far `:wait` moves the clock.
    settings = _settings(flows_dir=args.flows_dir, session_ttl_s=CHAT_SESSION_TTL_S)
    clock = VirtualClock()
    service = RadioService(settings, clock=clock)
    scenario = {k: v for k, v in (("airport", args.airport), ("callsign", args.callsign)) if v}
    style = Style.for_stream(out)
    trainer = ChatTrainer(service, clock, out, style, speech=args.speech, trace=args.trace)
    try:
        trainer.start(flow=args.flow, scenario=scenario, seed=args.seed)
    except ServiceError as exc:
        raise CliError(exc.message) from None
    callsign = service.get(trainer.session_id).variables.get("callsign", "PILOT")
    if trainer.finished:
        trainer.print_summary()
        return EXIT_OK
    return trainer.run(_input_lines(sys.stdin, out, style, lambda: f"{callsign.rjust(trainer.gutter)} {BAR} "))


# --------------------------------------------------------------------------- bench


@dataclass
class BenchRun:
    """Timings of one mode: per-transmission decision times and the loop's wall time."""

    mode: str
    times_ns: list[int] = field(default_factory=list)
    wall_s: float = 0.0
    sessions: int = 0
    completed: int = 0
    not_understood: int = 0
    stalled: int = 0  # sessions abandoned at a turn with no phrase to say and nothing scheduled

    def result(self) -> dict[str, Any]:
        n = len(self.times_ns)
        ms = sorted(t / 1e6 for t in self.times_ns)
        return {
            "mode": self.mode,
            "transmissions": n,
            "sessions": self.sessions,
            "completed_sessions": self.completed,
            "not_understood": self.not_understood,
            "stalled_sessions": self.stalled,
            "seconds": round(self.wall_s, 4),
            "tx_per_s": round(n / self.wall_s, 1) if self.wall_s > 0 else None,
            "p50_ms": round(_percentile(ms, 50), 4) if ms else None,
            "p99_ms": round(_percentile(ms, 99), 4) if ms else None,
            "mean_ms": round(statistics.fmean(ms), 4) if ms else None,
            "max_ms": round(ms[-1], 4) if ms else None,
        }


def _percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, math.ceil(pct / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


class Progress:
    """One progress line on stderr: rewritten in place on a terminal, every 10 % in a log."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None) -> None:
        self.label, self.total = label, total
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._next_step = 0
        self._last = 0.0

    def update(self, done: int) -> None:
        if self.tty:
            now = time.monotonic()
            if now - self._last >= 0.1 or done >= self.total:
                self._last = now
                print(f"\r{self.label}: {done}/{self.total} transmissions", end="", file=self.stream, flush=True)
        elif done * 10 >= self._next_step * self.total:
            print(f"{self.label}: {done}/{self.total} transmissions", file=self.stream, flush=True)
            self._next_step = done * 10 // self.total + 1

    def done(self) -> None:
        if self.tty:
            print(file=self.stream, flush=True)


def _bench_engine_loop(service: RadioService, n: int, flow: str | None, progress: Progress) -> BenchRun:
    """The engine alone: `SessionEngine.start/transmit/tick` on sessions held in this loop.

    Scenario variables come from the service once per seed (airport lookups are setup, not
    decisions); every session then starts in the engine on a virtual clock that moves 4 s per
    transmission. Each pilot turn sends `expected_pilot[0]`; a turn with nothing to say waits for
    the next timer; a finished session is replaced by a new one.
    """
    engine = service.engine
    scenarios: list[dict[str, Any]] = []
    for seed in range(8):
        session, _decision, _token = service.create(flow=flow, seed=seed)
        scenarios.append(dict(session.variables))
    run = BenchRun("engine")
    now = 0.0
    start_flow = flow or service.registry.main_flow
    started = time.perf_counter()
    session: Session | None = None
    expected: list[str] = []
    while len(run.times_ns) < n:
        if session is None:
            variables = scenarios[run.sessions % len(scenarios)]
            session, decision = engine.start(variables=dict(variables), session_id=f"bench-{run.sessions}", flow=start_flow, now=now, seed=run.sessions)
            run.sessions += 1
            expected = decision.expected_pilot
            if decision.completed:
                run.completed += 1
                session = None
                continue
        if not expected:
            due = engine.next_wakeup(session)
            if due is None:
                run.stalled += 1
                session = None
                continue
            now = max(now, due)
            for decision in engine.tick(session, now):
                expected = decision.expected_pilot
            if session.completed:
                run.completed += 1
                session = None
            continue
        now += 4.0
        t0 = time.perf_counter_ns()
        decision = engine.transmit(session, expected[0], now)
        run.times_ns.append(time.perf_counter_ns() - t0)
        run.not_understood += int(not decision.recognized)
        expected = decision.expected_pilot
        if decision.completed:
            run.completed += 1
            session = None
        progress.update(len(run.times_ns))
    run.wall_s = time.perf_counter() - started
    progress.done()
    return run


def _bench_service_loop(service: RadioService, n: int, flow: str | None, progress: Progress) -> BenchRun:
    """The whole in-process path a request takes: `RadioService.create/transmit` (store copies,
    transcript, engine). Sessions are created inside the timed loop, as clients would."""
    run = BenchRun("service")
    started = time.perf_counter()
    session_id: str | None = None
    expected: list[str] = []
    while len(run.times_ns) < n:
        if session_id is None:
            session, decision, _token = service.create(flow=flow, seed=run.sessions)
            run.sessions += 1
            session_id, expected = session.session_id, decision.expected_pilot
            if decision.completed:
                run.completed += 1
                session_id = None
                continue
        if not expected:  # the service's clock is real time: do not wait for timers, start anew
            run.stalled += 1
            session_id = None
            continue
        t0 = time.perf_counter_ns()
        decision = service.transmit(session_id, expected[0])
        run.times_ns.append(time.perf_counter_ns() - t0)
        run.not_understood += int(not decision.recognized)
        expected = decision.expected_pilot
        if decision.completed:
            run.completed += 1
            session_id = None
        progress.update(len(run.times_ns))
    run.wall_s = time.perf_counter() - started
    progress.done()
    return run


class BackgroundServer:
    """uvicorn serving `app` on a free loopback port, in a daemon thread (bench, tests)."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY on accepted connections only for
        # sockets that say they are TCP, and without it every response waits ~40 ms for a
        # delayed ACK (Nagle), which would measure the kernel instead of the gateway.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + 15.0
        while not self.server.started:  # uvicorn offers no event to wait on
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise CliError("the benchmark server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=10.0)
        self._sock.close()


def _bench_http_loop(settings: Settings, n: int, flow: str | None, progress: Progress) -> BenchRun:
    """The public HTTP API end to end: a real uvicorn server on loopback, one keep-alive client."""
    import httpx

    from gateway.app import create_app

    run = BenchRun("http")
    with BackgroundServer(create_app(settings)) as server, httpx.Client(base_url=server.url, timeout=30.0) as client:
        body: dict[str, Any] = {"flow": flow} if flow else {}
        client.get("/health").raise_for_status()
        started = time.perf_counter()
        session_id: str | None = None
        expected: list[str] = []
        while len(run.times_ns) < n:
            if session_id is None:
                reply = _http_json(client.post("/api/radio/sessions", json={**body, "seed": run.sessions}))
                run.sessions += 1
                session_id, expected = reply["session"]["id"], list(reply.get("expected_pilot") or [])
                if reply["session"].get("completed"):
                    run.completed += 1
                    session_id = None
                    continue
            if not expected:
                run.stalled += 1
                session_id = None
                continue
            t0 = time.perf_counter_ns()
            reply = _http_json(client.post(f"/api/radio/sessions/{session_id}/transmissions", json={"text": expected[0]}))
            run.times_ns.append(time.perf_counter_ns() - t0)
            expected = list(reply.get("expected_pilot") or [])
            run.not_understood += int((reply.get("decision") or {}).get("recognized") is False)
            if reply["session"].get("completed"):
                run.completed += 1
                session_id = None
            progress.update(len(run.times_ns))
        run.wall_s = time.perf_counter() - started
    progress.done()
    return run


def _http_json(response: Any) -> dict[str, Any]:
    if response.status_code >= 400:
        raise CliError(f"HTTP {response.status_code} from {response.request.url.path}: {response.text[:300]}")
    data = response.json()
    if not isinstance(data, dict):
        raise CliError(f"unexpected reply from {response.request.url.path}: {str(data)[:300]}")
    return data


def _profile_engine(service: RadioService, n: int, flow: str | None, out: TextIO, top: int = 25) -> list[dict[str, Any]]:
    """cProfile over the in-process engine loop; prints and returns the top functions by own time."""
    profiler = cProfile.Profile()
    quiet = Progress("profile", n, io.StringIO())
    profiler.enable()
    _bench_engine_loop(service, n, flow, quiet)
    profiler.disable()
    stats = pstats.Stats(profiler)
    rows: list[dict[str, Any]] = []
    for (filename, line, func), (cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append({"function": f"{_short_path(filename)}:{line}({func})", "calls": nc, "tottime_s": round(tt, 4), "cumtime_s": round(ct, 4)})
    total = sum(r["tottime_s"] for r in rows) or 1.0
    rows.sort(key=lambda r: r["tottime_s"], reverse=True)
    print(f"\nprofile of {n} in-process transmissions (own time, top {top}):", file=out)
    for r in rows[:top]:
        print(f"  {r['tottime_s']:8.3f}s {100 * r['tottime_s'] / total:5.1f}%  {r['calls']:>8}  {r['function']}", file=out)
    by_cum = sorted(rows, key=lambda r: r["cumtime_s"], reverse=True)
    print(f"\nby cumulative time (top {top}):", file=out)
    for r in by_cum[:top]:
        print(f"  {r['cumtime_s']:8.3f}s  {r['calls']:>8}  {r['function']}", file=out)
    return rows[:top]


def _short_path(filename: str) -> str:
    for marker in ("/engine/", "/gateway/", "/site-packages/", "/lib/python"):
        if marker in filename:
            return filename[filename.index(marker) + 1 :]
    return filename


def cmd_bench_list(args: argparse.Namespace) -> int:
    """`livefreq bench` without a target: what can be measured."""
    print("available benchmarks:")
    for name, text in BENCHMARKS.items():
        print(f"  {name:<8} {text}")
    print("run one with `livefreq bench NAME --help` for its options")
    return EXIT_OK


def cmd_bench_engine(args: argparse.Namespace) -> int:
    from gateway.service import RadioService

    settings = _settings(flows_dir=args.flows_dir)
    service = RadioService(settings)
    if args.flow is not None and args.flow not in service.registry:
        raise CliError(f"unknown flow {args.flow!r} (known: {', '.join(f.slug for f in service.registry)})")
    runs = [
        _bench_engine_loop(service, args.n, args.flow, Progress("engine", args.n)),
        _bench_service_loop(service, args.n, args.flow, Progress("service", args.n)),
    ]
    if args.http:
        runs.append(_bench_http_loop(settings, args.n, args.flow, Progress("http", args.n)))
    results = [run.result() for run in runs]
    rows = [
        (r["mode"], str(r["transmissions"]), f"{r['tx_per_s']:.0f}", f"{r['p50_ms']:.3f}", f"{r['p99_ms']:.3f}")
        for r in results
    ]
    _table(("mode", "transmissions", "tx/s", "p50 ms", "p99 ms"), rows, sys.stdout, right=(1, 2, 3, 4))
    engine_rate = results[0]["tx_per_s"] or 0.0
    verdict = "meets" if engine_rate >= BENCH_TARGET_TX_PER_S else "is below"
    print(f"in-process engine: {engine_rate:.0f} tx/s {verdict} the target of {BENCH_TARGET_TX_PER_S:.0f} tx/s on one core")
    profile = _profile_engine(service, min(args.n, 1000), args.flow, sys.stdout) if args.profile else None
    report = {
        "benchmark": "engine",
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "n": args.n,
        "flow": args.flow or service.registry.main_flow,
        "target_tx_per_s": BENCH_TARGET_TX_PER_S,
        "meets_target": engine_rate >= BENCH_TARGET_TX_PER_S,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "results": results,
    }
    if profile is not None:
        report["profile"] = profile
    path = Path(args.json_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
