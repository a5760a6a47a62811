"""What one connection knows about the session it carries: the protocol state of the radio."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from engine.models import Decision
from gateway.audio.resample import StreamResampler
from gateway.audio.vad import VoiceActivityDetector
from gateway.radio.atis import AtisBroadcast
from gateway.radio.frequency import Frequency
from gateway.radio.playout import Playout

STT_RATE = 16000


@dataclass
class Link:
    """A session attached to a connection (after `session.start` or `session.resume`)."""

    session_id: str
    mode: str
    input_rate: int
    output_rate: int
    radio_level: int
    radio_effect: bool
    playout: Playout  # what this connection's pilot hears
    frequency: Frequency  # where the session's controllers transmit (this playout is tuned to it)
    atis: AtisBroadcast  # the ATIS loop while the pilot is tuned to an ATIS frequency
    resampler: StreamResampler | None = None  # the client's input rate to the recognizer's
    vad: VoiceActivityDetector | None = None  # vox mode: the voice detector keys the mic
    events: asyncio.Queue[Decision] | None = None
    state_key: tuple[str, str] = ("", "")
    ptt_keyed: bool = False
    com1: str | None = None  # the frequency the pilot last tuned (tune, or telemetry's com1)
    last_audio_at: float = 0.0
    stats: dict[str, int] = field(default_factory=lambda: {"frames": 0, "ignored_frames": 0})
    # stage clocks (gateway/metrics.py), by controller message id; emptied as messages go on air
    decided_at: dict[str, float] = field(default_factory=dict)
    speech_end_at: dict[str, float] = field(default_factory=dict)
    # when the pilot stopped talking, by transmission id, until its decision is delivered
    spoken_until: dict[str, float] = field(default_factory=dict)
