"""A synthetic pilot for measuring and testing the voice gateway: recordings, a protocol-v1 client,
word error rate, and a pilot that flies a session by voice over `WS /v1/radio`.

The benchmark (`livefreq bench voice`), the tests and later load tools all need the same pieces,
so they live in the package rather than in the tests:

- `pilot_pcm`: a pilot transmission as a real one sounds (the piper voice speaking the ICAO form
  of a phrase, through the radio effect, with band noise, padded with silence), synthesized by the
  project's own engines, so no audio file is kept in the repository.
- `RadioClient`: the client library's protocol-v1 WebSocket client (`gateway.client`), which
  records every event and audio frame in arrival order, with arrival times, and streams PCM in
  real time on a fixed 20 ms schedule; re-exported here for the benchmark and the tests.
- `word_errors`: WER of a transcript against the phrase as spoken, both normalized the way the
  engine reads transcripts, so "tree fife" and "35" count as the same words.
- `VoicePilot`: one pilot flying exchanges (push-to-talk, wait for the controller like a person,
  answer what the state expects) and timing each from the release of the PTT key.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Self

import numpy as np
from rapidfuzz.distance import Levenshtein

from engine.phraseology import normalize_transcript, speak_text
from gateway.audio.radio import apply_radio
from gateway.audio.resample import resample
from gateway.client.base import FRAME_MS, Received, frames
from gateway.client.ws import RadioClient
from gateway.speech.tts.piper import PiperTts

__all__ = [
    "FRAME_MS",
    "Exchange",
    "RadioClient",
    "Received",
    "VoicePilot",
    "frames",
    "pilot_pcm",
    "pilot_voice_id",
    "word_errors",
]

LEAD_SILENCE_S = 0.3
TRAIL_SILENCE_S = 0.5

# The synthetic pilot says a phrase the same way every time: piper's noise (the voice's own
# variation of sound and phoneme lengths) is off. With it on, the pause after "Kilo six zero,"
# sometimes outlasted the VAD's hang-over and cut a vox transmission in two (a flaky test). What
# varies is chosen, and reproducible: the speed (`length_scale`), the radio effect and the noise.
PILOT_NOISE_SCALE = 0.0
PILOT_NOISE_W_SCALE = 0.0

_voices: dict[float, PiperTts] = {}
_voice_lock = threading.Lock()


def _pilot_voice(length_scale: float = 1.0) -> PiperTts:
    """The piper voice at a speaking speed (`length_scale` > 1 is slower), without piper's random
    variation; the model is shared."""
    with _voice_lock:
        voice = _voices.get(length_scale)
        if voice is None:
            voice = _voices[length_scale] = PiperTts(
                length_scale=None if length_scale == 1.0 else length_scale,
                noise_scale=PILOT_NOISE_SCALE,
                noise_w_scale=PILOT_NOISE_W_SCALE,
            )
        return voice


def pilot_voice_id() -> str:
    """The pilot voice and its fixed options (e.g. ``en_US-joe-medium[noise_scale=0.0,...]``), at
    normal speed: recordings made with another voice are not the ones `pilot_pcm` makes now."""
    return _pilot_voice().voice


@functools.lru_cache(maxsize=128)
def pilot_pcm(
    phrase: str,
    rate: int = 16000,
    *,
    radio_level: int = 4,
    noise_dbfs: float = -45.0,
    seed: int = 1,
    length_scale: float = 1.0,
) -> bytes:
    """PCM16 mono at `rate`: 0.3 s silence, the phrase spoken in ICAO form, 0.5 s silence.

    `length_scale` sets the speaking speed (piper's: 0.85 fast, 1.2 slow), `radio_level` the
    readability of the radio effect (1-5), `noise_dbfs` the band noise under it; the corpus
    (`tooling.corpus`) varies all three. The same arguments give the same audio (piper's own
    randomness is off, the noise is seeded by `seed`). Blocking (piper synthesis, ~0.1-0.5 s): callable inside
    or outside an event loop; cached per phrase and options, so a test or benchmark pays each
    phrase once.
    """
    tts = _pilot_voice(length_scale)
    speech = tts.synthesize_sync(speak_text(phrase))
    speech = apply_radio(speech, tts.sample_rate, level=radio_level, seed=seed, squelch=False)
    pcm = resample(speech, tts.sample_rate, rate)
    samples = np.frombuffer(pcm, dtype=np.int16).astype(np.float32)
    samples = np.concatenate(
        [
            np.zeros(int(rate * LEAD_SILENCE_S), dtype=np.float32),
            samples,
            np.zeros(int(rate * TRAIL_SILENCE_S), dtype=np.float32),
        ]
    )
    rng = np.random.default_rng(seed)
    samples += rng.normal(0.0, 32767.0 * 10 ** (noise_dbfs / 20), samples.size)
    return np.clip(samples, -32768, 32767).astype(np.int16).tobytes()


def pcm_seconds(pcm: bytes, rate: int) -> float:
    return len(pcm) / 2 / rate


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(word edits, reference words) of `hypothesis` against what saying `reference` sounds like.

    The reference is taken in its ICAO spoken form first (`speak_text`: "25R" -> "two fife
    right", "E14" -> "Echo one four"), because that is what the recording says; then both sides
    go through `normalize_transcript`, so "tree fife" and "35" are the same words. The edit
    distance counts substitutions, insertions and deletions of whole words: `edits / words` is
    the word error rate, and summing both over a corpus gives the corpus WER.
    """
    ref = normalize_transcript(speak_text(reference)).split()
    hyp = normalize_transcript(hypothesis).split()
    return Levenshtein.distance(ref, hyp), len(ref)


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate of one transcript (0.0 perfect; may exceed 1.0 with many insertions)."""
    edits, words = word_errors(reference, hypothesis)
    return edits / words if words else float(edits > 0)


# --------------------------------------------------------------------------- a pilot flying by voice


@dataclass
class Exchange:
    """One pilot transmission and the gateway's answer, timed from the release of the PTT key.

    Latencies are milliseconds from `ptt.up` to the arrival of: the final transcript, the
    decision, and the first audio byte of the controller's reply (None when the state gives no
    spoken reply to this transmission, e.g. a readback the controller does not acknowledge).
    """

    session_id: str
    flow: str
    state: str
    phrase: str
    audio_s: float
    transcript: str = ""
    transmission_id: str | None = None
    final_ms: float | None = None
    decision_ms: float | None = None
    first_audio_ms: float | None = None
    reply_seq: int | None = None
    reply_text: str | None = None
    spoken_before_reply: int = 0  # other controller messages (timer calls) that went first
    to_state: str | None = None
    recognized: bool | None = None
    readback_ok: bool | None = None
    readback_not_ok: list[str] = field(default_factory=list)  # fields judged missing, wrong or unsure
    readback_unsure: list[str] = field(default_factory=list)  # fields asked again ("say again squawk")
    readback_wrong: list[str] = field(default_factory=list)  # fields judged wrong
    word_errors: int = 0
    words: int = 0
    rival_checked: bool = False  # the decision waited for rivals scored in the audio (its trace's checks)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def rival_checked(decision: dict[str, Any]) -> bool:
    """Whether a `decision` event's trace shows rivals of a value scored in the audio (a
    clearance limit heard as the prompt named it, a frequency written short): a step of the
    radio's hearing allowed past the reply's second (gateway/speech/hearing_chain.py, step 0)."""
    steps = (decision.get("trace") or {}).get("steps") or []
    checks = (c for step in steps for c in (step.get("data") or {}).get("checks") or [])
    return any(c.get("rival") or c.get("by") == "rival" for c in checks)


class VoicePilot:
    """One pilot on one socket: starts a session and answers each state's first expected phrase
    by voice, streamed in real time as 20 ms frames between ptt.down and ptt.up.

    Like a person it waits for the controller to finish (every reply's `atc.message.end`) before
    keying again. A controller call that was queued before the reply (a silence prompt that fell
    due while the pilot talked) goes out first: the reply's latency includes it, and
    `Exchange.spoken_before_reply` says so. Which controller messages answer a transmission is
    read from its `decision` event (`messages`), so a transmission without a spoken reply is
    known at once instead of after a timeout.
    """

    def __init__(
        self,
        base_url: str,
        *,
        flow: str | None = None,
        seed: int | None = None,
        scenario: dict[str, Any] | None = None,
        rate: int = 16000,
        timeout_s: float = 60.0,
        token: str | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token  # an API key, when the gateway requires one
        self.flow, self.seed, self.scenario = flow, seed, scenario
        self.rate = rate
        self.timeout_s = timeout_s
        self.client: RadioClient | None = None
        self.started: dict[str, Any] = {}
        self.state: dict[str, Any] = {}

    async def __aenter__(self) -> Self:
        self.client = await RadioClient.connect(self.base_url, token=self.token)
        input_audio = {"format": "pcm_s16le", "sample_rate": self.rate, "channels": 1} if self.rate != 16000 else None
        # a refusal (no API key, a session limit) raises ProtocolRefused with the gateway's code
        self.started = await self.client.start(
            flow=self.flow, seed=self.seed, scenario=self.scenario, input_audio=input_audio, timeout=self.timeout_s
        )
        self.state = await self.client.wait_type("state", self.timeout_s)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.client is not None:
            await self.client.close()

    @property
    def session_id(self) -> str:
        return str(self.started["session_id"])

    @property
    def expected(self) -> list[str]:
        return list(self.state.get("expected_pilot") or [])

    @property
    def completed(self) -> bool:
        return bool(self.state.get("completed"))

    async def say(self, phrase: str) -> Exchange:
        """Transmit `phrase` by voice and wait for the whole answer; the timed `Exchange`."""
        pcm = await asyncio.to_thread(pilot_pcm, phrase, self.rate)
        return await self.transmit(pcm, phrase)

    async def transmit(self, pcm: bytes, phrase: str) -> Exchange:
        """Push-to-talk the recording `pcm` (PCM16 at `self.rate`, what saying `phrase` sounds
        like) in real time and wait for the whole answer: the final transcript, the decision and
        every controller message it queued until its `atc.message.end`. The timed `Exchange`."""
        client = self._client()
        exchange = Exchange(
            session_id=self.session_id,
            flow=str(self.state.get("flow")),
            state=str(self.state.get("state")),
            phrase=phrase,
            audio_s=round(pcm_seconds(pcm, self.rate), 3),
        )
        mark = client.mark()
        released = await client.transmit_audio(pcm, self.rate, realtime=True)
        final_at = await client.wait_index(lambda e: e["type"] == "transcript" and e.get("final"), self.timeout_s, mark)
        final = client.rx.events[final_at]
        exchange.transcript = str(final.get("text") or "")
        exchange.final_ms = _ms(client.rx.event_times[final_at] - released)
        exchange.word_errors, exchange.words = word_errors(phrase, exchange.transcript)
        exchange.transmission_id = final.get("transmission_id")
        if exchange.transmission_id is None:
            return exchange  # nothing was heard: no decision follows
        tx_id = exchange.transmission_id
        decided_at = await client.wait_index(lambda e: e["type"] == "decision" and e.get("transmission_id") == tx_id, self.timeout_s, final_at)
        decision = client.rx.events[decided_at]
        exchange.decision_ms = _ms(client.rx.event_times[decided_at] - released)
        exchange.to_state = decision.get("to_state")
        exchange.recognized = decision.get("recognized")
        exchange.rival_checked = rival_checked(decision)
        readback = decision.get("readback")
        exchange.readback_ok = None if readback is None else bool(readback.get("ok"))
        if readback is not None:
            fields = readback.get("fields") or {}
            exchange.readback_not_ok = sorted(k for k, v in fields.items() if v != "ok")
            exchange.readback_unsure = sorted(k for k, v in fields.items() if v == "unsure")
            exchange.readback_wrong = sorted(k for k, v in fields.items() if v == "wrong")
        state_at = await client.wait_index(lambda e: e["type"] == "state", self.timeout_s, decided_at)
        self.state = client.rx.events[state_at]
        replies = list(decision.get("messages") or [])
        if replies:
            first_seq = replies[0]["seq"]
            index = await client.wait_index(lambda e: e["type"] == "atc.message" and e.get("seq") == first_seq, self.timeout_s, mark)
            exchange.reply_seq, exchange.reply_text = first_seq, client.rx.events[index].get("text")
            message_id = client.rx.events[index]["message_id"]
            exchange.spoken_before_reply = sum(1 for e in client.rx.events[mark:index] if e["type"] == "atc.message")
            first_audio = await client.until(lambda: client.rx.first_audio_at.get(message_id), self.timeout_s, "controller audio")
            exchange.first_audio_ms = _ms(first_audio - released)
            last_seq = replies[-1]["seq"]
            await client.wait_index(lambda e: e["type"] == "atc.message.end" and e.get("seq") == last_seq, self.timeout_s * 2, mark)
        self.refresh(state_at)
        return exchange

    def refresh(self, start: int = 0) -> dict[str, Any]:
        """`self.state` set to the latest `state` event from index `start` on (a timer call may
        have moved the session since the last answer); returns it."""
        client = self._client()
        for index in range(len(client.rx.events) - 1, start - 1, -1):
            if client.rx.events[index]["type"] == "state":
                self.state = client.rx.events[index]
                break
        return self.state

    def _client(self) -> RadioClient:
        if self.client is None:
            raise RuntimeError("VoicePilot is used outside `async with`")
        return self.client


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 1)
