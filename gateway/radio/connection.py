"""One pilot's radio connection (protocol v1, docs/protocol-v1.md), whatever carries it.

`RadioConnection` is what both transports share: WebSocket (`gateway/ws/handler.py`) and WebRTC
(`gateway/webrtc/peer.py`) differ only in how JSON and audio move, which a `Transport`
(gateway/radio/transport.py) hides. This module is the connection's protocol state and its way
out; the session it carries is gateway/radio/session.py, the pilot's transmissions
gateway/radio/pipeline.py, what the controller says gateway/radio/playout.py on the session's
gateway/radio/frequency.py. Bad input gets a typed `error` and the connection stays open.
Tuning an ATIS frequency (`tune`, or COM1 in `telemetry`) plays that airport's ATIS in a loop
until the pilot tunes away (gateway/radio/atis.py).

Incoming frames pass the connection's rate limits (gateway/radio/limits.py); outgoing events
(gateway/radio/events.py, serialized once here) go through a bounded `Outbox` drained by one
writer task into the transport (gateway/radio/outbox.py), so a client that stops reading costs a
bounded amount of memory and is disconnected, never waited for. Admission (the Origin allow-list,
the credential) is the transport's: a WebSocket answers a refusal with a fatal error event, the
WebRTC offer with an HTTP error before any connection exists. The node's voice capacity
(gateway/capacity.py) is the session's: a `session.start`/`session.resume` past it is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from gateway import metrics
from gateway.ask import AskChannel
from gateway.capacity import VoiceCapacity
from gateway.auth import ANONYMOUS, Authenticator, Principal
from gateway.radio import events as e
from gateway.radio import protocol as p
from gateway.radio.atis import tune_atis
from gateway.radio.limits import ConnectionLimits, Verdict
from gateway.radio.link import Link
from gateway.radio.outbox import Outbox, SlowConsumer
from gateway.radio.pipeline import Transmission, TransmissionPipeline
from gateway.radio.session import RadioSession
from gateway.radio.transport import (
    CLOSE_TIMEOUT_S,
    POLICY_VIOLATION,
    Transport,
    TransportClosed,
)
from gateway.service import RadioService, ServiceError
from gateway.settings import Settings
from gateway.speech.stack import SpeechStack
from gateway.speech.tts.base import TtsEngine
from gateway.store import StoreUnavailable

log = logging.getLogger("livefreq.radio")

__all__ = ["POLICY_VIOLATION", "RadioConnection", "Transport", "TransportClosed"]


class RadioConnection:
    """The protocol-v1 pipeline of one connection. A transport calls `open`, feeds what the client
    sends to `receive_text`/`receive_audio` until the client leaves or `fatal` is set, then
    `close`."""

    def __init__(
        self,
        transport: Transport,
        service: RadioService,
        speech: SpeechStack,
        settings: Settings,
        auth: Authenticator | None = None,
        principal: Principal = ANONYMOUS,
        capacity: VoiceCapacity | None = None,
    ) -> None:
        self.transport = transport
        self.service = service
        self.speech = speech
        self.settings = settings
        self.auth = auth or Authenticator(settings)
        # the node's live voice sessions against its capacity (gateway/capacity.py); none given: no limit
        self.capacity = capacity if capacity is not None else VoiceCapacity(None, "off")
        self.principal = principal
        self.limits = ConnectionLimits(settings)
        self.outbox = Outbox(settings.ws_send_queue_bytes, settings.ws_send_queue_droppable)
        self.link: Link | None = None
        self.session = RadioSession(self)
        self.pipeline = TransmissionPipeline(self)
        self.asks: AskChannel | None = None  # the briefing assistant's channel (gateway/ask.py)
        self._writer: asyncio.Task[None] | None = None
        self._fatal: p.ProtocolError | None = None  # set: the connection ends with this error
        self._closed = False
        self._finished = False

    @property
    def tx(self) -> Transmission | None:
        """The transmission being recognized, if any."""
        return self.pipeline.tx

    # ------------------------------------------------------------------ lifecycle

    def open(self) -> None:
        """Start the writer: from now on events may be queued for the client."""
        if self._writer is None:
            self._writer = asyncio.create_task(self._write(), name=f"livefreq-{self.transport.kind}-writer")

    @property
    def fatal(self) -> p.ProtocolError | None:
        """Set: the connection ends with this error (the transport stops receiving)."""
        return self._fatal

    def fail(self, error: p.ProtocolError) -> None:
        """End the connection with a fatal error (a refusal the transport found, a dead peer)."""
        if self._fatal is None:
            self._fatal = error

    async def receive_text(self, text: str) -> None:
        """One JSON message from the client (rate limits, then the handler; errors become events)."""
        if self._fatal is None and await self._within_limits(None):
            await self._guard(self._on_text(text))

    async def receive_audio(self, data: bytes) -> None:
        """One audio frame from the client: PCM16 mono at the session's input rate."""
        if self._fatal is None and await self._within_limits(len(data)):
            await self._guard(self.pipeline.on_audio(data))

    @property
    def wants_audio(self) -> bool:
        """Whether audio now would be heard: a session is attached and the mic is keyed (ptt) or
        the voice detector listens (vox). A transport with a continuous stream (WebRTC) drops the
        rest unread instead of paying for resampling and rate limits."""
        link = self.link
        return link is not None and (link.mode == "vox" or self.pipeline.tx is not None)

    async def close(self) -> None:
        """Release the session's resources, then the fatal error's last words and the close."""
        if self._finished:
            return
        self._finished = True
        await self._teardown()
        await self._finish()

    async def _within_limits(self, audio_bytes: int | None) -> bool:
        """The rate limits (gateway/radio/limits.py): False drops the frame."""
        verdict = self.limits.admit(audio_bytes)
        if verdict is Verdict.ACCEPT:
            return True
        metrics.DROPPED.labels("in", "rate_limited").inc()
        what = "audio" if audio_bytes is not None else "messages"
        if verdict is Verdict.ABUSE:
            self._fatal = p.ProtocolError(
                "rate_limited", f"{self.limits.dropped} frames over the rate limit; closing", fatal=True
            )
        elif verdict is Verdict.DROP_NOTIFY:
            limit = (
                f"{self.settings.ws_audio_bytes_per_s} audio bytes/s"
                if audio_bytes is not None
                else f"{self.settings.ws_messages_per_s:g} messages/s"
            )
            await self.send(e.error("rate_limited", f"{what} over the limit of {limit}: frames are being dropped"))
        return False

    async def _guard(self, work: Any) -> None:
        """Run one handler; turn every failure into a typed `error` event, keep the socket."""
        try:
            await work
        except p.ProtocolError as exc:
            if exc.fatal:
                self._fatal = exc
            else:
                await self.send(e.error(exc.code, exc.message, retry_after_s=exc.retry_after_s))
        except ServiceError as exc:
            await self.send(e.error(exc.code, exc.message))
        except StoreUnavailable as exc:  # Redis down or slow: retry later; nothing was half written
            log.warning("session store unavailable: %s", exc)
            await self.send(e.error("store_unavailable", "the session store did not answer; try again shortly"))
        except (TransportClosed, RuntimeError) as exc:
            if not self.transport.connected or self._closed:
                return
            log.exception("radio connection error")
            await self.send(e.error("internal", f"internal error ({type(exc).__name__}); the session is intact"))
        except Exception as exc:
            log.exception("radio connection error")
            await self.send(e.error("internal", f"internal error ({type(exc).__name__}); the session is intact"))

    async def send(self, event: e.Event) -> None:
        """Queue an event for the client, serialized once (never waits for the socket; see
        gateway/radio/outbox.py)."""
        if isinstance(event, e.Error):
            metrics.count_error(self.transport.kind, event.code)
        if self._queue(e.encode(event), droppable=event.droppable()):
            metrics.MESSAGES.labels("out", event.type).inc()

    async def _send_assistant(self, event: dict[str, Any]) -> None:
        """The ask channel's events (gateway/ask.py builds them as dicts), as their models."""
        await self.send(e.assistant_event(event))

    async def send_audio(self, pcm: bytes) -> None:
        self._queue(pcm)

    def _queue(self, data: str | bytes, *, droppable: bool = False) -> bool:
        if self._closed or self._fatal is not None:
            return False
        try:
            if self.outbox.put(data, droppable=droppable):
                return True
            metrics.DROPPED.labels("out", "slow_reader").inc()
        except SlowConsumer as exc:
            self._overflow(str(exc))
        return False

    def _overflow(self, detail: str) -> None:
        """The client reads too slowly for a must-deliver frame: end the connection."""
        log.warning("%s radio connection: slow reader disconnected (%s)", self.transport.kind, detail)
        self._fatal = p.ProtocolError(
            "slow_consumer", f"the client reads too slowly: {detail}; reconnect and resume", fatal=True
        )
        self.transport.stop_receiving()  # leave the receive loop at once

    async def _write(self) -> None:
        """Drain the outbox into the transport, in order, one frame at a time."""
        while True:
            frame = await self.outbox.get()
            if not self.transport.connected:
                return
            try:
                if frame.data is None:
                    await self.transport.write_close(frame.close_code)
                    return
                if isinstance(frame.data, bytes):
                    await self.transport.write_audio(frame.data)
                else:
                    await self.transport.write_text(frame.data)
            except TransportClosed:
                # the pilot hung up (maybe mid-message): the transport sees it and closes; meanwhile
                # nothing more is queued for nobody
                self._closed = True
                return

    async def _finish(self) -> None:
        """After teardown: a fatal error's last words and the close (within `CLOSE_TIMEOUT_S`:
        a client that does not read gets no more time), then the writer stops."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        if self._fatal is not None:
            error = e.error(self._fatal.code, self._fatal.message, fatal=True)
            metrics.count_error(self.transport.kind, self._fatal.code)
            metrics.MESSAGES.labels("out", "error").inc()
            self.outbox.put(e.encode(error), force=True)
            self.outbox.close(POLICY_VIOLATION)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(writer), CLOSE_TIMEOUT_S)
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writer

    # ------------------------------------------------------------------ control messages

    async def _on_text(self, text: str) -> None:
        msg = p.parse_client(text)
        metrics.MESSAGES.labels("in", msg.type).inc()
        if isinstance(msg, p.Ping):
            await self.send(e.Pong())
        elif isinstance(msg, p.SessionStart):
            await self.session.start(msg)
        elif isinstance(msg, p.SessionResume):
            await self.session.resume(msg)
        elif isinstance(msg, p.Ask):
            self.ask(msg.text, source="text", speak=msg.speak, ask_id=msg.ask_id)
        else:
            link = self.require()
            if isinstance(msg, p.PttDown):
                if link.mode != "ptt":
                    raise p.ProtocolError("wrong_mode", "ptt.down in vox mode: the voice detector keys the mic")
                if not link.ptt_keyed:
                    if msg.channel == "ask":
                        self._ask_channel()  # refused before keying when there is no assistant
                    link.ptt_keyed = True
                    await self.pipeline.begin(b"", channel=msg.channel)
            elif isinstance(msg, p.PttUp):
                if not link.ptt_keyed:
                    raise p.ProtocolError("ptt_not_down", "ptt.up without ptt.down")
                link.ptt_keyed = False
                await self.pipeline.end()
            elif isinstance(msg, p.Text):
                await self.pipeline.typed(msg.text)
            elif isinstance(msg, p.Telemetry):
                await self.service.telemetry_async(link.session_id, msg.model_dump(exclude_none=True, exclude={"type"}))
                if msg.com1 is not None and msg.com1 != link.com1:  # simulators repeat COM1 in every report
                    await self._tuned(link, msg.com1)
            elif isinstance(msg, p.Tune):
                await self.service.tune_async(link.session_id, msg.frequency)
                await self.session.send_state()
                await self._tuned(link, msg.frequency)
            elif isinstance(msg, p.AudioPlayed):
                link.stats["played"] = link.stats.get("played", 0) + 1

    # ------------------------------------------------------------------ the ask channel

    def _ask_channel(self) -> AskChannel:
        assistant = getattr(self.service, "assistant", None)
        if assistant is None:
            raise p.ProtocolError("assistant_unavailable", "the briefing assistant is off on this gateway (LIVEFREQ_ASSISTANT_ENABLED)")
        if self.asks is None:
            self.asks = AskChannel(assistant, self._send_assistant, f"ws{id(self):x}", backlog=lambda: self.outbox.bytes)
        if self.asks.busy:
            raise p.ProtocolError("ask_busy", "the assistant is still answering the last question")
        return self.asks

    def ask(self, text: str, *, source: str, speak: bool = True, ask_id: str | None = None) -> str:
        """A question for the assistant, answered in the background as `assistant.*` events and,
        with a session attached, spoken (never on the frequency)."""
        channel = self._ask_channel()

        def voice() -> tuple[TtsEngine, int] | None:
            if not speak or self.link is None:
                return None
            return self.link.playout.tts, self.link.output_rate

        return channel.ask(text, source=source, speak=voice, ask_id=ask_id)

    async def _tuned(self, link: Link, frequency: str) -> None:
        """COM1 changed: an ATIS frequency starts its broadcast, any other ends one."""
        link.com1 = frequency
        await tune_atis(link.atis, self.service, link.session_id, frequency)

    def require(self) -> Link:
        if self.link is None:
            raise p.ProtocolError("no_session", "no session on this socket: send session.start or session.resume first")
        return self.link

    # ------------------------------------------------------------------ teardown

    async def _teardown(self) -> None:
        self._closed = True
        await self.pipeline.close()
        if self.asks is not None:
            await self.asks.close()
        await self.session.close()
