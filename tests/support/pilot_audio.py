"""Pilot recordings for voice tests: the package's synthetic pilot (`tooling.voicekit`), which the
voice benchmark uses too (piper voice, radio effect, band noise; cached per phrase)."""

from tooling.voicekit import frames, pilot_pcm

__all__ = ["frames", "pilot_pcm"]
