"""The ATIS on the WebSocket radio, with today's weather from a fake VATSIM on loopback.

A real gateway (uvicorn) whose data provider is a real HTTP server serving the recorded EDDF METAR
(wind 250/12, QNH 1018): a new EDDF session gets a westerly runway and that QNH, and tuning the
ATIS frequency plays the ATIS as controller audio, in a loop, until the pilot tunes away. The
voice is a fake (tests/fakes.py: audio as long as the text takes to say): what is under test is the
weather, the broadcast and its timing, not piper.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from gateway.app import create_app
from gateway.settings import Settings
from gateway.speech.stack import SpeechStack
from tests.conftest import run_server
from tests.fakes import FakeStt, FakeTts
from tests.support.fake_vatsim import FakeVatsim, fake_vatsim, payload
from tests.support.radio_client import RadioClient

WESTERLY = {"25L", "25C", "25R"}
RATE = 16000


@pytest.fixture(scope="module")
def speech() -> SpeechStack:
    stack = SpeechStack(Settings(), stt=FakeStt(), tts=FakeTts())  # the ATIS is heard, and the pilot types
    asyncio.run(stack.load())
    return stack


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeVatsim]:
    with fake_vatsim(metars={"EDDF": payload("metar-EDDF.txt"), "EDDM": payload("metar-EDDM.txt")}) as server:
        yield server


def gateway(speech: SpeechStack, fake: FakeVatsim, **extra):
    settings = Settings(
        speech_preload=False, data_provider="vatsim", vatsim_metar_url=fake.metar_url,
        vatsim_data_url=fake.data_url, provider_timeout_s=2.0, **extra,
    )
    return run_server(create_app(settings, speech=speech))


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 180))


def is_atis(event: dict) -> bool:
    return event["type"] == "atc.message" and event["station"] == "atis"


async def audio_of(client: RadioClient, message_id: str, seconds: float) -> int:
    """Wait until `seconds` of the message's audio have arrived; returns the bytes received."""
    return await client.until(lambda: client.rx.audio.get(message_id) if client.rx.audio.get(message_id, 0) >= seconds * RATE * 2 else None,
                              timeout=60, what=f"{seconds:g} s of {message_id}")


def test_eddf_with_wind_250_12_gets_a_westerly_runway_its_qnh_and_the_atis_on_the_atis_frequency(speech, fake):
    with gateway(speech, fake) as base:
        atis = httpx.get(f"{base}/api/airports/EDDF/atis").json()
        assert atis["source"] == "vatsim" and atis["runway"] in WESTERLY

        async def scenario():
            client = await RadioClient.connect(base)
            started = await client.start(flow="clearance", seed=7, scenario={"airport": "EDDF", "callsign": "DLH359"})
            v = started["scenario"]
            assert v["weather_source"] == "vatsim" and v["wind"] == "250/12"
            assert v["runway"] in WESTERLY and v["runway"] == atis["runway"]
            assert v["qnh"] == 1018 and v["atis_letter"] == atis["letter"]
            letter = v["atis_letter"]

            # tune the ATIS: the broadcast starts, with its audio
            mark = client.mark()
            await client.tune(v["atis_freq"])
            on_air = await client.wait_for(is_atis, start=mark)
            assert on_air["seq"] == 0 and on_air["frequency"] == v["atis_freq"]
            text = on_air["text"]
            for part in (f"This is Frankfurt information {letter}", f"Runway in use {v['runway']}", "Wind 250/12",
                         "Temperature 17, dew point 8", "QNH 1018", f"you have information {letter}"):
                assert part in text, (part, text)
            assert "two fife zero degrees, one two knots" in on_air["speech"] and "QNH one zero one eight" in on_air["speech"]
            await audio_of(client, on_air["message_id"], 3.0)

            # tuning away cuts it at once
            mark = client.mark()
            await client.tune(v["delivery_freq"])
            end = await client.wait_type("atc.message.end", start=mark, message_id=on_air["message_id"])
            assert end["interrupted"] is True and end["audio_ms"] >= 3000
            await client.ping()
            pong = await client.wait_type("pong", start=mark)
            assert pong and client.find(is_atis, mark) is None

            # the first call with an old letter gets the current one and the QNH
            old = "Alpha" if letter != "A" else "Bravo"
            mark = client.mark()
            await client.say(f"Frankfurt Delivery, Lufthansa 359, information {old}, request IFR clearance to Munich")
            decision = await client.wait_type("decision", start=mark)
            assert decision["readback"]["fields"] == {"atis_letter": "wrong"}
            current = await client.wait_type("atc.message", start=mark)
            assert current["text"] == f"Lufthansa 359, Frankfurt Delivery, information {letter} is current, QNH 1018."
            assert client.find(is_atis, mark) is None
            await client.close()

        run(scenario())


def test_the_atis_loops_until_the_pilot_tunes_away_in_a_session_from_a_flight_plan(speech, fake):
    with gateway(speech, fake, audio_pacing=False) as base:

        async def scenario():
            client = await RadioClient.connect(base)
            started = await client.start(flow="clearance", seed=3, flight_plan="DLH4AB")  # filed EDDF-EDDM at 24000 ft
            v = started["scenario"]
            assert (v["callsign"], v["airport"], v["destination"], v["cruise_level"]) == ("DLH4AB", "EDDF", "EDDM", "FL240")
            mark = client.mark()
            await client.tune("118.73")  # EDDF's other ATIS frequency, as a pilot dials it
            first = await client.wait_for(is_atis, start=mark)
            first_end = await client.wait_type("atc.message.end", start=mark, message_id=first["message_id"])
            second = await client.wait_for(lambda e: is_atis(e) and e["message_id"] != first["message_id"], start=mark)
            await client.wait_type("atc.message.end", start=mark, message_id=second["message_id"])
            assert first["text"] == second["text"] and first["frequency"] == "118.730"
            assert first["message_id"].endswith("-1") and second["message_id"].endswith("-2")
            assert first_end["interrupted"] is False
            seconds = client.rx.audio[first["message_id"]] / 2 / RATE
            assert 15.0 < seconds < 60.0, seconds  # the whole ATIS was spoken
            mark = client.mark()
            await client.tune(v["ground_freq"])
            await client.ping()
            await client.wait_type("pong", start=mark)
            stopped = len([e for e in client.rx.events if is_atis(e)])
            # a controller call afterwards is heard alone: no repetition of the ATIS around it
            await client.say(started["expected_pilot"][0])
            reply = await client.wait_type("atc.message", start=mark, station="delivery")
            await client.wait_type("atc.message.end", start=mark, message_id=reply["message_id"])
            assert len([e for e in client.rx.events if is_atis(e)]) == stopped
            await client.close()

        run(scenario())
