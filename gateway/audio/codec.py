"""Decode compressed audio (mp3, ogg/opus, webm, wav, ...) to PCM16 mono with PyAV (FFmpeg).

Online TTS voices arrive as mp3 and browsers upload webm/ogg; FFmpeg decodes and resamples all
of them in one pass, so every such input enters the pipeline as PCM16 mono at a chosen rate.
Decoding is CPU work: call it from a worker thread, not on the event loop.
"""

from __future__ import annotations

import io

import av

from gateway.audio.pcm import PcmError, int16_to_pcm


class DecodeError(PcmError):
    """Bytes FFmpeg cannot decode as audio (corrupt, empty or not audio at all)."""


def decode_audio(data: bytes, sample_rate: int, *, container_format: str | None = None) -> bytes:
    """Decode the first audio stream of `data` to PCM16 mono at `sample_rate`.

    `container_format` ("mp3", "ogg", "webm", "wav") skips FFmpeg's format probing, which is
    unreliable for short clips.
    """
    if not data:
        raise DecodeError("no audio data to decode")
    out = bytearray()
    try:
        with av.open(io.BytesIO(data), mode="r", format=container_format) as container:
            if not container.streams.audio:
                raise DecodeError("the data holds no audio stream")
            stream = container.streams.audio[0]
            resampler = av.AudioResampler(format="s16", layout="mono", rate=sample_rate)
            for frame in container.decode(stream):
                for converted in resampler.resample(frame):
                    out += int16_to_pcm(converted.to_ndarray().reshape(-1))
            for converted in resampler.resample(None):  # drain the resampler's filter
                out += int16_to_pcm(converted.to_ndarray().reshape(-1))
    except av.FFmpegError as exc:
        raise DecodeError(f"cannot decode audio: {exc}") from exc
    if not out:
        raise DecodeError("the audio stream decoded to no samples")
    return bytes(out)
