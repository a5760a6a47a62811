"""SQLite session store: the gateway's embedded default, so a restart (or ``kill -9``) loses nothing.

One file holds every session (the engine's `Session` as JSON beside the gateway's resume token,
activity time, delivered seq, version and next wake-up: indexed columns for the session clock;
and the API key that created it, indexed for the sessions-per-key limit),
the transcripts (append-only rows, ordered by rowid) and the scenario clock's anchor. The database runs in WAL mode: readers never block the writer and a
commit is one sequential append to the log.

Durability: ``synchronous=FULL`` (the default) fsyncs the log on every commit, so a decision
whose reply has left is on disk even through a power cut. Measured through `RadioService` on the
development VM (an fsync there takes 0.2 ms), FULL and NORMAL were within noise of each other: a
`save` (serialise + commit) p50 0.45-0.5 ms, p99 1.3-2 ms, against 0.35 / 0.9 ms for the memory
store's copy; 650-720 transmissions/s against 670-900 in memory. ``NORMAL`` (setting
``sqlite_synchronous``) is still safe against a crash of the *process* — a ``kill -9`` the instant
after `save` returns finds the decision on restart, the WAL being in the operating system's page
cache — but a power cut or kernel crash may lose the last commits (never corrupt the file): the
choice for a disk whose flushes are slow (spinning disks, some network volumes).

Concurrency: one connection, guarded by a lock (the service already serialises its
load-decide-store sequence; the lock keeps direct callers safe too). Writes run in
``BEGIN IMMEDIATE`` transactions, so `save` (version check included) is atomic. Timer leases are
kept in the process (`Leases`): only one process opens the file. One gateway process per file: two would
both fire the stored timers, so opening takes an exclusive advisory lock on ``<file>.lock``
(released by the kernel when the process dies, so a restart after ``kill -9`` opens at once).
Several nodes share sessions through the Redis store instead.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Literal, Self

from pydantic import TypeAdapter

from engine.models import Session
from gateway.clock import continue_anchor
from gateway.store.base import (
    AtcEntry,
    PilotEntry,
    StoredSession,
    StoreError,
    TranscriptEntry,
    VersionConflict,
)
from gateway.store.memory import MAX_TRANSCRIPT_ENTRIES, Leases

try:  # POSIX; elsewhere the one-process-per-file rule is only documented
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

# One script per schema version, applied in order (a file at version n runs scripts n+1...).
# Statements are split on ";", so comments here hold none.
_MIGRATIONS = [
    """
CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    session       TEXT NOT NULL,               -- engine.models.Session as JSON
    resume_token  TEXT NOT NULL,
    touched_at    REAL NOT NULL,               -- scenario clock: last client activity (expiry)
    delivered_seq INTEGER NOT NULL DEFAULT 0,  -- last controller message the pilot received
    updated       REAL NOT NULL                -- wall clock of the last write (operations)
);
CREATE TABLE transcript (
    n          INTEGER PRIMARY KEY,            -- rowid: append order
    session_id TEXT NOT NULL,
    entry      TEXT NOT NULL                   -- PilotEntry or AtcEntry as JSON
);
CREATE INDEX transcript_session ON transcript (session_id, n);
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
""",
    # 2: optimistic concurrency and the session clock's indexes (gateway/store/base.py)
    """
ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN wake_at REAL;  -- scenario clock: next visit of the clock, NULL: none
UPDATE sessions SET wake_at = 0;               -- stored before the index: visited once, re-indexed then
CREATE INDEX sessions_wake ON sessions (wake_at);
CREATE INDEX sessions_touched ON sessions (touched_at);
""",
    # 3: the API key that created each session, for the sessions-per-key limit (gateway/auth.py)
    """
ALTER TABLE sessions ADD COLUMN owner TEXT;
CREATE INDEX sessions_owner ON sessions (owner);
""",
]
SCHEMA_VERSION = len(_MIGRATIONS)

_UPSERT = """
INSERT INTO sessions (id, session, resume_token, touched_at, delivered_seq, updated, version, wake_at, owner)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    session = excluded.session,
    resume_token = excluded.resume_token,
    touched_at = excluded.touched_at,
    delivered_seq = max(sessions.delivered_seq, excluded.delivered_seq),
    updated = excluded.updated,
    version = excluded.version,
    wake_at = excluded.wake_at,
    owner = excluded.owner
