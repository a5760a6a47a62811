"""One pilot's radio connection (protocol v1, docs/protocol-v1.md), whatever carries it.

`RadioConnection` is the pipeline both transports share: WebSocket (`gateway/ws/handler.py`) and
WebRTC (`gateway/webrtc/peer.py`) differ only in how JSON and audio move, which a `Transport`
hides. Input audio is resampled to 16 kHz and cut into 20 ms frames; a transmission (between
`ptt.down` and `ptt.up`, or between the VAD's speech start and end in vox mode) streams into the
STT engine, which sends partial transcripts while the pilot talks; the final transcript goes to
the session engine through the service. Every decision about the session (from this connection,
HTTP, the background clock, telemetry) arrives through the service's `DecisionHub` and leaves as
`decision` and `state` events, while its controller messages go to the session's live `Frequency`
to be spoken in order. Bad input gets a typed `error` and the connection stays open. Tuning an
ATIS frequency (`tune`, or COM1 in `telemetry`) plays that airport's ATIS on the frequency in a
loop until the pilot tunes away (gateway/broadcast.py).

Incoming frames pass the connection's rate limits (gateway/ws/limits.py); outgoing ones go
through a bounded `Outbox` drained by one writer task into the transport (gateway/ws/outbox.py),
so a client that stops reading costs a bounded amount of memory and is disconnected, never waited
for. Admission (the Origin allow-list, the credential) is the transport's: a WebSocket answers a
refusal with a fatal error event, the WebRTC offer with an HTTP error before any connection exists.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.models import ControllerMessage, Decision, Hearing, Session
from engine.phraseology import frequencies
from gateway import metrics
from gateway.audio.pcm import FrameBuffer
from gateway.audio.resample import StreamResampler
from gateway.audio.vad import SPEECH_END, SPEECH_START, SpeechTracker, VoiceActivityDetector
from gateway.ask import ASK_PHRASES, ASK_VOCABULARY, AskChannel
from gateway.auth import ANONYMOUS, AuthError, Authenticator, Principal
from gateway.broadcast import AtisBroadcast
from gateway.frequency import Frequency
from gateway.service import RadioService, ServiceError, SessionNotFound
from gateway.settings import Settings
from gateway.speech.cpu import Priority, priority
from gateway.speech.stack import SpeechStack, UnknownVoice, stt_context
from gateway.speech.tts.base import TtsEngine
from gateway.store import StoreUnavailable
from gateway.speech.stt.base import SttContext, SttResult, SttStream, final_result
from gateway.ws import protocol as p
from gateway.ws.limits import ConnectionLimits, Verdict
from gateway.ws.outbox import Outbox, SlowConsumer

log = logging.getLogger("livefreq.radio")

STT_RATE = 16000
PARTIAL_EVERY_S = 0.5
SPECULATION_DUE_S = 2.0  # when a likely reply is needed, for the CPU pool's deadline order
CLOSE_TIMEOUT_S = 2.0  # how long the last words (a fatal error, the close) may take to leave
POLICY_VIOLATION = 1008  # close code of every fatal error


class TransportClosed(Exception):
    """The client is gone: a write found the connection closed (an ordinary hang-up)."""


class Transport(Protocol):
    """How one connection's frames move; everything else is `RadioConnection`'s."""

    kind: str  # "ws" | "webrtc": the transport label of error metrics and logs
    # audio formats the transport fixes (a WebRTC track decodes to its own rate) or None: the
    # client declares them in session.start/resume (`input_audio`, `output_audio`)
    input_rate: int | None
    output_rate: int | None

    @property
    def connected(self) -> bool: ...

    async def write_text(self, data: str) -> None:
        """Send one JSON text message; `TransportClosed` when the client is gone."""

    async def write_audio(self, pcm: bytes) -> None:
        """Send controller audio (PCM16 mono at the output rate); `TransportClosed` when gone."""

    async def write_close(self, code: int) -> None:
        """Close the connection after everything written so far (`code`: WebSocket close code)."""

    def stop_receiving(self) -> None:
        """The connection ends with a fatal error: stop waiting for the client's next frame."""


