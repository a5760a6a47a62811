"""Session storage behind one small protocol (`SessionRepository`): SQLite for the gateway by
default, Redis for several gateway nodes sharing sessions, memory for in-process tools and tests;
`open_repository` picks one from the settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway.extras import install_hint, installed
from gateway.store.base import (
    AtcEntry,
    PilotEntry,
    SessionRepository,
    StoredSession,
    StoreError,
    StoreUnavailable,
    TranscriptEntry,
    VersionConflict,
)
from gateway.store.memory import MemorySessionRepository
from gateway.store.sqlite import SqliteSessionRepository

if TYPE_CHECKING:
    from gateway.settings import Settings


def open_repository(settings: Settings) -> SessionRepository:
    """The store `settings.store` names (the SQLite file is created on first use; Redis must answer)."""
    if settings.store == "memory":
        return MemorySessionRepository()
    if settings.store == "redis":
        if not installed("redis"):  # an optional extra: refuse the configuration, say what to install
            raise StoreError(install_hint("redis", "the redis session store (LIVEFREQ_STORE=redis)"))
        from gateway.store.redis import RedisSessionRepository  # redis-py only when it is used

        return RedisSessionRepository(
            settings.redis_url, prefix=settings.redis_prefix, timeout_s=settings.redis_timeout_s
        )
    return SqliteSessionRepository(settings.sqlite_path, synchronous=settings.sqlite_synchronous)


__all__ = [
    "AtcEntry",
    "MemorySessionRepository",
    "PilotEntry",
    "SessionRepository",
    "SqliteSessionRepository",
    "StoreError",
    "StoreUnavailable",
    "StoredSession",
    "TranscriptEntry",
    "VersionConflict",
    "open_repository",
]
