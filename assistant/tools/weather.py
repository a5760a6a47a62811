"""Airport weather / ATIS through the weather callable the gateway injects (live METAR when the
gateway has one, else its generated weather: offline, `source: "generated"`)."""

from __future__ import annotations

from typing import Any

from assistant.tools.airports import _airport, marker, summary
from assistant.tools.base import ToolError


def get_airport_weather(ctx: Any, icao_code: str) -> dict[str, Any]:
    a = _airport(ctx, icao_code)
    if ctx.weather is None:
        raise ToolError("Weather is not available here (no weather provider was given to the assistant).")
    report = ctx.weather(a["icao"])
    if report is None:
        raise ToolError(f"No weather for {a['icao']} right now.")
    return {
        "_tool_type": "weather",
        "icao": a["icao"],
        "weather": report,
        "airports": [summary(a)],
        "filter_profile": {},
        "visualization": {"type": "marker_with_details", "marker": {**marker(a), "details": report}},
        "pretty": f"{a['icao']} weather ({report.get('source', '?')}): {report.get('raw', '')}",
    }
