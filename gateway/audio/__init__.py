"""Audio adapters: PCM/WAV helpers, resampling, voice activity detection and the radio effect.

Every function here works on raw PCM16 little-endian mono bytes, the one format that crosses the
gateway's stages; conversions to numpy happen inside a stage, never between stages.
"""
