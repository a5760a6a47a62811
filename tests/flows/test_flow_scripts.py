"""Data-driven scripts that fly the real curriculum in `flows/` through the session engine.

Each YAML file in `scripts/` holds scripts: a flow to start, optional variable overrides, and steps.
A step is one input (`say`: a pilot transmission, `tick`: seconds of virtual clock, `telemetry`:
aircraft state, `tune`: the pilot sets COM1) with an `expect` block checked against the session and the decision(s) it produced.
No per-flow test code: adding a flow means adding a script. The coverage tests below make sure
every flow is played and every readback state has had a wrong value caught by some script.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.loader import lint_registry
from engine.models import Decision, Session
from engine.registry import FlowRegistry
from engine.session import SessionEngine

SCRIPTS_DIR = Path(__file__).resolve().parent / "scripts"

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


def _load_scripts() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(SCRIPTS_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for script in doc["scripts"]:
            out.append((f"{path.stem}::{script['name']}", script))
    return out


SCRIPTS = _load_scripts()


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
    registry: FlowRegistry, script: dict[str, Any], scenario: dict[str, Any], run: ScriptRun | None = None
) -> ScriptRun:
    """Play one script on a fresh engine and session; raise ScriptFailure at the first mismatch."""
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


@pytest.mark.parametrize("script", [s for _, s in SCRIPTS], ids=[sid for sid, _ in SCRIPTS])
def test_script(registry: FlowRegistry, scenario_vars: dict[str, Any], script: dict[str, Any]) -> None:
    run_script(registry, script, scenario_vars)


@pytest.fixture(scope="module")
def all_runs(registry: FlowRegistry, scenario_vars: dict[str, Any]) -> list[tuple[dict[str, Any], ScriptRun]]:
    """Every script's coverage, counting what it exercised before any failure (reported above)."""
    out = []
    for _, script in SCRIPTS:
        run = ScriptRun()
        try:
            run_script(registry, script, scenario_vars, run)
        except ScriptFailure:
            pass
        out.append((script, run))
    return out


def test_curriculum_lints_clean(registry: FlowRegistry) -> None:
    issues = lint_registry(registry)
    assert [str(i) for i in issues] == []


def test_every_flow_has_a_happy_script(registry: FlowRegistry, all_runs: list[tuple[dict[str, Any], ScriptRun]]) -> None:
    played = set().union(*(run.flows for script, run in all_runs if script["kind"] in ("happy", "gate_to_gate")))
    assert sorted(f.slug for f in registry if f.slug not in played) == []


def test_every_readback_is_caught_wrong_somewhere(registry: FlowRegistry, all_runs: list[tuple[dict[str, Any], ScriptRun]]) -> None:
    needed = {(f.slug, sid) for f in registry for sid, s in f.states.items() if s.readback_required}
    caught = set().union(*(run.caught for script, run in all_runs if script["kind"] != "happy"))
    assert sorted(needed - caught) == []


def test_gate_to_gate_scripts_complete_the_trip(all_runs: list[tuple[dict[str, Any], ScriptRun]]) -> None:
    trips = [(s, run) for s, run in all_runs if s["kind"] == "gate_to_gate"]
    assert len(trips) >= 2
    main_chain = {"clearance", "startup_pushback", "taxi_out", "tower_departure", "departure", "enroute", "approach", "tower_arrival", "taxi_in"}
    for script, run in trips:
        assert run.completed, script["name"]
        assert main_chain <= run.flows, (script["name"], sorted(main_chain - run.flows))


def test_scripts_directory_is_not_empty() -> None:
    assert Path(SCRIPTS_DIR).is_dir() and len(SCRIPTS) >= 20
