"""Text-to-speech engines for real: piper with the bundled voice, espeak-ng, edge-tts failing over to
piper when the network fails, the cache and the factory. One piper voice is loaded per test run."""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import AsyncIterator

import numpy as np
import pytest

from gateway.audio.pcm import duration_s, level_dbfs, pcm_to_float32, pcm_to_int16
from gateway.audio.radio import apply_radio
from gateway.audio.resample import resample
from gateway.speech.tts import (
    CachedTts,
    TtsCache,
    TtsEngine,
    TtsError,
    TtsUnavailable,
    UnknownTtsEngine,
    make_tts,
    split_for_speech,
)
from gateway.speech.tts.edge import EdgeTts, FailoverTts
from gateway.speech.tts.espeak import EspeakTts
from gateway.speech.tts.piper import PiperTts

CLEARANCE = "Lufthansa tree fife niner, contact tower one one eight decimal seven"
TWO_SENTENCES = "Lufthansa tree fife niner, roger. Contact tower one one eight decimal seven."
UNREACHABLE_PROXY = "http://127.0.0.1:9"  # nothing listens on the discard port: a network failure anywhere


def run(coro):
    return asyncio.run(coro)


async def collect(stream: AsyncIterator[bytes]) -> list[bytes]:
    return [chunk async for chunk in stream]


def assert_speech(pcm: bytes, rate: int, min_s: float, max_s: float) -> None:
    assert len(pcm) % 2 == 0
    assert min_s <= duration_s(pcm, rate) <= max_s, duration_s(pcm, rate)
    assert level_dbfs(pcm) > -35  # clearly audible, not silence or a click
    assert np.count_nonzero(pcm_to_int16(pcm)) > 0.5 * len(pcm) // 2


class RecordingPiper(PiperTts):
    """The real piper engine, recording when each piece is synthesized."""

    def __init__(self, events: list[str]) -> None:
        super().__init__()
        self.events = events

    async def synthesize_piece(self, text: str) -> bytes:
        self.events.append(f"synthesize {text}")
        return await super().synthesize_piece(text)


@pytest.fixture(scope="module")
def piper() -> PiperTts:
    engine = PiperTts()
    run(engine.load())
    return engine


@pytest.fixture(scope="module")
def clearance_pcm(piper: PiperTts) -> bytes:
    """The clearance spoken once by piper, shared by the tests that only inspect audio."""
    return run(piper.synthesize(CLEARANCE))


# --- splitting ---------------------------------------------------------------------------------


def test_split_at_sentences_and_clauses_keeps_punctuation_and_decimals() -> None:
    assert split_for_speech(CLEARANCE + ".") == ["Lufthansa tree fife niner,", "contact tower one one eight decimal seven."]
    assert split_for_speech("Roger, DLH359. Good day!") == ["Roger, DLH359.", "Good day!"]  # short clause joins
    assert split_for_speech("Contact tower 118.7, bye.") == ["Contact tower 118.7, bye."]  # no split at 118.7
    assert split_for_speech("  \n ") == []
    assert split_for_speech("Line up and wait runway two five,\n  traffic on final - caution wake turbulence.") == [
        "Line up and wait runway two five,",
        "traffic on final -",
        "caution wake turbulence.",
    ]
    for piece in split_for_speech(TWO_SENTENCES + " " + CLEARANCE):
        assert split_for_speech(piece) == [piece]  # idempotent: caches and failover re-split pieces


# --- piper -------------------------------------------------------------------------------------


def test_piper_speaks_a_clearance_at_the_voice_rate(piper: PiperTts, clearance_pcm: bytes) -> None:
    assert piper.name == "piper" and piper.voice == "en_US-joe-medium" and piper.sample_rate == 22050
    assert piper.loaded
    assert_speech(clearance_pcm, piper.sample_rate, 1.5, 8.0)


def test_piper_streams_the_first_piece_before_synthesizing_the_rest(piper: PiperTts) -> None:
    events: list[str] = []
    engine = RecordingPiper(events)

    async def consume() -> list[bytes]:
        chunks = []
        async for chunk in engine.stream(TWO_SENTENCES):
            events.append(f"received chunk {len(chunks) + 1}")
            chunks.append(chunk)
        return chunks

    chunks = run(consume())
    assert len(chunks) == 2
    assert events == [  # lazy: the second sentence is synthesized only after the first left
        "synthesize Lufthansa tree fife niner, roger.",
        "received chunk 1",
        "synthesize Contact tower one one eight decimal seven.",
        "received chunk 2",
    ]
    for chunk in chunks:
        assert_speech(chunk, engine.sample_rate, 0.3, 6.0)


