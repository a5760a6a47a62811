"""The response views of the OpenAPI document (gateway/api/openapi.py): one pydantic model per answer shape.

Kept apart from the operations table so each reads on its own; the schemathesis suite checks every
answer of a live server against these models (tests/test_fuzz_http.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, RootModel

from engine.models import FlowFrame, LlmUsage, ReadbackResult, Trace
from gateway.api.schemas import MessageView
from gateway.providers.vatsim import FlightPlan
from gateway.store import AtcEntry, PilotEntry

class _View(BaseModel):
    """Response shapes: the keys listed are always present; more may be added compatibly."""

    model_config = ConfigDict(extra="allow")


class ErrorDetail(_View):
    code: str
    message: str
    field: str | None


class ErrorBody(_View):
    """Every 4xx/5xx answer (`gateway.api.errors`)."""

    error: ErrorDetail


class SpeechStatus(_View):
    stt: str
    tts: str
    voice: str | None
    ready: bool
    error: str | None


class StoreStatus(_View):
    """Where sessions live (memory, sqlite, redis) and which gateway node answered."""

    kind: Literal["memory", "sqlite", "redis"]
    node: str


class WeatherStatus(_View):
    """Where weather comes from (gateway/providers/weather.py `describe`)."""

    provider: Literal["offline", "vatsim"]
    source: Literal["vatsim", "generated"]
    airports: int
    fetches: int
    failures: int
    last_fetch_at: str | None
    last_error: str | None
    last_error_at: str | None


class LlmStatus(_View):
    """The LLM router (null when off): its endpoint, model and whether answers are schema-bound,
    in which `response_format` (``json_schema``, ``json_object`` or ``off``)."""

    url: str
    model: str
    structured_output: bool
    response_format: Literal["json_schema", "json_object", "off"]


class CapacitySelfTest(_View):
    """What the start-up self-test measured (gateway/capacity.py `SelfTest.describe`)."""

    audio_s: float
    runs: int
    decode_cpu_s: float
    decode_wall_s: float
    cpu_per_talk_s: float
    cores: int
    talk_share: float
    headroom: float


class VoiceLoad(_View):
    """Live voice sessions against the node's capacity (gateway/capacity.py): a balancer routes
    new pilots to nodes with `accepting` true. `capacity` null: unknown yet, or no limit (`off`)."""

    live: int
    capacity: int | None
    accepting: bool
    source: Literal["configured", "measured", "unmeasured", "off"]
    refused: int
    retry_after_s: float | None
    self_test: CapacitySelfTest | None
    error: str | None


class Health(_View):
    ok: Literal[True]
    ready: bool
    speech: SpeechStatus
    flows: int
    sessions: int
    store: StoreStatus
    weather: WeatherStatus
    llm: LlmStatus | None
    voice: VoiceLoad
    version: str


class SessionView(_View):
    """`gateway.api.schemas.session_view`."""

    id: str
    flow: str
    state: str
    phase: str | None
    variables: dict[str, Any]
    flags: dict[str, bool]
    flow_stack: list[FlowFrame]
    parallel_flows: list[FlowFrame]
    station: str | None
    frequency: str | None
    completed: bool
    main_flow: str
    active_flow: str
    current_state: str
    seed: int | None
    created_at: float
    updated_at: float
    llm: LlmUsage
    traffic: list[str]


class DecisionSummary(_View):
    """`gateway.api.schemas.decision_summary`."""

    transmission_id: str | None
    from_flow: str | None
    from_state: str | None
    to_flow: str | None
    to_state: str | None
    recognized: bool
    intent: str | None
    completed: bool


class DecisionBody(_View):
    """A session where it stands after a decision, with the controller's messages."""

    session: SessionView
    messages: list[MessageView]
    expected_pilot: list[str]
    trace: Trace


class SessionCreated(DecisionBody):
    resume_token: str
    session_token: str | None  # reaches this session when authentication is on; null when off


class TransmissionResult(DecisionBody):
    readback: ReadbackResult | None
    decision: DecisionSummary


class TelemetryResult(_View):
    session: SessionView
    messages: list[MessageView]
    expected_pilot: list[str]
    decision: DecisionSummary | None


class SessionRead(_View):
    session: SessionView
    expected_pilot: list[str]


class SessionDeleted(_View):
    ok: Literal[True]
    session_id: str


class Transcript(_View):
    session_id: str
    entries: list[PilotEntry | AtcEntry]


