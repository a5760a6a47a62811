"""`livefreq bench callsign` (tooling/bench/callsigns.py): who is talking, measured. Typed, seed 0
at n=300 holds the case it found (WZZ9 beside our WZZ95: "Wizz Air niner, five thousand feet"
read as ours run on); spoken, three readbacks (one per speaker) through the gateway's own STT."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from tooling.bench.callsigns import NEAR_EDITS, OUR_OUTCOMES, SPEAKERS, TRAFFIC_OUTCOMES, near_flight
from tooling.cli import main


def _check(report: dict, n: int) -> None:
    assert report["benchmark"] == "callsign" and report["n"] == n == len(report["transmissions"])
    rows = report["transmissions"]
    for speaker in SPEAKERS:  # said in turn
        said = [r for r in rows if r["speaker"] == speaker]
        assert sum(report["by_speaker"][speaker].values()) == len(said) >= n // 3
        allowed = OUR_OUTCOMES if speaker == "ours" else TRAFFIC_OUTCOMES
        assert set(report["by_speaker"][speaker]) <= set(allowed)
    near = [r for r in rows if r["speaker"] == "near"]
    assert sum(sum(c.values()) for c in report["by_near_edit"].values()) == len(near)
    assert report["traffic"] + report["ours"] == n
    assert report["traffic_applied"] == sum(r["outcome"] == "applied" for r in rows if r["speaker"] != "ours")
    for r in rows:
        near, other = r["traffic"]
        assert near[:3] == r["ours"][:3] != other[:3] and r["ours"] not in r["traffic"]
        assert r["callsign"] == {"near": near, "other": other, "ours": r["ours"]}[r["speaker"]]


def test_text_traffic_is_never_applied_and_ours_is_accepted(tmp_path, capsys):
    out = tmp_path / "callsign.json"
    assert main(["bench", "callsign", "--n", "300", "--seed", "0", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    _check(report, 300)
    assert report["mode"] == "text"
    assert report["traffic_applied"] == 0 and report["applied_examples"] == []
    assert report["ours_accepted"] == report["ours"] == 100  # typed, every right readback of ours
    case = next(r for r in report["transmissions"] if r["callsign"] == "WZZ9" and "niner, five thousand" in r["said"])
    assert case["outcome"] == "asked_who" and "who is calling is unclear" in case["who"]
    printed = capsys.readouterr().out
    assert "applied to our aircraft: 0 of 200" in printed and "by how its flight number differs" in printed


@settings(max_examples=300, deadline=None)
@given(flight=st.integers(1, 9999).map(str), seed=st.integers(0, 10**6))
def test_the_near_aircraft_is_one_digit_off_ours(flight: str, seed: int) -> None:
    near, edit = near_flight(flight, random.Random(seed))
    assert edit in NEAR_EDITS and near != flight and not near.startswith("0") and len(near) <= 4
    assert Levenshtein.distance(near, flight) <= 2 and (edit != "swap" or sorted(near) == sorted(flight))
    assert edit not in ("drop", "add") or abs(len(near) - len(flight)) == 1


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed (scripts/install-system-deps.sh installs it)")
@pytest.mark.timeout(240)
def test_voice_three_readbacks_one_per_speaker(tmp_path):
    """In a process of its own, as the readback voice bench: the speech models are process-wide."""
    out = tmp_path / "voice.json"
    args = ["bench", "callsign", "--mode", "voice", "--n", "3", "--seed", "1", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-c", "from tooling.cli import main; raise SystemExit(main())", *args],
        cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=230, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    _check(report, 3)
    assert report["mode"] == "voice" and report["stt"]["engine"]
    assert all(r["heard"] is not None and r["voice"] for r in report["transmissions"])
    assert report["traffic_applied"] == 0, report["applied_examples"]
    assert "applied to our aircraft" in done.stdout
