"""The radio's "ask" channel: a question to the briefing assistant over the radio socket
(docs/protocol-v1.md "Ask the briefing assistant"), typed (`{"type": "ask", "text"}`) or spoken on
the ask key (`ptt.down` with `channel: "ask"`), never on the frequency: the engine does not hear it,
the controller's message is not cut, and the answer is not an `atc.message`.

The answer streams as the assistant's own events, typed `assistant.*` (the SSE events of
POST /api/aviation-agent/chat/stream with `ask_id`), then, when the connection has a session (an
output rate and a voice), is spoken: `assistant.speech` carries its spoken text and the PCM16 audio
(`assistant.speech`, then `assistant.speech.audio` events of one second each, base64, at the
session's output rate, no radio effect, then `assistant.speech.end`) inside JSON events, so it can
never interleave with the controller's binary audio frames; the chunks wait while the socket's send
queue is full (`backlog`), so a slow reader is not cut off for a long answer. One question at a time per connection; the last turns are
kept so follow-ups ("and only paved ones?") work.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from assistant.streaming import stream_agent
from gateway.audio.resample import resample

log = logging.getLogger(__name__)

HISTORY_TURNS = 6  # user + assistant messages kept for follow-ups
SPOKEN_CHARS = 400
BACKLOG_BYTES = 256 * 1024  # the send queue's fill above which speech chunks wait  # the spoken answer: its first sentences, markdown removed
_ids = itertools.count(1)
# what the recognizer should expect on the ask key (instead of the state's ATC phrases)
ASK_PHRASES = ("Find airports between Fairoaks and Cannes", "Find airports near Lyon", "Tower frequency at Munich",
               "Do I need a flight plan for VFR in France?", "What must I read back in a taxi clearance?")
ASK_VOCABULARY = ("airports", "airfields", "near", "between", "weather", "frequency", "runway", "paved",
                  "flight plan", "read back", "clearance", "transponder", "airspace")


def spoken_text(answer: str, limit: int = SPOKEN_CHARS) -> str:
    """What TTS says: no markdown, list items as sentences, cut at a sentence end near `limit`."""
    text = re.sub(r"[*_`#>]", "", answer)
    text = re.sub(r"^\s*-\s+", "", text, flags=re.M)
    text = re.sub(r"\s*\n+\s*", ". ", text)
    text = re.sub(r"\.\s*\.", ".", text).strip()
    if len(text) <= limit:
        return text
    cut = max(text.rfind(". ", 0, limit), text.rfind("; ", 0, limit))
    return (text[: cut + 1] if cut > 40 else text[:limit].rsplit(" ", 1)[0] + " …").strip()


class AskChannel:
    """One connection's questions to the assistant."""

    def __init__(self, assistant: Any, send: Callable[[dict[str, Any]], Awaitable[None]], connection_id: str,
                 backlog: Callable[[], int] = lambda: 0) -> None:
        self.assistant = assistant  # gateway/api/assistant.py AssistantService
        self.send = send
        self.backlog = backlog
        self.connection_id = connection_id
        self.history: list[dict[str, str]] = []
        self.task: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    def ask(self, text: str, *, source: str, speak: Any = None, ask_id: str | None = None) -> str:
        """Start answering `text` in the background; `speak()` returns (tts, output_rate) or None."""
        ask_id = ask_id or f"{self.connection_id}-a{next(_ids)}"
        self.task = asyncio.create_task(self._answer(ask_id, text, source, speak), name="livefreq-ask")
        return ask_id

    async def _answer(self, ask_id: str, text: str, source: str, speak: Any) -> None:
        from datetime import UTC, datetime

        await self.send({"type": "assistant.question", "ask_id": ask_id, "text": text, "source": source})
        messages = [*self.history, {"role": "user", "content": text}]
        started = datetime.now(UTC)
        answer = ""

        def on_final(state: dict[str, Any]) -> None:
            self.assistant.write_log(ask_id, text, state, started)

        try:
            async for ev in stream_agent(self.assistant.graph, messages, ask_id, on_final=on_final):
                if ev["event"] == "message":
                    answer += ev["data"].get("content", "")
                await self.send({"type": f"assistant.{ev['event']}", "ask_id": ask_id, "data": ev["data"]})
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # stream_agent never raises; a last resort
            log.exception("the assistant failed on the radio socket")
            await self.send({"type": "assistant.error", "ask_id": ask_id, "data": {"message": type(exc).__name__}})
            return
        self.history = [*messages, {"role": "assistant", "content": answer}][-HISTORY_TURNS:]
        voice = speak() if speak is not None else None
        if voice is None or not answer.strip():
            return
        tts, rate = voice
        words = spoken_text(answer)
        try:
            pcm = await tts.synthesize(words)
            if tts.sample_rate != rate:
                pcm = await asyncio.to_thread(resample, pcm, tts.sample_rate, rate)
        except Exception as exc:
            log.warning("speaking the assistant's answer failed: %s", exc)
            await self.send({"type": "assistant.speech", "ask_id": ask_id, "text": words, "audio": None,
                             "error": f"speech failed ({type(exc).__name__})"})
            return
        await self.send({
            "type": "assistant.speech", "ask_id": ask_id, "text": words,
            "audio": {"format": "pcm_s16le", "sample_rate": rate, "duration_ms": round(len(pcm) / 2 / rate * 1000)},
        })
        step = rate * 2  # one second of PCM16
        for seq, at in enumerate(range(0, len(pcm), step)):
            while self.backlog() > BACKLOG_BYTES:
                await asyncio.sleep(0.05)
            await self.send({"type": "assistant.speech.audio", "ask_id": ask_id, "seq": seq,
                             "data": base64.b64encode(pcm[at:at + step]).decode("ascii")})
        await self.send({"type": "assistant.speech.end", "ask_id": ask_id})

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