class RuntimeAirport(_View):
    """Which airports and seed the runtime's frequencies belong to (`gateway.api.compat`)."""

    icao: str
    name: str | None
    destination: dict[str, Any]
    seed: int
    frequencies: dict[str, dict[str, Any]]  # variable -> {value, source: airport_data | generated}


class Runtime(_View):
    """Seed 000's runtime shape: every flow by slug (`gateway.api.compat.runtime_view`), with
    frequencies resolved for `airport`."""

    schema_version: str
    main_flow: str | None
    flows: dict[str, dict[str, Any]]
    airport: RuntimeAirport


class OsSession(_View):
    """The OpenSquawk app's `RadioSessionResponse` (app/composables/useRadioBackend.ts)."""

    session_id: str
    flow_slug: str
    current_state: str
    variables: dict[str, Any]
    flags: dict[str, bool]


class OsTraceStep(_View):
    type: str
    message: str


class OsTransmit(_View):
    """The OpenSquawk app's `RadioTransmitResponse`, plus `flow_slug`."""

    session_id: str
    next_state_id: str
    flow_slug: str
    controller_say_template: str | None
    controller_say_rendered: str | None
    expected_pilot_template: str | None
    variables: dict[str, Any]
    flags: dict[str, bool]
    trace: list[OsTraceStep]
    fallback_used: bool
    fallback_reason: str | None
    auto_advanced_states: list[str]


class DecideDecision(_View):
    next_state: str
    updates: dict[str, Any]
    flags: dict[str, Any]
    controller_say_tpl: str | None
    radio_check: bool
    activate_flow: str | None
    resume_previous: bool
    off_schema: bool


class DecideResult(_View):
    decision: DecideDecision
    trace: dict[str, Any]
    active_nodes: list[str]
    pilot_intent: str | None


class SaySeed(_View):
    """`/api/atc/say` answer to the seed 000 body (`voice`: the voice that spoke; `notes`: why
    it is not the one asked for, ...)."""

    audio: str
    mimeType: str
    voice: str
    notes: list[str]


class SayAudio(_View):
    mime: str
    base64: str
    size: int
    ext: str


class SayOpenSquawk(_View):
    """`/api/atc/say` answer to the OpenSquawk web app's body."""

    success: Literal[True]
    text: str
    normalized: str
    level: int | None
    radioQuality: str
    voice: str
    speed: float
    audio: SayAudio
    notes: list[str]


class HearingView(_View):
    """What the recognizer was unsure of (protocol-v1.md, "Hearing")."""

    alternatives: list[str]
    cut_off: bool
    confidence: float | None
    open_transcript: str | None = None


class PttResult(_View):
    success: Literal[True]
    transcription: str
    duration_s: float
    hearing: HearingView


class VoiceView(_View):
    id: str
    label: str
    engine: str


class Voices(_View):
    default: str
    voices: list[VoiceView]


class AirportFrequencies(_View):
    icao: str
    name: str
    frequencies: dict[str, list[str]]


class CloudView(_View):
    cover: str
    base_ft: int | None
    kind: str | None


class MetarView(_View):
    """A parsed METAR (`gateway.api.vatsim.report_view`); `source` "generated" when made up."""

    icao: str
    raw: str
    source: Literal["vatsim", "given", "generated"]
    observed_at: str | None
    wind: str
    wind_dir: int | None
    wind_speed_kt: int
    gust_kt: int | None
    visibility_m: int | None
    cavok: bool
    weather: list[str]
    clouds: list[CloudView]
    temperature_c: int | None
    dewpoint_c: int | None
    qnh_hpa: int
    atis_letter: str | None


class AtisView(_View):
    """An airport's ATIS (`gateway.api.vatsim.atis_view`)."""

    icao: str
    letter: str
    text: str
    speech: str
    runway: str | None
    frequencies: list[str]
    source: Literal["vatsim", "given", "generated"]
    metar: MetarView


class FlightPlans(_View):
    source: Literal["offline", "vatsim"]
    callsign: str | None
    flightplans: list[FlightPlan]


class MetricsText(RootModel[str]):
    """The Prometheus text exposition format (gateway/metrics.py)."""


class OpenApiDocument(_View):
    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]


class IceServerView(_View):
    urls: str | list[str]
    username: str | None = None
    credential: str | None = None


class WebRTCAnswer(_View):
    """`POST /v1/webrtc/offer` (gateway/webrtc/signaling.py)."""

    type: Literal["answer"]
    sdp: str
    peer_id: str
    ice_servers: list[IceServerView]


class CandidatesAdded(_View):
    peer_id: str
    added: int
    done: bool


class PeerClosed(_View):
    peer_id: str
    closed: Literal[True]
    reason: str | None
