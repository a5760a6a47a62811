"""`livefreq corpus build` and `livefreq load` end to end: a tiny corpus synthesized with the real
piper voice, and a short load run of two pilots against a real gateway subprocess (whisper +
piper) started by the command itself. Timings are never asserted: only that the corpus holds
what it says, that every transmission was decided and judged, and that the report is complete.

Controller audio pacing is off for the gateway the run starts (`LIVEFREQ_AUDIO_PACING=false`,
inherited by the subprocess): the pilots still stream in real time and wait for every controller
message to end, but a 20 s run reaches the readback states: each pilot's second transmission
(its first readback) starts within about 13 s (7 s to spare on a slow host), and no third one starts (a run ends when the last
transmission begun before its end has been answered).
"""

from __future__ import annotations

import json
import random
import wave

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tooling.cli import main
from tooling.corpus import MANIFEST, Corpus, CorpusEntry, build_corpus, load_corpus
from tooling.load.pilot import AGAIN_LEAD_S, say_again
from tooling.load.report import audio_gaps, message_faults
from tooling.load.run import capacity_steps
from tooling.voicekit import Received, pilot_pcm, pilot_voice_id, rival_checked


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory) -> Corpus:
    """Two scenarios, three pilot turns each, a wrong readback at every readback state."""
    return build_corpus(tmp_path_factory.mktemp("corpus"), 2, turns=3, wrong_share=1.0)


def test_corpus_holds_recordings_with_their_ground_truth(tiny_corpus: Corpus) -> None:
    corpus = load_corpus(tiny_corpus.root)  # what was written reads back the same
    assert corpus.entries == tiny_corpus.entries and corpus.seeds == [0, 1]
    correct = [e for e in corpus.entries if e.kind == "correct"]
    wrong = [e for e in corpus.entries if e.kind == "wrong"]
    assert len(correct) == 6 and wrong
    assert {(e.flow, e.state) for e in correct if e.seed == 0} == {("clearance", s) for s in ("CD_INITIAL", "CD_READBACK", "CD_GROUND_RB")}
    for entry in corpus.entries:
        with wave.open(str(corpus.root / entry.file), "rb") as wav:
            assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (16000, 1, 2)
            assert abs(wav.getnframes() / 16000 - entry.audio_s) < 0.01 and entry.audio_s > 1.5
        assert entry.start_flow == "clearance" and entry.text == entry.text.lower()
        assert 0.85 <= entry.length_scale <= 1.15 and entry.radio_level in (3, 4, 5)
    for entry in wrong:  # the same state's correct readback, one value changed, and which field
        twin = next(e for e in correct if (e.seed, e.state) == (entry.seed, entry.state))
        assert entry.expected_readback == "wrong" and twin.expected_readback == "ok"
        assert entry.wrong_field and entry.text != twin.text
    assert [e.kind for e in corpus.for_state(0, "clearance", "CD_READBACK")][0] == "correct"
    assert any(e.kind == "wrong" for e in corpus.for_state(0, "clearance", "CD_READBACK"))


def test_rebuilding_the_corpus_reuses_unchanged_recordings(tiny_corpus: Corpus) -> None:
    before = {e.file: (tiny_corpus.root / e.file).stat().st_mtime_ns for e in tiny_corpus.entries}
    again = build_corpus(tiny_corpus.root, 2, turns=3, wrong_share=1.0)
    assert again.entries == tiny_corpus.entries
    assert {e.file: (tiny_corpus.root / e.file).stat().st_mtime_ns for e in again.entries} == before


def test_the_corpus_varies_speed_and_noise_of_one_steady_voice(tiny_corpus: Corpus) -> None:
    """The pilot voice has no randomness of its own (a pause that sometimes outlasted the VAD's
    hang-over split a vox transmission): the same options give the same audio, and the corpus
    still varies what it chooses to vary."""
    entries = tiny_corpus.entries
    assert {e.voice for e in entries} == {pilot_voice_id()} and "noise_scale=0.0" in pilot_voice_id()
    assert len({e.length_scale for e in entries}) > 1 and len({e.noise_dbfs for e in entries}) > 1
    phrase = entries[0].text
    make = pilot_pcm.__wrapped__  # past the cache: two syntheses
    assert make(phrase, length_scale=1.1) == make(phrase, length_scale=1.1)
    slow, fast = make(phrase, length_scale=1.15), make(phrase, length_scale=0.85)
    assert len(slow) > len(fast)
    assert make(phrase, noise_dbfs=-52.0) != make(phrase, noise_dbfs=-40.0)


