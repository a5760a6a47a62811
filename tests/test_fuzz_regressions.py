"""Bugs the fuzz suites (tests/test_fuzz_http.py, tests/test_fuzz_ws.py) found, each pinned down.

Every test here is one input a fuzzer produced (shrunk), sent to the live gateway, with the
answer the protocol promises.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from websockets.sync.client import connect


def _ws_url(base: str) -> str:
    return base.replace("http", "ws", 1) + "/v1/radio"


def _events_until_pong(ws: Any) -> list[dict[str, Any]]:
    ws.send(json.dumps({"type": "ping"}))
    events = []
    while True:
        frame = ws.recv(timeout=10)
        if isinstance(frame, str):
            event = json.loads(frame)
            if event["type"] == "pong":
                return events
            events.append(event)


@pytest.mark.parametrize("kind", [[None], {"a": 1}, ["ping"]])
def test_a_type_that_is_a_list_or_object_is_unknown_type_not_internal(live_server: str, kind: Any) -> None:
    """`{"type": [null]}`: the type was looked up in a set, TypeError (unhashable) -> `internal`."""
    with connect(_ws_url(live_server)) as ws:
        ws.send(json.dumps({"type": kind}))
        events = _events_until_pong(ws)
    assert [(e["type"], e["code"], e["fatal"]) for e in events] == [("error", "unknown_type", False)]
