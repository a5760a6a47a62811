"""Redis session store: several gateway nodes share sessions, transcripts and timers.

Select it with ``LIVEFREQ_STORE=redis`` and ``LIVEFREQ_REDIS_URL``. Any node can then serve any
session: a session started on one node resumes on another, and a timer armed on one fires on
whichever node's clock finds it due first, exactly once.

Keys (all under the prefix, ``livefreq:`` by default, so several deployments can share a server):

- ``s:<id>`` hash: ``record`` (the whole `StoredSession` as JSON, so fields added to it are stored
  without a change here), ``version`` (optimistic concurrency, see `store.base`), ``delivered``
  (the highest delivered seq, kept apart so `set_delivered` is one atomic max), ``write`` (the id
  of the last `save`, below);
- ``t:<id>`` list: the transcript, one JSON entry per item, trimmed to the newest 10,000;
- ``wake`` sorted set: session id scored by its next wake-up (scenario time), the shared timer
  index every node's clock reads; ``touched`` sorted set: id scored by last client activity, the
  shared expiry index (and the list of sessions);
- ``owners`` hash: session id -> the API key id that created it (`StoredSession.owner`), for the
  sessions-per-key limit (`owned`);
- ``lease:<id>``: the node ticking the session now (``SET NX PX``, see `due`);
- ``clock``: the scenario clock's anchor (gateway/clock.py), so every node reads the same
  scenario time (nodes need the same ``LIVEFREQ_TIME_SCALE`` and NTP-synchronised clocks);
- channel ``decisions``: decisions published by each node for the others (gateway/relay.py).

`save` is one Lua script: version check, session, transcript lines and both indexes change
together or not at all, so a crash of the node or of the connection at any instant leaves either
the whole decision or none of it. Every save carries a fresh write id: when redis-py retries a
save whose reply was lost (the script had run), the script recognises its own write and answers
with the version it made instead of a conflict or a second copy of the transcript lines.

Blocking client: `RadioService` is synchronous (store.base), so this store uses redis-py's sync
client, with short timeouts (``LIVEFREQ_REDIS_TIMEOUT_S``, 0.5 s by default) and one immediate
retry on a dropped connection; a Redis that does not answer raises `StoreUnavailable` (503
``store_unavailable`` over HTTP) instead of hanging the event loop. The asynchronous parts of the
gateway (the pub/sub relay) use ``redis.asyncio``. Measured on loopback on the 2-core
development VM (redis-server 7.0, ``python -m gateway.store.redis_bench URL`` to repeat), for an 11 KB
session (a dozen transmissions in) with two transcript lines, over 2,000 rounds: a `save`
(serialise, script, reply) p50 0.14-0.16 ms, p99 0.27-0.32 ms; a `read` p50 0.10-0.11 ms, p99
0.20-0.25 ms. Through `RadioService` (load, decide, save) a transmission took p50 0.98 ms, p99
1.7-1.9 ms on Redis, against 0.77-0.83 / 1.5 ms on the memory store and 0.95-0.99 / 2.2-4 ms on
SQLite (FULL): about 1,000 transmissions/s per node, the store no bottleneck.

Not for Redis Cluster: a save touches the session's keys and the shared indexes in one script.
Use one primary (with replicas and Sentinel for failover, ``appendonly yes`` with
``appendfsync everysec`` or ``always`` for durability: Redis acknowledges a write before it is
on disk unless told otherwise).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator, Sequence
from typing import Any, Self

import redis
from pydantic import TypeAdapter
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from gateway.clock import continue_anchor
from gateway.store.base import (
    AtcEntry,
    PilotEntry,
    StoredSession,
    StoreUnavailable,
    TranscriptEntry,
    VersionConflict,
)
from gateway.store.memory import MAX_TRANSCRIPT_ENTRIES

DEFAULT_URL = "redis://127.0.0.1:6379/0"
DEFAULT_PREFIX = "livefreq:"

_ENTRY: TypeAdapter[PilotEntry | AtcEntry] = TypeAdapter(TranscriptEntry)

# KEYS: session hash, transcript list, wake zset, touched zset, owners hash
# ARGV: id, record, expect ("" = any), delivered, wake_at ("" = none), touched_at, max lines, write id,
#       owner ("" = none), lines...
_SAVE = """
local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if redis.call('HGET', KEYS[1], 'write') == ARGV[8] then
  return version
