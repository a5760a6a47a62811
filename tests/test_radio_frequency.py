"""A `Frequency` (gateway/radio/frequency.py): what is transmitted reaches every receiver tuned
to it, and a pilot keying blocks it for all of them. Real playouts on espeak, unpaced."""

from __future__ import annotations

import asyncio

from engine.models import ControllerMessage
from gateway.radio import events as e
from gateway.radio.frequency import Frequency
from gateway.radio.playout import Playout
from gateway.speech.tts.espeak import EspeakTts


def _message(n: int) -> ControllerMessage:
    return ControllerMessage(message_id=f"m{n}", seq=n, template="t", text="go ahead", speech="go ahead")


class Receiver:
    """A playout and the events it sent."""

    def __init__(self, tts: EspeakTts) -> None:
        self.events: list[e.Event] = []
        self.playout = Playout(self._send, self._audio, tts, pace=False)

    async def _send(self, event: e.Event) -> None:
        self.events.append(event)

    async def _audio(self, pcm: bytes) -> None:
        return None

    def ended(self) -> list[str]:
        return [ev.message_id for ev in self.events if isinstance(ev, e.AtcMessageEnd)]


def test_every_tuned_receiver_hears_a_transmission_in_order() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        tts = EspeakTts()
        first, second = Receiver(tts), Receiver(tts)
        frequency = Frequency("121.900")
        for receiver in (first, second):
            frequency.tune(receiver.playout)
            receiver.playout.start()
        frequency.transmit([_message(1), _message(2)])
        await asyncio.wait_for(asyncio.gather(first.playout.idle(), second.playout.idle()), 30)
        for receiver in (first, second):
            await receiver.playout.close()
        return first.ended(), second.ended()

    assert asyncio.run(scenario()) == (["m1", "m2"], ["m1", "m2"])


def test_a_keyed_frequency_holds_every_receiver_until_the_last_pilot_releases() -> None:
    async def scenario() -> list[list[str]]:
        tts = EspeakTts()
        first, second = Receiver(tts), Receiver(tts)
        frequency = Frequency.of_session("s1")
        frequency.tune(first.playout)
        first.playout.start()
        frequency.key()
        frequency.key()  # a second pilot keys too
        frequency.tune(second.playout)  # joins while the frequency is busy: held as well
        second.playout.start()
        frequency.transmit([_message(1)])
        for _ in range(10):
            await asyncio.sleep(0)
        held = [first.ended() + [ev.type for ev in first.events], [ev.type for ev in second.events]]
        frequency.unkey()
        for _ in range(10):
            await asyncio.sleep(0)
        still = [ev.type for ev in first.events]
        frequency.unkey()  # the last one: the controller talks
        await asyncio.wait_for(asyncio.gather(first.playout.idle(), second.playout.idle()), 30)
        for receiver in (first, second):
            await receiver.playout.close()
        return [*held, still, first.ended(), second.ended()]

    held_first, held_second, still, first, second = asyncio.run(scenario())
    assert held_first == [] and held_second == [] and still == []
    assert first == ["m1"] and second == ["m1"]


def test_a_receiver_that_leaves_hears_nothing_more() -> None:
    async def scenario() -> list[str]:
        receiver = Receiver(EspeakTts())
        frequency = Frequency("118.700")
        frequency.tune(receiver.playout)
        frequency.leave(receiver.playout)
        receiver.playout.start()
        frequency.transmit([_message(1)])
        await asyncio.sleep(0.05)
        await receiver.playout.close()
        return receiver.ended()

    assert asyncio.run(scenario()) == []
    assert Frequency("118.700").receivers == ()
