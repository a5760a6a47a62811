"""`livefreq bench readback` through the CLI: a small text run (the report's shape, and that its
counts add up) and a two-readback voice run (pilot voices, radio, the gateway's whisper): with
the default seed and --wrong 0.5 one readback is correct and one wrong, each heard with bias on and off."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.doubt import Doubt
from tooling.bench.readback import BAD_COLUMNS, CORRECT_COLUMNS
from tooling.bench.readback_groups import NOT_UNDERSTOOD, WER_BANDS, WHY_KINDS, by_why, by_word_errors
from tooling.cli import main


def _sum(counter: dict) -> int:
    return sum(counter.values())


def _check_counts(result: dict, n: int) -> None:
    assert result["n"] == n
    assert result["correct"] + result["bad"] == n
    assert result["changed"] + result["dropped"] == result["bad"]
    outcomes = result["outcomes"]
    assert _sum(outcomes["correct"]) == result["correct"]
    assert _sum(outcomes["wrong"]) == result["changed"] and _sum(outcomes["drop"]) == result["dropped"]
    assert set(outcomes["correct"]) <= {"accepted", "wrong", "missing", "say_again"}
    # per field: every required field of a correct readback, the changed/dropped field of a bad one
    changed = sum(_sum(k["wrong"]) for k in result["by_kind"].values())
    dropped = sum(_sum(k["drop"]) for k in result["by_kind"].values())
    assert changed == result["changed"] and dropped == result["dropped"]
    assert sum(_sum(k["correct"]) for k in result["by_kind"].values()) >= result["correct"]
    for kind in result["by_kind"].values():
        assert set(kind["correct"]) <= set(CORRECT_COLUMNS) and set(kind["wrong"]) <= set(BAD_COLUMNS)
    assert result["correct_refused"] + result["correct_said_again"] == result["correct"] - outcomes["correct"].get("accepted", 0)
    assert result["correct_said_again"] == outcomes["correct"].get("say_again", 0)
    assert 0 <= result["wrong_accepted"] <= result["bad"]
    for key, of in (("wrong_accepted", "bad"), ("correct_refused", "correct"), ("correct_said_again", "correct")):
        ci, rate = result[f"{key}_ci95"], result[f"{key}_rate"]
        assert (ci is None) == (result[of] == 0)
        assert ci is None or 0.0 <= ci[0] <= rate <= ci[1] <= 1.0
    assert sum(result["failures"].values()) == (
        result["correct_refused"] + result["correct_said_again"] + result["wrong_accepted"] + result["failures"].get("misdiagnosed", 0)
    )
    for cls, examples in result["examples"].items():
        assert len(examples) == min(50, result["failures"][cls])
        for e in examples:
            assert {"flow", "state", "transcript", "expected", "fields", "verdict", "mode"} <= set(e)


def test_text_bench_report_shape_and_counts(tmp_path, capsys):
    out = tmp_path / "text.json"
    assert main(["bench", "readback", "--mode", "text", "--n", "60", "--seed", "3", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["benchmark"] == "readback" and report["mode"] == "text" and report["n"] == 60
    assert len(report["states"]) >= 30
    _check_counts(report, 60)
    assert 0.1 <= report["bad"] / 60 <= 0.5  # --wrong 0.3
    printed = capsys.readouterr().out
    assert "wrong readbacks accepted:" in printed and "correct readbacks refused (corrected, not asked again):" in printed and "caught-wrong" in printed
    assert "95% interval" in printed


@pytest.mark.parametrize(
    ("hits", "n", "low", "high"),
    [(0, 84, 0.0, 0.0437), (9, 212, 0.0225, 0.0787), (30, 216, 0.0991, 0.1913), (3, 3, 0.4385, 1.0)],
)
def test_a_share_is_given_with_its_wilson_interval(hits, n, low, high):
    """0 wrong of 84 says "at most 4.4 %", 9 asked again of 212 "2.2-7.9 %" (Wilson, 95 %)."""
    from tooling.bench.common import interval95

    assert interval95(hits, n) == pytest.approx((low, high), abs=1e-4)
    assert interval95(0, 0) is None


def test_text_bench_focused_on_names_changes_only_them(tmp_path, capsys):
    """`--fields sid,destination`: only states reading back a SID or a clearance limit, and every
    bad readback changes or drops one of them; a changed SID has another fix name."""
    from tooling.bench.readback import default_bench

    out = tmp_path / "names.json"
    args = ["bench", "readback", "--mode", "text", "--n", "80", "--wrong", "0.6", "--fields", "sid,destination"]
    assert main([*args, "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    _check_counts(report, 80)
    assert report["fields"] == ["sid", "destination"] and report["states"]
    assert report["wrong_accepted"] == 0 and report["correct_refused"] == 0
    bad_kinds = {k for k, v in report["by_kind"].items() if _sum(v["wrong"]) or _sum(v["drop"])}
    assert bad_kinds and bad_kinds <= {"sid", "airport"}
    bench = default_bench()
    bench.focus(("sid", "destination"))
    for case in bench.cases(80, 0, 0.6):
        rb = case.readback
        if rb.mode == "wrong" and rb.field == "sid":
            assert str(rb.said["sid"]).split()[0] != str(rb.issued["sid"]).split()[0]
            assert str(rb.said["sid"]).split()[1] == str(rb.issued["sid"]).split()[1]
    assert main([*args[:-2], "--fields", "no_such_variable"]) != 0
    assert "no readback state holds any of no_such_variable" in capsys.readouterr().err


def test_text_bench_is_reproducible(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path in (a, b):
        assert main(["bench", "readback", "--n", "40", "--seed", "5", "--wrong", "0.5", "--out", str(path)]) == 0
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    assert ra["outcomes"] == rb["outcomes"] and ra["examples"] == rb["examples"]


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed (scripts/install-system-deps.sh installs it)")
@pytest.mark.timeout(240)
def test_voice_bench_runs_with_and_without_bias(tmp_path):
    """In a process of its own: the speech models it loads are shared process-wide and would make
    later tests' gateways report voice as ready."""
    out = tmp_path / "voice.json"
    args = ["bench", "readback", "--mode", "voice", "--n", "2", "--bias", "both", "--wrong", "0.5", "--forms", "spoken", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-c", "from tooling.cli import main; raise SystemExit(main())", *args],
        cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=230, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["mode"] == "voice" and report["bias"] == "both" and report["forms"] == "spoken"
    for b in ("bias_on", "bias_off"):
        _check_counts(report[b], 2)
        assert report[b]["correct"] == 1 and report[b]["bad"] == 1  # one of each kind (see the module docstring)
        assert report[b]["wer"] is not None
        by = report[b]["by_engine"]
        assert set(by) <= {"kokoro", "espeak", "flite"} and sum(e["n"] for e in by.values()) == 2
        assert sum(e["correct"] for e in by.values()) == report[b]["correct"]
        assert sum(e["wrong_accepted"] for e in by.values()) == report[b]["wrong_accepted"]
        # every right readback asked again has its why, by the values asked (engine ReadbackResult.why)
        asked = [r for r in report[b]["transmissions"] if r["mode"] == "correct" and r["verdict"] == "say_again"]
        assert all(r["why"] for r in asked) and all(not r["why"] for r in report[b]["transmissions"] if r["verdict"] != "say_again")
        assert sum(c["readbacks"] for c in report[b]["asked_why"].values()) >= len(asked)
        bands = report[b]["by_word_errors"]  # every transmission in one band of its transcript's word errors
        assert sum(c["n"] for c in bands.values()) == 2 and sum(c["correct"] for c in bands.values()) == 1
        # the pilot's answer to each right or changed readback asked again (tooling/bench/readback_again.py)
        answered = [r for r in report[b]["transmissions"] if "again" in r]
        assert all(r["verdict"] == "say_again" and r["mode"] != "drop" for r in answered)
        again = report[b]["again"]
        assert again["correct_answered"] + again["wrong_answered"] == len(answered)
        assert again["wrong_accepted"] == 0 and "wrong_kept" in report[b]
    assert report["wrong_accepted_with_bias"] == report["bias_on"]["wrong_accepted"]
    assert isinstance(report["accepted_only_with_bias"], list)
    assert "word error rate" in done.stdout and "by pilot voice engine" in done.stdout
    assert report["correct_said_again_ci95"] == report["bias_on"]["correct_said_again_ci95"]
    assert done.stdout.count("95% interval") >= 3  # the engine table and the headline's shares


def _row(mode: str, verdict: str, errors: int, words: int = 10, forward: bool = False) -> dict:
    return {"mode": mode, "verdict": verdict, "forward": forward, "word_errors": errors, "words": words}


def test_transmissions_fall_in_one_band_of_word_errors_each():
    """Bands hold their upper bound (1 of 10 words wrong is "0-10 %", 5 of 10 "30-50 %"); a right
    readback counts as accepted, refused or asked again, a wrong one accepted also where it only
    moved the state on; rows recorded without word counts are in no band."""
    rows = [
        _row("correct", "accepted", 0), _row("correct", "say_again", 1), _row("correct", "accepted", 2),
        _row("correct", "wrong", 5), _row("wrong", "say_again", 5), _row("drop", "missing", 9, forward=True),
        _row("correct", "say_again", 12), {"mode": "correct", "verdict": "say_again", "forward": False},
    ]  # fmt: skip
    bands = by_word_errors(rows)
    assert list(bands) == [name for name, _high in WER_BANDS]
    assert {k: (c["correct"], c["accepted"], c["refused"], c["say_again"], c["bad"], c["wrong_accepted"]) for k, c in bands.items()} == {
        "0-10 %": (2, 1, 0, 1, 0, 0),
        "10-30 %": (1, 1, 0, 0, 0, 0),
        "30-50 %": (1, 0, 1, 0, 1, 0),
        "over 50 %": (1, 0, 0, 1, 1, 1),
    }
    assert bands["0-10 %"]["say_again_rate"] == 0.5 and bands["10-30 %"]["say_again_ci95"] is not None
    assert bands["over 50 %"]["n"] == 2 and sum(c["n"] for c in bands.values()) == 7


def test_right_readbacks_asked_again_are_counted_by_why():
    """Each value asked again counts for its reason's kind, each readback once per kind; wrong
    readbacks and right ones not asked again do not count."""
    rows = [
        {"mode": "correct", "verdict": "say_again", "why": {"qnh": Doubt.HEARD_OTHER_ALTERNATIVE_OTHERWISE, "squawk": Doubt.HEARD_RIGHT_ALTERNATIVE_OTHERWISE}},
        {"mode": "correct", "verdict": "say_again", "why": {"departure_freq": Doubt.RIVALS}},
        {"mode": "correct", "verdict": "say_again", "why": {"": NOT_UNDERSTOOD}},
        {"mode": "correct", "verdict": "say_again", "why": {"runway": Doubt.HEARD_GARBLED}},
        {"mode": "wrong", "verdict": "say_again", "why": {"qnh": Doubt.HEARD_RIGHT_ALTERNATIVE_OTHERWISE}},
        {"mode": "correct", "verdict": "accepted", "why": {}},
    ]  # fmt: skip
    assert by_why(rows) == {
        "heard as another value, an n-best hypothesis otherwise": {"values": 1, "readbacks": 1},
        "heard right, an n-best hypothesis otherwise": {"values": 1, "readbacks": 1},
        "heard right, a rival not ruled out in the audio": {"values": 1, "readbacks": 1},
        "the transmission not understood": {"values": 1, "readbacks": 1},
        "heard garbled, or as a value its kind cannot have": {"values": 1, "readbacks": 1},
    }
    # every kind of reason the engine gives has its name in the table
    assert set(Doubt) <= set(WHY_KINDS) and all(WHY_KINDS.values())


def test_voice_bench_names_a_missing_or_unknown_voice_engine(tmp_path, capsys):
    code = main(["bench", "readback", "--mode", "voice", "--n", "1", "--voices", "festival", "--out", str(tmp_path / "v.json")])
    assert code != 0
    err = capsys.readouterr().err
    assert "unknown pilot voice engine festival" in err and "piper" in err  # the choices, the own voice named


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")
def test_a_quieter_microphone_gives_the_same_recording_scaled():
    # `--mic-level`: the same words and noise, only quieter (the recognizer's leveling is
    # measured against exactly this, docs/performance.md).
    import random

    import numpy as np

    from tooling.bench.readback_voice import pilot_recording

    loud, made = pilot_recording("QNH one zero one six", random.Random(5), ["espeak:en-us"])
    quiet, made_quiet = pilot_recording("QNH one zero one six", random.Random(5), ["espeak:en-us"], mic_level_db=-20.0)
    assert made["mic_level_db"] == 0.0 and made_quiet["mic_level_db"] == -20.0
    loud_samples = np.frombuffer(loud, np.int16).astype(np.float64)
    quiet_samples = np.frombuffer(quiet, np.int16).astype(np.float64)
    assert np.abs(loud_samples).max() > 1000
    np.testing.assert_allclose(quiet_samples, loud_samples / 10, atol=4.0)  # int16 rounding at each stage


def test_the_controllers_own_voice_is_a_pilot_voice_only_when_named():
    """piper (the controller's voice) hunts verdict defects by name (`--voices piper`) and is in
    no default mix: the issue's figures rest on voices the product never speaks with."""
    import random

    import numpy as np

    from tooling.bench.readback_voice import pilot_recording, pilot_voices

    assert not any(v.startswith("piper:") for v in pilot_voices())
    voices = pilot_voices(["piper"])
    assert voices == ["piper:joe"]
    pcm, made = pilot_recording("Lufthansa three five niner, squawk two five six six", random.Random(3), voices)
    samples = np.frombuffer(pcm, dtype=np.int16)
    assert made["voice"] == "piper:joe" and 1.5 < samples.size / 16000 < 8 and np.abs(samples).max() > 3000
