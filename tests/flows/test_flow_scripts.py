"""Data-driven scripts that fly the real curriculum in `flows/` through the session engine.

The scripts are YAML files in `scripts/`, played by `tooling.flow_scripts` (which documents their
format; the router benchmark replays them too). No per-flow test code: adding a flow means adding
a script. The coverage tests below make sure every flow is played and every readback state has
had a wrong value caught by some script.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.loader import lint_registry
from engine.registry import FlowRegistry
from tooling.flow_scripts import SCRIPTS_DIR, ScriptFailure, ScriptRun, load_scripts, run_script

SCRIPTS = load_scripts()


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
