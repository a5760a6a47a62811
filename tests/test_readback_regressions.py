"""Readback counterexamples, replayed: each entry of tests/readback_regressions.json is one
transcript at one flow state (scenario `seed`, session brought there by playing the flow) and the
verdict a correct readback check gives: `expected` field statuses, and the state moves on exactly
when every field is ok. Entries found by tests/test_readback_props.py (shortest failing example of
each property and state) carry the `bug` they show today and are xfail(strict=False) until it is
fixed; entries without one are guards that hold today.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import readback as rb

ENTRIES = json.loads((Path(__file__).parent / "readback_regressions.json").read_text(encoding="utf-8"))


def _params() -> list:
    out = []
    for i, e in enumerate(ENTRIES):
        marks = [pytest.mark.xfail(strict=False, reason=e["bug"])] if e.get("bug") else []
        out.append(pytest.param(e, id=f"{i}-{e['flow']}:{e['state']}", marks=marks))
    return out


def test_entries_are_well_formed():
    states = set(rb.states())
    for e in ENTRIES:
        assert set(e) == {"flow", "state", "seed", "transcript", "expected", "bug"}, e
        assert (e["flow"], e["state"]) in states, e
        assert set(e["expected"]) == set(rb.required(e["flow"], e["state"])), e
        assert set(e["expected"].values()) <= {"ok", "wrong", "missing"}, e


@pytest.mark.parametrize("entry", _params())
def test_regression(entry: dict):
    flow, state = entry["flow"], entry["state"]
    session, now = rb.at_state(flow, state, entry["seed"])
    decision, forward = rb.transmit(flow, state, session, now, entry["transcript"])
    fields = decision.readback.fields if decision.readback else None
    assert fields == entry["expected"], f"{entry['transcript']!r}: engine {fields}, expected {entry['expected']}"
    assert forward is all(v == "ok" for v in entry["expected"].values()), (
        f"{entry['transcript']!r}: now at {session.active.flow}:{session.active.state}"
    )
