"""Whisper finals of one shape decode in one CTranslate2 call (gateway.speech.stt.batching), with
the real tiny.en model and piper recordings: each result is the one a decode alone gives, a lone
final is never held back, and one bad item fails alone."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from engine.phraseology import normalize_transcript
from gateway.speech.cpu import BatchJob, CpuPool, Priority
from gateway.speech.stt import SttContext
from gateway.speech.stt.base import SttResult
from gateway.speech.stt.batching import decode_finals
from gateway.speech.stt.whisper import WhisperEngine, build_prompt, window_samples
from tests.support.cpu_pool import hold_worker
from tooling.voicekit import pilot_pcm

PHRASES = (
    "Lufthansa 359, runway 25R, cleared for takeoff",
    "Lufthansa 359, climb FL120",
    "Lufthansa 359, squawk 4721",
    "Lufthansa 359, contact tower 118.5",
)
CONTEXT = SttContext(
    expected_phrases=["DLH359, runway 25R, cleared for takeoff"],
    vocabulary=["Lufthansa", "DLH359", "25R"],
    callsign="Lufthansa 359",
)


@pytest.fixture(scope="module")
def recordings() -> list[bytes]:
    """Different phrases padded with silence to one length: one window, so one shape."""
    spoken = [pilot_pcm(phrase) for phrase in PHRASES]
    longest = max(len(pcm) for pcm in spoken)
    return [pcm + bytes(longest - len(pcm)) for pcm in spoken]


@pytest.fixture(scope="module")
def alone(whisper: WhisperEngine, recordings: list[bytes]) -> list[SttResult]:
    prompt = build_prompt(CONTEXT)
    return [whisper.decode_result(pcm, prompt) for pcm in recordings]


def job(whisper: WhisperEngine, pcm: bytes, calls: list[int] | None = None) -> BatchJob:
    made = whisper.final_job(pcm, whisper.prompt_tokens(build_prompt(CONTEXT)))
    assert made is not None
    if calls is None:
        return made

    def run(items: list[Any]) -> list[Any]:  # the real decode, counting the items of each call
        calls.append(len(items))
        return made.run(items)

    return BatchJob(made.key, made.item, run, made.cap)


def test_the_recordings_share_one_shape_and_say_different_things(
    whisper: WhisperEngine, recordings: list[bytes], alone: list[SttResult]
) -> None:
    assert len({job(whisper, pcm).key for pcm in recordings}) == 1
    assert len({window_samples(len(pcm) // 2) for pcm in recordings}) == 1
    assert len({result.text for result in alone}) == len(PHRASES)
    assert "runway 25 right" in normalize_transcript(alone[0].text)


def test_a_batch_gives_each_utterance_what_it_gets_alone(
    whisper: WhisperEngine, recordings: list[bytes], alone: list[SttResult]
) -> None:
    tokens = whisper.prompt_tokens(build_prompt(CONTEXT))
    together = decode_finals(whisper, [(pcm, tokens) for pcm in recordings])
    assert [item[0] for item in together if not isinstance(item, BaseException)] == alone
    assert all(result.hearing.confidence is not None for result in alone)  # scores compared too


def test_the_pool_decodes_queued_finals_of_one_shape_together(
    whisper: WhisperEngine, recordings: list[bytes], alone: list[SttResult]
) -> None:
    pool = CpuPool(1)
    blocker, gate = hold_worker(pool, Priority.FINAL, timeout=30)
    calls: list[int] = []
    futures = [pool.submit(job(whisper, pcm, calls), Priority.FINAL) for pcm in recordings[:3]]
    other_shape = recordings[3] + bytes(32000)  # one second longer: another window
    other = pool.submit(job(whisper, other_shape, calls), Priority.FINAL)
    gate.set()
    blocker.result(timeout=60)
    assert [f.result(timeout=120)[0] for f in futures] == alone[:3]
    assert other.result(timeout=120)[0] == whisper.decode_result(other_shape, build_prompt(CONTEXT))
    assert calls == [3, 1]  # the three of one shape in one call, the other alone


def test_a_lone_final_is_decoded_at_once(
    whisper: WhisperEngine, recordings: list[bytes], alone: list[SttResult]
) -> None:
    pool = CpuPool(1)
    calls: list[int] = []
    # nothing else is queued or will be: a worker waiting for a batch to fill would never answer
    assert pool.submit(job(whisper, recordings[1], calls), Priority.FINAL).result(timeout=120)[0] == alone[1]
    assert calls == [1]

    async def final() -> tuple[str, bytes]:
        stream = whisper.open(CONTEXT)
        stream.feed(recordings[1])
        return await stream.final(), stream.spoken_audio()

    text, audio = asyncio.run(final())  # the stream decodes through the speech's end and its margin
    assert text == pool.submit(job(whisper, audio), Priority.FINAL).result(timeout=120)[0].text  # the same job


def test_with_a_worker_idle_finals_run_side_by_side(
    whisper: WhisperEngine, recordings: list[bytes], alone: list[SttResult]
) -> None:
    """A batch only gains when every other worker is busy: an idle one starts a final sooner."""
    pool = CpuPool(2)
    calls: list[int] = []
    futures = [pool.submit(job(whisper, pcm, calls), Priority.FINAL) for pcm in recordings[:2]]
    assert [f.result(timeout=120)[0] for f in futures] == alone[:2]
    assert calls == [1, 1]


def test_one_bad_item_does_not_fail_the_others(
    whisper: WhisperEngine, recordings: list[bytes], alone: list[SttResult]
) -> None:
    tokens = whisper.prompt_tokens(build_prompt(CONTEXT))
    silence = bytes(len(recordings[0]))
    broken = recordings[0][:-1]  # half a sample: not PCM16
    items = [(recordings[0], tokens), (broken, tokens), (silence, tokens), (recordings[2], tokens)]
    out = decode_finals(whisper, items)
    assert isinstance(out[1], ValueError)
    assert [out[0][0], out[3][0]] == [alone[0], alone[2]]  # type: ignore[index]
    assert out[2][0] == SttResult("")  # type: ignore[index]

    pool = CpuPool(1)
    _held, gate = hold_worker(pool, Priority.FINAL, timeout=30)
    good = pool.submit(job(whisper, recordings[0]), Priority.FINAL)
    bad_job = job(whisper, recordings[2])
    bad = pool.submit(BatchJob(bad_job.key, (broken, tokens), bad_job.run, bad_job.cap), Priority.FINAL)
    gate.set()
    assert good.result(timeout=120)[0] == alone[0]
    with pytest.raises(ValueError):
        bad.result(timeout=120)


def test_bench_decode_runs_on_a_tiny_config_and_writes_json(tmp_path: Path) -> None:
    from tooling.cli import main

    report = tmp_path / "bench-decode.json"
    png = tmp_path / "bench-decode.png"
    args = ["--k", "2", "--batch-sizes", "1,2", "--rounds", "1", "--json", str(report), "--png", str(png)]
    code = main(["bench", "decode", *args])
    assert code == 0
    data = json.loads(report.read_text())
    assert [row["config"] for row in data["results"]] == ["sequential", "batch 1", "batch 2"]
    assert all(row["utterances"] == 2 and row["utt_per_s"] > 0 for row in data["results"])
    assert data["burst"]["differ"] == 0  # the pool with batching gives what it gives without
    assert png.stat().st_size > 0
