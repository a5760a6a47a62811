"""Speculative speech: the controller's likely reply synthesized while the pilot still talks.

When the pilot keys the mic, the service predicts the reply to the phrase the state expects
(`RadioService.likely_reply`: decided on a copy, nothing stored) and every piece of it goes to the
TTS engine's cache at `Priority.AHEAD`; a reply that comes true then plays from the cache.

Every piece, not only the first: the rest of a reply used to be synthesized while it played, and
under load those pieces (urgent near their deadline, gateway/speech/cpu.py) went before other
pilots' finals. Made while the pilot talks, they cost the same CPU at a time nobody waits. At 71
pilots (`livefreq load --sessions 71 --duration 60`): p95 first audio 1725 ms with the first piece
only, 631 ms with all, 0 gaps both (docs/performance.md).

And as soon as a session is on the radio (started or resumed), not only when the pilot keys: the
reply to the first call is the longest of a flight (the clearance, about 12 s of speech) and the
most predictable, and pilots take a while to set up before they call. When a class joins at once,
those replies used to be made all in the minute everyone called, and the first ones were seconds
late; made in the seconds before, they play from the cache. Its deadline (`ATTACH_DUE_S`) is later
than a keyed pilot's (`SPECULATION_DUE_S`), so it yields to them. At 100 pilots for 120 s
(`livefreq load --sessions 100 --duration 120`): p95 first audio 2218 ms (a session's first
reply: 11.5 s) and one audio gap without it, 708 ms (first reply 492 ms) and none with it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from gateway import metrics
from gateway.speech.cpu import Priority, priority
from gateway.speech.tts.base import TtsEngine

if TYPE_CHECKING:
    from gateway.service import RadioService

log = logging.getLogger("livefreq.radio")

SPECULATION_DUE_S = 2.0  # when a likely reply is needed, for the CPU pool's deadline order
ATTACH_DUE_S = 10.0  # the reply to a session's first call: pilots set up before they call


class Speculation:
    def __init__(self, service: RadioService) -> None:
        self.service = service
        self._task: asyncio.Task[None] | None = None

    def start(self, session_id: str, tts: TtsEngine, due_s: float = SPECULATION_DUE_S) -> None:
        """Begin synthesizing the likely reply, needed in `due_s` seconds (one at a time per
        connection: one still running is not started again, whatever its deadline)."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._speculate(session_id, tts, due_s), name="livefreq-speculative-tts")

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _speculate(self, session_id: str, tts: TtsEngine, due_s: float) -> None:
        prepare = getattr(tts, "prepare", None)
        if prepare is None:  # an engine without a cache in front (cache disabled, edge-tts failover)
            return
        try:
            # a dry run of the engine on the stored session: off the event loop (a store may be Redis)
            reply = await self.service.off_loop(session_id, self.service.likely_reply)
            for speech in reply[:1]:
                with priority(Priority.AHEAD, time.monotonic() + due_s):
                    made = await prepare(speech)
                metrics.SPECULATIVE_TTS.labels("synthesized" if made else "cached").inc()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("speculative synthesis failed for session %s", session_id, exc_info=True)
