"""Write the JSON schema of the server events (gateway/radio/events.py) into the protocol docs.

``python -m gateway.radio.schema`` rewrites docs/protocol-events.json; tests/test_protocol_events.py
fails when the committed file is not what this writes, so the document follows the models.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gateway.radio.events import SERVER_EVENTS

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "protocol-events.json"


def events_schema() -> dict[str, Any]:
    """One JSON schema for every server -> client event (a union discriminated by `type`)."""
    schema = SERVER_EVENTS.json_schema(mode="serialization", ref_template="#/$defs/{model}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "livefreq protocol v1: server -> client events",
        "description": (
            "Every JSON text message the gateway sends on the radio (WebSocket text frames, the WebRTC "
            "data channel): one object per event, told apart by `type`. Generated from "
            "gateway/radio/events.py by `python -m gateway.radio.schema`; docs/protocol-v1.md says what they mean."
        ),
        **schema,
    }


def render() -> str:
    return json.dumps(events_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    target = Path(argv[0]) if argv else DOCUMENT
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
