"""`OrderedWriter` (gateway/store/writer.py): store work off the event loop, in order per session,
never lost; and the service's radio methods on it, on a real SQLite store."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from gateway.service import RadioService
from gateway.settings import Settings
from gateway.store import SqliteSessionRepository
from gateway.store.writer import OrderedWriter


def test_jobs_of_one_key_run_in_order_off_the_loop() -> None:
    async def scenario() -> tuple[list[int], set[int]]:
        writer = OrderedWriter()
        done: list[int] = []
        threads: set[int] = set()

        def job(n: int, pause: float) -> int:
            time.sleep(pause)  # a slow first write must not be overtaken
            done.append(n)
            threads.add(threading.get_ident())
            return n

        writer.submit("s", lambda: job(1, 0.05))
        second = writer.run("s", lambda: job(2, 0.0))  # its place is taken at the call
        writer.submit("s", lambda: job(3, 0.0))
        assert await second == 2
        await writer.flush()
        return done, threads

    done, threads = asyncio.run(scenario())
    assert done == [1, 2, 3]
    assert threading.get_ident() not in threads


def test_a_cancelled_caller_does_not_cancel_its_write() -> None:
    async def scenario() -> list[str]:
        writer = OrderedWriter()
        written: list[str] = []

        def slow() -> None:
            time.sleep(0.05)
            written.append("saved")

        caller = asyncio.ensure_future(writer.run("s", slow))
        await asyncio.sleep(0.01)
        caller.cancel()
        await writer.flush("s")
        assert writer.pending == 0
        return written

    assert asyncio.run(scenario()) == ["saved"]


def test_a_failed_job_does_not_stop_the_next() -> None:
    async def scenario() -> list[str]:
        writer = OrderedWriter()
        out: list[str] = []

        def fail() -> None:
            raise RuntimeError("store down")

        writer.submit("s", fail)
        await writer.run("s", lambda: out.append("next"))
        return out

    assert asyncio.run(scenario()) == ["next"]


def test_the_radio_path_stores_and_publishes_in_order(tmp_path: Path) -> None:
    """Transmissions saved in worker threads reach a listener in the order they were stored, and
    a delivery mark is in the store once awaited."""
    settings = Settings(store="sqlite", sqlite_path=str(tmp_path / "s.db"), sqlite_synchronous="FULL")
    repository = SqliteSessionRepository(settings.sqlite_path, synchronous="FULL")
    service = RadioService(settings, repository=repository)
    session, _opening, _token = service.create(flow="clearance", scenario={"airport": "EDDF"}, seed=7)

    async def scenario() -> tuple[list[str | None], int]:
        events = service.hub.subscribe(session.session_id)
        said = ["say again", "radio check"]
        decisions = await asyncio.gather(*(service.transmit_async(session.session_id, text) for text in said))
        last = max(m.seq for d in decisions for m in d.messages)
        await service.delivered_async(session.session_id, last)
        heard = [events.get_nowait().transmission_id for _ in decisions]
        return heard, service.delivered_seq(session.session_id) - last

    try:
        heard, delivered = asyncio.run(scenario())
    finally:
        repository.close()
    assert heard == [f"{session.session_id}-x1", f"{session.session_id}-x2"]
    assert delivered == 0


def test_decisions_published_from_threads_reach_listeners_in_publish_order() -> None:
    """The hub (gateway/hub.py) hands a decision published in a worker thread to the loop's
    listeners, before one published on the loop after it."""
    from engine.models import Decision
    from gateway.hub import DecisionHub

    async def scenario() -> list[str | None]:
        hub = DecisionHub()
        queue = hub.subscribe("s")
        await asyncio.to_thread(hub.publish, "s", Decision(transmission_id="x1"))
        hub.publish("s", Decision(transmission_id="x2"))
        return [queue.get_nowait().transmission_id for _ in range(2)]

    assert asyncio.run(scenario()) == ["x1", "x2"]
