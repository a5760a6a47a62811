"""Server -> client events of protocol v1 (docs/protocol-v1.md), one pydantic model per `type`.

The connection's send path takes these models and serializes each once (`encode`), so an event's
shape lives in its model; docs/protocol-events.json is their JSON schema, written by
`python -m gateway.radio.schema` (tests/test_protocol_events.py checks it is current). `type`
is every model's first field: the WebRTC transport recognizes `atc.message` events by their
first bytes. Fields in a model's `omit_if_none` are left out of the JSON when None (they are
absent from the wire, not null); every other field is always sent.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from engine.hearing import Hearing
from engine.models import ControllerMessage, Decision, ReadbackResult, Trace


class Event(BaseModel):
    """Base of every server event."""

    model_config = ConfigDict(extra="forbid")
    omit_if_none: ClassVar[frozenset[str]] = frozenset()

    type: str

    def droppable(self) -> bool:
        """May be dropped for a client that reads too slowly (gateway/radio/outbox.py)."""
        return False

    def wire(self) -> dict[str, Any]:
        """The event as the JSON object sent."""
        omit = {name for name in self.omit_if_none if getattr(self, name) is None}
        return self.model_dump(mode="json", exclude=omit or None)


class MessageRef(BaseModel):
    """A controller message named by id and its session sequence number."""

    message_id: str
    seq: int


class AudioSpec(BaseModel):
    format: Literal["pcm_s16le"] = "pcm_s16le"
    sample_rate: int


class SpeechStatus(BaseModel):
    """The speech engines of the gateway (`SpeechStack.describe`)."""

    stt: str
    tts: str
    voice: str | None = None
    ready: bool
    error: str | None = None


class SessionStarted(Event):
    type: Literal["session.started"] = "session.started"
    session_id: str
    resume_token: str
    session_token: str | None
    resumed: bool
    flow: str
    state: str
    scenario: dict[str, Any]
    station: str | None
    frequency: str | None
    mode: Literal["ptt", "vox"]
    voice: str | None
    radio_level: int
    expected_pilot: list[str]
    speech: SpeechStatus
    messages: list[MessageRef]  # the controller messages about to be spoken (opening, or missed)
    station_titles: dict[str, str]  # station key -> its name on the radio ("center" -> "Radar")


class State(Event):
    type: Literal["state"] = "state"
    flow: str
    state: str
    phase: str | None
    station: str | None
    frequency: str | None
    completed: bool
    expected_pilot: list[str]


class Vad(Event):
    type: Literal["vad"] = "vad"
    speaking: bool

    def droppable(self) -> bool:
        return True


class Transcript(Event):
    """A partial (droppable) or final transcript; a voice final carries the recognizer's `hearing`."""

    type: Literal["transcript"] = "transcript"
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"hearing"})
    transmission_id: str | None
    text: str
    final: bool
    hearing: Hearing | None = None

    def droppable(self) -> bool:
        return not self.final  # a partial: the next one, or the final, says more


class DecisionEvent(Event):
    type: Literal["decision"] = "decision"
    transmission_id: str | None
    cause: str
    from_state: str | None
    to_state: str | None
    from_flow: str | None
    to_flow: str | None
    recognized: bool
    intent: str | None
    readback: ReadbackResult | None
    # the controller messages this decision queued, in order: a client knows which `atc.message`
    # answers its transmission without asking for the transcript
    messages: list[MessageRef]
    trace: Trace


class AtcMessage(Event):
    type: Literal["atc.message"] = "atc.message"
    message_id: str
    seq: int  # 1, 2, 3... per session; 0 for a broadcast (the ATIS)
    station: str | None
    frequency: str | None
    text: str
    speech: str
    audio: AudioSpec


class AtcMessageEnd(Event):
    """`audio_ms`: how much audio of the message was sent (a WebRTC client hears it on a
    continuous track and may check what it cut out against it)."""

    type: Literal["atc.message.end"] = "atc.message.end"
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"audio_ms"})
    message_id: str
    seq: int
    interrupted: bool
    audio_ms: int | None = None


class Error(Event):
    """`retry_after_s`: a refusal that may succeed later (`too_many_sessions` past the node's voice
    capacity) says when to try again; absent otherwise."""

    type: Literal["error"] = "error"
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"retry_after_s"})
    code: str
    message: str
    fatal: bool = False
    retry_after_s: float | None = None


