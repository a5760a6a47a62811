"""Speculative speech: the controller's likely reply synthesized while the pilot still talks.

When the pilot keys the mic, the service predicts the reply to the phrase the state expects
(`RadioService.likely_reply`: decided on a copy, nothing stored) and every piece of it goes to the
TTS engine's cache at `Priority.AHEAD`; a reply that comes true then plays from the cache.

Every piece, not only the first: the rest of a reply used to be synthesized while it played, and
under load those pieces (urgent near their deadline, gateway/speech/cpu.py) went before other
pilots' finals. Made while the pilot talks, they cost the same CPU at a time nobody waits. At 71
pilots (`livefreq load --sessions 71 --duration 60`): p95 first audio 1725 ms with the first piece
only, 631 ms with all, 0 gaps both (docs/performance.md).
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


class Speculation:
    def __init__(self, service: RadioService) -> None:
        self.service = service
        self._task: asyncio.Task[None] | None = None

    def start(self, session_id: str, tts: TtsEngine) -> None:
        """Begin synthesizing the likely reply (one at a time per connection)."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._speculate(session_id, tts), name="livefreq-speculative-tts")

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _speculate(self, session_id: str, tts: TtsEngine) -> None:
        prepare = getattr(tts, "prepare", None)
        if prepare is None:  # an engine without a cache in front (cache disabled, edge-tts failover)
            return
        try:
            for speech in self.service.likely_reply(session_id)[:1]:
                # needed once the pilot has finished talking, a few seconds from now
                with priority(Priority.AHEAD, time.monotonic() + SPECULATION_DUE_S):
                    made = await prepare(speech)
                metrics.SPECULATIVE_TTS.labels("synthesized" if made else "cached").inc()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("speculative synthesis failed for session %s", session_id, exc_info=True)
