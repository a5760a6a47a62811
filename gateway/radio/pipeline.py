"""The transmission pipeline of one connection: pilot audio in, a final transcript to the engine.

Input audio is resampled to 16 kHz and cut into 20 ms frames; a transmission (between `ptt.down`
and `ptt.up`, or between the VAD's speech start and end in vox mode) streams into the STT
engine, which sends partial transcripts while the pilot talks; the final transcript goes to the
session engine through the service. Keying the mic keys the session's `Frequency`: the
controller is cut and holds its next message until the pilot releases.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.hearing import HeardVerdict, Hearing
from engine.value_query import ValueQuery
from gateway import metrics
from gateway.ask import ASK_PHRASES, ASK_VOCABULARY
from gateway.audio.pcm import FrameBuffer
from gateway.audio.vad import SPEECH_END, SPEECH_START, SpeechTracker
from gateway.radio import events as e
from gateway.radio.link import STT_RATE, Link
from gateway.radio.protocol import ProtocolError
from gateway.radio.speculation import Speculation
from gateway.speech.hearing_chain import hear_out
from gateway.speech.stack import stt_context
from gateway.speech.stt.base import SttContext, SttResult, SttStream, final_result
from gateway.speech.stt.lexicon import radio_lexicon

if TYPE_CHECKING:
    from gateway.radio.connection import RadioConnection

log = logging.getLogger("livefreq.radio")

PARTIAL_EVERY_S = 0.5


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


class TransmissionPipeline:
    def __init__(self, connection: RadioConnection) -> None:
        self.conn = connection
        self.settings = connection.settings
        self.framer = FrameBuffer(STT_RATE, 20)
        self.tx: Transmission | None = None
        self.speculation = Speculation(connection.service)

    # ------------------------------------------------------------------ audio in

    async def on_audio(self, data: bytes) -> None:
        link = self.conn.require()
        if len(data) > self.settings.max_frame_bytes:
            raise ProtocolError("frame_too_large", f"audio frame of {len(data)} bytes; at most {self.settings.max_frame_bytes}")
        if len(data) % 2:
            raise ProtocolError("bad_audio", "audio frames are PCM16: an even number of bytes")
        link.stats["frames"] += 1
        if link.mode == "ptt" and self.tx is None:
            link.stats["ignored_frames"] += 1  # between transmissions the mic is not keyed
            return
        pcm = link.resampler.process(data) if link.resampler is not None else data
        if link.mode == "ptt":
            await self.feed(pcm)
            return
        assert link.vad is not None
        for frame in self.framer.push(pcm):
            event = link.vad.process(frame)
            if event is None:
                if self.tx is not None:
                    await self.feed(frame)
            elif event.type == SPEECH_START:
                await self.conn.send(e.Vad(speaking=True))
                await self.begin(event.audio)
            elif event.type == SPEECH_END:
                await self.feed(frame)
                await self.conn.send(e.Vad(speaking=False))
                await self.end()

    async def feed(self, pcm: bytes) -> None:
        tx = self.tx
        if tx is None or tx.dropped or not pcm:
            return
        tx.stream.feed(pcm)
        tx.speech.feed(pcm)
        tx.samples += len(pcm) // 2
        if tx.samples >= self.settings.max_transmission_s * STT_RATE:
            tx.dropped = True
            await self.conn.send(e.error("transmission_too_long", f"transmissions end after {self.settings.max_transmission_s:g} s; the rest of this one is ignored"))

    # ------------------------------------------------------------------ transmissions

    async def begin(self, preroll: bytes, channel: str = "radio") -> None:
        link = self.conn.require()
        if self.tx is not None:
            return
        speech, service = self.conn.speech, self.conn.service
        if not speech.ready:
            try:
                await speech.load()
            except Exception as exc:
                raise ProtocolError("speech_unavailable", f"speech engines are not available: {speech.error or exc}") from exc
        if channel == "ask":  # off the frequency: the controller is not cut, the engine hears nothing
            context = SttContext(expected_phrases=list(ASK_PHRASES), vocabulary=list(ASK_VOCABULARY), speaker=link.session_id)
            self.tx = Transmission(speech.stt.open(context), time.monotonic(), channel="ask")
            return
        service.defer_silence_soon(link.session_id, self.settings.max_transmission_s)  # no prompt while talking
        for cut in link.frequency.key():
            log.info("session %s: pilot keyed over controller message %s", link.session_id, cut.message_id)
        session = await service.get_async(link.session_id)  # after the deferral above, off the loop
        stream = speech.stt.open(stt_context(session, service.expected_pilot(session), radio_lexicon(service.registry)))
        self.tx = Transmission(stream, time.monotonic())
        await self.feed(preroll)
        self.tx.partial_task = asyncio.create_task(self._partials(self.tx), name="livefreq-partials")
        self.speculation.start(link.session_id, link.playout.tts)

    async def _partials(self, tx: Transmission) -> None:
        while True:
            await asyncio.sleep(PARTIAL_EVERY_S)
            if tx.samples == 0:
                continue
            text = await tx.stream.partial()
            if text and text != tx.last_partial and self.tx is tx:
                tx.last_partial = text
                await self.conn.send(e.transcript(None, text, final=False))

    async def end(self) -> None:
        tx, self.tx = self.tx, None
        if tx is None:
            return
        tx.ended = time.monotonic()
        link = self.conn.require()
        try:
            if tx.partial_task is not None:
                tx.partial_task.cancel()  # a decode it started may finish beside the final, not before
            result = await final_result(tx.stream) if tx.samples else SttResult("")
            metrics.observe_stage("speech_end_to_final", time.monotonic() - tx.ended)
            if self.settings.second_hearing and tx.channel != "ask" and tx.samples and (result.text.strip() or tx.speech.heard):

                async def judge(heard: SttResult) -> HeardVerdict:
                    hearing = transmission_hearing(tx, heard)
                    return await self.conn.service.off_loop(link.session_id, lambda sid: self.conn.service.verdict(sid, heard.text.strip(), hearing))

                async def ask(heard: SttResult) -> ValueQuery | None:
                    hearing = transmission_hearing(tx, heard)
                    return await self.conn.service.off_loop(link.session_id, lambda sid: self.conn.service.value_query(sid, heard.text.strip(), hearing))

                result = await hear_out(
                    tx.stream,
                    result,
                    judge,
                    ask if self.settings.value_checks else None,
                    confirm=self.settings.confirm_hearing,
                    confirm_queued=self.settings.confirm_hearing_queued,
                    speech_ended=tx.ended,
                    due_s=self.settings.second_hearing_due_s or None,
                    bigger_due_s=self.settings.bigger_hearing_due_s or None,
                    bigger_checks=self.settings.bigger_value_checks,
                )
        finally:
            if tx.partial_task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await tx.partial_task
            await tx.stream.aclose()
            if tx.channel != "ask":
                link.frequency.unkey()
        text = result.text.strip()
        if tx.channel == "ask":
            if text:
                self.conn.ask(text, source="voice")
            else:
                await self.conn.send(e.AssistantStream(type="assistant.error", ask_id=None, data={"message": "nothing was heard on the ask key"}))
            return
        if not text and not tx.speech.heard:
            await self.conn.service.defer_silence_async(link.session_id)  # a click, breath: the turn goes on
            await self.conn.send(e.transcript(None, "", final=True))
            return
        await self.transmit(link, text, spoken_until=tx.ended, hearing=transmission_hearing(tx, result))

    async def typed(self, text: str) -> None:
        link = self.conn.require()
        if self.tx is None:  # keyed already: the mic stays keyed until ptt.up
            link.frequency.key()
            link.frequency.unkey()
        await self.transmit(link, text)

    async def transmit(
        self, link: Link, text: str, spoken_until: float | None = None, hearing: Hearing | None = None
    ) -> None:
        """Hand a final transcript (or typed text) to the engine; `spoken_until` is when the pilot
        stopped talking, for a voice transmission (its reply's latency clock), and `hearing`
        what the recognizer was unsure of (voice only; the text may be empty then)."""
        service = self.conn.service
        session = await service.get_async(link.session_id)  # after this session's queued writes
        transmission_id = f"{link.session_id}-x{session.transmissions + 1}"
        await self.conn.send(e.transcript(transmission_id, text, final=True, hearing=hearing))
        started = time.monotonic()
        if spoken_until is not None:  # the reply's latency clock, should it be spoken before we resume
            link.spoken_until[transmission_id] = spoken_until
        try:
            # the decision arrives through the hub; the LLM router, if asked, is awaited here
            decision = await service.transmit_async(link.session_id, text, hearing=hearing)
        finally:
            unclaimed = link.spoken_until.pop(transmission_id, None)
        decided = time.monotonic()
        metrics.TRANSMISSIONS.labels("text" if spoken_until is None else "voice").inc()
        if spoken_until is not None:
            metrics.observe_stage("final_to_decision", decided - started)
            if decision.messages and unclaimed is not None:  # not delivered yet
                link.speech_end_at[decision.messages[0].message_id] = spoken_until
        for msg in decision.messages:
            link.decided_at.setdefault(msg.message_id, decided)

    async def close(self) -> None:
        if self.tx is not None:
            tx, self.tx = self.tx, None
            if tx.partial_task is not None:
                tx.partial_task.cancel()
            with contextlib.suppress(Exception):
                await tx.stream.aclose()
        self.speculation.cancel()


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
