"""How many live voice sessions this node serves, and the admission that holds it to that.

Why: past capacity every pilot on a node degrades at once (the recognizer queue grows, replies
come seconds late, controller audio stalls). A node that knows its capacity refuses the session
it cannot serve instead (`too_many_sessions` with a retry hint), tells a load balancer through
`/health`, and the sessions it admitted keep the latency they were promised.

The capacity comes from the setting ``LIVEFREQ_VOICE_CAPACITY`` (a number of sessions; ``off``: no
limit), or, by default (``auto``), from a self-test once the speech models are loaded: a fixed
utterance (the default voice reading a readback through the radio effect, as the load tester's
corpus sounds) is decoded a few times by the real recognizer, off the event loop, and

    sessions = floor(HEADROOM × cores / (decode CPU-seconds per talk-second × TALK_SHARE))

`TALK_SHARE` is the share of time a pilot talks under the load tester's default talk pattern
(27 %: `livefreq load`, tooling/load/run.py). `HEADROOM` is the share of the cores the final
decodes may take while p95 latency stays within 1 s and controller audio never stalls: the rest
goes to partial transcripts, the controller's speech synthesis, the event loop, and the slack a
queue needs so that utterances ending together do not wait long (docs/operations.md "Capacity"
has the calibration against a load run). Until the self-test has run (or when it fails) the
capacity is unknown and every session is admitted, as before.
"""

from __future__ import annotations

import asyncio
import logging
import math
import statistics
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Literal

from gateway.audio.radio import apply_radio
from gateway.audio.resample import SPEECH_RATE, resample
from gateway.settings import Settings
from gateway.speech.cpu import cpu_count
from gateway.speech.stack import SpeechStack
from gateway.speech.stt.base import SttContext, transcribe_result

log = logging.getLogger("livefreq.capacity")

TALK_SHARE = 0.27  # a pilot talks 27 % of the time under `livefreq load`'s default pattern
# share of the cores final decodes may use at capacity (docs/operations.md "Capacity"): 0.25 from a
# first calibration gave 65-72 sessions when `livefreq load --find-capacity` measured 57, so 0.2;
# since then the measured capacity is 75 (twice, and held offered 1.5x), so 0.25 again: 65-72;
# since the first call's reply is made at session start (gateway/radio/speculation.py) it is 100
# over 120 s (at the knee) and 125 over 60 s, so 0.33: 87-94, what the node serves over minutes.
# On slower hosts of the same kind 0.33 admitted at the knee (2026-11-27: self-test 0.277 CPU-s per
# decode, 61 admitted of 92 offered at p95 1,462 ms; 50 of 75 held at p95 971 ms), so 0.27: 50 there,
# 71-76 on the fast host above (which measured 75 when 0.25 held)
HEADROOM = 0.27
SELF_TEST_TEXT = (
    "Runway two five right, cleared for takeoff, wind two seven zero degrees eight knots, Lufthansa three five nine"
)
SELF_TEST_EXPECTED = "runway 25R cleared for takeoff, DLH359"
SELF_TEST_RUNS = 3  # measured decodes, after one warm-up decode
RETRY_AFTER_S = 30.0  # the hint when no session has left lately: sessions last minutes
RETRY_MIN_S, RETRY_MAX_S = 5.0, 120.0
_DEPARTURES_KEPT = 16
_DEPARTURES_WINDOW_S = 600.0

Source = Literal["configured", "measured", "unmeasured", "off"]


@dataclass(frozen=True)
class SelfTest:
    """What the start-up self-test measured (one fixed utterance, `runs` decodes)."""

    audio_s: float
    runs: int
    decode_cpu_s: float  # median process CPU seconds of one decode
    decode_wall_s: float  # median wall seconds of one decode
    cores: int
    transcript: str

    @property
    def cpu_per_talk_s(self) -> float:
        """Decode CPU seconds per second of pilot speech (the recognizer's CPU real-time factor)."""
        return self.decode_cpu_s / self.audio_s

    def sessions(self, headroom: float = HEADROOM, talk_share: float = TALK_SHARE) -> int:
        """The module docstring's formula: at least 1 session."""
        per_session = max(self.cpu_per_talk_s, 1e-6) * talk_share
        return max(1, math.floor(headroom * self.cores / per_session))

    def describe(self) -> dict[str, Any]:
        return {
            "audio_s": round(self.audio_s, 2),
            "runs": self.runs,
            "decode_cpu_s": round(self.decode_cpu_s, 3),
            "decode_wall_s": round(self.decode_wall_s, 3),
            "cpu_per_talk_s": round(self.cpu_per_talk_s, 4),
            "cores": self.cores,
            "talk_share": TALK_SHARE,
            "headroom": HEADROOM,
        }