def test_recordings_of_another_pilot_voice_are_made_again(tmp_path) -> None:
    corpus = build_corpus(tmp_path, 1, turns=1)
    said = {e.file: corpus.pcm(e) for e in corpus.entries}
    manifest = tmp_path / MANIFEST
    lines = [{**json.loads(line), "voice": "en_US-joe-medium"} for line in manifest.read_text().splitlines()]
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines))  # made by an earlier, noisy voice
    for entry in corpus.entries:
        (tmp_path / entry.file).write_bytes(b"")  # what it said is not what the voice says now
    again = build_corpus(tmp_path, 1, turns=1)
    assert again.entries == corpus.entries
    assert {e.file: again.pcm(e) for e in again.entries} == said  # made again, and the same audio


def test_a_foreign_folder_of_wavs_is_matched_by_text(tiny_corpus: Corpus, tmp_path) -> None:
    source = tiny_corpus.entries[0]
    (tmp_path / "mine.wav").write_bytes((tiny_corpus.root / source.file).read_bytes())
    (tmp_path / MANIFEST).write_text(json.dumps({"file": "mine.wav", "text": source.text}) + "\n")
    corpus = load_corpus(tmp_path)
    assert corpus.seeds == [] and corpus.entries[0].kind == "external"
    # matched on speech, not spelling: the state's phrase as written finds the recording
    written = "Request IFR clearance to Berlin, information Papa, stand E14, Frankfurt Delivery, Ukraine International 664"
    assert corpus.for_state(None, "clearance", "CD_INITIAL", [written]) == corpus.entries
    assert corpus.for_state(None, "clearance", "CD_INITIAL", ["radio check"]) == []
    assert corpus.pcm(corpus.entries[0]) == tiny_corpus.pcm(source)


def test_a_broken_manifest_is_a_clear_error(tmp_path, capsys) -> None:
    (tmp_path / MANIFEST).write_text('{"file": "missing.wav", "text": "hello"}\n')
    code = main(["load", "--sessions", "1", "--duration", "5", "--audio", str(tmp_path), "--report", str(tmp_path / "r")])
    assert code == 1 and "missing.wav does not exist" in capsys.readouterr().err


