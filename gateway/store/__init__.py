"""Session storage behind one small protocol (`SessionRepository`); memory is the default."""

from gateway.store.base import AtcEntry, PilotEntry, SessionRepository, StoredSession, TranscriptEntry
from gateway.store.memory import MemorySessionRepository

__all__ = [
    "AtcEntry",
    "MemorySessionRepository",
    "PilotEntry",
    "SessionRepository",
    "StoredSession",
    "TranscriptEntry",
]
