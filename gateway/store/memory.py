"""In-process session store: the default for one gateway process and for tests.

Nothing survives a restart. A lock guards the dicts so the event loop, the background clock and
a CLI thread can share one store; records are deep-copied in and out (see `store.base`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from gateway.store.base import AtcEntry, PilotEntry, StoredSession

# A transcript longer than this drops its oldest entries, so one chatty client cannot grow
# memory without bound within the session TTL.
MAX_TRANSCRIPT_ENTRIES = 10_000


class MemorySessionRepository:
    def __init__(self, max_transcript: int = MAX_TRANSCRIPT_ENTRIES) -> None:
        self._sessions: dict[str, StoredSession] = {}
        self._transcripts: dict[str, list[PilotEntry | AtcEntry]] = {}
        self._max_transcript = max_transcript
        self._lock = threading.Lock()

    def get(self, session_id: str) -> StoredSession | None:
        with self._lock:
            record = self._sessions.get(session_id)
            return record.model_copy(deep=True) if record is not None else None

    def put(self, record: StoredSession) -> None:
        copy = record.model_copy(deep=True)
        with self._lock:
            self._sessions[copy.session.session_id] = copy

    def delete(self, session_id: str) -> bool:
        with self._lock:
            self._transcripts.pop(session_id, None)
            return self._sessions.pop(session_id, None) is not None

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def append_transcript(self, session_id: str, entries: Sequence[PilotEntry | AtcEntry]) -> None:
        if not entries:
            return
        with self._lock:
            log = self._transcripts.setdefault(session_id, [])
            log.extend(entry.model_copy() for entry in entries)
            if len(log) > self._max_transcript:
                del log[: len(log) - self._max_transcript]

    def transcript(self, session_id: str) -> list[PilotEntry | AtcEntry]:
        with self._lock:
            return [entry.model_copy() for entry in self._transcripts.get(session_id, [])]

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
