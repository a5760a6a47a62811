"""DecisionHub: every decision about a session reaches every connection listening to it.

Decisions come from several places (a WebSocket transmission, an HTTP transmission, the background
clock firing a timer, telemetry). The service publishes each one here after storing it, and each
attached connection consumes its own queue, so controller messages take one path whatever caused
them. Publishing happens on the event loop thread and never blocks.

With several gateway nodes on one store, a decision made on one node must also reach sockets on
the others: `publish` hands every decision to the `relay` (gateway/relay.py) as well, which sends
it to the other nodes, whose relays hand it to their hub's `deliver` (local listeners only, so a
decision is never sent back out and never reaches a listener twice).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable

from engine.models import Decision


class DecisionHub:
    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[Decision]]] = defaultdict(set)
        self.relay: Callable[[str, Decision], None] | None = None  # to the other nodes, when there are any

    def subscribe(self, session_id: str) -> asyncio.Queue[Decision]:
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
        """A decision made on this node: to the local listeners, and to the other nodes."""
        self.deliver(session_id, decision)
        if self.relay is not None:
            self.relay(session_id, decision)

    def deliver(self, session_id: str, decision: Decision) -> None:
        """To this node's listeners only (a decision another node made and relayed here)."""
        for queue in self._subscribers.get(session_id, ()):
            queue.put_nowait(decision)

    def listeners(self, session_id: str) -> int:
        return len(self._subscribers.get(session_id, ()))
