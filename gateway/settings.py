"""Gateway settings from the environment (prefix ``LIVEFREQ_``), one place for every knob.

Only adapters read settings; the engine gets plain values. Paths default to the checkout's own
``flows/`` and ``static/`` beside the packages, so ``livefreq serve`` works from a clone.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[1]


def default_sqlite_path() -> Path:
    """``$XDG_DATA_HOME/livefreq/livefreq.sqlite3`` (``~/.local/share/...``): user data, outside
    the checkout, the same file whatever directory the gateway is started from."""
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "livefreq" / "livefreq.sqlite3"


def default_node_id() -> str:
    """``hostname:pid``: unique among the gateway processes of one deployment."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Settings(BaseSettings):
    """e.g. ``LIVEFREQ_PORT=9000 LIVEFREQ_FLOWS_DIR=/srv/flows livefreq serve``."""

    model_config = SettingsConfigDict(env_prefix="LIVEFREQ_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    flows_dir: Path = REPO_ROOT / "flows"
    static_dir: Path = REPO_ROOT / "static"
    default_flow: str | None = None  # None: the registry's main flow
    max_body_bytes: int = Field(default=65536, gt=0)
    log_level: str = "info"
    session_ttl_s: float = Field(default=7200.0, gt=0)  # idle time after which a session is dropped
    # where the gateway app keeps sessions and transcripts (gateway/store): "sqlite" survives
    # restarts (one gateway process per file); "redis" is shared by several gateway nodes;
    # "memory" forgets everything on exit. Only apps built by `create_app` open it; a
    # `RadioService` built on its own (chat, the in-process benchmark) keeps its sessions in
    # memory unless given a repository.
    store: Literal["memory", "sqlite", "redis"] = "sqlite"
    sqlite_path: Path = Field(default_factory=default_sqlite_path)  # directory created on open
    # FULL: one fsync per commit, a stored decision survives a power cut; NORMAL: survives a crash
    # of the process only, for disks with slow flushes (measured costs in gateway/store/sqlite.py)
    sqlite_synchronous: Literal["NORMAL", "FULL"] = "FULL"
    # the Redis store (gateway/store/redis.py): every node of one deployment uses the same URL,
    # prefix and time_scale; the prefix lets several deployments share one server
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_prefix: str = "livefreq:"
    redis_timeout_s: float = Field(default=0.5, gt=0)  # per command: a stuck Redis fails fast (503)
    # this process among the nodes sharing a store: holder of its timer leases, sender of its
    # relayed decisions, shown by /health; unique per process (default hostname:pid)
    node_id: str = Field(default_factory=default_node_id, pattern=r"^\S+$")
    tick_interval_s: float = Field(default=0.25, gt=0)  # period of the background session clock
    time_scale: float = Field(default=1.0, gt=0, le=1000)  # >1 compresses controller waits (gateway/clock.py)

    # voice (gateway/speech): engines are loaded in the background at start-up; /health says when ready
    stt_engine: str = "whisper"  # whisper | sphinx | vosk
    tts_engine: str = "piper"  # piper | espeak | edge-tts (falls back to piper offline)
    tts_voice: str | None = None  # engine-specific voice name; None: the engine's default
    vosk_model_path: Path | None = Field(
        default=None, validation_alias=AliasChoices("vosk_model_path", "VOSK_MODEL_PATH", "LIVEFREQ_VOSK_MODEL_PATH")
    )
    radio_level: int = Field(default=4, ge=1, le=5)  # readability of the radio effect; 5 = clean
    radio_effect: bool = True
    speech_preload: bool = True  # load the speech models when the app starts
    tts_cache_mb: int = Field(default=64, ge=0)
    max_frame_bytes: int = Field(default=65536, gt=0)  # WebSocket binary frame limit (protocol v1)
    max_transmission_s: float = Field(default=30.0, gt=0)  # longer ptt/vox audio is cut there
    audio_pacing: bool = True  # send controller audio at real time (blocking needs it); off: as fast as made
    # speech HTTP endpoints (gateway/api/speech.py): base64 audio in JSON bodies outgrows max_body_bytes
    max_audio_body_bytes: int = Field(default=8 * 1024 * 1024, gt=0)
    # origins allowed by CORS; "*" lets browser pages on other origins (the OpenSquawk web app
    # probing 127.0.0.1:8765-8770) call the local gateway
    cors_origins: list[str] = Field(default_factory=lambda: ["*"])

    @field_validator("sqlite_path")
    @classmethod
    def _expand(cls, path: Path) -> Path:
        return path.expanduser()
