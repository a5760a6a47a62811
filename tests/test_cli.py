"""The `livefreq` console script, run as a real process: flows lint, chat over a pipe, bench.

The chat test learns what to say from an in-process `RadioService` on the same seed (the scenario
is reproducible), then checks that the terminal shows the controller's text and ICAO speech form
and judges a wrong readback field by field.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from engine.models import Decision
from tests.support.chat_completions import COMPLETION_TOKENS, PROMPT_TOKENS, ChatCompletionsServer

ROOT = Path(__file__).resolve().parents[1]
FLOWS = ROOT / "flows"
SEED = 7
SCENARIO = {"airport": "EDDF", "callsign": "DLH359"}


def livefreq(
    *args: str,
    stdin: str | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
    extra_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), **(extra_env or {})}
    env.pop("LIVEFREQ_FLOWS_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "tooling.cli", *args],
        check=False,
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=env,
        timeout=timeout,
    )


# --------------------------------------------------------------------------- help and usage


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--help"], ["serve", "keys", "flows", "chat", "bench"]),
        (["keys", "new", "--help"], ["--label"]),
        (["serve", "--help"], ["--host", "--port", "--log-level"]),
        (["flows", "lint", "--help"], ["--dir"]),
        (["chat", "--help"], ["--flow", "--seed", "--airport", "--callsign", "--trace", "--no-speech"]),
        (["bench", "engine", "--help"], ["--n", "--http", "--json"]),
        (["bench", "router", "--help"], ["--llm-url", "--llm-model", "--seeds", "--json"]),
    ],
)
def test_help_names_every_option(args: list[str], expected: list[str]) -> None:
    result = livefreq(*args)
    assert result.returncode == 0, result.stderr
    for word in expected:
        assert word in result.stdout


def test_keys_new_prints_a_key_and_the_entry_that_admits_it(tmp_path: Path) -> None:
    from gateway.auth import Authenticator
    from gateway.settings import Settings

    result = livefreq("keys", "new", "--label", "school-1")
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    key = lines["key (give to the client, shown once)"].strip()
    entry = lines["entry (for LIVEFREQ_API_KEYS_FILE)"].strip()
    assert key not in entry and entry.startswith("school-1 sha256:")
    (tmp_path / "keys").write_text(entry + "\n", encoding="utf-8")
    auth = Authenticator(Settings(api_keys_file=tmp_path / "keys", auth_secret="k" * 32))
    assert auth.authenticate(key).key_id == "school-1"
    assert livefreq("keys", "new", "--label", "no spaces").returncode == 1


def test_bench_without_target_lists_the_benchmarks() -> None:
    result = livefreq("bench")
    assert result.returncode == 0, result.stderr
    assert "engine" in result.stdout


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    from tooling.cli import main

    assert main([]) == 2
    assert main(["flows"]) == 2
    with pytest.raises(SystemExit) as exc:
        main(["bench", "engine", "--n", "0"])
    assert exc.value.code == 2
    assert "must be positive" in capsys.readouterr().err


# --------------------------------------------------------------------------- serve


def test_serve_logs_its_url_and_answers(tmp_path: Path) -> None:
    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LIVEFREQ_FLOWS_DIR": str(FLOWS)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tooling.cli", "serve", "--port", str(port), "--log-level", "info"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    try:
        assert proc.stderr is not None
        log: list[str] = []
        for line in proc.stderr:  # blocking reads until uvicorn is up (or the process died)
            log.append(line)
            if "Uvicorn running" in line:
                break
        assert any(f"livefreq gateway on http://127.0.0.1:{port}" in line for line in log), log
        reply = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10)
        assert reply.status_code == 200 and reply.json()["ok"] is True
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# --------------------------------------------------------------------------- flows


def test_flows_lint_passes_on_the_repository_flows() -> None:
    result = livefreq("flows", "lint", "--dir", str(FLOWS))
    assert result.returncode == 0, result.stdout + result.stderr
    summary = result.stdout.strip().splitlines()[-1]
    assert summary.endswith("warnings") and " 0 errors" in summary


BROKEN_FLOW = """\
slug: broken
name: Broken on purpose
entry_mode: main
station: delivery
start_state: ASK
states:
  ASK:
    role: pilot
    expect: "request clearance"
    transitions:
      - {to: NOWHERE, intent: request}