def test_piper_speech_resampled_and_through_the_radio(piper: PiperTts, clearance_pcm: bytes) -> None:
    pcm = clearance_pcm
    at_16k = resample(pcm, piper.sample_rate, 16000)
    assert abs(duration_s(at_16k, 16000) - duration_s(pcm, piper.sample_rate)) <= 0.01 * duration_s(pcm, piper.sample_rate)

    def fractions(audio: bytes, rate: int) -> tuple[float, float]:
        spectrum = np.abs(np.fft.rfft(pcm_to_float32(audio).astype(np.float64))) ** 2
        freqs = np.fft.rfftfreq(len(audio) // 2, 1 / rate)
        return spectrum[freqs < 200].sum() / spectrum.sum(), spectrum[freqs > 4000].sum() / spectrum.sum()

    low_in, high_in = fractions(pcm, piper.sample_rate)
    radio = apply_radio(pcm, piper.sample_rate, level=4, seed=1)
    low_out, high_out = fractions(radio, piper.sample_rate)
    assert low_out < low_in / 10 and high_out < high_in / 10, (low_in, low_out, high_in, high_out)
    assert level_dbfs(radio) > -30


def test_piper_rejects_a_missing_voice(tmp_path) -> None:
    with pytest.raises(TtsUnavailable, match="not found"):
        PiperTts(voice=tmp_path / "nobody.onnx")


# --- cache -------------------------------------------------------------------------------------


def test_cached_tts_returns_identical_bytes_without_synthesizing_again(piper: PiperTts) -> None:
    events: list[str] = []
    cache = TtsCache(max_bytes=10_000_000)
    engine = CachedTts(RecordingPiper(events), cache)
    assert (engine.name, engine.voice, engine.sample_rate) == ("piper", "en_US-joe-medium", 22050)
    text = "Lufthansa tree fife niner, roger."
    first = run(engine.synthesize(text))
    calls = len(events)
    again = run(engine.synthesize(text))
    streamed = run(collect(engine.stream(text)))
    assert again == first and b"".join(streamed) == first
    assert len(events) == calls == 1  # synthesized once
    assert cache.hits == 2 and cache.misses == 1 and len(cache) == 1
    assert cache.get(("piper", "en_US-joe-medium", text)) == first


def test_prepare_caches_every_piece_of_a_likely_reply(piper: PiperTts) -> None:
    """Speculation (gateway/radio/speculation.py) makes the whole reply while the pilot talks:
    when it comes true, no piece of it is synthesized on air."""
    events: list[str] = []
    engine = CachedTts(RecordingPiper(events), TtsCache(max_bytes=10_000_000))
    assert run(engine.prepare(TWO_SENTENCES)) == 2  # both pieces made
    made = len(events)
    assert made == 2
    assert len(run(collect(engine.stream(TWO_SENTENCES)))) == 2 and len(events) == made  # played from the cache
    assert run(engine.prepare(TWO_SENTENCES)) == 0  # nothing left to make
    assert run(engine.prepare("Roger. Wilco.", pieces=1)) == 1  # a bounded prepare still stops early


def test_cache_is_lru_bounded_by_bytes() -> None:
    cache = TtsCache(max_bytes=100)
    cache.put(("e", "v", "a"), b"a" * 40)
    cache.put(("e", "v", "b"), b"b" * 40)
    assert cache.get(("e", "v", "a")) == b"a" * 40  # a is now most recently used
    cache.put(("e", "v", "c"), b"c" * 40)  # evicts b, the least recently used
    assert cache.get(("e", "v", "b")) is None
    assert cache.get(("e", "v", "a")) is not None and cache.get(("e", "v", "c")) is not None
    assert cache.size_bytes == 80 and len(cache) == 2
    cache.put(("e", "v", "huge"), b"x" * 101)  # larger than the whole cache: not kept, nothing evicted
    assert cache.get(("e", "v", "huge")) is None and len(cache) == 2
    cache.put(("e", "v", "a"), b"A" * 10)  # replacing an entry updates the byte count
    assert cache.size_bytes == 50
    cache.clear()
    assert cache.size_bytes == 0 and len(cache) == 0
    with pytest.raises(ValueError):
        TtsCache(0)


# --- espeak ------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed (apt-get install espeak-ng)")
def test_espeak_speaks() -> None:
    engine = make_tts("espeak", speed_wpm=180)
    assert isinstance(engine, EspeakTts) and engine.sample_rate == 22050 and engine.voice == "en-us[speed=180]"
    chunks = run(collect(engine.stream(TWO_SENTENCES)))
    assert len(chunks) == 2
    assert_speech(b"".join(chunks), engine.sample_rate, 2.0, 10.0)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed (apt-get install espeak-ng)")
def test_espeak_reports_a_bad_voice() -> None:
    with pytest.raises(TtsError, match="does not exist"):
        run(EspeakTts("xx-nosuchvoice").synthesize("hello"))


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed (apt-get install espeak-ng)")
def test_espeak_cancelled_leaves_no_process_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    """A synthesis cancelled mid-way (the pilot keyed the mic over the controller) kills its
    espeak-ng and closes its pipes, inside the loop: none is left to a closed loop's collector."""
    started: list[asyncio.subprocess.Process] = []
    spawn = asyncio.create_subprocess_exec

    async def recorded(*args: object, **kwargs: object) -> asyncio.subprocess.Process:
        process = await spawn(*args, **kwargs)  # type: ignore[arg-type]
        started.append(process)
        return process

    monkeypatch.setattr(asyncio, "create_subprocess_exec", recorded)

    async def cancel_mid_way() -> None:
        task = asyncio.create_task(EspeakTts().synthesize_piece("Lufthansa three five niner, " * 200))
        while not started:
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(cancel_mid_way())
    (process,) = started
    assert process.returncode is not None
    assert process.stdout is not None and process.stdout.at_eof()


def test_espeak_missing_binary_names_the_package() -> None:
    with pytest.raises(TtsUnavailable, match="apt-get install espeak-ng"):
        EspeakTts(binary="/nonexistent/espeak-ng")


# --- edge-tts and failover ---------------------------------------------------------------------


def test_edge_tts_network_failure_is_a_tts_error() -> None:
    engine = EdgeTts(proxy=UNREACHABLE_PROXY, connect_timeout_s=2)
    assert (engine.name, engine.voice, engine.sample_rate) == ("edge-tts", "en-US-GuyNeural", 24000)
    with pytest.raises(TtsError, match="edge-tts request failed"):
        run(engine.synthesize("Roger."))
    with pytest.raises(ValueError):
        EdgeTts(voice="not a voice")


def test_edge_tts_fails_over_to_piper_with_one_warning(piper: PiperTts, caplog: pytest.LogCaptureFixture) -> None:
    now = [1000.0]
    engine = FailoverTts(
        EdgeTts(proxy=UNREACHABLE_PROXY, connect_timeout_s=2), piper, retry_after_s=60.0, clock=lambda: now[0]
    )
    assert (engine.name, engine.sample_rate) == ("edge-tts", 24000)
    with caplog.at_level(logging.WARNING, logger="gateway.speech.tts.edge"):
        chunks = run(collect(engine.stream(TWO_SENTENCES)))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(chunks) == 2 and engine.failovers == 2 and engine.primary_down
    assert len(warnings) == 1 and "speaking with piper" in warnings[0].getMessage()
    assert_speech(b"".join(chunks), 24000, 2.0, 10.0)  # piper audio resampled to edge's 24 kHz

    caplog.clear()
    now[0] += 61.0  # retry period over: edge is tried again, fails again, one more warning
    with caplog.at_level(logging.WARNING, logger="gateway.speech.tts.edge"):
        run(engine.synthesize("Roger."))
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1 and engine.failovers == 3


# --- factory -----------------------------------------------------------------------------------


def test_factory_builds_each_engine_and_rejects_unknown_names(piper: PiperTts) -> None:
    default = make_tts("piper")
    assert isinstance(default, PiperTts) and isinstance(default, TtsEngine)
    cache = TtsCache()
    cached = make_tts("Piper", cache=cache, length_scale=0.9)
    assert isinstance(cached, CachedTts) and cached.voice == "en_US-joe-medium[length_scale=0.9]"
    edge = make_tts("edge-tts", cache=cache, rate="+10%")
    assert isinstance(edge, FailoverTts) and isinstance(edge, TtsEngine)
    assert edge.voice == "en-US-GuyNeural[rate=+10%]" and edge.fallback.name == "piper"
    run(edge.load())  # warms the fallback voice too (already in memory here)
    assert isinstance(make_tts("edge", fallback=None), EdgeTts)
    with pytest.raises(ValueError, match="own fallback"):
        make_tts("edge-tts", fallback="edge")
    with pytest.raises(UnknownTtsEngine, match="choose one of: piper, espeak, edge-tts"):
        make_tts("festival")
