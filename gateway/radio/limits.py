"""Per-connection rate limits of `WS /v1/radio`: token buckets and the policy around them.

A client may send text messages at ``ws_messages_per_s`` (bursts of ``ws_messages_burst``) and
audio at ``ws_audio_bytes_per_s`` (bursts of ``ws_audio_burst_bytes``). Defaults are far above
what a pilot, a browser or a simulator sends (a 48 kHz microphone is 96 kB/s, telemetry a few
messages a second), so they only meet floods.

Policy, for a frame over the limit:

- it is dropped, unread (audio: that piece of the transmission is lost);
- the client is told with a `rate_limited` error (not fatal), at most once a second, so a flood
  does not get an answer per frame;
- the socket stays open. A client that keeps flooding uses up ``ws_abuse_drops`` dropped frames
  (forgiven at one per second): then a fatal `rate_limited` error and close code 1008.

The buckets are plain arithmetic on a monotonic clock (injectable, so tests need no sleeps).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import Enum

from gateway.settings import Settings

NOTIFY_EVERY_S = 1.0
FORGIVE_PER_S = 1.0


class TokenBucket:
    """`capacity` tokens, refilled at `rate` per second; `take` spends them if there are enough."""

    def __init__(self, rate: float, capacity: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.capacity = capacity
        self.clock = clock
        self.tokens = capacity
        self._at = clock()

    def take(self, cost: float = 1.0) -> bool:
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self._at) * self.rate)
        self._at = now
        if cost > self.tokens:
            return False
        self.tokens -= cost
        return True


class Verdict(Enum):
    ACCEPT = "accept"
    DROP = "drop"  # drop silently (the client was told less than a second ago)
    DROP_NOTIFY = "drop_notify"  # drop and send a `rate_limited` error
    ABUSE = "abuse"  # fatal: close the socket


class ConnectionLimits:
    """The buckets of one connection."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.messages = TokenBucket(settings.ws_messages_per_s, settings.ws_messages_burst, clock)
        self.audio = TokenBucket(settings.ws_audio_bytes_per_s, settings.ws_audio_burst_bytes, clock)
        self.tolerance = TokenBucket(FORGIVE_PER_S, settings.ws_abuse_drops, clock)
        self.dropped = 0
        self._told_at: float | None = None

    def admit(self, audio_bytes: int | None) -> Verdict:
        """A text message (`audio_bytes` None) or a binary frame of that many bytes."""
        ok = self.messages.take() if audio_bytes is None else self.audio.take(audio_bytes)
        if ok:
            return Verdict.ACCEPT
        self.dropped += 1
        if not self.tolerance.take():
            return Verdict.ABUSE
        now = self.clock()
        if self._told_at is None or now - self._told_at >= NOTIFY_EVERY_S:
            self._told_at = now
            return Verdict.DROP_NOTIFY
        return Verdict.DROP