"""


def test_flows_lint_fails_on_an_unknown_target_and_names_file_state_field(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text(BROKEN_FLOW, encoding="utf-8")
    (tmp_path / "unreadable.yaml").write_text("slug: unreadable\nstates: [\n", encoding="utf-8")
    result = livefreq("flows", "lint", "--dir", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert "broken.yaml: ASK.transitions[0].to: error: unknown state 'NOWHERE'" in lines
    assert any(line.startswith("unreadable.yaml:") and "error: YAML error" in line for line in lines)
    assert lines[-1] == "2 flows, 1 states, 2 errors, 0 warnings"


def test_flows_lint_on_a_missing_directory_is_an_error(tmp_path: Path) -> None:
    result = livefreq("flows", "lint", "--dir", str(tmp_path / "nope"))
    assert result.returncode == 1
    assert "flow directory not found" in result.stderr


def test_flows_list_shows_name_entry_mode_and_states() -> None:
    result = livefreq("flows", "list", "--dir", str(FLOWS))
    assert result.returncode == 0, result.stderr
    row = next(line.split() for line in result.stdout.splitlines() if line.startswith("clearance"))
    assert "main" in row and row[-1].isdigit()


# --------------------------------------------------------------------------- chat


def _wrong(value: object) -> str:
    """Another value of the same shape (a squawk stays four octal digits)."""
    text = str(value)
    last = text[-1]
    return text[:-1] + ("1" if last != "1" else "2")


def test_chat_over_a_pipe_speaks_and_judges_a_wrong_readback() -> None:
    from gateway.service import RadioService
    from gateway.settings import Settings

    oracle = RadioService(Settings(flows_dir=FLOWS), clock=lambda: 0.0)
    session, opening, _ = oracle.create(flow="clearance", scenario=SCENARIO, seed=SEED)
    v = session.variables
    first_call = opening.expected_pilot[0]
    clearance: Decision = oracle.transmit(session.session_id, first_call)
    assert clearance.messages, "delivery answers the first call"
    message = clearance.messages[0]
    correct = clearance.expected_pilot[0]
    wrong_squawk = _wrong(v["squawk"])
    wrong = correct.replace(str(v["squawk"]), wrong_squawk)
    assert wrong != correct

    script = f"{first_call}\n:hint\n{wrong}\n:trace\n{correct}\n:state\n:wait 60\n:quit\n"
    result = livefreq(
        "chat", "--flow", "clearance", "--seed", str(SEED), "--airport", "EDDF", "--callsign", "DLH359", stdin=script
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout

    assert "DLH359" in out and "EDDF" in out and str(v["runway"]) in out  # scenario summary
    assert "\x1b[" not in out  # no colors into a pipe
    text_line = next(line for line in out.splitlines() if line.endswith(f"│ {message.text}"))
    assert text_line.startswith("ATC  ") and str(message.frequency) in text_line
    assert f"spoken │ {message.speech}" in out
    assert message.speech != message.text  # the ICAO form really is another rendering

    assert "readback not correct" in out
    squawk_line = next(line for line in out.splitlines() if "squawk" in line and "wrong" in line)
    assert f"expected {v['squawk']}" in squawk_line and wrong_squawk in squawk_line
    assert "readback correct" in out
    assert "candidates:" in out and "router:" in out  # :trace
    assert "state  clearance:" in out  # :state
    assert "60 s later" in out  # :wait
    assert "summary" in out and "transmissions 3" in out and "readbacks correct 2/3" in out  # the ATIS letter, then the clearance twice


def run_main(
    args: list[str], stdin: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """`main` in this process (the airport data is loaded once per test run, not per command)."""
    from tooling.cli import main

    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    monkeypatch.setenv("NO_COLOR", "1")
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_chat_without_speech_shows_no_spoken_lines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_main(
        ["chat", "--flow", "clearance", "--seed", "1", "--no-speech", "--dir", str(FLOWS)],
        ":wait 1\n:quit\n",
        monkeypatch,
        capsys,
    )
    assert code == 0
    assert "spoken │" not in out and "summary" in out and "transmissions 0" in out


def test_chat_asks_a_configured_llm_router_and_traces_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], llm_server: ChatCompletionsServer
) -> None:
    llm_server.choice = "CD_ATIS_CURRENT"  # no ATIS letter reported: delivery gives the current one
    monkeypatch.setenv("LIVEFREQ_LLM_URL", f"{llm_server.url}/v1")
    monkeypatch.setenv("LIVEFREQ_LLM_MODEL", "fake-router")
    script = "morning, Lufthansa 359, we're all set to get our flight plan to munich\n:trace\n:quit\n"
    code, out, err = run_main(
        ["chat", "--flow", "clearance", "--seed", str(SEED), *_scenario_args(), "--no-speech", "--dir", str(FLOWS)],
        script,
        monkeypatch,
        capsys,
    )
    assert code == 0, err
    assert "cleared to" in out.lower()  # delivery read the clearance: the words were understood
    assert "router: llm" in out and "the LLM chose CD_ATIS_CURRENT" in out  # :trace
    assert len(llm_server.requests) == 1


def test_chat_rejects_an_unknown_flow(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["chat", "--flow", "no_such_flow", "--dir", str(FLOWS)], "", monkeypatch, capsys)
    assert code == 1
    assert "unknown flow 'no_such_flow'" in err


def test_chat_wait_fires_the_silence_prompts_at_their_due_times(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """After delivery's clearance the pilot stays silent: `:wait` plays the engine's timers."""
    from gateway.service import RadioService
    from gateway.settings import Settings

    oracle = RadioService(Settings(flows_dir=FLOWS), clock=lambda: 0.0)
    _session, opening, _ = oracle.create(flow="clearance", scenario=SCENARIO, seed=SEED)
    script = f"{opening.expected_pilot[0]}\n:wait 100\n:state\n:quit\n"
    code, out, _ = run_main(
        ["chat", "--flow", "clearance", "--seed", str(SEED), *_scenario_args(), "--dir", str(FLOWS)],
        script,
        monkeypatch,
        capsys,
    )
    assert code == 0
    prompts = [line for line in out.splitlines() if line.startswith("ATC ") and "how do you read" in line]
    assert len(prompts) == 2  # silence_prompts_max of the default policy, then the frequency stays quiet
    assert "100 s later (t=100 s): 2 event(s)" in out
    assert "clock 100 s" in out


def _scenario_args() -> list[str]:
    return ["--airport", SCENARIO["airport"], "--callsign", SCENARIO["callsign"]]


# --------------------------------------------------------------------------- bench


def test_bench_engine_writes_the_json_report(tmp_path: Path) -> None:
    path = tmp_path / "reports" / "bench.json"
    user_db = tmp_path / "user" / "livefreq.sqlite3"
    result = livefreq(
        "bench", "engine", "--n", "200", "--profile", "--json", str(path), timeout=120,
        extra_env={"LIVEFREQ_STORE": "sqlite", "LIVEFREQ_SQLITE_PATH": str(user_db)},
    )
    assert result.returncode == 0, result.stderr
    assert "engine: 200/200 transmissions" in result.stderr  # progress
    report = json.loads(path.read_text(encoding="utf-8"))
    assert report["benchmark"] == "engine" and report["n"] == 200 and report["flow"] == "clearance"
    assert isinstance(report["meets_target"], bool) and report["target_tx_per_s"] > 0
    modes = {r["mode"]: r for r in report["results"]}
    # the durable mode commits every decision to a temporary SQLite file, never the user's database
    assert set(modes) == {"engine", "service", "service-sqlite-full"}
    assert not user_db.exists()
    for mode, r in modes.items():
        _check_result(r, 200)
        assert any(line.split()[:2] == [mode, "200"] for line in result.stdout.splitlines())  # the table
    assert report["profile"] and {"function", "calls", "tottime_s", "cumtime_s"} <= set(report["profile"][0])


def test_bench_http_loop_drives_a_real_server() -> None:
    """The `--http` mode: uvicorn in a thread on a free loopback port, one keep-alive client."""
    from tooling.bench.common import Progress
    from tooling.bench.engine import bench_http
    from gateway.settings import Settings

    progress = io.StringIO()
    run = bench_http(Settings(flows_dir=FLOWS), 40, None, Progress("http", 40, progress))
    result = run.result()
    assert result["mode"] == "http"
    _check_result(result, 40)
    assert "http: 40/40 transmissions" in progress.getvalue()


def _check_result(r: dict, n: int) -> None:
    assert r["transmissions"] == n, r
    assert r["sessions"] >= 1 and r["completed_sessions"] <= r["sessions"]
    assert r["not_understood"] == 0 and r["stalled_sessions"] == 0  # the engine's own phrases always work
    for key in ("tx_per_s", "p50_ms", "p99_ms", "mean_ms", "max_ms", "seconds"):
        assert isinstance(r[key], float | int), key
    assert r["p50_ms"] <= r["p99_ms"] <= r["max_ms"]


def test_bench_router_measures_both_paths_and_says_when_no_llm_is_configured(
    tmp_path: Path, llm_server: ChatCompletionsServer
) -> None:
    """`livefreq bench router`: the textbook share (the 95 % target holds on the corpus) and the
    paraphrases; the LLM path against the tests' chat-completions server, which answers each
    question with its first candidate (a test of the plumbing, not of any model's accuracy)."""
    from tooling.bench.router import load_paraphrases

    path = tmp_path / "router.json"
    args = ("bench", "router", "--seeds", "1", "--json", str(path))
    result = livefreq(*args, "--llm-url", f"{llm_server.url}/v1", "--llm-model", "fake-router", timeout=180)
    assert result.returncode == 0, result.stderr
    report = json.loads(path.read_text(encoding="utf-8"))
    assert report["benchmark"] == "router" and report["meets_target"] is True
    assert report["share_without_llm"] >= report["target_share_without_llm"] == 0.95
    corpora = {c["corpus"]: c for c in report["corpora"]}
    total = corpora["all textbook transmissions"]
    assert total["transmissions"] == sum(c["transmissions"] for name, c in corpora.items() if c is not total) > 300
    summary = report["paraphrase_summary"]
    assert summary["paraphrases"] == len(load_paraphrases()) == len(report["paraphrases"]) >= 40
    assert summary["deterministic_decided"] + summary["left_to_llm"] == summary["paraphrases"]
    assert summary["llm"]["model"] == "fake-router"
    assert len(llm_server.requests) == summary["left_to_llm"] > 0  # asked only where the deterministic router could not decide
    assert summary["llm_outcomes"] == {"chosen": summary["left_to_llm"]}
    assert 0 <= summary["llm_resolved_correctly"] <= summary["left_to_llm"]
    # every call answered, so no fallback: whatever was resolved, the model's answer resolved it
    assert summary["llm_answered"] == summary["left_to_llm"] and summary["llm_fallbacks"] == 0
    assert summary["llm_answered_correctly"] == summary["llm_resolved_correctly"]
    assert 0 < summary["llm_latency_ms_p50"] <= summary["llm_latency_ms_p95"]
    assert summary["llm_tokens_per_call"] == PROMPT_TOKENS + COMPLETION_TOKENS
    # the test server also answers the first offered id: the LLM path and the reference agree
    assert summary["first_candidate_resolved_correctly"] == summary["llm_resolved_correctly"]
    assert sum(summary["left_to_llm_offered"].values()) == summary["left_to_llm"]
    assert 0 < summary["left_to_llm_expect_none"] < summary["left_to_llm"]
    assert "decided without an LLM: " in result.stdout and "LLM path (fake-router" in result.stdout
    # no LLM configured: measured honestly as not measured
    result = livefreq(*args, timeout=180)
    assert result.returncode == 0, result.stderr
    assert "LLM path: not measured" in result.stdout
    assert json.loads(path.read_text(encoding="utf-8"))["paraphrase_summary"]["llm"] is None
