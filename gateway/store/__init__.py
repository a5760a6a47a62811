"""Session storage behind one small protocol (`SessionRepository`): SQLite for the gateway by
default, memory for in-process tools and tests; `open_repository` picks one from the settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway.store.base import (
    AtcEntry,
    PilotEntry,
    SessionRepository,
    StoredSession,
    TranscriptEntry,
)
from gateway.store.memory import MemorySessionRepository
from gateway.store.sqlite import SqliteSessionRepository, StoreError

if TYPE_CHECKING:
    from gateway.settings import Settings


def open_repository(settings: Settings) -> MemorySessionRepository | SqliteSessionRepository:
    """The store `settings.store` names (the SQLite file is created on first use)."""
    if settings.store == "memory":
        return MemorySessionRepository()
    return SqliteSessionRepository(settings.sqlite_path, synchronous=settings.sqlite_synchronous)


__all__ = [
    "AtcEntry",
    "MemorySessionRepository",
    "PilotEntry",
    "SessionRepository",
    "SqliteSessionRepository",
    "StoreError",
    "StoredSession",
    "TranscriptEntry",
    "open_repository",
]
