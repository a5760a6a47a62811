"""What the radio asks the engine about a voice transmission before deciding it: dry runs on a
copy of the session, which store nothing.

The hearing chain (gateway/speech/hearing_chain.py) spends a decode only where the engine's answer
to what was heard calls for one: whether it would settle and how it would judge each readback
field (one verdict), which issued values it would have checked in the audio; the speculative TTS
synthesizes the reply the state's first expected phrase would get. Kept apart from `RadioService`'s writes so
each stays small; `RadioService` inherits these (its lock, repository, engine and clock).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from engine.hearing import HeardVerdict, Hearing
from engine.models import Decision
from engine.session import SessionEngine
from engine.value_query import ValueQuery
from gateway.store import SessionRepository

log = logging.getLogger("gateway.service")


class DryRuns:
    """The dry runs of `RadioService` (see the module doc)."""

    _lock: threading.RLock
    repository: SessionRepository
    engine: SessionEngine
    clock: Callable[[], float]

    def likely_reply(self, session_id: str) -> list[str]:
        """The controller's reply (spoken forms) if the pilot now says the state's first expected
        phrase, decided on a copy (nothing stored): the voice path synthesizes it while the pilot
        still talks (speculative TTS). Empty when the state expects nothing, or no answer."""
        try:
            decision = self._dry_run(session_id, None)
        except Exception:  # a guess only: never let it break the transmission it serves
            log.exception("predicting the reply of session %s failed", session_id)
            decision = None
        return [message.speech for message in decision.messages] if decision is not None else []

    def verdict(self, session_id: str, text: str, hearing: Hearing | None) -> HeardVerdict:
        """What the engine would decide of `text` as heard, in brief (`HeardVerdict`: settled, and
        the readback's verdict per field), on a copy of the session: the radio's hearing chain
        spends a decode only where it calls for one (gateway/speech/hearing_chain.py)."""
        return HeardVerdict.of(self._dry_run(session_id, text, hearing))

    def value_query(self, session_id: str, text: str, hearing: Hearing | None) -> ValueQuery | None:
        """`SessionEngine.value_query` on the stored session (gateway.speech.checking)."""
        with self._lock:
            record = self.repository.get(session_id)  # a copy: the store hands out copies
            return None if record is None else self.engine.value_query(record.session, text, self.clock(), hearing)

    def _dry_run(self, session_id: str, text: str | None, hearing: Hearing | None = None) -> Decision | None:
        """The decision on `text` (None: the first expected phrase) for a copy of the session."""
        with self._lock:
            record = self.repository.get(session_id)  # a copy: the store hands out copies
            if record is None:
                return None
            expected = self.engine.expected_pilot(record.session) if text is None else [text]
            if not expected:
                return None
            return self.engine.transmit(record.session, expected[0], self.clock(), hearing=hearing)