def test_audio_gaps_are_where_a_player_would_run_dry() -> None:
    second = 16000 * 2  # bytes of one second at 16 kHz
    on_time = [(0.0, second), (0.5, second), (1.9, second)]  # ahead of playback all along
    assert audio_gaps(on_time) == []
    late = [(0.0, second // 2), (0.8, second // 2), (1.0, second)]  # starves 0.3 s, then resumes
    assert [(at, round(gap, 3)) for at, gap in audio_gaps(late)] == [(0.5, 0.3)]


def test_message_faults_find_gaps_disorder_and_interleaving() -> None:
    def rx(*events: tuple[str, int]) -> Received:
        return Received(events=[{"type": t, "seq": s} for t, s in events])

    clean = rx(("atc.message", 1), ("atc.message.end", 1), ("atc.message", 2), ("atc.message.end", 2))
    assert sum(message_faults(clean).values()) == 0
    faults = message_faults(rx(("atc.message", 1), ("atc.message.end", 1), ("atc.message", 4), ("atc.message", 3), ("atc.message.end", 3)))
    assert faults["lost"] == 2 and faults["out_of_order"] == 1 and faults["interleaved"] == 1


@given(seed=st.integers(min_value=0, max_value=2**32), samples=st.integers(min_value=0, max_value=48000))
def test_a_recording_said_again_starts_later_after_the_key_down(seed: int, samples: int) -> None:
    """The recognizer hears the same audio the same way, so a load pilot asked to say again does
    not send the very same samples: the recording, after 0.1-0.4 s more of the key held."""
    pcm = bytes(range(256)) * (samples // 128) + b"\x01\x02" * (samples % 128)
    again = say_again(pcm, random.Random(seed))
    lead = len(again) - len(pcm)
    assert again.endswith(pcm) and again[:lead] == bytes(lead)
    assert AGAIN_LEAD_S[0] * 32000 - 2 <= lead <= AGAIN_LEAD_S[1] * 32000 + 2 and lead % 2 == 0


def test_a_reply_that_waited_for_rivals_is_told_by_its_decisions_trace() -> None:
    """The engine's trace of a clearance limit heard as issued and weighed against rival cities
    (`apply_checks`' notes, in the "checked in the audio" step) marks the reply as rival-checked;
    a value checked in the audio without rivals, or no check at all, does not."""
    from engine.hearing import ValueCheck
    from engine.models import ReadbackResult, Trace
    from engine.value_check import apply_checks

    def decision(checks: list[ValueCheck], field: str, kind: str, value: str, **unsure: list[str]) -> dict:
        rb = ReadbackResult(ok=False, fields={field: "unsure"}, unsure=[field], **unsure)
        _result, notes = apply_checks(rb, checks, {field: (kind, value)})
        trace = Trace()
        trace.add("readback", "checked in the audio", checks=notes)
        return {"type": "decision", "trace": trace.model_dump(mode="json")}

    oslo = ValueCheck(field="destination", value="Oslo", margin=0.0, lowest=0.0, delta=-6.0, tempo=1.0, rival=True)
    assert rival_checked(decision([oslo], "destination", "airport", "EDDL", rivalled=["destination"]))
    squawk = ValueCheck(field="squawk", value="2566", margin=3.0, lowest=-0.5, delta=1.0, tempo=1.0)
    assert not rival_checked(decision([squawk], "squawk", "squawk", "2566"))
    assert not rival_checked({"type": "decision", "trace": {"steps": [{"step": "input", "detail": "x", "data": {}}]}})
    assert not rival_checked({"type": "decision"})


def test_capacity_steps_grow_to_the_limit() -> None:
    assert list(capacity_steps(10, 40)) == [10, 15, 20, 25, 31, 38]
    assert list(capacity_steps(60, 100)) == [60, 75, 93]


def test_load_run_against_a_real_gateway(tiny_corpus: Corpus, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("LIVEFREQ_AUDIO_PACING", "false")
    report_dir = tmp_path / "report"
    code = main(
        ["load", "--sessions", "2", "--duration", "20", "--audio", str(tiny_corpus.root), "--report", str(report_dir),
         "--think", "0.2,0.5", "--pause", "0.5,1"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "load 2:" in err and "PTT release -> first ATC audio" in out and "readback verdicts" in out
    report = json.loads((report_dir / "load.json").read_text())
    assert (report_dir / "load.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert report["gateway"]["started_here"] and report["gateway"]["speech"]["stt"] == "whisper"
    assert report["config"]["sessions"] == 2 and report["config"]["corpus_scenarios"] == 2
    exchanges = report["exchanges"]
    assert len(exchanges) >= 4 and len({e["session_id"] for e in exchanges}) == 2
    for exchange in exchanges:  # every transmission was heard and decided
        assert exchange["transcript"] and exchange["transmission_id"] and exchange["decision_ms"] is not None
        assert exchange["words"] > 0 and exchange["to_state"]
        if exchange["expected_readback"] is not None:
            assert exchange["verdict"] in {"accepted", "rejected", "caught", "caught other field", "missed", "not judged", "say again"}
    assert any(e["expected_readback"] for e in exchanges)
    verdicts = report["verdicts"]
    assert verdicts["correct_readbacks"] + verdicts["wrong_readbacks"] >= 1 and verdicts["accuracy"] is not None
    first = verdicts["first_hearing"]  # one verdict per pilot and recording, however often it was asked again
    judged = {(e["session_id"], e["file"]) for e in exchanges if e["verdict"] not in (None, "not judged")}
    assert sum(first.values()) == len(judged) >= 1 and "first hearing of each recording" in out
    assert all(k.split(" ", 1)[0] in ("correct", "wrong") for k in first)
    assert report["latency_ms"]["ptt_up_to_first_audio"]["n"] == report["replies"] >= 2
    assert set(report["latency_ms"]["ptt_up_to_first_audio"]) >= {"p50", "p95", "p99"}
    latency = report["latency_ms"]  # a session's first reply apart from the later ones
    assert latency["ptt_up_to_first_audio_opening"]["n"] == 2  # one per pilot
    assert latency["ptt_up_to_first_audio_opening"]["n"] + latency["ptt_up_to_first_audio_later"]["n"] == report["replies"]
    assert "a session's first reply / later ones" in out
    # and the replies that waited for rivals scored in the audio apart from the others
    assert latency["ptt_up_to_first_audio_rival_checked"]["n"] + latency["ptt_up_to_first_audio_unchecked"]["n"] == report["replies"]
    assert all(e["expected_readback"] is not None for e in exchanges if e["rival_checked"])
    assert "after a rival check / the others" in out
    assert report["errors"]["total"] == 0 and report["messages"]["total_faults"] == 0
    assert report["messages"]["controller_messages"] >= 2 and report["audio"]["messages"] >= 2
    server = report["server"]
    assert server["metrics"] and server["cpu_s"] > 0 and server["rss_mb_peak"] > 50
    assert server["stages"]["speech_end_to_first_audio"]["n"] >= 2
    assert server["cpu_pool_busy_s"].get("stt:final", 0) > 0  # the pool's seconds, by engine and priority
    # each step after the first hearing, by outcome (run, skipped busy or late), as /metrics counted it
    for name in ("second_hearings", "value_checks", "rival_checks", "third_hearings", "bigger_value_checks", "confirm_hearings"):
        assert all(isinstance(n, int) and n > 0 for n in server[name].values()), (name, server[name])
    assert report["wer"] is not None and report["transmissions"] == len(exchanges)


def test_a_run_too_short_for_the_pilots_pauses_says_so(tiny_corpus: Corpus, serve, tmp_path, capsys) -> None:
    """Pilots join over the first pause and pause before a new call: a shorter run measures
    nothing, and says why instead of printing an empty table as if all went well."""
    from gateway.app import create_app
    from gateway.settings import Settings

    url = serve(create_app(Settings(store="memory", stt_engine="sphinx", tts_engine="espeak")))
    code = main(
        ["load", "--sessions", "1", "--duration", "1", "--pause", "1,2", "--url", url,
         "--audio", str(tiny_corpus.root), "--report", str(tmp_path)]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads((tmp_path / "load.json").read_text())["transmissions"] == 0
    assert "no pilot transmitted within 1 s" in err and "--pause (1-2 s)" in err


def test_load_against_a_gateway_that_requires_an_api_key(tiny_corpus: Corpus, serve, tmp_path, capsys) -> None:
    """`--token` reaches every call the load tester makes: the radio socket, /metrics and the
    sessions it deletes at the end; without it the pilots' refusals are counted, not raised."""
    from gateway.app import create_app
    from gateway.settings import Settings

    key = "load-key-0123456789abcdef"
    # controller audio unpaced, as for the gateway the other run starts (the module docstring)
    settings = Settings(store="memory", stt_engine="sphinx", tts_engine="espeak", audio_pacing=False, api_keys=[key], auth_secret="l" * 40)
    app = create_app(settings)
    url = serve(app)
    # 8 s: the pilot joins and keys within 2 s (--pause), so its one transmission starts in the run
    args = ["load", "--sessions", "1", "--duration", "8", "--think", "0.2,0.5", "--pause", "0.5,1", "--url", url,
            "--audio", str(tiny_corpus.root)]

    code = main([*args, "--report", str(tmp_path / "refused")])
    _out, err = capsys.readouterr()
    assert code == 0, err
    refused = json.loads((tmp_path / "refused" / "load.json").read_text())
    assert refused["transmissions"] == 0 and refused["errors"]["total"] >= 1
    assert refused["errors"]["client"] == {"refused: unauthorized": 1}  # the gateway's reason, not a crash

    code = main([*args, "--token", key, "--report", str(tmp_path / "keyed")])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads((tmp_path / "keyed" / "load.json").read_text())
    assert report["transmissions"] >= 1 and report["errors"]["total"] == 0
    assert report["server"]["metrics"]  # /metrics answered with the key
    assert key not in json.dumps(report) and key not in out + err
    assert len(app.state.service.repository) == 0  # the run's sessions were deleted with the key