@dataclass
class Transmission:
    """One pilot transmission being recognized."""

    stream: SttStream
    started: float
    samples: int = 0
    ended: float | None = None  # monotonic time of ptt.up / the VAD's end of speech
    channel: str = "radio"  # "ask": a question to the briefing assistant, not on the frequency
    partial_task: asyncio.Task[None] | None = None
    last_partial: str = ""
    dropped: bool = False  # cut at max length: later audio of this keying is ignored
    # whether the audio held speech, and whether the pilot was still talking at its end
    speech: SpeechTracker = field(default_factory=SpeechTracker)


@dataclass
class Link:
    """What this socket knows about its session."""

    session_id: str
    mode: str = "ptt"
    input_rate: int = 16000
    output_rate: int = 16000
    radio_level: int = 4
    radio_effect: bool = True
    events: asyncio.Queue[Decision] | None = None
    delivered_seq: int = 0
    state_key: tuple[str, str] = ("", "")
    ptt_keyed: bool = False
    com1: str | None = None  # the frequency the pilot last tuned (tune, or telemetry's com1)
    last_audio_at: float = 0.0
    stats: dict[str, int] = field(default_factory=lambda: {"frames": 0, "ignored_frames": 0})
    # stage clocks (gateway/metrics.py), by controller message id; emptied as messages go on air
    decided_at: dict[str, float] = field(default_factory=dict)
    speech_end_at: dict[str, float] = field(default_factory=dict)


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
    ) -> None:
        self.transport = transport
        self.service = service
        self.speech = speech
        self.settings = settings
        self.auth = auth or Authenticator(settings)
        self.principal = principal
        self.limits = ConnectionLimits(settings)
        self.outbox = Outbox(settings.ws_send_queue_bytes, settings.ws_send_queue_droppable)
        self.link: Link | None = None
        self.frequency: Frequency | None = None
        self.atis: AtisBroadcast | None = None
        self.resampler: StreamResampler | None = None
        self.framer = FrameBuffer(STT_RATE, 20)
        self.vad: VoiceActivityDetector | None = None
        self.tx: Transmission | None = None
        self.asks: AskChannel | None = None  # the briefing assistant's channel (gateway/ask.py)
        self._events_task: asyncio.Task[None] | None = None
        self._speculation: asyncio.Task[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._fatal: p.ProtocolError | None = None  # set: the connection ends with this error
        self._closed = False
        self._finished = False

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
            await self._guard(self._on_audio(data))

    @property
    def wants_audio(self) -> bool:
        """Whether audio now would be heard: a session is attached and the mic is keyed (ptt) or
        the voice detector listens (vox). A transport with a continuous stream (WebRTC) drops the
        rest unread instead of paying for resampling and rate limits."""
        link = self.link
        return link is not None and (link.mode == "vox" or self.tx is not None)

    async def close(self) -> None:
        """Release the session's resources, then the fatal error's last words and the close."""
        if self._finished:
            return
        self._finished = True
        await self._teardown()
        await self._finish()

    async def _within_limits(self, audio_bytes: int | None) -> bool:
        """The rate limits (gateway/ws/limits.py): False drops the frame."""
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
            await self.send(p.error("rate_limited", f"{what} over the limit of {limit}: frames are being dropped"))
        return False

    async def _guard(self, work: Any) -> None:
        """Run one handler; turn every failure into a typed `error` event, keep the socket."""
        try:
            await work
        except p.ProtocolError as exc:
            if exc.fatal:
                self._fatal = exc
            else:
                await self.send(p.error(exc.code, exc.message))
        except ServiceError as exc:
            await self.send(p.error(exc.code, exc.message))
        except StoreUnavailable as exc:  # Redis down or slow: retry later; nothing was half written
            log.warning("session store unavailable: %s", exc)
            await self.send(p.error("store_unavailable", "the session store did not answer; try again shortly"))
        except (TransportClosed, RuntimeError) as exc:
            if not self.transport.connected or self._closed:
                return
            log.exception("radio connection error")
            await self.send(p.error("internal", f"internal error ({type(exc).__name__}); the session is intact"))
        except Exception as exc:
            log.exception("radio connection error")
            await self.send(p.error("internal", f"internal error ({type(exc).__name__}); the session is intact"))

    async def send(self, event: dict[str, Any]) -> None:
        """Queue an event for the client (never waits for the socket; see gateway/ws/outbox.py)."""
        kind = str(event.get("type"))
        if kind == "error":
            metrics.count_error(self.transport.kind, str(event.get("code")))
        droppable = kind == "vad" or (kind == "transcript" and not event.get("final"))
        if self._queue(encode(event), droppable=droppable):
            metrics.MESSAGES.labels("out", kind).inc()

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
            error = p.error(self._fatal.code, self._fatal.message, fatal=True)
            metrics.count_error(self.transport.kind, self._fatal.code)
            metrics.MESSAGES.labels("out", "error").inc()
            self.outbox.put(encode(error), force=True)
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
            await self.send({"type": "pong"})
        elif isinstance(msg, p.SessionStart):
            await self._start(msg)
        elif isinstance(msg, p.SessionResume):
            await self._resume(msg)
        elif isinstance(msg, p.Ask):
            self._ask(msg.text, source="text", speak=msg.speak, ask_id=msg.ask_id)
        else:
            link = self._require()
            if isinstance(msg, p.PttDown):
                if link.mode != "ptt":
                    raise p.ProtocolError("wrong_mode", "ptt.down in vox mode: the voice detector keys the mic")
                if not link.ptt_keyed:
                    if msg.channel == "ask":
                        self._ask_channel()  # refused before keying when there is no assistant
                    link.ptt_keyed = True
                    await self._begin_transmission(b"", channel=msg.channel)
            elif isinstance(msg, p.PttUp):
                if not link.ptt_keyed:
                    raise p.ProtocolError("ptt_not_down", "ptt.up without ptt.down")
                link.ptt_keyed = False
                await self._end_transmission()
            elif isinstance(msg, p.Text):
                await self._typed(msg.text)
            elif isinstance(msg, p.Telemetry):
                self.service.telemetry(link.session_id, msg.model_dump(exclude_none=True, exclude={"type"}))
                if msg.com1 is not None and msg.com1 != link.com1:  # simulators repeat COM1 in every report
                    await self._tuned(link, msg.com1)
            elif isinstance(msg, p.Tune):
                self.service.tune(link.session_id, msg.frequency)
                await self._send_state()
                await self._tuned(link, msg.frequency)
            elif isinstance(msg, p.AudioPlayed):
                link.stats["played"] = link.stats.get("played", 0) + 1

    # ------------------------------------------------------------------ the ask channel

    def _ask_channel(self) -> AskChannel:
        assistant = getattr(self.service, "assistant", None)
        if assistant is None:
            raise p.ProtocolError("assistant_unavailable", "the briefing assistant is off on this gateway (LIVEFREQ_ASSISTANT_ENABLED)")
        if self.asks is None:
            self.asks = AskChannel(assistant, self.send, f"ws{id(self):x}", backlog=lambda: self.outbox.bytes)
        if self.asks.busy:
            raise p.ProtocolError("ask_busy", "the assistant is still answering the last question")
        return self.asks

    def _ask(self, text: str, *, source: str, speak: bool = True, ask_id: str | None = None) -> str:
        """A question for the assistant, answered in the background as `assistant.*` events and,
        with a session attached, spoken (never on the frequency)."""
        channel = self._ask_channel()

        def voice() -> tuple[TtsEngine, int] | None:
            if not speak or self.link is None or self.frequency is None:
                return None
            return self.frequency.tts, self.link.output_rate

        return channel.ask(text, source=source, speak=voice, ask_id=ask_id)

    async def _tuned(self, link: Link, frequency: str) -> None:
        """COM1 changed: an ATIS frequency starts its broadcast, any other ends one."""
        link.com1 = frequency
        if self.atis is None:
            return
        if self.service.atis(link.session_id, frequency) is None:
            await self.atis.stop()
            return
        await self.atis.play(frequencies.canonical(frequency) or frequency, lambda n: self._atis_message(link, frequency, n))

    def _atis_message(self, link: Link, frequency: str, n: int) -> ControllerMessage | None:
        """Repetition `n` of the ATIS on `frequency`, as it stands now (its letter may have moved on)."""
        atis = self.service.atis(link.session_id, frequency)
        if atis is None:
            return None
        return ControllerMessage(
            message_id=f"{link.session_id}-atis-{atis.icao}-{atis.letter}-{n + 1}",
            seq=0,  # a broadcast, not one of the session's numbered controller messages
            station="atis",
            frequency=frequencies.canonical(frequency) or frequency,
            template="",
            text=atis.text,
            speech=atis.speech,
            at=self.service.clock(),
        )

    def _require(self) -> Link:
        if self.link is None:
            raise p.ProtocolError("no_session", "no session on this socket: send session.start or session.resume first")
        return self.link

    async def _start(self, msg: p.SessionStart) -> None:
        if self.link is not None:
            raise p.ProtocolError("session_active", "this socket already has a session; open a new socket for another")
        self._authorize(lambda: self.auth.require_key(self.principal, "start a session"))
        tts = self._voice(msg.voice)
        session, decision, token = await self.service.start(
            flow=msg.flow, scenario=msg.scenario, seed=msg.seed, owner=self.principal.key_id, flight_plan=msg.flight_plan,
            traffic=msg.traffic,
        )
        await self._attach(
            session,
            token,
            mode=msg.mode,
            input_rate=self.transport.input_rate or msg.input_audio.sample_rate,
            output_rate=self.transport.output_rate or msg.output_audio.sample_rate,
            radio_level=msg.radio_level or self.settings.radio_level,
            radio_effect=self.settings.radio_effect if msg.radio_effect is None else msg.radio_effect,
            resumed=False,
            tts=tts,
            voice=msg.voice or self.speech.default_voice,
            messages=decision.messages,
        )
        await self._deliver(decision, send_decision=False)

    async def _resume(self, msg: p.SessionResume) -> None:
        if self.link is not None:
            raise p.ProtocolError("session_active", "this socket already has a session")
        if self.auth.enabled:  # the credential's reach first (HTTP: gateway/api/access.py)
            if self.principal.is_key:
                with contextlib.suppress(SessionNotFound):  # unknown: `unknown_session` below, as over HTTP
                    owner = self.service.owner_of(msg.session_id)
                    self._authorize(lambda: self.auth.check_session(self.principal, msg.session_id, owner))
            else:
                self._authorize(lambda: self.auth.check_session(self.principal, msg.session_id, None))
        if not self.service.check_token(msg.session_id, msg.resume_token):
            self.service.get(msg.session_id)  # unknown session -> its own typed error
            raise p.ProtocolError("bad_token", "the resume token does not match this session")
        session = self.service.get(msg.session_id)
        tts = self._voice(msg.voice)
        # controller calls made while no socket listened (timers) are spoken now: nothing lost
        delivered = self.service.delivered_seq(session.session_id)
        missed = [m for m in session.message_history if m.seq > delivered]
        await self._attach(
            session,
            msg.resume_token,
            mode=msg.mode or "ptt",
            input_rate=self.transport.input_rate or (msg.input_audio.sample_rate if msg.input_audio else 16000),
            output_rate=self.transport.output_rate or (msg.output_audio.sample_rate if msg.output_audio else 16000),
            radio_level=msg.radio_level or self.settings.radio_level,
            radio_effect=self.settings.radio_effect,
            resumed=True,
            tts=tts,
            voice=msg.voice or self.speech.default_voice,
            messages=missed,
        )
        if self.frequency is not None and missed:
            self.frequency.enqueue(missed)
        await self._send_state()

    @staticmethod
    def _authorize(check: Any) -> None:
        """Run an `Authenticator` check; a refusal is a `forbidden` error, the socket stays open."""
        try:
            check()
        except AuthError as exc:
            raise p.ProtocolError(exc.code, exc.message) from exc

    def _voice(self, voice: str | None) -> TtsEngine:
        try:
            return self.speech.tts_for(voice)
        except UnknownVoice as exc:
            raise p.ProtocolError("unknown_voice", str(exc)) from exc

    async def _attach(
        self,
        session: Session,
        token: str,
        *,
        mode: str,
        input_rate: int,
        output_rate: int,
        radio_level: int,
        radio_effect: bool,
        resumed: bool,
        tts: TtsEngine,
        voice: str,
        messages: list[ControllerMessage],
    ) -> None:
        link = Link(session.session_id, mode, input_rate, output_rate, radio_level, radio_effect)
        link.state_key = (session.active.flow, session.active.state)
        self.link = link
        self.resampler = StreamResampler(input_rate, STT_RATE) if input_rate != STT_RATE else None
        self.vad = VoiceActivityDetector(sample_rate=STT_RATE) if mode == "vox" else None
        self.frequency = Frequency(
            self.send,
            self.send_audio,
            tts,
            output_rate=output_rate,
            radio_level=radio_level,
            radio_effect=radio_effect,
            pace=self.settings.audio_pacing,
            on_sent=lambda m: self._message_done(link, m),
            on_first_audio=lambda m: self._first_audio(link, m),
        )
        self.frequency.start()
        self.atis = AtisBroadcast(self.frequency)
        metrics.ACTIVE_SESSIONS.inc()
        link.events = self.service.hub.subscribe(session.session_id)
        self._events_task = asyncio.create_task(self._consume(link), name="livefreq-radio-events")
        await self.send(
            {
                "type": "session.started",
                "session_id": session.session_id,
                "resume_token": token,
                "session_token": self.auth.session_token(session.session_id),
                "resumed": resumed,
                "flow": session.active.flow,
                "state": session.active.state,
                "scenario": session.variables,
                "station": session.station,
                "frequency": session.frequency,
                "mode": mode,
                "voice": voice,
                "radio_level": radio_level,
                "expected_pilot": self.service.expected_pilot(session),
                "speech": self.speech.describe(),
                # the controller messages about to be spoken: the opening calls, or those missed
                "messages": [{"message_id": m.message_id, "seq": m.seq} for m in messages],
            }
        )

    def _message_done(self, link: Link, msg: ControllerMessage) -> None:
        """A controller message has been spoken: the pilot's reply time starts now."""
        if AtisBroadcast.owns(msg):
            if self.atis is not None:
                self.atis.sent(msg)  # a broadcast: no session message, no reply expected
            return
        link.decided_at.pop(msg.message_id, None)
        link.speech_end_at.pop(msg.message_id, None)
        metrics.CONTROLLER_MESSAGES.labels("sent").inc()
        self.service.mark_delivered(link.session_id, msg.seq)
        self.service.defer_silence(link.session_id)

    def _first_audio(self, link: Link, msg: ControllerMessage) -> None:
        """The first audio of a controller message left: close its stage clocks."""
        now = time.monotonic()
        decided = link.decided_at.pop(msg.message_id, None)
        if decided is not None:
            metrics.observe_stage("decision_to_first_tts_audio", now - decided)
        ended = link.speech_end_at.pop(msg.message_id, None)
        if ended is not None:
            metrics.observe_stage("speech_end_to_first_audio", now - ended)

    # ------------------------------------------------------------------ decisions out

    async def _consume(self, link: Link) -> None:
        assert link.events is not None
        while True:
            decision = await link.events.get()
            try:
                await self._deliver(decision)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("delivering a decision failed")

    async def _deliver(self, decision: Decision, send_decision: bool = True) -> None:
        if send_decision:
            await self.send(p.decision_event(decision))
        if self.link is not None:
            now = time.monotonic()
            for msg in decision.messages:
                self.link.decided_at.setdefault(msg.message_id, now)
        if self.frequency is not None and decision.messages:
            self.frequency.enqueue(list(decision.messages))
        await self._send_state()

    async def _send_state(self) -> None:
        link = self._require()
        session = self.service.get(link.session_id)
        link.state_key = (session.active.flow, session.active.state)
        await self.send(
            {
                "type": "state",
                "flow": session.active.flow,
                "state": session.active.state,
                "phase": self.service.phase(session),
                "station": session.station,
                "frequency": session.frequency,
                "completed": session.completed,
                "expected_pilot": self.service.expected_pilot(session),
            }
        )

    # ------------------------------------------------------------------ audio in

    async def _on_audio(self, data: bytes) -> None:
        link = self._require()
        if len(data) > self.settings.max_frame_bytes:
            raise p.ProtocolError("frame_too_large", f"audio frame of {len(data)} bytes; at most {self.settings.max_frame_bytes}")
        if len(data) % 2:
            raise p.ProtocolError("bad_audio", "audio frames are PCM16: an even number of bytes")
        link.stats["frames"] += 1
        if link.mode == "ptt" and self.tx is None:
            link.stats["ignored_frames"] += 1  # between transmissions the mic is not keyed
            return
        pcm = self.resampler.process(data) if self.resampler is not None else data
        if link.mode == "ptt":
            await self._feed(pcm)
            return
        assert self.vad is not None
        for frame in self.framer.push(pcm):
            event = self.vad.process(frame)
            if event is None:
                if self.tx is not None:
                    await self._feed(frame)
            elif event.type == SPEECH_START:
                await self.send({"type": "vad", "speaking": True})
                await self._begin_transmission(event.audio)
            elif event.type == SPEECH_END:
                await self._feed(frame)
                await self.send({"type": "vad", "speaking": False})
                await self._end_transmission()

    async def _feed(self, pcm: bytes) -> None:
        tx = self.tx
        if tx is None or tx.dropped or not pcm:
            return
        tx.stream.feed(pcm)
        tx.speech.feed(pcm)
        tx.samples += len(pcm) // 2
        if tx.samples >= self.settings.max_transmission_s * STT_RATE:
            tx.dropped = True
            await self.send(p.error("transmission_too_long", f"transmissions end after {self.settings.max_transmission_s:g} s; the rest of this one is ignored"))

    # ------------------------------------------------------------------ transmissions

    async def _begin_transmission(self, preroll: bytes, channel: str = "radio") -> None:
        link = self._require()
        if self.tx is not None:
            return
        if not self.speech.ready:
            try:
                await self.speech.load()
            except Exception as exc:
                raise p.ProtocolError("speech_unavailable", f"speech engines are not available: {self.speech.error or exc}") from exc
        assert self.frequency is not None
        if channel == "ask":  # off the frequency: the controller is not cut, the engine hears nothing
            context = SttContext(expected_phrases=list(ASK_PHRASES), vocabulary=list(ASK_VOCABULARY), speaker=link.session_id)
            self.tx = Transmission(self.speech.stt.open(context), time.monotonic(), channel="ask")
            return
        self.service.defer_silence(link.session_id, self.settings.max_transmission_s)  # no prompt while talking
        cut = self.frequency.key()
        if cut is not None:
            log.info("session %s: pilot keyed over controller message %s", link.session_id, cut.message_id)
        session = self.service.get(link.session_id)
        stream = self.speech.stt.open(stt_context(session, self.service.expected_pilot(session)))
        self.tx = Transmission(stream, time.monotonic())
        await self._feed(preroll)
        self.tx.partial_task = asyncio.create_task(self._partials(self.tx), name="livefreq-partials")
        if self._speculation is None or self._speculation.done():
            self._speculation = asyncio.create_task(self._speculate(link), name="livefreq-speculative-tts")

    async def _speculate(self, link: Link) -> None:
        """Synthesize the first piece of the controller's likely reply while the pilot talks, so
        a reply that comes true starts from the TTS cache (service.likely_reply)."""
        assert self.frequency is not None
        prepare = getattr(self.frequency.tts, "prepare", None)
        if prepare is None:  # an engine without a cache in front (cache disabled, edge-tts failover)
            return
        try:
            for speech in self.service.likely_reply(link.session_id)[:1]:
                # needed once the pilot has finished talking, a few seconds from now
                with priority(Priority.AHEAD, time.monotonic() + SPECULATION_DUE_S):
                    made = await prepare(speech)
                metrics.SPECULATIVE_TTS.labels("synthesized" if made else "cached").inc()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("speculative synthesis failed for session %s", link.session_id, exc_info=True)

    async def _partials(self, tx: Transmission) -> None:
        while True:
            await asyncio.sleep(PARTIAL_EVERY_S)
            if tx.samples == 0:
                continue
            text = await tx.stream.partial()
            if text and text != tx.last_partial and self.tx is tx:
                tx.last_partial = text
                await self.send(p.transcript(None, text, final=False))

    async def _end_transmission(self) -> None:
        tx, self.tx = self.tx, None
        if tx is None:
            return
        tx.ended = time.monotonic()
        link = self._require()
        try:
            if tx.partial_task is not None:
                tx.partial_task.cancel()  # a decode it started may finish beside the final, not before
            result = await final_result(tx.stream) if tx.samples else SttResult("")
            metrics.observe_stage("speech_end_to_final", time.monotonic() - tx.ended)
        finally:
            if tx.partial_task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await tx.partial_task
            await tx.stream.aclose()
            if self.frequency is not None and tx.channel != "ask":
                self.frequency.unkey()
        text = result.text.strip()
        if tx.channel == "ask":
            if text:
                self._ask(text, source="voice")
            else:
                await self.send({"type": "assistant.error", "ask_id": None, "data": {"message": "nothing was heard on the ask key"}})
            return
        if not text and not tx.speech.heard:
            self.service.defer_silence(link.session_id)  # no speech (a click, breath): the turn goes on
            await self.send(p.transcript(None, "", final=True))
            return
        await self._transmit(link, text, spoken_until=tx.ended, hearing=transmission_hearing(tx, result))

    async def _typed(self, text: str) -> None:
        link = self._require()
        if self.frequency is not None and self.tx is None:  # keyed already: the mic stays keyed until ptt.up
            self.frequency.key()
            self.frequency.unkey()
        await self._transmit(link, text)

    async def _transmit(
        self, link: Link, text: str, spoken_until: float | None = None, hearing: Hearing | None = None
    ) -> None:
        """Hand a final transcript (or typed text) to the engine; `spoken_until` is when the pilot
        stopped talking, for a voice transmission (its reply's latency clock), and `hearing`
        what the recognizer was unsure of (voice only; the text may be empty then)."""
        session = self.service.get(link.session_id)
        transmission_id = f"{link.session_id}-x{session.transmissions + 1}"
        await self.send(p.transcript(transmission_id, text, final=True, hearing=hearing))
        started = time.monotonic()
        # the decision arrives through the hub; the LLM router, if asked, is awaited here
        decision = await self.service.transmit_async(link.session_id, text, hearing=hearing)
        decided = time.monotonic()
        metrics.TRANSMISSIONS.labels("text" if spoken_until is None else "voice").inc()
        if spoken_until is not None:
            metrics.observe_stage("final_to_decision", decided - started)
            if decision.messages:
                link.speech_end_at[decision.messages[0].message_id] = spoken_until
        for msg in decision.messages:
            link.decided_at.setdefault(msg.message_id, decided)

    # ------------------------------------------------------------------ teardown

    async def _teardown(self) -> None:
        self._closed = True
        if self.tx is not None:
            tx, self.tx = self.tx, None
            if tx.partial_task is not None:
                tx.partial_task.cancel()
            with contextlib.suppress(Exception):
                await tx.stream.aclose()
        if self._speculation is not None:
            self._speculation.cancel()
        if self.asks is not None:
            await self.asks.close()
        if self._events_task is not None:
            self._events_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._events_task
        if self.link is not None:
            metrics.ACTIVE_SESSIONS.dec()
        if self.link is not None and self.link.events is not None:
            self.service.hub.unsubscribe(self.link.session_id, self.link.events)
        if self.atis is not None:
            await self.atis.stop()
        if self.frequency is not None:
            await self.frequency.close()


def transmission_hearing(tx: Transmission, result: SttResult) -> Hearing:
    """What was unsure about a voice transmission: the recognizer's hearing, `cut_off` when the
    audio ended mid-speech (the length limit, or the key released while the pilot still talked),
    and for speech without a recognized word (empty text) confidence 0."""
    update: dict[str, Any] = {}
    if tx.dropped or tx.speech.speaking_at_end:
        update["cut_off"] = True
    if not result.text.strip():
        update["confidence"] = 0.0
    return result.hearing.model_copy(update=update) if update else result.hearing


def encode(event: dict[str, Any]) -> str:
    """JSON text as Starlette's `send_json` writes it."""
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False)
