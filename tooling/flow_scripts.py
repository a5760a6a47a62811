"""The curriculum's scripts: data-driven pilot sessions replayed through the session engine.

Each YAML file in tests/flows/scripts holds scripts: a flow to start, optional variable overrides,
and steps. A step is one input (`say`: a pilot transmission, `tick`: seconds of virtual clock,
`telemetry`: aircraft state, `tune`: the pilot sets COM1) with an `expect` block checked against
the session and the decision(s) it produced. The tests play every script (tests/flows); the
router benchmark (`livefreq bench router`) replays the same transmissions to count how they were
routed, so the corpus and its player are one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.models import Decision, Session
from engine.registry import FlowRegistry
from engine.session import SessionEngine
from gateway.settings import REPO_ROOT

# One realistic Frankfurt -> Munich scenario; every script runs against it (plus its own overrides).
SCRIPT_SCENARIO: dict[str, Any] = {
    "callsign": "DLH359",
    "callsign_spoken": "Lufthansa 359",
    "airport": "EDDF",
    "airport_name": "Frankfurt",
    "destination": "EDDM",
    "destination_name": "Munich",
    "runway": "25R",
    "sid": "MARUN 7F",
    "initial_altitude_ft": 5000,
    "squawk": "4721",
    "stand": "V155",
    "taxi_route": "N3 U4",
    "holding_point": "A12",
    "qnh": 1013,
    "turn": "left",
    "atis_letter": "K",
    "wind": "250/12",
    "delivery_freq": "121.900",
    "ground_freq": "121.800",
    "tower_freq": "118.700",
    "departure_freq": "120.150",
    "approach_freq": "119.000",
    "center_freq": "127.275",
    "dest_approach_freq": "127.950",
    "dest_tower_freq": "118.700",
    "dest_ground_freq": "121.975",
    "arrival_runway": "26L",
    "arrival_holding_point": "A5",
    "arrival_taxi_route": "A B",
    "arrival_stand": "G12",
    "arrival_altitude_ft": 4000,
    "arrival_qnh": 1009,
    "approach_type": "ILS",
    "cruise_level": "FL350",
    "heading": 250,
    "cleared_altitude_ft": 11000,
    "elevation_ft": 364,
    "dest_elevation_ft": 1487,
}


SCRIPTS_DIR = REPO_ROOT / "tests" / "flows" / "scripts"

STEP_KEYS = {"say", "tick", "telemetry", "tune", "dt", "expect", "note"}
EXPECT_KEYS = {
    "flow",
    "state",
    "readback_ok",
    "wrong",
    "missing",
    "message_contains",
    "speech_contains",
    "message_not_contains",
    "no_messages",
    "completed",
    "stack",
    "station",
    "frequency",
    "recognized",
}
SCRIPT_KEYS = {"name", "kind", "flow", "variables", "start", "steps"}
KINDS = {"happy", "wrong_readback", "branch", "gate_to_gate"}


def load_scripts(directory: Path = SCRIPTS_DIR) -> list[tuple[str, dict[str, Any]]]:
    """Every script of every YAML file in `directory`, as (``file::name``, script)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(directory.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for script in doc["scripts"]:
            out.append((f"{path.stem}::{script['name']}", script))
    return out



@dataclass
class ScriptRun:
    """What one script exercised, for the coverage tests."""

    caught: set[tuple[str, str]] = field(default_factory=set)  # (flow, state) with a wrong value caught
    flows: set[str] = field(default_factory=set)  # flows the session was in at some point
    completed: bool = False


class ScriptFailure(AssertionError):
    pass


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _describe(session: Session, decisions: list[Decision]) -> str:
    lines = [f"  now at {session.active.flow}:{session.active.state} stack={[f.flow for f in session.flow_stack]}"]
    for d in decisions:
        lines.append(f"  decision {d.cause} {d.from_flow}:{d.from_state} -> {d.to_flow}:{d.to_state} intent={d.intent}")
        if d.readback is not None:
            lines.append(f"    readback ok={d.readback.ok} fields={d.readback.fields} wrong={d.readback.wrong}")
        for m in d.messages:
            lines.append(f"    ATC: {m.text}")
        if d.trace.router:
            lines.append(f"    router: {d.trace.router.get('reason')} scores={d.trace.router.get('scores')}")
        if d.trace.errors:
            lines.append(f"    trace errors: {d.trace.errors}")
    return "\n".join(lines)


def _check(expect: dict[str, Any], session: Session, decisions: list[Decision]) -> list[str]:
    """Every way the outcome differs from `expect` (empty when it matches)."""
    unknown = set(expect) - EXPECT_KEYS
    if unknown:
        return [f"unknown expectation keys {sorted(unknown)}"]
    problems: list[str] = []
    texts = [m.text for d in decisions for m in d.messages]
    joined = " | ".join(texts).lower()
    speech = " | ".join(m.speech for d in decisions for m in d.messages).lower()
    readbacks = [d.readback for d in decisions if d.readback is not None]
    for d in decisions:
        if d.trace.errors:
            problems.append(f"trace errors {d.trace.errors}")
    if "flow" in expect and session.active.flow != expect["flow"]:
        problems.append(f"flow {session.active.flow!r} != {expect['flow']!r}")
    if "state" in expect and session.active.state != expect["state"]:
        problems.append(f"state {session.active.state!r} != {expect['state']!r}")
    if "readback_ok" in expect:
        if not readbacks:
            problems.append("no readback was evaluated")
        elif readbacks[-1].ok is not expect["readback_ok"]:
            problems.append(f"readback ok={readbacks[-1].ok}, expected {expect['readback_ok']}")
    if "wrong" in expect:
        got = sorted(w["field"] for w in readbacks[-1].wrong) if readbacks else []
        if got != sorted(_as_list(expect["wrong"])):
            problems.append(f"wrong fields {got} != {sorted(_as_list(expect['wrong']))}")
    if "missing" in expect:
        got = sorted(readbacks[-1].missing) if readbacks else []
        if got != sorted(_as_list(expect["missing"])):
            problems.append(f"missing fields {got} != {sorted(_as_list(expect['missing']))}")
    for part in _as_list(expect.get("message_contains", [])):
        if part.lower() not in joined:
            problems.append(f"no controller message contains {part!r}")
    for part in _as_list(expect.get("speech_contains", [])):
        if part.lower() not in speech:
            problems.append(f"no controller speech contains {part!r}")
    for part in _as_list(expect.get("message_not_contains", [])):
        if part.lower() in joined:
            problems.append(f"a controller message contains {part!r}")
    if expect.get("no_messages") and texts:
        problems.append(f"expected silence, controller said {texts}")
    if "completed" in expect and session.completed is not expect["completed"]:
        problems.append(f"completed={session.completed}, expected {expect['completed']}")
    if "stack" in expect and [f.flow for f in session.flow_stack] != _as_list(expect["stack"]):
        problems.append(f"stack {[f.flow for f in session.flow_stack]} != {expect['stack']}")
    if "station" in expect and session.station != expect["station"]:
        problems.append(f"station {session.station!r} != {expect['station']!r}")
    if "frequency" in expect and session.frequency != expect["frequency"]:
        problems.append(f"frequency {session.frequency!r} != {expect['frequency']!r}")
    if "recognized" in expect and not all(d.recognized is expect["recognized"] for d in decisions):
        problems.append(f"recognized {[d.recognized for d in decisions]}, expected {expect['recognized']}")
    return problems


def run_script(
    registry: FlowRegistry,
    script: dict[str, Any],
    scenario: dict[str, Any],
    run: ScriptRun | None = None,
    *,
    observe: Callable[[str, Decision], None] | None = None,
) -> ScriptRun:
    """Play one script on a fresh engine and session; raise ScriptFailure at the first mismatch.
    `observe(text, decision)` sees every pilot transmission's decision."""
    run = run if run is not None else ScriptRun()
    bad_keys = set(script) - SCRIPT_KEYS
    if bad_keys or script.get("kind") not in KINDS:
        raise ScriptFailure(f"malformed script: keys {sorted(bad_keys)}, kind {script.get('kind')!r}")
    engine = SessionEngine(registry)
    variables = {**scenario, **(script.get("variables") or {})}
    session, first = engine.start(flow=script["flow"], variables=variables, session_id="script", now=0.0)
    run.flows.add(session.active.flow)
    problems = _check(script.get("start") or {}, session, [first])
    if problems:
        raise ScriptFailure(f"start: {problems}\n{_describe(session, [first])}")
    now = 0.0
    for i, step in enumerate(script["steps"]):
        unknown = set(step) - STEP_KEYS
        inputs = [k for k in ("say", "tick", "telemetry", "tune") if k in step]
        if unknown or len(inputs) != 1:
            raise ScriptFailure(f"step {i}: malformed step {step}")
        if "say" in step:
            now += step.get("dt", 5.0)
            decisions = [engine.transmit(session, step["say"], now)]
            if observe is not None:
                observe(step["say"], decisions[0])
        elif "tick" in step:
            now += float(step["tick"])
            decisions = engine.tick(session, now)
        else:
            now += step.get("dt", 1.0)
            if "tune" in step:
                d = engine.tune(session, str(step["tune"]), now)
            else:
                d = engine.telemetry(session, step["telemetry"], now)
            decisions = [d] if d is not None else []
        run.flows.add(session.active.flow)
        for d in decisions:
            run.flows.update(f for f in (d.from_flow, d.to_flow, *(m.flow for m in d.messages)) if f)
            if d.readback is not None and not d.readback.ok and d.readback.wrong and d.from_flow and d.from_state:
                run.caught.add((d.from_flow, d.from_state))
        problems = _check(step.get("expect") or {}, session, decisions)
        if problems:
            said = next(step[k] for k in inputs)
            raise ScriptFailure(f"step {i} ({said!r}) at t={now:g}: {problems}\n{_describe(session, decisions)}")
    run.completed = session.completed
    return run
