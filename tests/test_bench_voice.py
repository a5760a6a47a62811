"""`livefreq bench voice` end to end with the real engines (whisper, piper) and a real loopback
gateway, at a small n. Timings are never asserted, only that every group was measured, the
report is complete and the histogram exists.

Controller audio pacing is switched off for the gateway the benchmark starts
(`LIVEFREQ_AUDIO_PACING=false`): the pilot still streams in real time, but does not sit through
every controller message at speaking speed, which keeps the test well under a minute and a half.
"""

from __future__ import annotations

import json

from tooling.bench.figures import summarize
from tooling.bench.voice import METRICS, flight_script, pick_varied
from tooling.cli import main
from gateway.service import RadioService
from gateway.settings import Settings
from tooling.voicekit import wer, word_errors

N = 2


def test_word_errors_compare_meaning_not_spelling():
    assert word_errors("Lufthansa 359, runway 25R", "lufthansa tree fife niner runway two fife right") == (0, 5)
    edits, words = word_errors("squawk 1250", "squawk 1520")
    assert words == 2 and edits == 1
    assert wer("climb 5000 feet", "") == 1.0
    assert wer("", "") == 0.0


def test_pick_varied_spans_short_to_long_in_order():
    items = ["a" * k for k in (5, 1, 9, 3, 7)]
    assert pick_varied(items, 3, key=len) == ["a" * 5, "a", "a" * 9]
    assert pick_varied(items[:2], 3, key=len) == ["a", "a" * 5, "a"]


def test_summarize_ignores_missing_values():
    stats = summarize([100.0, None, 300.0, 200.0])
    assert stats["n"] == 3 and stats["p50"] == 200.0 and stats["min"] == 100.0 and stats["max"] == 300.0
    assert summarize([None])["n"] == 0


def test_flight_script_walks_clearance_to_tower():
    script = flight_script(RadioService(Settings()), min_phrases=15)
    assert len(script.pilot) >= 15 and len(script.controller) >= 15
    assert {u.flow for u in script.pilot} <= {"clearance", "startup_pushback", "taxi_out", "tower_departure"}
    assert {"clearance", "taxi_out", "tower_departure"} <= {u.flow for u in script.pilot}
    assert all(u.context.expected_phrases and u.phrase == u.context.expected_phrases[0] for u in script.pilot)
    assert any("tree" in text or "fife" in text or "niner" in text for text in script.controller)  # ICAO speech


def test_bench_voice_command_writes_report_and_histogram(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LIVEFREQ_AUDIO_PACING", "false")
    json_path, png_path = tmp_path / "bench-voice.json", tmp_path / "bench-voice.png"
    code = main(["bench", "voice", "--n", str(N), "--json", str(json_path), "--png", str(png_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "stt: 2/2 recordings" in err and "radio: 2/2 controller replies" in err
    for name in ("stt_rtf", "tts_cold_first_audio", "ptt_up_to_first_audio"):
        assert name in out
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    report = json.loads(json_path.read_text())
    assert report["benchmark"] == "voice" and report["n"] == N and report["png"] == str(png_path)
    assert report["engines"]["stt"] == "whisper" and report["engines"]["tts"] == "piper"
    assert list(report["metrics"]) == list(METRICS)
    for name in ("stt_rtf", "stt_final_after_end_ms", "stt_wer", "tts_cold_first_audio_ms", "tts_cold_rtf",
                 "tts_warm_first_audio_ms", "tts_warm_rtf", "ptt_up_to_first_audio_ms"):
        metric = report["metrics"][name]
        assert metric["n"] == N, (name, metric)
        assert metric["p50"] is not None and metric["p95"] is not None and metric["mean"] is not None

    stt = report["stt"]["samples"]
    assert len(stt) == N and all(s["transcript"] and s["audio_s"] > 1.0 for s in stt)
    assert len({s["phrase"] for s in stt}) == N  # different phrases, of different lengths
    cold, warm = report["tts"]["cold"], report["tts"]["warm"]
    assert [s["text"] for s in cold] == [s["text"] for s in warm] and all(s["audio_s"] > 0.5 for s in cold)

    radio = report["radio"]
    assert radio["server"] == "in-process" and radio["sessions"] == 1 and radio["replies"] == N
    assert radio["speech"]["stt"] == "whisper" and radio["speech"]["tts"] == "piper"
    replied = [e for e in radio["exchanges"] if e["first_audio_ms"] is not None]
    assert len(replied) == N
    first = radio["exchanges"][0]
    assert first["state"] == "CD_INITIAL" and first["to_state"] == "CD_READBACK" and first["reply_seq"] == 1
    for exchange in replied:
        assert exchange["transcript"] and exchange["recognized"] is True
        assert exchange["final_ms"] <= exchange["decision_ms"] <= exchange["first_audio_ms"]
    assert report["metrics"]["ptt_up_to_final_ms"]["n"] == radio["transmissions"]
    # the gateway's own stage histograms over the same run (GET /metrics), in the table too
    stages = radio["server_stages"]
    assert stages["speech_end_to_final"]["n"] == radio["transmissions"]
    assert stages["speech_end_to_first_audio"]["n"] == N and stages["speech_end_to_first_audio"]["p50_ms"] > 0
    assert "server: speech_end_to_first_audio" in out


def test_bench_voice_reports_an_unreachable_gateway_before_measuring(tmp_path, capsys):
    code = main(["bench", "voice", "--n", "1", "--url", "http://127.0.0.1:9", "--json", str(tmp_path / "r.json")])
    assert code == 1
    err = capsys.readouterr().err
    assert "no gateway answers at http://127.0.0.1:9" in err and "stt:" not in err