"""

_ENTRY: TypeAdapter[PilotEntry | AtcEntry] = TypeAdapter(TranscriptEntry)


class SqliteSessionRepository:
    """`SessionRepository` on one SQLite file (created, with its directory, on first open)."""

    kind = "sqlite"

    def __init__(
        self,
        path: str | Path,
        *,
        synchronous: Literal["NORMAL", "FULL"] = "FULL",
        max_transcript: int = MAX_TRANSCRIPT_ENTRIES,
    ) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._max_transcript = max_transcript
        self._lock = threading.Lock()
        self._leases = Leases()
        self._lockfile = _exclusive(self.path)
        try:
            # autocommit mode (isolation_level=None): transactions are the explicit BEGINs below
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={'NORMAL' if synchronous == 'NORMAL' else 'FULL'}")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._migrate()
        except BaseException:
            self._release()
            raise

    # ------------------------------------------------------------------ protocol

    def get(self, session_id: str) -> StoredSession | None:
        found = self.read(session_id)
        return found[0] if found is not None else None

    def read(self, session_id: str) -> tuple[StoredSession, int] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT session, resume_token, touched_at, delivered_seq, version, owner FROM sessions WHERE id = ?",
                (session_id,),
            ).fetchone()
        if row is None:
            return None
        record = StoredSession(
            session=Session.model_validate_json(row[0]),
            resume_token=row[1],
            touched_at=row[2],
            delivered_seq=row[3],
            owner=row[5],
        )
        return record, row[4]

    def put(self, record: StoredSession) -> None:
        self.save(record, [])

    def save(
        self,
        record: StoredSession,
        entries: Sequence[PilotEntry | AtcEntry],
        *,
        wake_at: float | None = None,
        expect: int | None = None,
    ) -> int:
        session_id = record.session.session_id
        session_json = record.session.model_dump_json()  # serialise outside the lock
        lines = [entry.model_dump_json() for entry in entries]
        with self._lock, self._transaction():
            row = self._db.execute("SELECT version FROM sessions WHERE id = ?", (session_id,)).fetchone()
            version = row[0] if row is not None else 0
            if expect is not None and expect != version:
                raise VersionConflict(session_id, expect)
            self._db.execute(
                _UPSERT,
                (session_id, session_json, record.resume_token, record.touched_at, record.delivered_seq,
                 time.time(), version + 1, wake_at, record.owner),
            )
            self._append(session_id, lines)
        return version + 1

    def due(self, now: float, holder: str, lease_s: float, limit: int = 100) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM sessions WHERE wake_at <= ? ORDER BY wake_at", (now,)
            ).fetchall()
            return self._leases.claim_due((row[0] for row in rows), holder, lease_s, limit)

    def release(self, session_id: str, holder: str) -> None:
        with self._lock:
            self._leases.release(session_id, holder)

    def idle(self, before: float) -> list[str]:
        with self._lock:
            return [row[0] for row in self._db.execute("SELECT id FROM sessions WHERE touched_at < ?", (before,))]

    def set_delivered(self, session_id: str, seq: int) -> None:
        with self._lock, self._transaction():
            self._db.execute(
                "UPDATE sessions SET delivered_seq = ? WHERE id = ? AND delivered_seq < ?", (seq, session_id, seq)
            )

    def delete(self, session_id: str) -> bool:
        with self._lock, self._transaction():
            self._leases.drop(session_id)
            self._db.execute("DELETE FROM transcript WHERE session_id = ?", (session_id,))
            return self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0

    def ids(self) -> list[str]:
        with self._lock:
            return [row[0] for row in self._db.execute("SELECT id FROM sessions ORDER BY rowid")]

    def owned(self, owner: str) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM sessions WHERE owner = ?", (owner,)).fetchone()[0])

    def append_transcript(self, session_id: str, entries: Sequence[PilotEntry | AtcEntry]) -> None:
        lines = [entry.model_dump_json() for entry in entries]
        if not lines:
            return
        with self._lock, self._transaction():
            self._append(session_id, lines)

    def transcript(self, session_id: str) -> list[PilotEntry | AtcEntry]:
        with self._lock:
            rows = self._db.execute(
                "SELECT entry FROM transcript WHERE session_id = ? ORDER BY n", (session_id,)
            ).fetchall()
        return [_ENTRY.validate_json(row[0]) for row in rows]

    def clock_anchor(self, scale: float, now: float) -> tuple[float, float]:
        with self._lock, self._transaction():
            row = self._db.execute("SELECT value FROM meta WHERE key = 'clock_anchor'").fetchone()
            stored = tuple(json.loads(row[0])) if row is not None else None
            anchor = continue_anchor(stored, scale, now)  # type: ignore[arg-type]
            if anchor != stored:
                self._db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('clock_anchor', ?)", (json.dumps(anchor),)
                )
        return anchor[0], anchor[1]

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the database (checkpointing the WAL into the file) and release the process lock."""
        with self._lock:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM sessions").fetchone()[0])

    # ------------------------------------------------------------------ internals

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _append(self, session_id: str, lines: list[str]) -> None:
        if not lines:
            return
        self._db.executemany(
            "INSERT INTO transcript (session_id, entry) VALUES (?, ?)", [(session_id, line) for line in lines]
        )
        # keep the newest `max_transcript` lines (as the memory store does)
        self._db.execute(
            "DELETE FROM transcript WHERE session_id = ? AND n <= "
            "(SELECT n FROM transcript WHERE session_id = ? ORDER BY n DESC LIMIT 1 OFFSET ?)",
            (session_id, session_id, self._max_transcript),
        )

    def _migrate(self) -> None:
        with self._transaction():
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} has schema version {version}; this livefreq knows up to {SCHEMA_VERSION}"
                )
            for script in _MIGRATIONS[version:]:
                # statement by statement: executescript would COMMIT the open transaction
                for statement in filter(str.strip, script.split(";")):
                    self._db.execute(statement)
            if version < SCHEMA_VERSION:
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _release(self) -> None:
        lockfile, self._lockfile = self._lockfile, None
        if lockfile is not None:
            lockfile.close()  # closing the descriptor drops the flock


def _exclusive(path: Path) -> IO[bytes] | None:
    """Hold an exclusive lock on ``<path>.lock`` for as long as the returned file is open."""
    if fcntl is None:
        return None
    handle = open(path.with_name(path.name + ".lock"), "ab")  # noqa: SIM115 - held until close()
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise StoreError(
            f"another livefreq process is using {path}; one gateway per store file "
            "(set LIVEFREQ_SQLITE_PATH to another file, or LIVEFREQ_STORE=memory)"
        ) from None
    return handle
