"""The protocol client's `until`, the wait every client (the sim bridge, the load pilot, the
tests) is built on: a cancelled waiter stops, whatever arrived at the same moment.

On Python 3.11, `asyncio.wait_for` could swallow a cancel that met a just-set event: the waiter
ran on past its cancel and later died on the closed connection. That is how the sim bridge's
event printer once printed "ConnectionError: the gateway closed the connection" after a finished
run (CI, stop 37).
"""

from __future__ import annotations

import asyncio

import pytest

from gateway.client.base import ClientBase


class _Listener(ClientBase):
    """The waiting under test without a transport: events are recorded as a reader would
    record them (`_record_event`), and nothing is ever sent."""

    async def send(self, message: object) -> None:
        raise AssertionError("these tests send nothing")

    async def close(self) -> None:
        self._ended()

    async def stream(self, pcm: bytes, rate: int, *, realtime: bool = True, frame_ms: int = 20) -> None:
        raise AssertionError("these tests send nothing")


def _follower(client: ClientBase) -> asyncio.Task[None]:
    """A task that, like the bridge's printer, waits for each new event in turn, forever."""
    async def follow() -> None:
        seen = 0
        while True:
            await client.until(lambda: True if len(client.rx.events) > seen else None, timeout=3600, what="an event")
            seen = len(client.rx.events)

    return asyncio.create_task(follow())


@pytest.mark.parametrize("turns_between", [0, 1, 2])
def test_a_waiter_cancelled_as_an_event_arrives_stops(turns_between: int) -> None:
    async def scenario() -> bool:
        client = _Listener()
        task = _follower(client)
        await asyncio.sleep(0.01)  # the follower is waiting
        client._record_event({"type": "atc.message", "seq": 1})
        for _ in range(turns_between):
            await asyncio.sleep(0)
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=2.0)
        if not done:
            task.cancel()
        return bool(done) and task.cancelled()

    assert asyncio.run(scenario())


def test_a_waiter_on_a_closed_connection_says_so() -> None:
    async def scenario() -> str:
        client = _Listener()
        waiter = asyncio.create_task(client.until(lambda: None, timeout=60, what="the controller"))
        await asyncio.sleep(0.01)
        client._ended()
        with pytest.raises(ConnectionError) as caught:
            await waiter
        return str(caught.value)

    assert asyncio.run(scenario()) == "the gateway closed the connection while waiting for the controller"
