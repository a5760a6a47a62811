"""Protocol v1 client messages (docs/protocol-v1.md): one pydantic model per `type`.

Client text frames are parsed into these models, whatever transport carried them; anything else
becomes a typed `error` event with a stable code, and the connection stays open. Server events
are the models of gateway/radio/events.py.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from gateway.providers.vatsim import FlightPlan, FlightPlanCallsign
from gateway.wire import JsonBody, JsonInt, Traffic, json_int

SAMPLE_RATES = (8000, 16000, 24000, 32000, 44100, 48000)


class _Msg(JsonBody):
    model_config = ConfigDict(extra="forbid", strict=True)


class AudioFormat(_Msg):
    format: Literal["pcm_s16le"] = "pcm_s16le"
    sample_rate: Literal[8000, 16000, 24000, 32000, 44100, 48000] = 16000
    channels: Literal[1] = 1


class SessionStart(_Msg):
    type: Literal["session.start"]
    flow: str | None = None
    scenario: dict[str, Any] | None = None
    seed: JsonInt | None = None
    mode: Literal["ptt", "vox"] = "ptt"
    input_audio: AudioFormat = Field(default_factory=AudioFormat)
    output_audio: AudioFormat = Field(default_factory=AudioFormat)
    radio_level: json_int(ge=1, le=5) | None = None  # extension: readability 1-5
    radio_effect: bool | None = None  # extension: false for clean audio
    voice: str | None = Field(default=None, max_length=100)  # extension: an id from GET /api/voices
    # extension: start from a filed flight plan (a plan, or a callsign to look up; README "Weather")
    flight_plan: FlightPlan | FlightPlanCallsign | None = None
    traffic: Traffic | None = None  # extension: callsigns of nearby aircraft (README "Who is talking")


class SessionResume(_Msg):
    type: Literal["session.resume"]
    session_id: str = Field(min_length=1, max_length=100)
    resume_token: str = Field(min_length=1, max_length=200)
    mode: Literal["ptt", "vox"] | None = None
    input_audio: AudioFormat | None = None
    output_audio: AudioFormat | None = None
    radio_level: json_int(ge=1, le=5) | None = None
    voice: str | None = Field(default=None, max_length=100)


class PttDown(_Msg):
    type: Literal["ptt.down"]
    # extension: "ask" keys the briefing assistant's channel, not the frequency (gateway/ask.py)
    channel: Literal["radio", "ask"] = "radio"


class PttUp(_Msg):
    type: Literal["ptt.up"]
    channel: Literal["radio", "ask"] | None = None  # optional: the key released is the one held


class Ask(_Msg):
    """Extension: a question to the briefing assistant, typed (gateway/ask.py)."""

    type: Literal["ask"]
    text: str = Field(min_length=1, max_length=2000)
    ask_id: str | None = Field(default=None, min_length=1, max_length=64)
    speak: bool = True  # speak the answer (with a session attached)


class Text(_Msg):
    type: Literal["text"]
    text: str = Field(max_length=500)


# A finite JSON number: `true` or "1200" is no altitude (pydantic would coerce them), NaN no value.
Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]


class TelemetryFields(_Msg):
    """Aircraft state a simulator may send (over WebSocket, or HTTP .../telemetry): the engine's
    `AircraftState` (engine/models.py has what each field means), typed strictly for JSON."""

    on_ground: Annotated[bool, Field(strict=True)] | None = None  # not "yes" or 0
    on_runway: Annotated[bool, Field(strict=True)] | None = None
    altitude_ft: Number | None = None
    ias_kt: Number | None = None
    gs_kt: Number | None = None
    vs_fpm: Number | None = None
    heading_deg: Number | None = None
    lat: Number | None = None
    lon: Number | None = None
    squawk: str | None = None
    com1: str | None = None


class TelemetryBody(TelemetryFields):
    """A telemetry report: the aircraft state, and the callsigns of nearby traffic (replacing the
    session's list when present; ``[]`` clears it)."""

    traffic: Traffic | None = None


class Telemetry(TelemetryBody):
    type: Literal["telemetry"]


class Tune(_Msg):
    type: Literal["tune"]
    frequency: str = Field(min_length=3, max_length=12)


class AudioPlayed(_Msg):
    type: Literal["audio.played"]
    message_id: str


class Ping(_Msg):
    type: Literal["ping"]


ClientMessage = Annotated[
    SessionStart | SessionResume | PttDown | PttUp | Text | Telemetry | Tune | AudioPlayed | Ping | Ask,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
KNOWN_TYPES = frozenset(
    {"session.start", "session.resume", "ptt.down", "ptt.up", "text", "telemetry", "tune", "audio.played", "ping", "ask"}
)


class ProtocolError(Exception):
    """A client frame we cannot act on; becomes an `error` event."""

    def __init__(self, code: str, message: str, *, fatal: bool = False, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.fatal = fatal
        self.retry_after_s = retry_after_s  # a refusal that may succeed later: when to try again


def parse_client(text: str) -> ClientMessage:
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ProtocolError("bad_json", f"not valid JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise ProtocolError("bad_message", "a message must be a JSON object with a `type`")
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in KNOWN_TYPES:  # a list or object is no type (and unhashable)
        raise ProtocolError("unknown_type", f"unknown message type {kind!r}; known: {', '.join(sorted(KNOWN_TYPES))}")
    try:
        return _ADAPTER.validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or kind
        raise ProtocolError("bad_message", f"{kind}: {where}: {first['msg']}") from exc
