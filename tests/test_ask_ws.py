"""The radio's "ask" channel (gateway/ask.py, docs/protocol-v1.md "Ask the briefing assistant")
over a real loopback WebSocket: a typed question streams back as `assistant.*` events, never as an
`atc.message`, is spoken as `assistant.speech` audio when a session is attached, keeps the
conversation for follow-ups, and leaves the session's state alone."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from typing import Any

import pytest

from gateway.app import create_app
from gateway.settings import Settings
from tests.conftest import run_server
from tests.support.radio_client import RadioClient

LIGHT = {"speech_preload": False, "stt_engine": "sphinx", "tts_engine": "espeak", "audio_pacing": False}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with run_server(create_app(Settings(**LIGHT))) as base:
        yield base


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def of(client: RadioClient, start: int = 0) -> list[dict[str, Any]]:
    return client.rx.events[start:]


def binary_frames(client: RadioClient) -> int:
    return sum(isinstance(x, tuple) for x in client.rx.order)


def test_a_typed_question_without_a_session_streams_assistant_events(server: str) -> None:
    async def scenario() -> None:
        client = await RadioClient.connect(server)
        await client.send({"type": "ask", "text": "Find airports between EGTF and LFMD", "ask_id": "q1"})
        done = await client.wait_type("assistant.done")
        assert done["ask_id"] == "q1" and done["data"]["tokens"] == {"input": 0, "output": 0, "total": 0}
        kinds = [e["type"] for e in of(client)]
        assert kinds[0] == "assistant.question" and kinds[-1] == "assistant.done"
        for k in ("assistant.plan", "assistant.thinking", "assistant.tool_call_start", "assistant.tool_call_end",
                  "assistant.thinking_done", "assistant.ui_payload"):
            assert k in kinds, (k, kinds)
        assert kinds.index("assistant.plan") < kinds.index("assistant.message") < kinds.index("assistant.ui_payload")
        chunks = [e["data"]["content"] for e in of(client) if e["type"] == "assistant.message"]
        assert len(chunks) > 5 and "EGTF" in "".join(chunks)
        payload = next(e["data"] for e in of(client) if e["type"] == "assistant.ui_payload")
        assert payload["visualization"]["type"] == "route_with_markers"
        assert all(e.get("ask_id") == "q1" for e in of(client))
        assert "assistant.speech" not in kinds  # no session: no voice to speak with
        assert not any(e["type"].startswith("atc.") for e in of(client))
        await client.close()

    run(scenario())


def test_with_a_session_the_answer_is_spoken_off_the_frequency_and_follow_ups_work(server: str) -> None:
    async def scenario() -> None:
        client = await RadioClient.connect(server)
        await client.send({"type": "session.start", "flow": "clearance", "seed": 7, "scenario": {"callsign": "DLH359"}})
        await client.wait_type("session.started")
        state = await client.wait_type("state")
        await asyncio.sleep(0.3)
        mark = client.mark()
        frames_before = binary_frames(client)
        await client.send({"type": "ask", "text": "airports near Lyon"})
        await client.wait_type("assistant.done", start=mark)
        speech = await client.wait_type("assistant.speech", start=mark)
        end = await client.wait_type("assistant.speech.end", start=mark)
        assert end["ask_id"] == speech["ask_id"]
        assert "Lyon" in speech["text"] and "**" not in speech["text"]
        assert speech["audio"]["format"] == "pcm_s16le" and speech["audio"]["sample_rate"] == 16000
        pcm = b"".join(base64.b64decode(e["data"]) for e in of(client, mark) if e["type"] == "assistant.speech.audio")
        assert len(pcm) // 2 == pytest.approx(speech["audio"]["duration_ms"] * 16, rel=0.01)
        assert len(pcm) > 16000 * 2  # over a second of speech
        assert max(abs(int.from_bytes(pcm[i:i + 2], "little", signed=True)) for i in range(0, len(pcm), 200)) > 1000
        after = of(client, mark)
        assert not any(e["type"] in ("atc.message", "decision", "transcript", "state") for e in after), [e["type"] for e in after]
        assert binary_frames(client) == frames_before  # no controller audio: the answer is not on the frequency

        # a follow-up on the same socket refines the last question
        mark = client.mark()
        await client.send({"type": "ask", "text": "within 40 nm", "speak": False})
        await client.wait_type("assistant.done", start=mark)
        plan = next(e["data"] for e in of(client, mark) if e["type"] == "assistant.plan")
        assert plan["selected_tool"] == "find_airports_near_location"
        assert plan["arguments"]["location"].lower() == "lyon" and plan["arguments"]["max_distance_nm"] == 40
        assert not any(e["type"] == "assistant.speech" for e in of(client, mark))

        # the radio still flies: the pilot's call goes to the engine as before
        mark = client.mark()
        await client.send({"type": "text", "text": state["expected_pilot"][0]})
        await client.wait_type("atc.message", start=mark)
        await client.close()

    run(scenario())


def test_one_question_at_a_time_and_bad_asks(server: str) -> None:
    async def scenario() -> None:
        client = await RadioClient.connect(server)
        await client.send({"type": "ask", "text": "compare transponder rules in France and Germany"})
        await client.send({"type": "ask", "text": "and in Italy?"})
        busy = await client.wait_type("error")
        assert busy["code"] == "ask_busy" and busy["fatal"] is False
        await client.wait_type("assistant.done")
        await client.send({"type": "ask", "text": ""})
        assert (await client.wait_type("error", start=client.mark() - 1))["code"] == "bad_message"
        await client.send({"type": "ptt.down", "channel": "ask"})  # keying needs a session
        assert (await client.wait_for(lambda e: e.get("code") == "no_session"))["fatal"] is False
        await client.close()

    run(scenario())


def test_the_ask_channel_when_the_assistant_is_off() -> None:
    async def scenario(base: str) -> None:
        client = await RadioClient.connect(base)
        await client.send({"type": "ask", "text": "tower frequency at EDDM"})
        err = await client.wait_type("error")
        assert err["code"] == "assistant_unavailable" and not err["fatal"]
        await client.close()

    with run_server(create_app(Settings(**LIGHT, assistant_enabled=False))) as base:
        run(scenario(base))


def test_a_spoken_question_on_the_ask_key() -> None:
    """Voice: the question spoken on the ask key (`ptt.down` with `channel: "ask"`) is recognized
    with the assistant's phrases, not the ATC state's, and answered by the assistant; the engine
    hears nothing. The speech engines are fakes (tests/fakes.py): the channel is under test here;
    whisper on real recordings is tests/test_stt.py's."""
    from gateway.ask import ASK_PHRASES
    from gateway.speech.stack import SpeechStack
    from tests.fakes import FakeStt, FakeTts

    stt = FakeStt()
    spoken = stt.say("Show me airports near Marseille.")
    speech = SpeechStack(Settings(), stt=stt, tts=FakeTts())
    asyncio.run(speech.load())

    async def scenario(base: str) -> None:
        client = await RadioClient.connect(base)
        await client.send({"type": "session.start", "flow": "clearance", "seed": 7, "scenario": {"callsign": "DLH359"}})
        await client.wait_type("session.started")
        await client.wait_type("state")
        await asyncio.sleep(0.3)
        mark = client.mark()
        await client.send({"type": "ptt.down", "channel": "ask"})
        await client.stream(spoken, 16000)
        await client.send({"type": "ptt.up"})
        question = await client.wait_type("assistant.question", start=mark)
        assert question["source"] == "voice" and "marseille" in question["text"].lower(), question  # not one of ASK_PHRASES
        await client.wait_type("assistant.speech.end", start=mark)
        plan = next(e["data"] for e in of(client, mark) if e["type"] == "assistant.plan")
        assert plan["selected_tool"] == "find_airports_near_location"
        assert not any(e["type"] in ("transcript", "decision", "atc.message", "state") for e in of(client, mark))
        assert stt.contexts[-1].expected_phrases == list(ASK_PHRASES)  # no ATC bias on the ask key
        await client.close()

    with run_server(create_app(Settings(speech_preload=False, audio_pacing=False), speech=speech)) as base:
        run(scenario(base))
