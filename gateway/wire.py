"""Strict JSON message types, shared by the HTTP bodies and the WebSocket protocol: what the
OpenAPI document and protocol-v1 say a field is, and nothing else.

Pydantic's lax mode turns ``true`` into the integer 1, ``"3"`` into 3 and ``"yes"`` into True;
a client that sends those has a bug the gateway should name, not guess around (the HTTP fuzzer
found ``{"level": true}`` spoken at readability 1). Every HTTP request body and WebSocket
client message derives from `JsonBody` (strict), and integer fields use `JsonInt` (`json_int(ge=..., le=...)` when bounded), because JSON has one number type and
JSON Schema counts ``7.0`` as the integer 7 while ``7.5`` stays refused.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from engine.identity import MAX_TRAFFIC, TRAFFIC_PATTERN, traffic_codes


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def json_int(**bounds: int) -> Any:
    """A JSON integer, with `bounds` (ge, le, ...) on the integer itself, so they reach the JSON
    Schema as minimum/maximum (bounds on an outer Annotated would be lost behind the validator)."""
    return Annotated[int, Field(strict=True, **bounds), BeforeValidator(_integral)]


JsonInt = json_int()

# Callsigns of nearby traffic ("DLH359", "Lufthansa 359", "D-EABC"): at most `MAX_TRAFFIC`, each
# one a callsign `engine.phraseology.parse_callsign` reads; canonical and once each after validation.
Traffic = Annotated[
    list[Annotated[str, Field(strict=True, min_length=1, max_length=40, pattern=TRAFFIC_PATTERN)]],
    Field(max_length=MAX_TRAFFIC),
    AfterValidator(traffic_codes),
]


class JsonBody(BaseModel):
    """Base of HTTP request bodies and client messages: strict types; subclasses choose how extra keys are treated."""

    model_config = ConfigDict(strict=True)
