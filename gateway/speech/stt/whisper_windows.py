"""The encoder windows and token budgets of a whisper decode, shared by the single and batched paths.

Windows are the audio plus a pad of silence rounded up to a step, so finals fall into few
shapes that can share one batched call (gateway/speech/stt/batching.py); the token budget caps a
runaway repetition loop.
"""

from __future__ import annotations

from gateway.speech.stt.base import STT_SAMPLE_RATE

TOKENS_PER_SECOND = 8  # generous for speech (~3 words/s); caps a runaway repetition loop
MIN_NEW_TOKENS = 12
WINDOW_PAD_S = 1.0  # silence after the audio in the encoder window: whisper expects speech to end
WINDOW_STEP_S = 0.5  # window lengths are rounded up to this: few distinct shapes
FULL_WINDOW_S = 30.0  # whisper's own window; longer audio is chunked by faster-whisper


def max_new_tokens(samples: int) -> int:
    """The most tokens a decode of `samples` (16 kHz) may write: a runaway loop stops there."""
    return min(200, MIN_NEW_TOKENS + int(TOKENS_PER_SECOND * samples / STT_SAMPLE_RATE))


def fits_window(samples: int) -> bool:
    """Whether `samples` (16 kHz) decode in one short window; longer audio is chunked."""
    return samples / STT_SAMPLE_RATE + WINDOW_PAD_S <= FULL_WINDOW_S


def window_samples(samples: int) -> int:
    """The encoder window for `samples`: the audio plus `WINDOW_PAD_S`, rounded up to `WINDOW_STEP_S`."""
    step = int(WINDOW_STEP_S * STT_SAMPLE_RATE)
    return -(-(samples + int(WINDOW_PAD_S * STT_SAMPLE_RATE)) // step) * step
