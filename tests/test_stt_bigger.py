"""whisper base for the third hearing: assembled from its two PyPI wheels, checked by SHA-256.

The real wheels (the `bigger` extra, part of the test install) are assembled into a temporary
cache; a changed file and missing wheels are the errors and the fallback a user would meet.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import pytest

from gateway.speech.stt import whisper_bigger
from gateway.speech.stt.base import SttConfigError


def _loaded_without_third_hearing(caplog: pytest.LogCaptureFixture, level: int) -> str:
    """tiny.en loaded with the third hearing asked for (the cache as the test set it): the log."""
    from gateway.speech.stt.whisper import WhisperEngine

    engine = WhisperEngine(bigger=True)
    with caplog.at_level(level, logger="gateway.speech.stt.whisper"):
        engine.load()
    assert engine.loaded and engine.bigger_engine is None
    return caplog.text


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def test_the_model_is_assembled_once_and_every_file_matches_its_hash(tmp_path: Path) -> None:
    target = whisper_bigger.bigger_model_dir(tmp_path)
    assert target is not None and target.parent == tmp_path
    for name, digest in whisper_bigger.FILES.items():
        assert _sha256(target / name) == digest, name
    assert not list(target.glob("*.partial"))
    stamp = (target / "model.bin").stat().st_mtime_ns
    assert whisper_bigger.bigger_model_dir(tmp_path) == target
    assert (target / "model.bin").stat().st_mtime_ns == stamp  # not assembled again


def test_a_file_changed_upstream_is_an_error_never_another_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A file that does not match its pinned hash is never loaded: the assembly says which and
    how to fix it, and the radio logs that and hears twice, as before."""

    monkeypatch.setitem(whisper_bigger.FILES, "config.json", "0" * 64)
    with pytest.raises(SttConfigError, match=r"config\.json .* not 0000.*LIVEFREQ_BIGGER_HEARING=false"):
        whisper_bigger.bigger_model_dir(tmp_path)
    target = next(tmp_path.iterdir())
    assert not (target / "config.json").exists() and not list(target.glob("*.partial"))
    monkeypatch.setenv("LIVEFREQ_CACHE_DIR", str(tmp_path))
    logged = _loaded_without_third_hearing(caplog, logging.ERROR)
    assert "no third hearing" in logged and "config.json" in logged


def test_without_the_wheels_there_is_no_third_hearing_and_the_log_says_how_to_add_it(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:

    monkeypatch.setattr(whisper_bigger, "PARTS", ("livefreq_no_such_wheel_1", "livefreq_no_such_wheel_2"))
    monkeypatch.setenv("LIVEFREQ_CACHE_DIR", str(tmp_path))
    assert whisper_bigger.bigger_model_dir() is None
    logged = _loaded_without_third_hearing(caplog, logging.WARNING)
    assert "no third hearing" in logged and "pip install" in logged


def test_a_cache_it_cannot_write_leaves_the_radio_hearing_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:

    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("LIVEFREQ_CACHE_DIR", str(blocked))
    assert "no third hearing" in _loaded_without_third_hearing(caplog, logging.ERROR)
