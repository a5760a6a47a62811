"""Time the Redis store (``python -m gateway.store.redis_bench [URL]``): `save` and `read` of a
realistic session (a dozen transmissions in, two transcript lines), as gateway/store/redis.py
reports. A tool beside the store, so that the store itself never imports the service."""

from __future__ import annotations

import statistics
import sys
import time
import uuid

from gateway.service import RadioService
from gateway.settings import Settings
from gateway.store.memory import MemorySessionRepository
from gateway.store.redis import DEFAULT_URL, RedisSessionRepository


def bench(url: str, n: int = 2000) -> None:  # pragma: no cover - measurement
    """Time `save` and `read` of a realistic session on `url`."""
    service = RadioService(Settings(store="memory"), repository=MemorySessionRepository())
    session, opening, _token = service.create(flow="clearance", scenario={"airport": "EDDF"}, seed=7)
    for text in opening.expected_pilot[:1] * 12:
        service.transmit(session.session_id, text)
    record = service.repository.get(session.session_id)
    assert record is not None
    lines = service.repository.transcript(session.session_id)[-2:]
    store = RedisSessionRepository(url, prefix=f"bench-{uuid.uuid4().hex[:8]}:")
    saves, reads = [], []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            store.save(record, lines, wake_at=1.0)
            t1 = time.perf_counter()
            store.read(session.session_id)
            t2 = time.perf_counter()
            saves.append((t1 - t0) * 1000)
            reads.append((t2 - t1) * 1000)
        store.delete(session.session_id)
    finally:
        store.close()
    for name, xs in (("save", saves), ("read", reads)):
        q = statistics.quantiles(xs, n=100)
        print(f"{name}: p50 {q[49]:.3f} ms, p99 {q[98]:.3f} ms over {n} ({len(record.model_dump_json())} B record)")


if __name__ == "__main__":  # pragma: no cover
    bench(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_URL)
