"""Speech engines behind small interfaces: `stt/` (speech to text) and `tts/` (text to speech).

Each role is a Protocol with swappable engines chosen by settings, so the audio pipeline never
imports a concrete engine and tests can run the real engines or any other implementation.
"""
