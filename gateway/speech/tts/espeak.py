"""espeak-ng TTS through its command-line program: robotic, but tiny, instant and always offline.

Runs ``espeak-ng --stdout`` as an asyncio subprocess (the text goes through stdin, so no text can
be mistaken for an option) and reads the WAV it prints. The binary comes from the Debian package
`espeak-ng`; without it the engine refuses to start with a message naming that package.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil

from gateway.audio.pcm import PcmError, read_wav
from gateway.audio.resample import resample
from gateway.speech.tts.base import PieceTts, TtsError, TtsUnavailable, run_cpu

ESPEAK_RATE = 22050  # espeak-ng's output rate for its own (non-mbrola) voices


class EspeakTts(PieceTts):
    """espeak-ng voice `voice` ("en-us", "en-gb", "en-us+m3", ...) at `speed_wpm` words per minute."""

    name = "espeak"

    def __init__(self, voice: str = "en-us", *, speed_wpm: int = 165, pitch: int = 50, binary: str | None = None) -> None:
        executable = shutil.which(binary or "espeak-ng")
        if executable is None:
            raise TtsUnavailable("espeak-ng is not installed: apt-get install espeak-ng (Debian/Ubuntu package espeak-ng)")
        if not 80 <= speed_wpm <= 450:
            raise ValueError(f"espeak speed must be 80..450 words per minute, got {speed_wpm}")
        if not 0 <= pitch <= 99:
            raise ValueError(f"espeak pitch must be 0..99, got {pitch}")
        self.executable = executable
        self.speed_wpm = speed_wpm
        self.pitch = pitch
        self.sample_rate = ESPEAK_RATE
        variant = ",".join(
            f"{key}={value}" for key, value, default in (("speed", speed_wpm, 165), ("pitch", pitch, 50)) if value != default
        )
        self._espeak_voice = voice
        self.voice = f"{voice}[{variant}]" if variant else voice

    async def synthesize_piece(self, text: str) -> bytes:
        args = ["--stdout", "-v", self._espeak_voice, "-s", str(self.speed_wpm), "-p", str(self.pitch)]
        try:
            process = await asyncio.create_subprocess_exec(
                self.executable,
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            raise TtsUnavailable(f"cannot run {self.executable}: {exc} (apt-get install espeak-ng)") from exc
        try:
            wav, errors = await process.communicate(text.encode("utf-8"))
        except BaseException:  # cancelled (the pilot keyed the mic over it): no espeak-ng left behind
            if process.returncode is None:
                process.kill()
                with contextlib.suppress(Exception):
                    await process.communicate()
            raise
        if process.returncode != 0:
            detail = errors.decode("utf-8", "replace").strip()
            raise TtsError(f"espeak-ng exited with status {process.returncode}: {detail}")
        return await run_cpu(self._to_pcm, wav)

    def _to_pcm(self, wav: bytes) -> bytes:
        try:
            pcm, rate = read_wav(wav)
        except PcmError as exc:
            raise TtsError(f"espeak-ng printed no usable WAV: {exc}") from exc
        return resample(pcm, rate, self.sample_rate)
