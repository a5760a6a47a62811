"""The fake speech engines (tests/fakes.py) behave like the interfaces they stand in for."""

from __future__ import annotations

import asyncio

from gateway.speech.stt.base import SttContext, SttEngine, transcribe
from gateway.speech.tts.base import TtsEngine
from tests.fakes import RATE, FakeStt, FakeTts, speech_pcm


def test_fake_tts_is_deterministic_and_as_long_as_the_text_takes_to_say() -> None:
    tts = FakeTts()
    assert isinstance(tts, TtsEngine)
    text = "Lufthansa 359, Frankfurt Delivery, information P is current, QNH 1016."
    pcm = asyncio.run(tts.synthesize(text))
    assert pcm == asyncio.run(FakeTts().synthesize(text))
    assert 3.0 < len(pcm) / 2 / RATE < 6.0  # ~15 characters a second, as piper
    assert tts.spoken and " ".join(tts.spoken) == text  # spoken sentence by sentence
    assert speech_pcm("squawk 4721") != speech_pcm("squawk 4712")


def test_fake_stt_hears_what_it_was_told_and_records_the_context() -> None:
    stt = FakeStt(default="")
    assert isinstance(stt, SttEngine)
    pcm = stt.say("request taxi")
    context = SttContext(expected_phrases=["Lufthansa 359, request taxi"])
    assert asyncio.run(transcribe(stt, pcm, context)) == "request taxi"
    assert asyncio.run(transcribe(stt, pcm + b"\x00\x00" * 1600)) == "request taxi"  # trailing silence
    assert asyncio.run(transcribe(stt, speech_pcm("something else"))) == ""
    assert stt.contexts[0] is context and len(stt.contexts) == 3


def test_a_spoken_first_call_through_the_fakes_moves_the_session(radio_service, fake_speech, manual_clock) -> None:
    """The shared fixtures joined: the recognizer is asked with the state's expected phrases and
    the callsign, its transcript decides, and the session clock is the test's."""
    from gateway.speech.stack import stt_context
    from gateway.speech.stt.base import transcribe
    from tests.conftest import DLH359

    session, opening, _ = radio_service.create(flow="clearance", scenario=DLH359, seed=7)
    expected = radio_service.expected_pilot(session)
    pcm = fake_speech.stt.say(expected[0])
    context = stt_context(session, expected)
    text = asyncio.run(transcribe(fake_speech.stt, pcm, context))
    assert text == expected[0] and context.callsign == "Lufthansa 359"
    decision = radio_service.transmit(session.session_id, text)
    assert decision.to_state == "CD_READBACK", decision.to_state  # the expected call holds the current ATIS letter
    assert radio_service.transcript(session.session_id)[-1]["at"] == manual_clock.t
