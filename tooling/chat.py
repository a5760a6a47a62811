"""`livefreq chat`: a text trainer for the terminal on an in-process `RadioService`.

It shows what a radio instructor would: each controller message as written and in its ICAO
spoken form, the readback verdict field by field, what the pilot is expected to say, and on
request why the engine decided what it did. Time is virtual (`VirtualClock`): it moves only on
`:wait`, so timers and silence prompts can be practised, and scripted runs are reproducible.
"""

from __future__ import annotations

import asyncio
import math
import os
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TextIO

from engine import timers
from engine.messages import station_context
from gateway.service import ServiceError

if TYPE_CHECKING:
    from engine.models import ControllerMessage, Decision, ReadbackResult, Session
    from gateway.service import RadioService

__all__ = ["BAR", "CHAT_HELP", "ChatStats", "ChatTrainer", "Style", "VirtualClock", "input_lines"]

BAR = "│"
GUTTER = 31  # "ATC  Frankfurt Delivery 121.900"


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

    _CODES: ClassVar[dict[str, str]] = {
        "atc": "36;1",
        "pilot": "33;1",
        "dim": "2",
        "ok": "32",
        "bad": "31;1",
        "warn": "33",
        "head": "1",
    }

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
    _runner: asyncio.Runner | None = field(default=None, repr=False)

    # ---------------------------------------------------------------- lifecycle

    def start(self, *, flow: str | None, scenario: dict[str, Any], seed: int | None) -> None:
        session, decision, _token = self.service.create(flow=flow, scenario=scenario or None, seed=seed)
        self.session_id = session.session_id
        self._print_scenario(session)
        self._show(decision)

    def run(self, lines: Iterator[str]) -> None:
        """Handle input lines until :quit, end of input or the end of the scenario."""
        for raw in lines:
            if not self.handle(raw):
                break
        self.print_summary()

    def handle(self, raw: str) -> bool:
        """One input line; False when the trainer should stop."""
        line = raw.strip()
        if not line or line.startswith("#"):
            return True
        if line.startswith(":"):
            return self._command(line)
        try:
            decision = self._transmit(line)
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

    def _transmit(self, line: str) -> Decision:
        """The service's transmission; with an LLM router configured, on the trainer's own event
        loop (kept for the whole session, so the model's connection is reused)."""
        if self.service.llm is None:
            return self.service.transmit(self.session_id, line)
        if self._runner is None:
            self._runner = asyncio.Runner()
        return self._runner.run(self.service.transmit_async(self.session_id, line))

    def close(self) -> None:
        """Release the event loop of the LLM router's calls, if one was opened."""
        if self._runner is not None and self.service.llm is not None:
            self._runner.run(self.service.llm.aclose())
        if self._runner is not None:
            self._runner.close()
            self._runner = None

    def _command(self, line: str) -> bool:
        try:
            words = shlex.split(line[1:])
        except ValueError as exc:
            self._say("error", f"cannot read command: {exc}")
            return True
        name, rest = (words[0].lower(), words[1:]) if words else ("help", [])
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
        print(
            s("head", f"livefreq chat · {flow.name or flow.slug} ({flow.slug})")
            + (f" · seed {session.seed}" if session.seed is not None else ""),
            file=self.out,
        )
        rows = [
            ("callsign", f"{v.get('callsign', '?')} ({v.get('callsign_spoken', '')})"),
            (
                "airport",
                _join(
                    v.get("airport"),
                    v.get("airport_name"),
                    _pair("runway", v.get("runway")),
                    _pair("wind", v.get("wind")),
                    _pair("QNH", v.get("qnh")),
                    _pair("information", v.get("atis_letter")),
                ),
            ),
            ("stand", _join(v.get("stand"), _pair("to", v.get("destination")), v.get("destination_name"))),
            (
                "frequencies",
                " · ".join(
                    f"{name} {v[f'{name}_freq']}"
                    for name in ("delivery", "ground", "tower", "departure")
                    if v.get(f"{name}_freq")
                ),
            ),
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
        """ "Frankfurt Delivery 121.900": the engine's own station naming for the message's flow."""
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
        print(
            s(
                "head",
                f"trace  {d.from_flow}:{d.from_state} -> {d.to_flow}:{d.to_state}  ({d.cause}, intent {d.intent or '-'})",
            ),
            file=out,
        )
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
            scores = ", ".join(
                f"{k} {v:.1f}" if isinstance(v, (int, float)) else f"{k} {v}"
                for k, v in (r.get("scores") or {}).items()
            )
            print(
                f"  router: {r.get('name')} threshold {r.get('threshold')}: {r.get('reason') or '-'}"
                + (f" [{scores}]" if scores else ""),
                file=out,
            )
        if d.trace.auto_advance:
            print(f"  advanced: {' -> '.join(d.trace.auto_advance)}", file=out)
        for step in d.trace.steps:
            print(f"  {step.step:<10} {step.detail}", file=out)
        for err in d.trace.errors:
            print(s("bad", f"  error: {err}"), file=out)

    def _print_state(self) -> None:
        session = self.service.get(self.session_id)
        flow = self.service.registry.get(session.active_flow)
        state = flow.states.get(session.current_state)
        role = f"{state.role.value}, phase {state.phase}" if state is not None else "?"
        print(self.style("head", f"state  {session.active_flow}:{session.current_state} ({role})"), file=self.out)
        now = self.clock()
        print(
            f"  frequency {session.station or '-'} {session.frequency or ''} · clock {now:.0f} s · transmissions {session.transmissions}"
            + (" · completed" if session.completed else ""),
            file=self.out,
        )
        if session.flow_stack:
            print("  stacked: " + ", ".join(f"{f.flow}:{f.state}" for f in session.flow_stack), file=self.out)
        if session.parallel_flows:
            print("  parallel: " + ", ".join(f"{f.flow}:{f.state}" for f in session.parallel_flows), file=self.out)
        if session.flags:
            print(
                "  flags: " + ", ".join(f"{k}={'on' if v else 'off'}" for k, v in sorted(session.flags.items())),
                file=self.out,
            )
        for rec in timers.pending(session):
            print(
                f"  timer {rec.kind} in {rec.flow}:{rec.state} due at {rec.due:.0f} s (in {max(0.0, rec.due - now):.0f} s)",
                file=self.out,
            )

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


def input_lines(stdin: TextIO, out: TextIO, style: Style, prompt: Callable[[], str]) -> Iterator[str]:
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
