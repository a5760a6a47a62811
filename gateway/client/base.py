"""What every livefreq radio client does, whatever carries it: record, wait, and speak protocol v1.

A client keeps everything it received in arrival order (`Received`), with arrival times, so a test,
a benchmark or a simulator plugin can wait for "the decision of my last transmission" by index
(`mark()` before acting, then `wait_type(..., start=mark)`) instead of by racing callbacks. The
protocol verbs (`start`, `resume`, `ptt_down`, `transmit_audio`, `telemetry`, `tune`, `say`) are
the same JSON messages on every transport; subclasses only say how a message and audio move
(gateway/client/ws.py, gateway/client/webrtc.py).
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["FRAME_MS", "ClientBase", "ControllerAudio", "ProtocolRefused", "Received", "frames"]

T = TypeVar("T")

FRAME_MS = 20  # what a microphone client sends: 20 ms of PCM per frame


def frames(pcm: bytes, rate: int, ms: int = FRAME_MS) -> list[bytes]:
    """`pcm` cut into frames of `ms` milliseconds (the last one may be shorter)."""
    step = rate * ms // 1000 * 2
    return [pcm[i : i + step] for i in range(0, len(pcm), step)]


@dataclass
class Received:
    """Everything a client received, in order, with `time.perf_counter()` arrival times."""

    events: list[dict[str, Any]] = field(default_factory=list)
    event_times: list[float] = field(default_factory=list)  # parallel to `events`
    order: list[Any] = field(default_factory=list)  # event dicts and ("audio", nbytes) in arrival order
    audio: dict[str, int] = field(default_factory=dict)  # message_id -> bytes of audio
    first_audio_at: dict[str, float] = field(default_factory=dict)  # message_id -> first audio frame
    pcm: dict[str, bytearray] = field(default_factory=dict)  # message_id -> its audio (keep_audio=True)
    # message_id -> (arrival time, bytes) of every audio frame: does the audio keep up with real time?
    audio_frames: dict[str, list[tuple[float, int]]] = field(default_factory=dict)
    stray_audio: int = 0  # audio frames outside any atc.message ... atc.message.end (a protocol fault)


@dataclass
class ControllerAudio:
    """One controller message as heard: its `atc.message` event, its audio, how it ended."""

    event: dict[str, Any]
    pcm: bytes
    sample_rate: int
    interrupted: bool = False

    @property
    def text(self) -> str:
        return str(self.event.get("text") or "")

    @property
    def seconds(self) -> float:
        return len(self.pcm) / 2 / self.sample_rate


class ClientBase(ABC):
    """Recording, waiting and the protocol verbs; `send`, `_send_audio_stream`, `close` and
    `output_rate` come from the transport."""

    transport = "?"
    output_rate = 16000  # sample rate of the controller audio this client records

    def __init__(self, keep_audio: bool = False) -> None:
        self.rx = Received()
        self.keep_audio = keep_audio
        self._current: str | None = None  # the message whose audio is arriving
        self._on_air: str | None = None  # between an atc.message and its atc.message.end
        self._new = asyncio.Event()
        self._closed = False

    # ------------------------------------------------------------------ transport hooks

    @abstractmethod
    async def send(self, message: dict[str, Any] | str | bytes) -> None:
        """Send one protocol message (a dict as JSON, text as is, bytes as audio)."""

    @abstractmethod
    async def close(self) -> None:
        """Hang up: the transport's goodbye, then stop reading."""

    @abstractmethod
    async def stream(self, pcm: bytes, rate: int, *, realtime: bool = True, frame_ms: int = FRAME_MS) -> None:
        """Send `pcm` (PCM16 mono at `rate`) as the microphone, as it would be spoken."""

    async def stream_from(self, source: AsyncIterable[bytes], rate: int) -> None:
        """Send PCM16 mono chunks at `rate` from any source (a simulator's intercom, a file, a
        sound card) as they come, until it ends."""
        async for chunk in source:
            await self.stream(chunk, rate, realtime=False)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def controller_talking(self) -> bool:
        """Between an `atc.message` and its `atc.message.end`: a pilot waits before keying."""
        return self._on_air is not None

    # ------------------------------------------------------------------ recording

    def _record_event(self, event: dict[str, Any]) -> None:
        now = time.perf_counter()
        if event.get("type") == "atc.message":
            self._on_air = event.get("message_id")
        elif event.get("type") == "atc.message.end":
            self._on_air = None
        self.rx.events.append(event)
        self.rx.event_times.append(now)
        self.rx.order.append(event)
        self._new.set()

    def _record_audio(self, message_id: str | None, pcm: bytes, at: float | None = None) -> None:
        now = time.perf_counter() if at is None else at
        self.rx.order.append(("audio", len(pcm)))
        if message_id is not None:
            self.rx.audio[message_id] = self.rx.audio.get(message_id, 0) + len(pcm)
            self.rx.first_audio_at.setdefault(message_id, now)
            self.rx.audio_frames.setdefault(message_id, []).append((now, len(pcm)))
            if self.keep_audio:
                self.rx.pcm.setdefault(message_id, bytearray()).extend(pcm)
        else:
            self.rx.stray_audio += 1
        self._new.set()

    def _ended(self) -> None:
        self._closed = True
        self._new.set()

    # ------------------------------------------------------------------ waiting

    def mark(self) -> int:
        """Index of the next event to arrive: wait from here for the answer to what you send next."""
        return len(self.rx.events)

    async def until(self, condition: Callable[[], T | None], timeout: float = 60.0, what: str = "condition") -> T:
        """Wait until `condition()` returns something other than None (checked on every frame
        received) and return it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = condition()
            if value is not None:
                return value
            if self.closed:
                raise ConnectionError(f"the gateway closed the connection while waiting for {what}")
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"no {what} within {timeout:g} s; last events: {[e['type'] for e in self.rx.events[-8:]]}")
            self._new.clear()
            try:
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancel
                # that meets a just-set event, and a cancelled waiter would run on
                async with asyncio.timeout(remaining):
                    await self._new.wait()
            except TimeoutError:
                pass

    def find(self, predicate: Callable[[dict[str, Any]], bool], start: int = 0) -> int | None:
        """Index of the first event from `start` on that satisfies `predicate`, or None."""
        for index in range(start, len(self.rx.events)):
            if predicate(self.rx.events[index]):
                return index
        return None

    async def wait_index(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60.0, start: int = 0) -> int:
        """Index of the first event from `start` on that satisfies `predicate` (waits for it)."""
        return await self.until(lambda: self.find(predicate, start), timeout, "matching event")

    async def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60.0, start: int = 0) -> dict[str, Any]:
        """The first event from index `start` on that satisfies `predicate`."""
        return self.rx.events[await self.wait_index(predicate, timeout, start)]

    async def wait_type(self, kind: str, timeout: float = 60.0, start: int = 0, **fields: Any) -> dict[str, Any]:
        """The first event of type `kind` (with these field values) from index `start` on."""
        return await self.wait_for(lambda e: e["type"] == kind and all(e.get(k) == v for k, v in fields.items()), timeout, start)

    # ------------------------------------------------------------------ protocol verbs

    async def start(self, *, timeout: float = 60.0, **fields: Any) -> dict[str, Any]:
        """`session.start` with `fields` (flow, scenario, seed, mode, radio_level, voice, ...);
        returns `session.started` (a refusal raises `ProtocolRefused`)."""
        return await self._attach({"type": "session.start", **{k: v for k, v in fields.items() if v is not None}}, timeout)

    async def resume(self, session_id: str, resume_token: str, *, timeout: float = 60.0, **fields: Any) -> dict[str, Any]:
        """`session.resume`: reattach to a session; returns `session.started` (resumed)."""
        message = {"type": "session.resume", "session_id": session_id, "resume_token": resume_token}
        return await self._attach({**message, **{k: v for k, v in fields.items() if v is not None}}, timeout)

    async def _attach(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        mark = self.mark()
        try:
            await self.send(message)
            index = await self.wait_index(lambda e: e["type"] in ("session.started", "error"), timeout, mark)
        except Exception as exc:
            # a gateway that refuses the connection itself (no API key, a foreign origin) says why
            # in a fatal error and closes, possibly before this message went out: raise its reason
            refusal = self.find(lambda e: e["type"] == "error" and bool(e.get("fatal")))
            if self.closed and refusal is not None:
                raise ProtocolRefused(self.rx.events[refusal]) from exc
            raise
        event = self.rx.events[index]
        if event["type"] == "error":
            raise ProtocolRefused(event)
        return event

    async def ptt_down(self) -> None:
        await self.send({"type": "ptt.down"})

    async def ptt_up(self) -> None:
        await self.send({"type": "ptt.up"})

    async def transmit_audio(self, pcm: bytes, rate: int, *, realtime: bool = False, frame_ms: int = FRAME_MS) -> float:
        """Push-to-talk one recording: ptt.down, the audio, ptt.up. Returns when ptt.up was sent
        (`time.perf_counter()` just before sending it)."""
        await self.ptt_down()
        await self.stream(pcm, rate, realtime=realtime, frame_ms=frame_ms)
        released = time.perf_counter()
        await self.ptt_up()
        return released

    async def say(self, text: str) -> None:
        """A typed transmission (same path as a final transcript)."""
        await self.send({"type": "text", "text": text})

    async def telemetry(self, **fields: Any) -> None:
        """Aircraft state: on_ground, altitude_ft, ias_kt, gs_kt, vs_fpm, heading_deg, lat, lon,
        squawk, com1, on_runway (None values are left out)."""
        await self.send({"type": "telemetry", **{k: v for k, v in fields.items() if v is not None}})

    async def tune(self, frequency: str) -> None:
        """The pilot changed COM1 to `frequency` (e.g. "127.275")."""
        await self.send({"type": "tune", "frequency": frequency})

    async def ping(self) -> None:
        await self.send({"type": "ping"})

    # ------------------------------------------------------------------ what came back

    def messages(self, start: int = 0) -> list[ControllerAudio]:
        """The controller messages ended so far (from event index `start`), in order, with their
        audio when the client keeps it (`keep_audio=True`)."""
        out: list[ControllerAudio] = []
        opened: dict[str, dict[str, Any]] = {}
        for event in self.rx.events[start:]:
            if event["type"] == "atc.message":
                opened[event["message_id"]] = event
            elif event["type"] == "atc.message.end" and event["message_id"] in opened:
                message_id = event["message_id"]
                pcm = bytes(self.rx.pcm.get(message_id, b""))
                out.append(ControllerAudio(opened.pop(message_id), pcm, self.output_rate, bool(event.get("interrupted"))))
        return out


class ProtocolRefused(Exception):
    """The gateway answered with an `error` event (its `code` and `message`)."""

    def __init__(self, event: dict[str, Any]) -> None:
        super().__init__(f"{event.get('code')}: {event.get('message')}")
        self.event = event
        self.code = str(event.get("code"))
