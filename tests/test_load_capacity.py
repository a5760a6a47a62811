"""`livefreq load --offer-factor` and `--find-capacity`'s criterion (tooling/load/capacity.py).

The offer runs real pilots (a tiny corpus synthesized with piper) against a real gateway on
loopback whose voice capacity is configured to 1: two pilots offered, one admitted and served,
one refused with `too_many_sessions`. The capacity criterion is checked on the step summaries a
run writes (p95 within 1 s and no audio gap), with its plot. Timings are never asserted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from starlette.types import ASGIApp

from gateway.app import create_app
from gateway.settings import Settings
from tooling.cli import main
from tooling.corpus import Corpus, build_corpus
from tooling.load.capacity import capacity_lines, capacity_plot, capacity_summary, offered_sessions


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build_corpus(tmp_path_factory.mktemp("corpus"), 1, turns=2, wrong_share=0.0)


def test_offering_twice_the_capacity_admits_one_and_refuses_the_other(
    tiny_corpus: Corpus, serve: Callable[[ASGIApp], str], tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url = serve(create_app(Settings(store="memory", stt_engine="sphinx", tts_engine="espeak", voice_capacity=1, audio_pacing=False)))
    # 8 s: the admitted pilot joins and keys within 2 s (--pause), so it transmits once, answered
    code = main(
        ["load", "--offer-factor", "1.5", "--duration", "8", "--think", "0.2,0.5", "--pause", "0.5,1", "--url", url,
         "--audio", str(tiny_corpus.root), "--report", str(tmp_path)]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "the node's capacity is 1 voice sessions (configured); offering 2" in err
    report = json.loads((tmp_path / "offer.json").read_text())
    admission = report["admission"]
    assert admission["offered"] == 2 and admission["admitted"] == 1 and admission["refused"] == 1
    assert admission["refused_by_code"] == {"too_many_sessions": 1} and admission["retry_after_s"] == [30.0]
    assert admission["unanswered"] == 0 and admission["admitted_failures"] == 0
    assert report["transmissions"] >= 1 and len({e["session_id"] for e in report["exchanges"]}) == 1
    checks = report["offer"]["checks"]
    assert checks["admitted_within_capacity"] and checks["all_others_refused"] and checks["refused_with_too_many_sessions"]
    assert checks["refusals_carry_retry_after"] and checks["nothing_lost"]
    assert "offered 2 pilots to a node of capacity 1 (1.5x): 1 admitted" in out and "1 refused (too_many_sessions 1" in out


def test_offer_factor_rounds_up_past_the_capacity() -> None:
    assert offered_sessions(100, 1.5) == 150 and offered_sessions(1, 1.5) == 2 and offered_sessions(3, 1.01) == 4


def _step(sessions: int, p95: float | None, gaps: int) -> dict[str, Any]:
    return {
        "config": {"sessions": sessions},
        "latency_ms": {"ptt_up_to_first_audio": {"p95": p95, "p50": None if p95 is None else p95 / 2}},
        "replies": 10,
        "audio": {"gaps": gaps, "gap_ms_max": 40.0 * gaps},
        "errors": {"total": 0},
        "messages": {"total_faults": 0},
        "server": {"cpu_cores_used": 1.0},
        "load_average": {"before": 0.5, "after": 1.5},
        "targets": {"over_capacity": (p95 is not None and p95 > 1000.0) or gaps > 0},
    }


def test_capacity_is_the_largest_step_within_one_second_and_without_gaps(tmp_path: Any) -> None:
    summary = capacity_summary([_step(60, 600.0, 0), _step(75, 900.0, 0), _step(93, 950.0, 2)])
    assert summary["capacity_sessions"] == 75 and summary["first_over_sessions"] == 93  # gaps, though p95 was within
    assert summary["criterion"]["p95_ms_max"] == 1000.0 and summary["criterion"]["audio_gaps"] == 0
    lines = capacity_lines(summary)
    assert lines[-1] == "capacity: 75 sessions (p95 <= 1000 ms and no audio gap); at 93 sessions p95 was 950 ms with 2 audio gaps"
    assert capacity_plot(summary, tmp_path / "capacity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    never = capacity_summary([_step(60, 1200.0, 0)])
    assert never["capacity_sessions"] == 0 and capacity_lines(never)[-1].startswith("capacity: below 60 sessions")


def test_find_capacity_grows_the_default_corpus_to_a_scenario_per_pilot(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pilots sharing a scenario speak from each other's TTS cache: at 125 pilots on the 100
    scenarios the default corpus was capped at, the capacity read 112 where a scenario per pilot
    gives 100 (2026-11-28). Each step now flies on a corpus of at least as many scenarios as
    pilots. The gateway runs are stubbed here (the step logic alone); the offer test above flies
    real pilots against a real gateway."""
    import tooling.cli.load as load_cli

    asked: list[int] = []
    flown: list[tuple[int, int]] = []

    class _Corpus:
        def __init__(self, n: int) -> None:
            self.seeds = list(range(n))

    def corpus_for(_args: Any, scenarios: int) -> _Corpus:
        asked.append(scenarios)
        return _Corpus(scenarios)

    def run(_args: Any, config: Any, corpus: _Corpus, _name: str, _env: Any = None) -> dict[str, Any]:
        flown.append((config.sessions, len(corpus.seeds)))
        return _step(config.sessions, 600.0 if config.sessions < 20 else 1500.0, 0)

    monkeypatch.setattr(load_cli, "_load_corpus_for", corpus_for)
    monkeypatch.setattr(load_cli, "_run", run)
    code = main(["load", "--find-capacity", "--sessions", "10", "--max-sessions", "40", "--report", str(tmp_path)])
    assert code == 0
    assert flown == [(10, 10), (15, 15), (20, 20)]  # stopped past capacity: 25 and up never built
    assert asked == [10, 15, 20]
    assert json.loads((tmp_path / "capacity.json").read_text())["capacity_sessions"] == 15
