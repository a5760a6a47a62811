"""The server events of protocol v1 (gateway/radio/events.py) and their generated schema document."""

from __future__ import annotations

import json

from engine.hearing import Hearing
from engine.models import ControllerMessage, Decision, ReadbackResult
from gateway.radio import events as e
from gateway.radio.schema import DOCUMENT, events_schema, render


def test_the_committed_schema_is_what_the_generator_writes() -> None:
    """docs/protocol-events.json follows the models: run `python -m gateway.radio.schema` after a change."""
    assert DOCUMENT.read_text(encoding="utf-8") == render()


def test_the_schema_names_every_event_type() -> None:
    schema = events_schema()
    types = set(schema["discriminator"]["mapping"])
    assert {"session.started", "state", "vad", "transcript", "decision", "atc.message", "atc.message.end", "error", "pong"} <= types
    assert {"assistant.question", "assistant.message", "assistant.speech", "assistant.speech.audio", "assistant.speech.end"} <= types


def _message() -> ControllerMessage:
    return ControllerMessage(message_id="s-m1", seq=1, station="delivery", frequency="121.900", template="t", text="Clearance", speech="clearance")


def test_events_are_json_with_type_first() -> None:
    """The WebRTC transport recognizes `atc.message` events by their first bytes."""
    text = e.encode(e.atc_message(_message(), 24000))
    assert text.startswith('{"type":"atc.message",')
    assert json.loads(text) == {
        "type": "atc.message",
        "message_id": "s-m1",
        "seq": 1,
        "station": "delivery",
        "frequency": "121.900",
        "text": "Clearance",
        "speech": "clearance",
        "audio": {"format": "pcm_s16le", "sample_rate": 24000},
    }


def test_optional_fields_are_absent_not_null_and_others_null() -> None:
    partial = json.loads(e.encode(e.transcript(None, "cleared", final=False)))
    assert partial == {"type": "transcript", "transmission_id": None, "text": "cleared", "final": False}
    final = json.loads(e.encode(e.transcript("s-x1", "", final=True, hearing=Hearing(confidence=0.0))))
    # inside `hearing` every field is sent; `open_transcript` is null when there was one hearing,
    # `checks` empty when no value was checked in the audio, `told` false unless the prompt named a city,
    # `by` the hearing that wrote the transcript, `heard_by` those that wrote alternatives, if later ones
    assert final["hearing"] == {
        "alternatives": [], "cut_off": False, "confidence": 0.0, "open_transcript": None, "checks": [], "told": False,
        "by": "first", "heard_by": {},
    }
    end = json.loads(e.encode(e.atc_message_end(_message(), interrupted=True)))
    assert end == {"type": "atc.message.end", "message_id": "s-m1", "seq": 1, "interrupted": True}
    assert json.loads(e.encode(e.atc_message_end(_message(), False, 1200)))["audio_ms"] == 1200


def test_a_decision_event_carries_its_messages_and_trace() -> None:
    decision = Decision(transmission_id="s-x1", to_state="cleared", readback=ReadbackResult(ok=True), messages=[_message()])
    decision.trace.add("select", "chose cleared")
    wire = json.loads(e.encode(e.decision_event(decision)))
    assert wire["messages"] == [{"message_id": "s-m1", "seq": 1}]
    assert wire["readback"] == decision.readback.model_dump(mode="json")  # type: ignore[union-attr]
    assert wire["trace"] == decision.trace.model_dump(mode="json")


def test_every_event_reads_back_as_its_model() -> None:
    """What is sent validates against the event union (the schema's source)."""
    sent = [
        e.Pong(),
        e.Vad(speaking=True),
        e.error("rate_limited", "slow down"),
        e.atc_message(_message(), 16000),
        e.transcript("s-x1", "roger", final=True),
        e.assistant_event({"type": "assistant.speech", "ask_id": "a1", "text": "hi", "audio": None, "error": "speech failed"}),
    ]
    for event in sent:
        assert e.SERVER_EVENTS.validate_json(e.encode(event)) == event


def test_droppable_events_are_the_ones_a_slow_reader_may_lose() -> None:
    assert e.Vad(speaking=False).droppable()
    assert e.transcript(None, "cle", final=False).droppable()
    assert not e.transcript("s-x1", "cleared", final=True).droppable()
    assert not e.error("x", "y").droppable()
