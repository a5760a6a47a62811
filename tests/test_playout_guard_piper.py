"""The playout guard through the real playout path: piper (bundled voice) behind the TTS cache,
the radio effect and the resampler, unpaced. What the guard plans with is set through its
`SpeedWindow`'s prior (a window that forgets every measurement at once), so what it decides
does not depend on how loaded the machine running the tests is."""

from __future__ import annotations

import asyncio
import threading

import pytest
from prometheus_client import REGISTRY

from engine.models import ControllerMessage
from gateway.radio import events as e
from gateway.radio.playout import Playout
from gateway.radio.playout_guard import Speed, SpeedWindow
from gateway.speech.cpu import Priority, cpu_pool, priority
from gateway.speech.tts.base import split_for_speech
from gateway.speech.tts.cache import CachedTts, TtsCache
from gateway.speech.tts.piper import PiperTts

SPEECH = "Ocean 534, Frankfurt Delivery, cleared to Barcelona via GEDER 4K departure, climb 6000 feet, squawk 5624."
SLOWER_THAN_REAL_TIME = Speed(synth_s_per_char=1.0, audio_s_per_char=0.06)
FAST = Speed(synth_s_per_char=0.0001, audio_s_per_char=0.06)


def planning_with(speed: Speed) -> SpeedWindow:
    return SpeedWindow(window_s=-1.0, prior=speed)  # every measurement is out of the window at once


@pytest.fixture(scope="module")
def piper() -> PiperTts:
    engine = PiperTts()
    asyncio.run(engine.load())
    return engine


class Listener:
    """A playout on a fresh cache, what it sent, and which pieces of the message were
    synthesized when its first audio left."""

    def __init__(self, piper: PiperTts, speed: Speed) -> None:
        self.tts = CachedTts(piper, TtsCache())
        self.events: list[e.Event] = []
        self.audio = 0
        self.ready_at_first_audio: list[bool] = []
        self.playout = Playout(
            self._send, self._audio, self.tts, pace=False, speed=planning_with(speed), on_first_audio=self._first_audio
        )
        self.key_on_message = False

    async def _send(self, event: e.Event) -> None:
        self.events.append(event)
        if self.key_on_message and isinstance(event, e.AtcMessage):
            self.playout.key()  # the pilot keys as the controller's message begins

    async def _audio(self, pcm: bytes) -> None:
        self.audio += len(pcm)

    def _first_audio(self, msg: ControllerMessage) -> None:
        self.ready_at_first_audio = [self.tts.cache.peek(self.tts.key(piece)) for piece in split_for_speech(msg.speech)]

    async def say(self, speech: str) -> e.AtcMessageEnd:
        self.playout.start()
        self.playout.enqueue([ControllerMessage(message_id="m1", seq=1, template="t", text=speech, speech=speech)])
        await asyncio.wait_for(self.playout.idle(), 120)
        await self.playout.close()
        (end,) = [ev for ev in self.events if isinstance(ev, e.AtcMessageEnd)]
        return end


def held() -> float:
    return REGISTRY.get_sample_value("livefreq_playout_held_total") or 0.0


def test_synthesis_slower_than_real_time_starts_a_message_only_once_all_of_it_is_ready(piper: PiperTts) -> None:
    listener = Listener(piper, SLOWER_THAN_REAL_TIME)
    before = held()
    end = asyncio.run(listener.say(SPEECH))
    assert len(split_for_speech(SPEECH)) >= 3
    assert listener.ready_at_first_audio == [True] * len(split_for_speech(SPEECH))
    assert held() == before + 1
    assert not end.interrupted and end.audio_ms is not None and end.audio_ms > 3000
    assert round(listener.audio / 2 * 1000 / 16000) == end.audio_ms  # all of it was sent


def test_fast_synthesis_starts_a_message_on_its_first_piece(piper: PiperTts) -> None:
    listener = Listener(piper, FAST)
    before = held()
    end = asyncio.run(listener.say(SPEECH))
    assert listener.ready_at_first_audio[0] and not all(listener.ready_at_first_audio)
    assert held() == before
    assert not end.interrupted and end.audio_ms is not None and end.audio_ms > 3000


def test_a_pilot_keying_over_a_held_message_cuts_it_before_any_audio(piper: PiperTts) -> None:
    listener = Listener(piper, SLOWER_THAN_REAL_TIME)
    listener.key_on_message = True

    async def scenario() -> e.AtcMessageEnd:
        task = asyncio.create_task(listener.say(SPEECH))
        while not listener.events:
            await asyncio.sleep(0.01)
        listener.playout.unkey()
        return await task

    end = asyncio.run(scenario())
    assert end.interrupted and listener.audio == 0 and listener.ready_at_first_audio == []


class CountingPiper(PiperTts):
    """The real piper engine, counting the syntheses that ran on the CPU pool."""

    def __init__(self) -> None:
        super().__init__()
        self.ran: list[str] = []

    def synthesize_sync(self, text: str) -> bytes:
        self.ran.append(text)
        return super().synthesize_sync(text)


def test_a_message_about_to_play_overtakes_a_speculation_queued_in_the_pool(piper: PiperTts) -> None:
    """Both workers busy: the speculative synthesis of a reply's first piece waits at AHEAD when
    the reply comes; the message asks at ON_AIR, gets its own synthesis first, and the
    speculation is cancelled before its job runs (the piece is synthesized once)."""
    engine = CountingPiper()
    tts = CachedTts(engine, TtsCache())
    piece = "contact tower one one eight decimal seven."
    assert split_for_speech(piece) == [piece]
    pool = cpu_pool()
    gates = [threading.Event() for _ in range(pool.workers)]
    running = threading.Semaphore(0)

    def block(gate: threading.Event) -> None:
        running.release()
        gate.wait(60)

    async def scenario() -> tuple[bytes, bool]:
        blockers = [pool.submit(lambda gate=gate: block(gate), Priority.FINAL) for gate in gates]
        for _ in gates:
            assert running.acquire(timeout=60)  # every worker busy
        with priority(Priority.AHEAD):
            speculation = asyncio.create_task(tts.prepare(piece))
        await asyncio.sleep(0.05)  # its job is queued behind the busy workers
        with priority(Priority.ON_AIR):
            reply = asyncio.create_task(tts.synthesize(piece))
        await asyncio.sleep(0.05)
        # queued after the reply at its priority: the worker that ran the reply takes this next,
        # not the speculation, so the test does not race the cancellation
        after = threading.Event()
        gates.append(after)
        blockers.append(pool.submit(lambda: block(after), Priority.ON_AIR))
        gates[0].set()  # one worker frees up: it takes the most urgent job, the reply's
        pcm = await asyncio.wait_for(reply, 60)
        await asyncio.wait({speculation}, timeout=60)
        for gate in gates[1:]:
            gate.set()
        for blocker in blockers:
            blocker.result(timeout=60)
        await asyncio.sleep(0.1)  # a job of the speculation, had it stayed queued, would run now
        return pcm, speculation.cancelled()

    pcm, cancelled = asyncio.run(scenario())
    assert pcm and tts.cache.peek(tts.key(piece))
    assert cancelled and engine.ran == [piece]
