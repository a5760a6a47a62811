"""Fixtures for the curriculum scripts: the real `flows/` directory and the scripts' fixed scenario
(`tooling.flow_scripts.SCRIPT_SCENARIO`, Frankfurt to Munich)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.loader import load_registry
from engine.registry import FlowRegistry
from tooling.flow_scripts import SCRIPT_SCENARIO
from gateway.flows_source import DirectoryFlowSource

FLOWS_DIR = Path(__file__).resolve().parents[2] / "flows"


@pytest.fixture(scope="session")
def registry() -> FlowRegistry:
    return load_registry(DirectoryFlowSource(FLOWS_DIR))


@pytest.fixture(scope="session")
def scenario_vars() -> dict[str, Any]:
    return dict(SCRIPT_SCENARIO)
