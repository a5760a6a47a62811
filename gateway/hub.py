"""DecisionHub: every decision about a session reaches every connection listening to it.

Decisions come from several places (a WebSocket transmission, an HTTP transmission, the background
clock firing a timer, telemetry). The service publishes each one here after storing it, and each
attached connection consumes its own queue, so controller messages take one path whatever caused
them. Publishing happens on the event loop thread and never blocks.

With several gateway nodes on one store, a decision made on one node must also reach sockets on
the others: `publish` hands every decision to the `relay` (gateway/relay.py) as well, which sends
it to the other nodes, whose relays hand it to their hub's `deliver` (local listeners only, so a
decision is never sent back out and never reaches a listener twice).

The service stores decisions off the event loop too (gateway/store/writer.py): a decision saved
in a worker thread is handed to the loop, and every decision passes one FIFO in the order it was
published (under the service's lock, which is the order it was saved), so a listener never hears
a later decision before an earlier one whatever thread saved them.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict, deque
from collections.abc import Callable

from engine.models import Decision


class DecisionHub:
    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[Decision]]] = defaultdict(set)
        self.relay: Callable[[str, Decision], None] | None = None  # to the other nodes, when there are any
        self.loop: asyncio.AbstractEventLoop | None = None  # where listeners and the relay live
        self._published: deque[tuple[str, Decision]] = deque()
        self._mutex = threading.Lock()

    def bind(self) -> None:
        """Remember the running event loop: decisions published from other threads go to it."""
        self.loop = asyncio.get_running_loop()

    def subscribe(self, session_id: str) -> asyncio.Queue[Decision]:
        self.bind()
        queue: asyncio.Queue[Decision] = asyncio.Queue()
        self._subscribers[session_id].add(queue)
        return queue

    def unsubscribe(self, session_id: str, queue: asyncio.Queue[Decision]) -> None:
        subs = self._subscribers.get(session_id)
        if subs is not None:
            subs.discard(queue)
            if not subs:
                del self._subscribers[session_id]

    def publish(self, session_id: str, decision: Decision) -> None:
        """A decision made on this node: to the local listeners, and to the other nodes (from
        any thread; on the loop's thread, at once)."""
        with self._mutex:
            self._published.append((session_id, decision))
        loop = self.loop
        if loop is not None and not loop.is_closed() and not _running_on(loop):
            loop.call_soon_threadsafe(self._drain)
        else:
            self._drain()

    def _drain(self) -> None:
        while True:
            with self._mutex:
                if not self._published:
                    return
                session_id, decision = self._published.popleft()
            self.deliver(session_id, decision)
            if self.relay is not None:
                self.relay(session_id, decision)

    def deliver(self, session_id: str, decision: Decision) -> None:
        """To this node's listeners only (a decision another node made and relayed here)."""
        for queue in self._subscribers.get(session_id, ()):
            queue.put_nowait(decision)

    def listeners(self, session_id: str) -> int:
        return len(self._subscribers.get(session_id, ()))


def _running_on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
