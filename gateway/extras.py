"""Optional features and the pip extra that installs each (pyproject ``[project.optional-dependencies]``).

The embedded defaults (whisper, sphinx, piper, SQLite, the WebSocket radio) are in the base
install; WebRTC, Redis, Vosk and edge-tts are extras. Code that needs one imports it lazily and,
when it is missing, says which extra to install instead of failing with a bare ImportError.
"""

from __future__ import annotations

import importlib.util


def install_hint(extra: str, feature: str) -> str:
    """e.g. "the vosk engine needs `pip install livefreq[vosk]`"."""
    return f"{feature} needs `pip install livefreq[{extra}]`"


def installed(module: str) -> bool:
    """Whether `module` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken half-installed one
        return False
