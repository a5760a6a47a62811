"""edge-tts (Microsoft's online neural voices) and the failover that keeps ATC talking offline.

edge-tts needs the internet; a training session must never go mute because of it, so
`FailoverTts` speaks with a local engine (piper) when the online one fails, logs one warning per
outage, and retries the online engine after `retry_after_s`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable

from gateway.extras import install_hint
from gateway.audio.codec import DecodeError, decode_audio
from gateway.audio.resample import resample
from gateway.speech.tts.base import PieceTts, TtsEngine, TtsError, TtsUnavailable, run_cpu, split_for_speech

log = logging.getLogger(__name__)

EDGE_RATE = 24000  # the service sends audio-24khz-48kbitrate-mono-mp3
DEFAULT_EDGE_VOICE = "en-US-GuyNeural"


class EdgeTts(PieceTts):
    """One online request per piece; the mp3 answer is decoded with PyAV to PCM16 at 24 kHz.

    `rate`, `pitch` and `volume` use edge-tts' syntax ("+10%", "-5Hz"). Timeouts are short: a
    controller that answers 10 s late is worse than a local voice.
    """

    name = "edge-tts"

    def __init__(
        self,
        voice: str = DEFAULT_EDGE_VOICE,
        *,
        rate: str = "+0%",
        pitch: str = "+0Hz",
        volume: str = "+0%",
        connect_timeout_s: int = 5,
        receive_timeout_s: int = 20,
        proxy: str | None = None,
    ) -> None:
        try:
            import edge_tts
        except ImportError as exc:
            raise TtsUnavailable(install_hint("edge", "the edge-tts engine")) from exc
        edge_tts.Communicate("check", voice, rate=rate, pitch=pitch, volume=volume)  # ValueError for a bad voice or prosody, offline
        self.sample_rate = EDGE_RATE
        self._edge_voice = voice
        self._prosody = {"rate": rate, "pitch": pitch, "volume": volume}
        self._timeouts = (connect_timeout_s, receive_timeout_s)
        self._proxy = proxy
        defaults = {"rate": "+0%", "pitch": "+0Hz", "volume": "+0%"}
        variant = ",".join(f"{key}={value}" for key, value in self._prosody.items() if value != defaults[key])
        self.voice = f"{voice}[{variant}]" if variant else voice

    async def synthesize_piece(self, text: str) -> bytes:
        import aiohttp
        import edge_tts

        communicate = edge_tts.Communicate(
            text,
            self._edge_voice,
            **self._prosody,
            connect_timeout=self._timeouts[0],
            receive_timeout=self._timeouts[1],
            proxy=self._proxy,
        )
        mp3 = bytearray()
        try:
            async for chunk in communicate.stream():
                if chunk["type"] == "audio":
                    mp3 += chunk["data"]
        except (aiohttp.ClientError, edge_tts.exceptions.EdgeTTSException, asyncio.TimeoutError, OSError) as exc:
            raise TtsError(f"edge-tts request failed: {type(exc).__name__}: {exc}") from exc
        try:
            return await run_cpu(decode_audio, bytes(mp3), self.sample_rate, "mp3")
        except DecodeError as exc:
            raise TtsError(f"edge-tts sent undecodable audio: {exc}") from exc


class FailoverTts:
    """Speaks with `primary`; when it fails, with `fallback` (resampled to the primary's rate).

    Failover happens per piece, so a failure mid-message neither repeats nor drops words. After a
    failure the primary is skipped for `retry_after_s` (no 5 s connect timeout per message while
    offline) and one warning is logged per outage; `clock` is injectable for tests.
    """

    def __init__(
        self,
        primary: TtsEngine,
        fallback: TtsEngine,
        *,
        retry_after_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.primary = primary
        self.fallback = fallback
        self.name = primary.name
        self.voice = primary.voice
        self.sample_rate = primary.sample_rate
        self.retry_after_s = retry_after_s
        self._clock = clock
        self._down_since: float | None = None
        self.failovers = 0  # pieces spoken by the fallback, for metrics

    @property
    def primary_down(self) -> bool:
        """True while the primary is being skipped after a failure."""
        return self._down_since is not None and self._clock() - self._down_since < self.retry_after_s

    async def load(self) -> None:
        """Warm up both engines: the fallback must be ready the moment the network fails."""
        await self.primary.load()
        await self.fallback.load()

    async def stream(self, text: str) -> AsyncIterator[bytes]:
        for piece in split_for_speech(text):
            pcm = await self._speak_piece(piece)
            if pcm:
                yield pcm

    async def synthesize(self, text: str) -> bytes:
        return b"".join([chunk async for chunk in self.stream(text)])

    async def _speak_piece(self, piece: str) -> bytes:
        if not self.primary_down:
            try:
                pcm = await self.primary.synthesize(piece)
            except TtsError as exc:
                self._down_since = self._clock()
                log.warning(
                    "TTS %s failed (%s); speaking with %s, retrying %s in %.0f s",
                    self.primary.name,
                    exc,
                    self.fallback.name,
                    self.primary.name,
                    self.retry_after_s,
                )
            else:
                if self._down_since is not None:
                    log.info("TTS %s is back", self.primary.name)
                    self._down_since = None
                return pcm
        self.failovers += 1
        pcm = await self.fallback.synthesize(piece)
        if self.fallback.sample_rate == self.sample_rate:
            return pcm
        return await run_cpu(resample, pcm, self.fallback.sample_rate, self.sample_rate)

    def __repr__(self) -> str:
        return f"FailoverTts(primary={self.primary!r}, fallback={self.fallback!r})"
