"""DecisionHub: every decision about a session reaches every connection listening to it.

Decisions come from several places (a WebSocket transmission, an HTTP transmission, the background
clock firing a timer, telemetry). The service publishes each one here after storing it, and each
attached connection consumes its own queue, so controller messages take one path whatever caused
them. Publishing happens on the event loop thread and never blocks.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

from engine.models import Decision


class DecisionHub:
    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[Decision]]] = defaultdict(set)

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
        for queue in self._subscribers.get(session_id, ()):
            queue.put_nowait(decision)

    def listeners(self, session_id: str) -> int:
        return len(self._subscribers.get(session_id, ()))