class VoiceCapacity:
    """The live voice sessions of this process against its capacity.

    `try_acquire` and `release` run on the event loop only, with no await between the check and
    the count, so two sessions arriving together never both take the last slot. A session that
    got a slot keeps it until it leaves: admission never drops a session, it only refuses new ones.
    """

    def __init__(self, capacity: int | None, source: Source, clock: Any = time.monotonic) -> None:
        self.capacity = capacity  # None: unknown or unlimited (every session is admitted)
        self.source: Source = source
        self.live = 0
        self.refused = 0
        self.self_test: SelfTest | None = None
        self.error: str | None = None  # why the self-test failed, if it did
        self._clock = clock
        self._departures: deque[float] = deque(maxlen=_DEPARTURES_KEPT)

    @classmethod
    def from_settings(cls, settings: Settings) -> VoiceCapacity:
        setting = settings.voice_capacity
        if setting == "off":
            return cls(None, "off")
        if setting == "auto":
            return cls(None, "unmeasured")
        return cls(int(setting), "configured")

    @property
    def accepting(self) -> bool:
        """Whether a new voice session would be admitted now."""
        return self.capacity is None or self.live < self.capacity

    def try_acquire(self) -> bool:
        """Take a slot for a new voice session; False (and counted) when the node is full."""
        if not self.accepting:
            self.refused += 1
            return False
        self.live += 1
        return True

    def release(self, *, departed: bool = True) -> None:
        """A session left (`departed`; False: a start that failed gave its slot back unused):
        its slot is free for the next one."""
        self.live = max(0, self.live - 1)
        if departed:
            self._departures.append(self._clock())

    def retry_after_s(self) -> float:
        """When a slot will likely be free: the mean interval between the sessions that left in
        the last ten minutes, or `RETRY_AFTER_S` when too few did (clamped to 5-120 s)."""
        now = self._clock()
        recent = [t for t in self._departures if now - t <= _DEPARTURES_WINDOW_S]
        if len(recent) < 2:
            return RETRY_AFTER_S
        interval = (now - recent[0]) / (len(recent) - 1)
        return round(min(RETRY_MAX_S, max(RETRY_MIN_S, interval)), 1)

    def measured(self, test: SelfTest) -> None:
        """The self-test's result becomes the capacity (unless one was configured)."""
        self.self_test = test
        if self.source == "unmeasured":
            self.capacity, self.source = test.sessions(), "measured"

    def describe(self) -> dict[str, Any]:
        """The `/health` `voice` object."""
        return {
            "live": self.live,
            "capacity": self.capacity,
            "accepting": self.accepting,
            "source": self.source,
            "refused": self.refused,
            "retry_after_s": None if self.accepting else self.retry_after_s(),
            "self_test": self.self_test.describe() if self.self_test is not None else None,
            "error": self.error,
        }


async def self_test_utterance(speech: SpeechStack) -> bytes:
    """The fixed utterance at 16 kHz: the default voice reading `SELF_TEST_TEXT` through the radio
    effect at readability 4, as the load tester's recordings sound (synthesized off the loop)."""
    tts = speech.tts
    pcm = await tts.synthesize(SELF_TEST_TEXT)
    pcm = await asyncio.to_thread(resample, pcm, tts.sample_rate, SPEECH_RATE)
    return await asyncio.to_thread(apply_radio, pcm, SPEECH_RATE, 4)


async def run_self_test(speech: SpeechStack, runs: int = SELF_TEST_RUNS) -> SelfTest:
    """Decode the fixed utterance `runs` times (after one warm-up) through the real recognizer on
    the CPU pool; the median CPU and wall seconds of one decode. Loads the models if needed."""
    await speech.load()
    pcm = await self_test_utterance(speech)
    context = SttContext(
        expected_phrases=[SELF_TEST_EXPECTED], vocabulary=["Lufthansa 359", "25R"], callsign="Lufthansa 359"
    )
    result = await transcribe_result(speech.stt, pcm, context)  # warm-up: first-call allocations
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(max(1, runs)):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        result = await transcribe_result(speech.stt, pcm, context)
        cpu.append(time.process_time() - cpu0)
        wall.append(time.perf_counter() - wall0)
    return SelfTest(
        audio_s=len(pcm) / 2 / SPEECH_RATE,
        runs=len(cpu),
        decode_cpu_s=statistics.median(cpu),
        decode_wall_s=statistics.median(wall),
        cores=cpu_count(),
        transcript=result.text,
    )


async def measure(capacity: VoiceCapacity, speech: SpeechStack) -> None:
    """The start-up self-test, when the capacity is `auto`: sets it, or leaves it unknown (every
    session admitted) and says why in `/health` when the speech engines or the test fail."""
    if capacity.source != "unmeasured":
        return  # configured, or off: nothing to measure
    try:
        test = await run_self_test(speech)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the gateway serves on; the capacity stays as it was
        capacity.error = f"{type(exc).__name__}: {exc}"
        log.warning("capacity self-test failed: %s", capacity.error)
        return
    capacity.measured(test)
    log.info(
        "capacity self-test: %.3f CPU-s per talk-second over %d decodes of %.1f s (%s); %s capacity %s voice sessions",
        test.cpu_per_talk_s, test.runs, test.audio_s, test.transcript, capacity.source, capacity.capacity,
    )