class Pong(Event):
    type: Literal["pong"] = "pong"


ASSISTANT_STREAM = Literal[
    "assistant.plan",
    "assistant.thinking",
    "assistant.tool_call_start",
    "assistant.tool_call_end",
    "assistant.message",
    "assistant.thinking_done",
    "assistant.ui_payload",
    "assistant.error",
    "assistant.done",
]


class AssistantQuestion(Event):
    type: Literal["assistant.question"] = "assistant.question"
    ask_id: str | None
    text: str
    source: Literal["text", "voice"]


class AssistantStream(Event):
    """One event of the assistant's answer: `data` is the SSE event's of the same name."""

    type: ASSISTANT_STREAM
    ask_id: str | None
    data: dict[str, Any]


class AssistantAudio(BaseModel):
    format: Literal["pcm_s16le"] = "pcm_s16le"
    sample_rate: int
    duration_ms: int


class AssistantSpeech(Event):
    type: Literal["assistant.speech"] = "assistant.speech"
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"error"})
    ask_id: str | None
    text: str
    audio: AssistantAudio | None
    error: str | None = None


class AssistantSpeechAudio(Event):
    type: Literal["assistant.speech.audio"] = "assistant.speech.audio"
    ask_id: str | None
    seq: int
    data: str  # base64 PCM16, one second


class AssistantSpeechEnd(Event):
    type: Literal["assistant.speech.end"] = "assistant.speech.end"
    ask_id: str | None


ServerEvent = Annotated[
    SessionStarted
    | State
    | Vad
    | Transcript
    | DecisionEvent
    | AtcMessage
    | AtcMessageEnd
    | Error
    | Pong
    | AssistantQuestion
    | AssistantStream
    | AssistantSpeech
    | AssistantSpeechAudio
    | AssistantSpeechEnd,
    Field(discriminator="type"),
]
SERVER_EVENTS: TypeAdapter[ServerEvent] = TypeAdapter(ServerEvent)


def encode(event: Event) -> str:
    """JSON text as Starlette's `send_json` writes it (compact, UTF-8 kept)."""
    return json.dumps(event.wire(), separators=(",", ":"), ensure_ascii=False)


def assistant_event(raw: dict[str, Any]) -> Event:
    """An `assistant.*` event the ask channel (gateway/ask.py) built as a dict, as its model."""
    event = SERVER_EVENTS.validate_python(raw)
    assert isinstance(event, Event)
    return event


# ---------------------------------------------------------------------------- builders


def refs(messages: list[ControllerMessage]) -> list[MessageRef]:
    return [MessageRef(message_id=m.message_id, seq=m.seq) for m in messages]


def atc_message(msg: ControllerMessage, sample_rate: int) -> AtcMessage:
    return AtcMessage(
        message_id=msg.message_id,
        seq=msg.seq,
        station=msg.station,
        frequency=msg.frequency,
        text=msg.text,
        speech=msg.speech,
        audio=AudioSpec(sample_rate=sample_rate),
    )


def atc_message_end(msg: ControllerMessage, interrupted: bool, audio_ms: int | None = None) -> AtcMessageEnd:
    return AtcMessageEnd(message_id=msg.message_id, seq=msg.seq, interrupted=interrupted, audio_ms=audio_ms)


def decision_event(d: Decision) -> DecisionEvent:
    return DecisionEvent(
        transmission_id=d.transmission_id,
        cause=d.cause,
        from_state=d.from_state,
        to_state=d.to_state,
        from_flow=d.from_flow,
        to_flow=d.to_flow,
        recognized=d.recognized,
        intent=d.intent,
        readback=d.readback,
        messages=refs(d.messages),
        trace=d.trace,
    )


def transcript(transmission_id: str | None, text: str, final: bool, hearing: Hearing | None = None) -> Transcript:
    return Transcript(transmission_id=transmission_id, text=text, final=final, hearing=hearing)


def error(code: str, message: str, fatal: bool = False, retry_after_s: float | None = None) -> Error:
    return Error(code=code, message=message, fatal=fatal, retry_after_s=retry_after_s)
