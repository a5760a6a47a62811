"""When a controller message may start playing so that its audio never stalls (issue 17).

A message is synthesized piece by piece (`split_for_speech`) and played while the rest is still
being synthesized. On a loaded CPU pool the synthesis of a later piece can be slower than the
audio before it takes to play: the listener hears a gap mid-message, which is worse than the
same delay before the message starts. So the playout holds a message's start until the audio
synthesized so far covers the time the rest will take to synthesize at the worst speed
measured recently, plus a margin, or until the whole message is ready.

The rule (`required_ready_s`): the pieces not synthesized yet, with `c_1..c_n` characters, are
synthesized one after another, piece `j` taking at most ``synth_s_per_char * c_j`` seconds
(wall time: queueing in the CPU pool included) and giving at least ``audio_s_per_char * c_j``
seconds of audio. Piece `j` is needed when the ready audio `R` and the pieces before it have
played, so the message may start once, for every `j`,

    R + audio_s_per_char * (c_1 + ... + c_(j-1))  >=  synth_s_per_char * (c_1 + ... + c_j) + margin.

The speeds come from a `SpeedWindow` of recent syntheses (every playout in the process shares one:
they share the CPU), so the hold adapts: on an idle machine piper runs 10-20x faster than real
time and the first piece alone covers the rest (no hold); under load the hold grows with the
measured slowness, and it shrinks again once the slow syntheses leave the window.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MARGIN_S = 0.2  # each piece ready this long before needed: event loop, radio effect, network
WINDOW_S = 30.0  # how long a measured synthesis speed counts
MAX_SAMPLES = 512  # bound on the window's memory under heavy load
MIN_MEASURED_S = 0.005  # a piece returned faster came from the cache: no synthesis speed to learn


@dataclass(frozen=True, slots=True)
class Speed:
    """How fast pieces are synthesized, per character of text: `synth_s_per_char` wall seconds
    to get a piece (slowest recently), `audio_s_per_char` seconds of audio it gives (least)."""

    synth_s_per_char: float
    audio_s_per_char: float

    @property
    def real_time_factor(self) -> float:
        """Synthesis seconds per second of audio (below 1: faster than real time)."""
        return self.synth_s_per_char / self.audio_s_per_char if self.audio_s_per_char > 0 else float("inf")


# before anything is measured: piper's joe voice gives ~0.065 s of audio per character; a
# synthesis at a third of real time holds no usual message (the first piece covers the rest)
PRIOR = Speed(synth_s_per_char=0.02, audio_s_per_char=0.06)


def required_ready_s(pending_chars: Sequence[int], speed: Speed, margin_s: float = MARGIN_S) -> float:
    """Seconds of audio that must be ready (synthesized, not yet played) before the message may
    start, for the pieces of `pending_chars` (characters of each piece not synthesized yet, in
    order) to be ready `margin_s` before they are needed at `speed`; 0 when none is pending."""
    need = 0.0
    synthesized_by = 0.0  # when piece j is ready, counted from the start
    played_before = 0.0  # audio of the pending pieces before piece j
    for chars in pending_chars:
        synthesized_by += speed.synth_s_per_char * chars
        need = max(need, synthesized_by + margin_s - played_before)
        played_before += speed.audio_s_per_char * chars
    return need


def may_start(ready_s: float, pending_chars: Sequence[int], speed: Speed, margin_s: float = MARGIN_S) -> bool:
    """Whether a message with `ready_s` seconds of audio synthesized and `pending_chars` still to
    synthesize may start playing without running dry at `speed` (always, once nothing is pending)."""
    return not pending_chars or ready_s >= required_ready_s(pending_chars, speed, margin_s)


class SpeedWindow:
    """The synthesis speeds measured in the last `window_s` seconds, thread-safe; `worst()` is the
    speed the guard plans with (`prior` until something is measured)."""

    def __init__(
        self,
        window_s: float = WINDOW_S,
        prior: Speed = PRIOR,
        clock: Callable[[], float] = time.monotonic,
        max_samples: int = MAX_SAMPLES,
    ) -> None:
        self.window_s = window_s
        self.prior = prior
        self.clock = clock
        self._synth: deque[tuple[float, float]] = deque(maxlen=max_samples)  # (when, s per char)
        self._audio: deque[tuple[float, float]] = deque(maxlen=max_samples)
        self._lock = threading.Lock()

    def observe(self, chars: int, audio_s: float, wall_s: float) -> None:
        """One piece of `chars` characters gave `audio_s` of audio after `wall_s` seconds of
        waiting (a cache hit teaches the audio length, not the synthesis speed)."""
        if chars <= 0 or audio_s <= 0:
            return
        now = self.clock()
        with self._lock:
            self._audio.append((now, audio_s / chars))
            if wall_s >= MIN_MEASURED_S:
                self._synth.append((now, wall_s / chars))

    def worst(self) -> Speed:
        """The slowest synthesis and the least audio per character within the window; what has not
        been measured there comes from the prior."""
        since = self.clock() - self.window_s
        with self._lock:
            for samples in (self._synth, self._audio):
                while samples and samples[0][0] < since:
                    samples.popleft()
            synth = max((v for _t, v in self._synth), default=self.prior.synth_s_per_char)
            audio = min((v for _t, v in self._audio), default=self.prior.audio_s_per_char)
        return Speed(synth_s_per_char=synth, audio_s_per_char=audio)


SPEED = SpeedWindow()  # the process's: every playout synthesizes on the same CPU pool
