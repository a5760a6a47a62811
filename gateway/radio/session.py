"""A session on the radio: started or resumed on a connection, its decisions spoken there.

Every decision about the session (from this connection, HTTP, the background clock, telemetry)
arrives through the service's `DecisionHub` and leaves as `decision` and `state` events, while
its controller messages are transmitted on the session's `Frequency`, which the connection's
`Playout` is tuned to. Resuming replays the controller messages no socket heard.

Each attached session holds one slot of the node's voice capacity (gateway/capacity.py), taken
before anything is created and given back when the connection closes: past capacity a
`session.start` or `session.resume` is refused at once with `too_many_sessions` and a
`retry_after_s` hint, and the sessions already admitted are never touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from engine.models import ControllerMessage, Decision, Session
from engine.phraseology.stations import STATION_TITLES
from gateway import metrics
from gateway.audio.resample import StreamResampler
from gateway.audio.vad import VoiceActivityDetector
from gateway.auth import AuthError
from gateway.radio import events as e
from gateway.radio import protocol as p
from gateway.radio.atis import AtisBroadcast
from gateway.radio.frequency import Frequency
from gateway.radio.link import STT_RATE, Link
from gateway.radio.playout import Playout
from gateway.radio.speculation import ATTACH_DUE_S
from gateway.service import SessionNotFound
from gateway.speech.stack import UnknownVoice
from gateway.speech.tts.base import TtsEngine

if TYPE_CHECKING:
    from gateway.radio.connection import RadioConnection

log = logging.getLogger("livefreq.radio")


class RadioSession:
    def __init__(self, connection: RadioConnection) -> None:
        self.conn = connection
        self.service = connection.service
        self._events_task: asyncio.Task[None] | None = None
        self._slot = False  # holds one of the node's voice slots

    # ------------------------------------------------------------------ admission

    def reserve(self) -> bool:
        """Take a voice slot ahead of `start`/`resume` (a WebRTC offer carrying its session
        message reserves it before answering); False when the node is full."""
        if not self._slot:
            self._slot = self.conn.capacity.try_acquire()
        return self._slot

    def _admit(self) -> None:
        """A slot for the session about to attach, or `too_many_sessions` with the retry hint."""
        if not self.reserve():
            capacity = self.conn.capacity
            retry = capacity.retry_after_s()
            raise p.ProtocolError(
                "too_many_sessions",
                f"this gateway node serves its capacity of {capacity.capacity} voice sessions; "
                f"try again in {retry:g} s, or another node",
                retry_after_s=retry,
            )

    def unreserve(self) -> None:
        """Give back a slot `reserve` took for a session that never attached (an offer that failed)."""
        if self.conn.link is None:
            self._release(departed=False)

    def _release(self, *, departed: bool = True) -> None:
        if self._slot:
            self._slot = False
            self.conn.capacity.release(departed=departed)

    # ------------------------------------------------------------------ start, resume

    async def start(self, msg: p.SessionStart) -> None:
        conn = self.conn
        if conn.link is not None:
            raise p.ProtocolError("session_active", "this socket already has a session; open a new socket for another")
        _authorize(lambda: conn.auth.require_key(conn.principal, "start a session"))
        self._admit()
        try:
            await self._start(msg)
        except BaseException:
            if conn.link is None:
                self._release(departed=False)  # nothing attached: the slot was never used
            raise

    async def _start(self, msg: p.SessionStart) -> None:
        conn = self.conn
        tts = self._voice(msg.voice)
        session, decision, token = await self.service.start(
            flow=msg.flow, scenario=msg.scenario, seed=msg.seed, owner=conn.principal.key_id, flight_plan=msg.flight_plan,
            traffic=msg.traffic,
        )
        settings = conn.settings
        await self._attach(
            session,
            token,
            mode=msg.mode,
            input_rate=conn.transport.input_rate or msg.input_audio.sample_rate,
            output_rate=conn.transport.output_rate or msg.output_audio.sample_rate,
            radio_level=msg.radio_level or settings.radio_level,
            radio_effect=settings.radio_effect if msg.radio_effect is None else msg.radio_effect,
            resumed=False,
            tts=tts,
            voice=msg.voice or conn.speech.default_voice,
            messages=decision.messages,
        )
        await self.deliver(decision, send_decision=False)

    async def resume(self, msg: p.SessionResume) -> None:
        conn, service = self.conn, self.service
        if conn.link is not None:
            raise p.ProtocolError("session_active", "this socket already has a session")
        if conn.auth.enabled:  # the credential's reach first (HTTP: gateway/api/access.py)
            if conn.principal.is_key:
                with contextlib.suppress(SessionNotFound):  # unknown: `unknown_session` below, as over HTTP
                    owner = service.owner_of(msg.session_id)
                    _authorize(lambda: conn.auth.check_session(conn.principal, msg.session_id, owner))
            else:
                _authorize(lambda: conn.auth.check_session(conn.principal, msg.session_id, None))
        if not service.check_token(msg.session_id, msg.resume_token):
            service.get(msg.session_id)  # unknown session -> its own typed error
            raise p.ProtocolError("bad_token", "the resume token does not match this session")
        self._admit()
        try:
            await self._resume(msg)
        except BaseException:
            if conn.link is None:
                self._release(departed=False)
            raise

    async def _resume(self, msg: p.SessionResume) -> None:
        conn, service = self.conn, self.service
        session = service.get(msg.session_id)
        tts = self._voice(msg.voice)
        # controller calls made while no socket listened (timers) are spoken now: nothing lost
        delivered = service.delivered_seq(session.session_id)
        missed = [m for m in session.message_history if m.seq > delivered]
        await self._attach(
            session,
            msg.resume_token,
            mode=msg.mode or "ptt",
            input_rate=conn.transport.input_rate or (msg.input_audio.sample_rate if msg.input_audio else 16000),
            output_rate=conn.transport.output_rate or (msg.output_audio.sample_rate if msg.output_audio else 16000),
            radio_level=msg.radio_level or conn.settings.radio_level,
            radio_effect=conn.settings.radio_effect,
            resumed=True,
            tts=tts,
            voice=msg.voice or conn.speech.default_voice,
            messages=missed,
        )
        link = conn.require()
        if missed:
            link.frequency.transmit(missed)
        await self.send_state()

    def _voice(self, voice: str | None) -> TtsEngine:
        try:
            return self.conn.speech.tts_for(voice)
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
        conn = self.conn
        playout = Playout(
            conn.send,
            conn.send_audio,
            tts,
            output_rate=output_rate,
            radio_level=radio_level,
            radio_effect=radio_effect,
            pace=conn.settings.audio_pacing,
            on_sent=self._message_done,
            on_first_audio=self._first_audio,
        )
        frequency = Frequency.of_session(session.session_id)  # alone on it, for now
        frequency.tune(playout)
        link = Link(
            session.session_id, mode, input_rate, output_rate, radio_level, radio_effect,
            playout=playout, frequency=frequency, atis=AtisBroadcast(playout),
            resampler=StreamResampler(input_rate, STT_RATE) if input_rate != STT_RATE else None,
            vad=VoiceActivityDetector(sample_rate=STT_RATE) if mode == "vox" else None,
        )
        link.state_key = (session.active.flow, session.active.state)
        conn.link = link
        playout.start()
        metrics.ACTIVE_SESSIONS.inc()
        link.events = self.service.hub.subscribe(session.session_id)
        self._events_task = asyncio.create_task(self._consume(link), name="livefreq-radio-events")
        await conn.send(
            e.SessionStarted(
                session_id=session.session_id,
                resume_token=token,
                session_token=conn.auth.session_token(session.session_id),
                resumed=resumed,
                flow=session.active.flow,
                state=session.active.state,
                scenario=session.variables,
                station=session.station,
                frequency=session.frequency,
                mode=mode,  # type: ignore[arg-type]
                voice=voice,
                radio_level=radio_level,
                expected_pilot=self.service.expected_pilot(session),
                speech=e.SpeechStatus(**conn.speech.describe()),
                messages=e.refs(messages),
                station_titles=STATION_TITLES,
            )
        )
        # the reply to the pilot's next call, made while the pilot sets up (gateway/radio/speculation.py)
        conn.pipeline.speculation.start(session.session_id, tts, ATTACH_DUE_S)

    async def _message_done(self, msg: ControllerMessage) -> None:
        """A controller message has been spoken: the pilot's reply time starts now."""
        link = self.conn.link
        if link is None:
            return
        if AtisBroadcast.owns(msg):
            link.atis.sent(msg)  # a broadcast: no session message, no reply expected
            return
        link.decided_at.pop(msg.message_id, None)
        link.speech_end_at.pop(msg.message_id, None)
        metrics.CONTROLLER_MESSAGES.labels("sent").inc()
        await self.service.delivered_async(link.session_id, msg.seq)

    def _first_audio(self, msg: ControllerMessage) -> None:
        """The first audio of a controller message left: close its stage clocks."""
        link = self.conn.link
        if link is None:
            return
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
                await self.deliver(decision)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("delivering a decision failed")

    async def deliver(self, decision: Decision, send_decision: bool = True) -> None:
        if send_decision:
            await self.conn.send(e.decision_event(decision))
        link = self.conn.link
        if link is not None:
            now = time.monotonic()
            for msg in decision.messages:
                link.decided_at.setdefault(msg.message_id, now)
            spoken = link.spoken_until.pop(decision.transmission_id or "", None)
            if spoken is not None and decision.messages:
                link.speech_end_at[decision.messages[0].message_id] = spoken
            if decision.messages:
                link.frequency.transmit(list(decision.messages))
        await self.send_state()

    async def send_state(self) -> None:
        link = self.conn.require()
        session = await self.service.get_async(link.session_id)
        link.state_key = (session.active.flow, session.active.state)
        await self.conn.send(
            e.State(
                flow=session.active.flow,
                state=session.active.state,
                phase=self.service.phase(session),
                station=session.station,
                frequency=session.frequency,
                completed=session.completed,
                expected_pilot=self.service.expected_pilot(session),
            )
        )

    async def close(self) -> None:
        """Stop listening to the session and release the radio (the session itself stays)."""
        link = self.conn.link
        self._release(departed=link is not None)  # the slot is free for the next session at once
        if self._events_task is not None:
            self._events_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._events_task
        if link is None:
            return
        metrics.ACTIVE_SESSIONS.dec()
        if link.events is not None:
            self.service.hub.unsubscribe(link.session_id, link.events)
        await link.atis.stop()
        link.frequency.leave(link.playout)
        await link.playout.close()
        await self.service.flush(link.session_id)  # the delivery marks and silence deferrals are in


def _authorize(check: Any) -> None:
    """Run an `Authenticator` check; a refusal is a `forbidden` error, the socket stays open."""
    try:
        check()
    except AuthError as exc:
        raise p.ProtocolError(exc.code, exc.message) from exc
