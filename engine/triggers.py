"""Deterministic triggers: one small strategy per trigger kind, compiled once and cached.

Regex triggers run on the *normalized* transcript (lower case, spoken digits collapsed), so a flow
author writes `ready for departure` or `runway \\d\\d` and it matches "READY FOR DEPARTURE" and
"runway two five" alike. Intent triggers name phraseology intents shared by every flow.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from engine.guards import holds
from engine.models import Trigger

# Intents every flow may name; patterns run on normalized transcripts.
INTENT_PATTERNS: dict[str, str] = {
    "radio_check": r"\bradio check\b|\bhow do you read\b",
    "mayday": r"\bmay ?day\b",
    "pan_pan": r"\bpan[ -]?pan\b",
    "emergency": r"\bmay ?day\b|\bpan[ -]?pan\b",
    "say_again": r"^(?:.*\b)?say again\b",
    "cancel_emergency": r"\bcancel(?:l?ing)? (?:the )?(?:may ?day|pan[ -]?pan|emergency)\b",
    "affirm": r"\b(?:affirm|affirmative|yes)\b",
    "negative": r"\bnegative\b",
    "unable": r"\bunable\b",
    "standby": r"\bstand ?by\b",
    "wilco": r"\bwilco\b",
}


@lru_cache(maxsize=4096)
def compile_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def regex_hit(trigger: Trigger, normalized: str) -> bool:
    if trigger.kind == "regex" and trigger.pattern:
        return compile_regex(trigger.pattern).search(normalized) is not None
    if trigger.kind == "intent" and trigger.intent:
        pattern = INTENT_PATTERNS.get(trigger.intent)
        return pattern is not None and compile_regex(pattern).search(normalized) is not None
    return False


def intent_hit(intent: str, normalized: str) -> bool:
    pattern = INTENT_PATTERNS[intent]
    return compile_regex(pattern).search(normalized) is not None


def telemetry_true(
    trigger: Trigger, variables: dict[str, Any], flags: dict[str, bool], telemetry: dict[str, Any]
) -> bool:
    """A telemetry trigger's expression, evaluated now (hold time is the caller's concern)."""
    if trigger.kind != "telemetry" or not trigger.expr:
        return False
    return holds(trigger.expr, variables, flags, telemetry)


def word_triggers(triggers: list[Trigger]) -> list[Trigger]:
    return [t for t in triggers if t.kind in ("regex", "intent")]


def any_word_hit(triggers: list[Trigger], normalized: str) -> bool:
    return first_word_hit(triggers, normalized) is not None


def first_word_hit(triggers: list[Trigger], normalized: str) -> str | None:
    """The name of the first trigger heard: its intent, else its pattern; None when none is."""
    for t in triggers:
        if regex_hit(t, normalized):
            return t.intent or t.pattern or ""
    return None


TriggerFn = Callable[[Trigger, str], bool]
