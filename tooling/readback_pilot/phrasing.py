"""An independent pilot that reads clearances back, for the readback property tests and
`livefreq bench readback` (tooling: never imported by serving code).

Independence is the point: the words come from this module's own tables, never from
`engine.phraseology` (whose speak/display functions the readback check itself relies on), so a
phrasing the engine's tokenizer does not know shows up as a refused correct readback instead of
being produced and understood by the same code.

For a flow state with ``readback: [vars]`` and a session's variables, `phrase_readback` builds
one transmission: every required value phrased in a random way (ICAO digits "tree fife niner",
hyphenated "fow-er", plain English, group forms "one twenty one decimal eight", "thousand" and
"hundred" for altitudes, "flight level one two zero", runway "two five left", frequencies with
"decimal" or "point", squawk, QNH, SID names with their digit and letter, taxi routes "via
november three, uniform four", holding points and stands, airports by name or spelled code, ATIS
letters; and, outside the textbook forms, values without their keyword as pilots shorten them:
a bare QNH "one zero one three", "left three six zero", "climbing three three zero", "to tango
two", "vacate bravo one three", "cleared to land two five left"), in random order, the
callsign first or last, with optional fillers, "and", "roger" or "wilco" and optional commas. Modes: ``correct``; ``wrong`` changes exactly one issued value to
another plausible value of its kind (25L for 25R, one squawk digit, 5000 -> 6000, another
destination, another letter); ``drop`` leaves one value out. Every choice is drawn from the
`random.Random` given, so hypothesis can drive it and a benchmark can replay it.

`readback_states` lists every (flow, state) with a readback; `driver.StateDriver` brings a real
`SessionEngine` session to one of them by playing the flow (expected pilot phrases, their
alternatives, and the clock), never by setting the state.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.models import Role, TransitionKind
from engine.registry import FlowRegistry
from tooling.readback_pilot.values import say_callsign, say_value
from tooling.readback_pilot.words import (
    CARRIERS,
    CORE_ONLY,
    FILLERS_BACK,
    FILLERS_FRONT,
    FORMS,
    HEARD,
    SPOKEN_ONLY,
    Paused,
    kind_of,
)
from tooling.readback_pilot.wrong import wrong_value

__all__ = ["Readback", "carrier_of", "phrase_readback", "readback_states"]

# --------------------------------------------------------------------------- readbacks

@dataclass
class Readback:
    """One generated readback and what a correct check must say about it."""

    text: str
    mode: str  # correct | wrong | drop
    field: str | None  # the changed or dropped variable
    expected: dict[str, str]  # variable -> ok | wrong | missing
    issued: dict[str, Any]  # variable -> value the controller issued
    said: dict[str, Any]  # variable -> value read back (absent when dropped)
    kinds: dict[str, str] = field(default_factory=dict)
    corrected: str | None = None  # the variable the pilot said twice: "<other value>, correction, <value>"

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text, "mode": self.mode, "field": self.field, "expected": dict(self.expected),
            "issued": {k: str(v) for k, v in self.issued.items()}, "said": {k: str(v) for k, v in self.said.items()},
            **({"corrected": self.corrected} if self.corrected else {}),
        }


def phrase_readback(
    rng: random.Random,
    required: list[str],
    variables: Mapping[str, Any],
    *,
    mode: str = "correct",
    field: str | None = None,
    carrier: str | None = None,
    fillers: bool = True,
    forms: str = "all",
    fix_names: bool = False,
    heard: str = "",
    corrections: float = 0.0,
) -> Readback:
    """A readback of `required` from `variables` (the state's render context).

    mode ``correct``; ``wrong``: `field` (default: a random one) read back with another value of
    its kind; ``drop``: `field` left out (a readback of one value drops nothing else, so it is
    the callsign alone, with the carrier words of an initial call if any). `carrier` is an intent
    from `CARRIERS` whose words an initial call needs ("request IFR clearance"). `forms`: "all",
    or "core" for textbook digit forms only (see `FORMS`). `fix_names`: a wrong SID changes its fix name.
    `heard`: the controller's message being read back (the pilot climbs or descends as told).
    `corrections`: the share of readbacks in which the pilot corrects himself (ICAO "correction")
    on one value: a right readback says another value first ("squawk 3553, correction, squawk
    3535"), a wrong one says the issued value first and corrects it into the wrong one. No draw
    is made at 0, so a seed phrases as before."""
    if forms not in FORMS:
        raise ValueError(f"unknown forms {forms!r}")
    # "speech": what a pilot says aloud, textbook digit words only (core) and no written forms
    token, spoken = CORE_ONLY.set(forms in ("core", "speech")), SPOKEN_ONLY.set(forms in ("spoken", "speech"))
    told = HEARD.set(heard)
    try:
        return _phrase(rng, required, variables, mode, field, carrier, fillers, fix_names, corrections=corrections)
    finally:
        CORE_ONLY.reset(token)
        SPOKEN_ONLY.reset(spoken)
        HEARD.reset(told)


def _phrase(
    rng: random.Random,
    required: list[str],
    variables: Mapping[str, Any],
    mode: str,
    field: str | None,
    carrier: str | None,
    fillers: bool,
    fix_names: bool = False,
    heard: str = "",
    corrections: float = 0.0,
) -> Readback:
    names = list(dict.fromkeys(required))
    if mode not in ("correct", "wrong", "drop"):
        raise ValueError(f"unknown mode {mode!r}")
    if mode != "correct":
        field = field if field is not None else rng.choice(names)
        if field not in names:
            raise ValueError(f"{field!r} is not required here ({names})")
    else:
        field = None
    issued = {n: variables.get(n) for n in names}
    said: dict[str, Any] = {}
    expected: dict[str, str] = {}
    parts: list[str] = []
    for n in names:
        value = issued[n]
        if n == field and mode == "drop":
            expected[n] = "missing"
            continue
        if n == field and mode == "wrong":
            value = wrong_value(n, value, rng, variables, fix_names=fix_names)
            expected[n] = "wrong"
        else:
            expected[n] = "ok"
        said[n] = value
        parts.append(say_value(n, value, rng))
    corrected = None
    if corrections > 0 and said and rng.random() < corrections:
        corrected = field if mode == "wrong" else rng.choice(list(said))
        at = list(said).index(corrected)
        first = issued[corrected] if mode == "wrong" else wrong_value(corrected, issued[corrected], rng, variables)
        parts[at] = _self_corrected(say_value(corrected, first, rng), parts[at])
    rng.shuffle(parts)
    if carrier in CARRIERS:
        parts.insert(rng.randrange(len(parts) + 1), rng.choice(CARRIERS[carrier]))
    comma = rng.random() < 0.6
    sep = ", " if comma else " "
    body = ""
    for i, part in enumerate(parts):
        paused = isinstance(part, Paused) or (i > 0 and isinstance(parts[i - 1], Paused))
        if i == 0:
            body = part
        elif i == len(parts) - 1 and rng.random() < 0.25:
            body += f"{',' if comma or paused else ''} and {part}"
        else:
            body += (", " if paused else sep) + part
    callsign = say_callsign(str(variables.get("callsign_spoken") or variables.get("callsign") or ""), rng)
    front = rng.choice(FILLERS_FRONT) if fillers else ""
    back = rng.choice(FILLERS_BACK) if fillers else ""
    pieces = [front, body, back] if body else [front, back]
    pieces = [p for p in pieces if p]
    if rng.random() < 0.5:
        pieces.insert(0, callsign)
    else:
        pieces.append(callsign)
    text = (", " if any(isinstance(p, Paused) for p in parts) else sep).join(pieces)
    if rng.random() < 0.5:
        text = text[:1].upper() + text[1:]
    return Readback(text, mode, field, expected, issued, said, {n: kind_of(n) for n in names}, corrected)


def _self_corrected(first: str, final: str) -> str:
    """ "<first>, correction, <final>": paused where either part is (a bare QNH)."""
    said = f"{first}, correction, {final}"
    return Paused(said) if isinstance(first, Paused) or isinstance(final, Paused) else said


# --------------------------------------------------------------------------- flow states

def readback_states(registry: FlowRegistry) -> list[tuple[str, str]]:
    """Every (flow, state) of the registry whose state has a `readback:` list, sorted."""
    return sorted(
        (flow.slug, state.id) for flow in registry for state in flow.states.values()
        if state.role is Role.PILOT and state.readback_required
    )


def carrier_of(registry: FlowRegistry, flow: str, state: str) -> str | None:
    """The intent of an initial call's ok route whose words must be heard (its word triggers)."""
    st = registry.get(flow).states[state]
    for t in st.of_kind(TransitionKind.OK):
        if t.triggers and t.intent in CARRIERS:
            return t.intent
    return None