end
if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= version then
  return -1
end
local delivered = tonumber(redis.call('HGET', KEYS[1], 'delivered') or '0')
if tonumber(ARGV[4]) > delivered then
  delivered = tonumber(ARGV[4])
end
version = version + 1
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'version', version, 'delivered', delivered, 'write', ARGV[8])
if ARGV[5] == '' then
  redis.call('ZREM', KEYS[3], ARGV[1])
else
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
end
redis.call('ZADD', KEYS[4], ARGV[6], ARGV[1])
if ARGV[9] ~= '' then
  redis.call('HSET', KEYS[5], ARGV[1], ARGV[9])
end
if #ARGV > 9 then
  redis.call('RPUSH', KEYS[2], unpack(ARGV, 10))
  redis.call('LTRIM', KEYS[2], -tonumber(ARGV[7]), -1)
end
return version
"""

# KEYS: session hash; ARGV: seq
_SET_DELIVERED = """
local delivered = redis.call('HGET', KEYS[1], 'delivered')
if delivered and tonumber(ARGV[1]) > tonumber(delivered) then
  redis.call('HSET', KEYS[1], 'delivered', ARGV[1])
end
return 0
"""

# KEYS: lease; ARGV: holder
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class RedisSessionRepository:
    """`SessionRepository` on a Redis server (one primary; see the module docstring)."""

    kind = "redis"

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        prefix: str = DEFAULT_PREFIX,
        timeout_s: float = 0.5,
        max_transcript: int = MAX_TRANSCRIPT_ENTRIES,
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.channel = prefix + "decisions"  # the relay's pub/sub channel (gateway/relay.py)
        self._max_transcript = max_transcript
        self._redis = redis.Redis.from_url(
            url,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=Retry(NoBackoff(), 1),  # one reconnect for a pooled connection the server closed
        )
        self._save = self._redis.register_script(_SAVE)
        self._set_delivered = self._redis.register_script(_SET_DELIVERED)
        self._release = self._redis.register_script(_RELEASE)
        self._wake = prefix + "wake"
        self._touched = prefix + "touched"
        self._owners = prefix + "owners"
        with self._guard():
            self._redis.ping()  # fail at start-up, with the URL in the message, not on the first request

    # ------------------------------------------------------------------ protocol

    def get(self, session_id: str) -> StoredSession | None:
        found = self.read(session_id)
        return found[0] if found is not None else None

    def read(self, session_id: str) -> tuple[StoredSession, int] | None:
        with self._guard():
            raw, version, delivered = self._redis.hmget(self._session(session_id), "record", "version", "delivered")
        if raw is None:
            return None
        record = StoredSession.model_validate_json(raw)
        record.delivered_seq = max(record.delivered_seq, int(delivered or 0))
        return record, int(version or 0)

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
        args: list[Any] = [
            session_id,
            record.model_dump_json(),
            "" if expect is None else expect,
            record.delivered_seq,
            "" if wake_at is None else repr(float(wake_at)),
            repr(float(record.touched_at)),
            self._max_transcript,
            uuid.uuid4().hex,
            record.owner or "",
            *(entry.model_dump_json() for entry in entries),
        ]
        keys = [self._session(session_id), self._transcript(session_id), self._wake, self._touched, self._owners]
        with self._guard():
            version = int(self._save(keys=keys, args=args))
        if version < 0:
            raise VersionConflict(session_id, expect if expect is not None else -1)
        return version

    def due(self, now: float, holder: str, lease_s: float, limit: int = 100) -> list[str]:
        with self._guard():
            candidates = [sid.decode() for sid in self._redis.zrangebyscore(self._wake, "-inf", repr(float(now)), 0, limit)]
            if not candidates:
                return []
            pipe = self._redis.pipeline(transaction=False)
            for session_id in candidates:
                pipe.set(self._lease(session_id), holder, nx=True, px=max(1, round(lease_s * 1000)))
            won = pipe.execute()
        return [session_id for session_id, ok in zip(candidates, won) if ok]

    def release(self, session_id: str, holder: str) -> None:
        with self._guard():
            self._release(keys=[self._lease(session_id)], args=[holder])

    def idle(self, before: float) -> list[str]:
        with self._guard():
            return [sid.decode() for sid in self._redis.zrangebyscore(self._touched, "-inf", f"({float(before)!r}")]

    def set_delivered(self, session_id: str, seq: int) -> None:
        with self._guard():
            self._set_delivered(keys=[self._session(session_id)], args=[int(seq)])

    def clock_anchor(self, scale: float, now: float) -> tuple[float, float]:
        key = self.prefix + "clock"

        def continue_stored(pipe: redis.client.Pipeline) -> tuple[float, float, float]:
            raw = pipe.get(key)
            stored = tuple(json.loads(raw)) if raw is not None else None
            anchor = continue_anchor(stored, scale, now)  # type: ignore[arg-type]
            if anchor != stored:
                pipe.multi()
                pipe.set(key, json.dumps(anchor))
            return anchor

        with self._guard():  # WATCH/MULTI: two nodes starting at once agree on one anchor
            anchor = self._redis.transaction(continue_stored, key, value_from_callable=True)
        return anchor[0], anchor[1]

    def delete(self, session_id: str) -> bool:
        with self._guard():
            pipe = self._redis.pipeline(transaction=True)
            pipe.delete(self._session(session_id))
            pipe.delete(self._transcript(session_id), self._lease(session_id))
            pipe.zrem(self._wake, session_id)
            pipe.zrem(self._touched, session_id)
            pipe.hdel(self._owners, session_id)
            return bool(pipe.execute()[0])

    def ids(self) -> list[str]:
        with self._guard():
            return [sid.decode() for sid in self._redis.zrange(self._touched, 0, -1)]

    def owned(self, owner: str) -> int:
        expected = owner.encode()
        with self._guard():
            return sum(1 for value in self._redis.hvals(self._owners) if value == expected)

    def append_transcript(self, session_id: str, entries: Sequence[PilotEntry | AtcEntry]) -> None:
        lines = [entry.model_dump_json() for entry in entries]
        if not lines:
            return
        key = self._transcript(session_id)
        with self._guard():
            pipe = self._redis.pipeline(transaction=True)
            pipe.rpush(key, *lines)
            pipe.ltrim(key, -self._max_transcript, -1)
            pipe.execute()

    def transcript(self, session_id: str) -> list[PilotEntry | AtcEntry]:
        with self._guard():
            rows = self._redis.lrange(self._transcript(session_id), 0, -1)
        return [_ENTRY.validate_json(row) for row in rows]

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the connection pool."""
        self._redis.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        with self._guard():
            return int(self._redis.zcard(self._touched))

    # ------------------------------------------------------------------ internals

    def _session(self, session_id: str) -> str:
        return f"{self.prefix}s:{session_id}"

    def _transcript(self, session_id: str) -> str:
        return f"{self.prefix}t:{session_id}"

    def _lease(self, session_id: str) -> str:
        return f"{self.prefix}lease:{session_id}"

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except (RedisConnectionError, RedisTimeoutError) as exc:
            raise StoreUnavailable(f"Redis at {_safe(self.url)} did not answer: {exc}") from exc


def _safe(url: str) -> str:
    """The URL without its password, for messages and logs."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    return f"{scheme}{sep}{rest}"
