"""DecisionRelay: decisions made on one gateway node reach WebSockets on the other nodes.

With the Redis store, a pilot's socket may be on node B while the decision about its session is
made on node A (an HTTP transmission, a timer that A's clock fired, telemetry). Each node's
`DecisionHub` only knows its own sockets, so the relay bridges the hubs over one Redis pub/sub
channel (``<prefix>decisions``):

- out: the hub hands every decision published on this node to `send`, which queues it; one task
  publishes the queue in order (``redis.asyncio``: the event loop never waits for Redis here);
- in: one task reads the channel and hands each decision of another node to the hub's `deliver`,
  which reaches only local listeners. A node's own messages come back on the channel and are
  dropped by their node id, so a local listener gets each decision exactly once (it already had
  it from `publish`), and a decision is parsed only when this node has a listener for its session.

Started by the app's lifespan when the store is Redis; `start` returns once the subscription is
confirmed, so a decision published after that is not missed. Pub/sub delivers at most once: a
decision relayed while Redis is unreachable is lost *live*, never stored: it is already in the
store (the service saves before it publishes), and the controller calls in it are spoken when
the pilot's client resumes the session (undelivered seqs are replayed). Decisions of one node
arrive in the order it made them; decisions of two nodes about one session may interleave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from engine.models import Decision
from gateway.hub import DecisionHub

log = logging.getLogger(__name__)

OUTBOX_LIMIT = 10_000  # decisions waiting to be published; past this (Redis stuck) new ones are dropped
RECONNECT_S = 0.5  # pause before reading the channel again after a connection error


class DecisionRelay:
    def __init__(self, hub: DecisionHub, url: str, channel: str, node: str, *, timeout_s: float = 0.5) -> None:
        self.hub = hub
        self.channel = channel
        self.node = node
        self._node = node.encode()
        # publishing: short timeouts like the store's; reading: a connection that waits for
        # messages as long as it takes, checked by a PING every 30 s of silence
        self._publisher = aioredis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        self._listener = aioredis.Redis.from_url(
            url, socket_connect_timeout=timeout_s, socket_keepalive=True, health_check_interval=30
        )
        self._pubsub = self._listener.pubsub()
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue(OUTBOX_LIMIT)
        self._tasks: list[asyncio.Task[None]] = []
        self.relayed_in = 0  # decisions of other nodes handed to local listeners
        self.dropped = 0  # decisions not published (Redis unreachable or the outbox full)

    async def start(self) -> None:
        """Subscribe (confirmed by the server), start the tasks and attach to the hub."""
        await self._pubsub.subscribe(self.channel)
        while True:  # the confirmation: from here on every message published reaches this node
            message = await self._pubsub.get_message(timeout=5.0)
            if message is None:
                raise TimeoutError(f"Redis did not confirm the subscription to {self.channel}")
            if message["type"] == "subscribe":
                break
        self._tasks = [
            asyncio.create_task(self._publish_outbox(), name="livefreq-relay-out"),
            asyncio.create_task(self._read_channel(), name="livefreq-relay-in"),
        ]
        self.hub.bind()  # decisions saved in worker threads are relayed from this loop
        self.hub.relay = self.send

    def send(self, session_id: str, decision: Decision) -> None:
        """Queue a decision of this node for the others (called by the hub; never blocks)."""
        payload = b"\n".join((self._node, session_id.encode(), decision.model_dump_json().encode()))
        try:
            self._outbox.put_nowait(payload)
        except asyncio.QueueFull:
            self.dropped += 1
            log.warning("relay outbox full: a decision of session %s is not relayed live", session_id)

    async def flush(self) -> None:
        """Wait until every queued decision has been published (or dropped)."""
        await self._outbox.join()

    async def stop(self) -> None:
        """Detach from the hub, publish what is queued (briefly), close the connections."""
        if self.hub.relay == self.send:
            self.hub.relay = None
        if self._tasks:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.flush(), timeout=2.0)
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        with contextlib.suppress(RedisError, OSError):
            await self._pubsub.aclose()
        for client in (self._publisher, self._listener):
            with contextlib.suppress(RedisError, OSError):
                await client.aclose()

    async def _publish_outbox(self) -> None:
        while True:
            payload = await self._outbox.get()
            try:
                await self._publisher.publish(self.channel, payload)
            except (RedisError, OSError) as exc:
                self.dropped += 1
                log.warning("relaying a decision failed (%s); it is stored, and replayed on resume", exc)
            finally:
                self._outbox.task_done()

    async def _read_channel(self) -> None:
        down = False  # one warning per outage; redis-py reconnects and subscribes again
        while True:
            try:
                message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            except (RedisError, OSError) as exc:
                if not down:
                    log.warning("reading the decision channel failed (%s); reconnecting", exc)
                down = True
                await asyncio.sleep(RECONNECT_S)
                continue
            if down:
                log.warning("reading the decision channel again")
                down = False
            if message is not None and message["type"] == "message":
                self._receive(message["data"])

    def _receive(self, payload: bytes) -> None:
        parts = payload.split(b"\n", 2)
        if len(parts) != 3:
            log.warning("ignoring a message on %s that is not a relayed decision", self.channel)
            return
        node, session, body = parts
        if node == self._node:
            return  # our own: local listeners had it from publish
        session_id = session.decode()
        if self.hub.listeners(session_id) == 0:
            return
        try:
            decision = Decision.model_validate_json(body)
        except ValueError:  # another livefreq version, or something else on the channel
            log.warning("ignoring a relayed decision of session %s that does not parse", session_id)
            return
        self.relayed_in += 1
        self.hub.deliver(session_id, decision)
