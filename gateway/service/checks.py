"""What a client may give the session service: flows, scenario variables, seeds, texts, traffic.

Every adapter (HTTP, the radio socket, the CLI) goes through these checks, so a bad value is the
same `BadInput` (``validation_error``, with the field) whatever the wire.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from engine.identity import own_codes, traffic_codes
from engine.models import FlowMode
from engine.registry import KNOWN_SCENARIO_VARIABLES, FlowRegistry
from engine.scenario import (
    DERIVED_VARIABLES,
    FLIGHT_PLAN_VARIABLES,
    SCENARIO_VARIABLES,
    resolve_scenario,
)
from gateway.service.errors import BadInput, UnknownFlowError

MAX_TEXT_CHARS = 500
MAX_SEED = 2**63 - 1
_SCALARS = (str, int, float, bool)


def allowed_variables(registry: FlowRegistry) -> frozenset[str]:
    """Every name a client may set: the shared vocabulary, whatever the scenario resolver fills
    (so a value it would make up can be given instead) and the flows' own variables."""
    return frozenset(
        {*KNOWN_SCENARIO_VARIABLES, *SCENARIO_VARIABLES, *DERIVED_VARIABLES, *FLIGHT_PLAN_VARIABLES}
        | set(resolve_scenario({}, airport=None, destination=None, seed=0))
        | {name for flow in registry for name in flow.variables}
    )


def flow_slug(registry: FlowRegistry, flow: str | None, default: str | None) -> str:
    """The flow a new session starts: a main or linear flow the curriculum has."""
    slug = flow or default
    if slug is None:
        raise UnknownFlowError("no flow given and the curriculum has no main flow", field="flow")
    if slug not in registry:
        known = ", ".join(f.slug for f in registry)
        raise UnknownFlowError(f"unknown flow {slug!r}; known flows: {known}", field="flow")
    mode = registry.get(slug).entry_mode
    if mode in (FlowMode.INTERRUPT, FlowMode.PARALLEL):
        raise BadInput(
            f"flow {slug!r} is a {mode.value} flow, entered from inside other flows; start a main or linear flow",
            field="flow",
        )
    return slug


def check_scenario(scenario: Mapping[str, Any] | None, allowed: frozenset[str]) -> dict[str, Any]:
    if scenario is None:
        return {}
    if not isinstance(scenario, Mapping):
        raise BadInput("scenario must be an object of variable names to values", field="scenario")
    unknown = sorted(str(k) for k in scenario if k not in allowed)
    if unknown:
        names = ", ".join(sorted(allowed))
        raise BadInput(
            f"unknown scenario variable(s) {', '.join(unknown)}; allowed: {names}",
            field=f"scenario.{unknown[0]}",
        )
    for key, value in scenario.items():
        if value is not None and not isinstance(value, _SCALARS):
            raise BadInput(f"scenario.{key} must be a string, number or boolean", field=f"scenario.{key}")
        if isinstance(value, float) and not math.isfinite(value):
            raise BadInput(f"scenario.{key} must be a finite number", field=f"scenario.{key}")
    return {k: v for k, v in scenario.items() if v is not None}


def check_traffic(traffic: Sequence[str] | None, variables: Mapping[str, Any]) -> list[str]:
    """Canonical callsigns of nearby traffic; `BadInput` for anything else or our own callsign."""
    if traffic is None:
        return []
    if isinstance(traffic, str) or not isinstance(traffic, Sequence):
        raise BadInput("traffic must be a list of callsigns", field="traffic")
    try:
        codes = traffic_codes(traffic)
    except ValueError as exc:
        raise BadInput(f"traffic: {exc}", field="traffic") from None
    _own, mine = own_codes(variables.get("callsign"), variables.get("callsign_spoken"))
    ours = [code for code in codes if code.replace("-", "") in mine]
    if ours:
        raise BadInput(f"traffic names the session's own callsign {ours[0]}", field="traffic")
    return codes


def check_seed(seed: int | None) -> int:
    if seed is None:
        return secrets.randbelow(2**31)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise BadInput(f"seed must be an integer from 0 to {MAX_SEED}", field="seed")
    return seed


def check_text(text: str, *, voice: bool = False) -> str:
    """The stripped text; empty only for a `voice` transmission (speech without words)."""
    if not isinstance(text, str) or (not text.strip() and not voice):
        raise BadInput("text must not be empty", field="text")
    text = text.strip()
    if len(text) > MAX_TEXT_CHARS:
        raise BadInput(f"text is longer than {MAX_TEXT_CHARS} characters", field="text")
    return text
