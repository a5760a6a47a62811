"""A recorded voice run of the readback bench, made again for a probe (scripts/measure_*.py).

A voice bench report keeps each readback's transcripts, not its audio: the audio is made again
from the run's seed (`pilot_recording` with the bench's own draw: the same voice, noise and
channel), so a probe can hear the same recordings through a changed chain and compare.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.settings import Settings
from gateway.speech.stack import SpeechStack
from gateway.speech.stt.lexicon import radio_lexicon
from tooling.bench.readback import Bench, Case, default_bench
from tooling.bench.readback_voice import pilot_recording, pilot_voices


@dataclass
class RecordedRun:
    """A report's run: its bench, recognizer (not yet started), lexicon and recorded rows."""

    settings: Settings
    bench: Bench
    stt: Any
    lexicon: Any
    data: dict[str, Any]
    rows: dict[int, dict[str, Any]]

    @classmethod
    def load(cls, report: str) -> RecordedRun:
        settings = Settings()
        bench = default_bench(settings)
        data = json.loads(Path(report).read_text())
        rows = {t["index"]: t for t in data["bias_on"]["transmissions"]}
        return cls(settings, bench, SpeechStack(settings).stt, radio_lexicon(bench.registry), data, rows)

    def cases(self, seed: int, only: set[int] | None) -> Iterator[tuple[Case, dict[str, Any]]]:
        """The run's readbacks with their recorded rows: those in `only`, else those accepted."""
        data = self.data
        for case in self.bench.cases(data["n"], seed, data["wrong_share"], forms=data.get("forms", "speech")):
            row = self.rows[case.index]
            if (case.index in only) if only is not None else row["verdict"] == "accepted":
                yield case, row

    def recording(self, case: Case, seed: int, channel: str) -> tuple[bytes, dict[str, Any]]:
        """`case`'s audio made again as the bench made it."""
        rng = random.Random(f"{seed}:voice:{case.index}")  # the bench's own draw for this readback
        return pilot_recording(case.readback.text, rng, pilot_voices(), channel)
