"""`livefreq`: the command line of the gateway (serve, flows, chat, bench, corpus, load, fly, client).

One argparse parser, one small function per subcommand. Heavy imports (uvicorn, the app, the
service) happen inside the commands, so `livefreq flows lint` in CI stays quick and does not need
the server's dependencies to be importable. Every command returns its exit code: 0 success,
1 a failure the command found (lint errors, a broken flow directory), 2 a usage error (argparse).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from engine.loader import FlowLoadError
    from engine.registry import FlowRegistry
    from gateway.settings import Settings

__all__ = ["build_parser", "main"]

log = logging.getLogger("livefreq.cli")

EXIT_OK = 0
EXIT_FAILED = 1
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")
CHAT_SESSION_TTL_S = 10.0 * 365 * 24 * 3600
PROFILE_MAX_TX = 1000  # a profiled run is ~3x slower; this many transmissions show the picture
BENCHMARKS: dict[str, str] = {
    "engine": "transmissions per second and decision time: in process, and over HTTP with --http",
    "voice": "STT real-time factor and WER, TTS time to first audio, PTT release to first ATC audio byte",
    "router": "share of transmissions decided without an LLM; paraphrases resolved by each router path",
    "assistant": "briefing assistant: tool-selection accuracy on the labelled questions, time to first event and to done",
    "rules": "briefing assistant's rules retrieval: recall@1/@5 and MRR of bm25, embeddings and their hybrid",
    "readback": "wrong values accepted and correct readbacks refused, per field, over every readback state (text or voice)",
}


class CliError(Exception):
    """A problem the user can fix (missing directory, unknown flow): printed without a traceback."""


# --------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree; `main` dispatches on the `handler` default each subparser sets."""
    parser = argparse.ArgumentParser(
        prog="livefreq",
        description="Real-time voice gateway for ATC radio training.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser(
        "serve", help="run the HTTP/WebSocket gateway (uvicorn)", description="Run the gateway with uvicorn."
    )
    serve.add_argument("--host", default=None, help="interface to bind (default: LIVEFREQ_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="TCP port (default: LIVEFREQ_PORT or 8765)")
    serve.add_argument(
        "--log-level",
        default=None,
        choices=LOG_LEVELS,
        help="uvicorn and application log level (default: LIVEFREQ_LOG_LEVEL or info)",
    )
    serve.set_defaults(handler=cmd_serve)

    keys = sub.add_parser(
        "keys", help="API keys for authentication", description="API keys (README \"Security\")."
    )
    keys_sub = keys.add_subparsers(dest="keys_command", metavar="ACTION")
    new_key = keys_sub.add_parser(
        "new",
        help="make a random API key and the line to configure it with",
        description="Print a new random API key (give it to the client) and the entry that configures it "
        "(put it in LIVEFREQ_API_KEYS_FILE or LIVEFREQ_API_KEYS): its SHA-256 only, so the gateway's "
        "configuration holds no usable key.",
    )
    new_key.add_argument("--label", default=None, help="the key's id in logs and as the owner of its sessions")
    new_key.set_defaults(handler=cmd_keys_new)
    keys.set_defaults(handler=_usage(keys))

    flows = sub.add_parser("flows", help="check and list the YAML flows", description="Check and list the YAML flows.")
    flows_sub = flows.add_subparsers(dest="flows_command", metavar="ACTION")
    lint = flows_sub.add_parser(
        "lint",
        help="load and lint every flow; exit 1 on any error",
        description="Load and lint every flow of a directory. Prints each issue as "
        "'file: STATE.field: message' and a summary; exits 1 when a flow fails to load or has a lint error.",
    )
    _add_flows_dir(lint)
    lint.set_defaults(handler=cmd_flows_lint)
    listing = flows_sub.add_parser(
        "list", help="list flows: slug, name, entry mode, states", description="List the flows."
    )
    _add_flows_dir(listing)
    listing.set_defaults(handler=cmd_flows_list)
    flows.set_defaults(handler=_usage(flows))

    chat = sub.add_parser(
        "chat",
        help="interactive text trainer in the terminal",
        description="Talk to the controller by typing. Lines starting with ':' are commands: "
        ":trace, :hint, :state, :wait N, :reset, :help, :quit. Reads piped stdin too, one line per transmission.",
    )
    chat.add_argument("--flow", default=None, help="flow slug to start in (default: the curriculum's main flow)")
    chat.add_argument("--seed", type=int, default=None, help="scenario seed (same seed, same scenario)")
    chat.add_argument("--airport", default=None, metavar="ICAO", help="departure airport, e.g. EDDF")
    chat.add_argument("--callsign", default=None, help="ICAO callsign, e.g. DLH359")
    chat.add_argument("--trace", action="store_true", help="print the decision trace after every transmission")
    chat.add_argument(
        "--speech",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="show the ICAO spoken form of each message",
    )
    _add_flows_dir(chat)
    chat.set_defaults(handler=cmd_chat)

    bench = sub.add_parser(
        "bench", help="benchmarks (run without a target to list them)", description="Run a benchmark."
    )
    bench_sub = bench.add_subparsers(dest="bench_command", metavar="BENCHMARK")
    engine = bench_sub.add_parser(
        "engine",
        help=BENCHMARKS["engine"],
        description="Drive scripted sessions through the flows (each pilot turn sends the engine's own "
        "expected phrase) and measure transmissions per second and p50/p99 decision time.",
    )
    engine.add_argument("--n", type=_positive_int, default=2000, help="transmissions per mode (default: 2000)")
    engine.add_argument(
        "--http", action="store_true", help="also measure through the HTTP API on a local uvicorn server"
    )
    _add_report_path(engine, "reports/bench-engine.json")
    engine.add_argument("--flow", default=None, help="flow to start each session in (default: the main flow)")
    engine.add_argument(
        "--profile",
        action="store_true",
        help="profile the in-process engine loop with cProfile and print the hot spots",
    )
    _add_flows_dir(engine)
    engine.set_defaults(handler=cmd_bench_engine)
    voice = bench_sub.add_parser(
        "voice",
        help=BENCHMARKS["voice"],
        description="Measure the voice path with the configured engines on synthesized pilot recordings: "
        "STT real-time factor, final-transcript delay and word error rate; TTS time to first audio and "
        "real-time factor (cold and cached); and, for one pilot on WS /v1/radio of a loopback gateway "
        "started here (or --url), PTT release to final transcript, decision and first ATC audio byte. "
        "Progress on stderr, a table on stdout, a JSON report and a PNG histogram.",
    )
    voice.add_argument("--n", type=_positive_int, default=10, help="samples per measurement (default: 10)")
    voice.add_argument(
        "--url", default=None, help="measure a running gateway at this base URL instead of starting one on loopback"
    )
    _add_report_path(voice, "reports/bench-voice.json")
    voice.add_argument(
        "--png",
        dest="png_path",
        default="reports/bench-voice.png",
        metavar="PATH",
        help="where to write the latency histogram (default: %(default)s)",
    )
    voice.add_argument("--stt", default=None, help="STT engine: whisper, sphinx or vosk (default: LIVEFREQ_STT_ENGINE or whisper)")
    voice.add_argument("--tts", default=None, help="TTS engine: piper, espeak or edge-tts (default: LIVEFREQ_TTS_ENGINE or piper)")
    _add_flows_dir(voice)
    voice.set_defaults(handler=cmd_bench_voice)
    router = bench_sub.add_parser(
        "router",
        help=BENCHMARKS["router"],
        description="Replay the curriculum's scripts and the scripted pilot (gate to gate, with and without "
        "wrong readbacks) and count the transmissions the deterministic router decides without an LLM "
        "(target 95 percent); then decide the free-form paraphrases of tests/flows/paraphrases.yaml by the "
        "deterministic router alone and, with an LLM configured (--llm-url or LIVEFREQ_LLM_URL), through "
        "the LLM path, with the LIVEFREQ_LLM_* settings (a slow local model wants LIVEFREQ_LLM_TIMEOUT_S "
        "above its latency). A table on stdout and a JSON report.",
    )
    router.add_argument("--llm-url", default=None, help="OpenAI-compatible API base to measure (default: LIVEFREQ_LLM_URL)")
    router.add_argument("--llm-model", default=None, help="model name for --llm-url (default: LIVEFREQ_LLM_MODEL)")
    router.add_argument(
        "--seeds", type=_positive_int, default=3, help="scripted pilot scenarios, each flown twice (default: 3)"
    )
    _add_report_path(router, "reports/bench-router.json")
    _add_flows_dir(router)
    router.set_defaults(handler=cmd_bench_router)
    readback = bench_sub.add_parser(
        "readback",
        help=BENCHMARKS["readback"],
        description=(
            "Generated readbacks (an independent pilot: correct, one value changed, one value dropped) at every "
            "readback state of every flow, typed (text) or spoken by espeak-ng voices through noise and the radio "
            "effect and recognized by the gateway's STT (voice); prints the confusion table per field and the "
            "wrong values accepted / correct readbacks refused."
        ),
    )
    readback.add_argument("--mode", choices=("text", "voice"), default="text", help="typed or spoken readbacks (default: text)")
    readback.add_argument("--n", type=_positive_int, default=None, help="readbacks (default: 2000 text, 300 voice)")
    readback.add_argument("--seed", type=int, default=0, help="seed of the readbacks (default: 0)")
    readback.add_argument("--wrong", type=float, default=0.3, help="share of readbacks with a value changed or dropped (default: 0.3)")
    readback.add_argument(
        "--bias", choices=("on", "off", "both"), default="on",
        help="voice: recognize with the state's expected wording as context (never its values), without, or both (default: on)",
    )
    readback.add_argument(
        "--channel", choices=("band", "radio"), default="band",
        help="voice: the pilot's microphone through the VHF band-pass (band), or the full radio effect at readability 3-5 (radio) (default: band)",
    )
    readback.add_argument("--stt", default=None, help="voice: STT engine (default: LIVEFREQ_STT_ENGINE or whisper)")
    readback.add_argument(
        "--out", "--json", dest="json_path", default=None, metavar="PATH",
        help="where to write the JSON report (default: reports/bench-readback-<mode>.json)",
    )
    _add_flows_dir(readback)
    readback.set_defaults(handler=cmd_bench_readback)
    bench_assistant = bench_sub.add_parser(
        "assistant",
        help=BENCHMARKS["assistant"],
        description="Plan every question of assistant/data/bench_questions.tsv with the deterministic planner and "
        "count the right tools; stream each through the graph and time the first event and done. Table and JSON.",
    )
    bench_assistant.add_argument("--repeat", type=_positive_int, default=1, help="latency rounds over the set (default: 1)")
    bench_assistant.add_argument("--llm-url", help="plan (and word answers) with this OpenAI-compatible API base, e.g. http://127.0.0.1:11434/v1")
    bench_assistant.add_argument("--llm-model", help="the model name (required with --llm-url)")
    bench_assistant.add_argument("--llm-timeout", type=float, default=20.0, help="seconds per model call (default: 20)")
    bench_assistant.add_argument("--limit", type=_positive_int, default=None, help="a seeded sample of this many questions, stratified by tool")
    bench_assistant.add_argument("--seed", type=int, default=0, help="the sample's seed (default: 0)")
    bench_assistant.add_argument("--graph-runs", type=int, default=None, help="with --llm-url: stream only the first N through the whole graph "
                                 "(LLM formatter, latency); plan the others (default: all)")
    _add_report_path(bench_assistant, "reports/bench-assistant.json")
    bench_assistant.set_defaults(handler=cmd_bench_assistant)
    bench_rules = bench_sub.add_parser("rules", help=BENCHMARKS["rules"], description=BENCHMARKS["rules"] + " (gateway/bench_rules.py).")
    bench_rules.add_argument("--limit", type=_positive_int, default=None, help="a seeded sample of this many labelled questions")
    bench_rules.add_argument("--seed", type=int, default=0, help="the sample's seed (default: 0)")
    _add_report_path(bench_rules, "reports/bench-rules.json")
    bench_rules.set_defaults(handler=cmd_bench_rules)
    bench.set_defaults(handler=cmd_bench_list)

    ask = sub.add_parser(
        "ask", help="ask the briefing assistant one question (debug)",
        description="Run one question through the assistant's graph in process and print the answer.",
    )
    ask.add_argument("question", nargs="+", help="the question; several arguments are earlier turns, the last one is asked")
    ask.add_argument("--plan", action="store_true", help="print the plan and the router decision")
    ask.add_argument("--tool-result", action="store_true", help="print the tool result (JSON)")
    ask.add_argument("-v", "--verbose", action="store_true", help="print thinking, the ui_payload and the suggestions too")
    ask.set_defaults(handler=cmd_ask)

    corpus = sub.add_parser(
        "corpus", help="recorded pilot transmissions for load tests", description="Build the load-test corpus."
    )
    corpus_sub = corpus.add_subparsers(dest="corpus_command", metavar="ACTION")
    build = corpus_sub.add_parser(
        "build",
        help="synthesize the pilot transmissions of K seeded scenarios (WAV + manifest.jsonl)",
        description="Fly K seeded scenarios by text, and record what the scripted pilot says at each state with "
        "the piper voice at varied speed, radio effect and noise, plus wrong readbacks with their expected "
        "verdict: 16 kHz WAV files and manifest.jsonl (file, text, seed, flow, state, kind, expected_readback). "
        "WAVs whose line is unchanged are reused.",
    )
    build.add_argument("--out", default=str(_default_corpus_dir()), help="output folder (default: %(default)s)")
    build.add_argument("--scenarios", type=_positive_int, default=50, help="seeded scenarios (default: %(default)s)")
    build.add_argument("--turns", type=_positive_int, default=16, help="pilot turns per scenario at most (default: %(default)s)")
    build.add_argument("--first-seed", type=int, default=0, help="seed of the first scenario (default: %(default)s)")
    build.add_argument("--flow", default=None, help="flow the scenarios start in (default: the main flow)")
    build.add_argument(
        "--wrong-share", type=float, default=0.3, help="share of readback states that also get a wrong readback (default: %(default)s)"
    )
    _add_flows_dir(build)
    build.set_defaults(handler=cmd_corpus_build)
    corpus.set_defaults(handler=_usage(corpus))

    load = sub.add_parser(
        "load",
        help="N concurrent pilots over WebSocket replaying the corpus; latency, WER, verdicts, errors, server cost",
        description="Load test: N pilots on WS /v1/radio, each flying a seeded scenario by replaying its corpus "
        "recordings in real time with push-to-talk, waiting for the controller like a person (think time before an "
        "answer, a workload pause before a new call). Without --url a gateway is started here on a free loopback "
        "port with the default engines. Progress on stderr, a table on stdout, JSON and a PNG latency histogram "
        "in the report folder.",
    )
    load.add_argument("--sessions", type=_positive_int, default=10, help="concurrent pilots (default: %(default)s)")
    load.add_argument("--duration", type=float, default=60.0, help="seconds each run lasts (default: %(default)s)")
    load.add_argument("--audio", default=None, metavar="DIR", help="corpus folder (default: build or reuse reports/corpus)")
    load.add_argument("--url", default=None, help="a running gateway to load (default: start one on loopback)")
    load.add_argument("--token", default=None, help="API key, when the --url gateway requires one (README \"Security\")")
    load.add_argument("--report", default="reports/load", metavar="DIR", help="report folder (default: %(default)s)")
    load.add_argument("--think", default="1,3", metavar="MIN,MAX", help="seconds before answering a call (default: %(default)s)")
    load.add_argument("--pause", default="10,30", metavar="MIN,MAX", help="seconds before a new call (default: %(default)s)")
    load.add_argument("--seed", type=int, default=0, help="seed of the pilots' timing (default: %(default)s)")
    load.add_argument(
        "--find-capacity",
        action="store_true",
        help="step the session count up from --sessions until p95 passes 1.5 s; print the capacity",
    )
    load.add_argument("--max-sessions", type=_positive_int, default=200, help="with --find-capacity: stop here (default: %(default)s)")
    load.set_defaults(handler=cmd_load)

    fly = sub.add_parser(
        "fly",
        help="scripted pilot: fly a whole scenario against a running gateway over HTTP",
        description="Start a session on a running gateway and answer every pilot turn with the phrase the "
        "state expects, spoken radio-style, until the scenario completes.",
    )
    fly.add_argument("--url", default="http://127.0.0.1:8765", help="gateway base URL (default: %(default)s)")
    fly.add_argument("--flow", default="clearance", help="flow to start in (default: %(default)s)")
    fly.add_argument("--seed", type=int, default=7, help="scenario seed (default: %(default)s)")
    fly.add_argument(
        "--wrong-readbacks", action="store_true", help="first send every readback with one wrong value; it must be caught"
    )
    fly.add_argument("--quiet", action="store_true", help="print only the summary")
    fly.add_argument(
        "--voice", action="store_true", help="fly by voice over the WebSocket radio (synthesized pilot, real time)"
    )
    fly.add_argument("--until-flow", default=None, help="with --voice: stop when this flow begins (e.g. enroute)")
    fly.set_defaults(handler=cmd_fly)

    client = sub.add_parser(
        "client",
        help="play a WAV file as one transmission; print and save what comes back",
        description="Connect to a running gateway (WebSocket or WebRTC), start a session (or resume one), "
        "transmit one recording with push-to-talk in real time, and print the transcript, the decision and "
        "the controller's reply; each reply's audio is saved as a WAV file in --out. Exit 1 when the "
        "transmission was not understood.",
    )
    audio = client.add_mutually_exclusive_group(required=True)
    audio.add_argument("--wav", type=Path, help="the transmission: a PCM WAV file (any rate, mono or stereo)")
    audio.add_argument(
        "--say", nargs="?", const="", metavar="TEXT",
        help="synthesize TEXT with the pilot voice (piper, radio effect; saved as pilot.wav) instead; "
        "alone: the phrase the state expects",
    )
    client.add_argument("--url", default="http://127.0.0.1:8765", help="gateway base URL (default: %(default)s)")
    client.add_argument("--transport", choices=("ws", "webrtc"), default="ws", help="WebSocket or WebRTC (default: %(default)s)")
    client.add_argument("--out", type=Path, default=Path("client-out"), help="folder for the audio (default: %(default)s)")
    client.add_argument("--flow", default=None, help="flow to start in (default: the gateway's main flow)")
    client.add_argument("--seed", type=int, default=None, help="scenario seed (same seed, same scenario)")
    client.add_argument("--airport", default=None, metavar="ICAO", help="departure airport, e.g. EDDF")
    client.add_argument("--callsign", default=None, help="ICAO callsign, e.g. DLH359")
    client.add_argument("--resume", default=None, metavar="ID:TOKEN", help="resume this session instead of starting one")
    client.add_argument("--token", default=None, help="API key or session token, when the gateway requires one")
    client.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each answer (default: %(default)s)")
    client.add_argument("--json", action="store_true", help="print one JSON object (for scripts); progress goes to stderr")
    client.set_defaults(handler=cmd_client)
    return parser


def cmd_client(args: argparse.Namespace) -> int:
    from gateway.client.command import cmd_client as run

    return run(args)


def cmd_fly(args: argparse.Namespace) -> int:
    import httpx

    if args.voice:
        import asyncio

        from gateway.fly import fly_by_voice

        try:
            result = asyncio.run(
                fly_by_voice(args.url, flow=args.flow, seed=args.seed, until_flow=args.until_flow,
                             echo=(lambda line: None) if args.quiet else print)
            )
        except (OSError, TimeoutError, httpx.HTTPError) as exc:
            print(f"livefreq fly --voice: {exc}", file=sys.stderr)
            return 1
        print(
            f"session {result['session_id']}: at {result['flow']}:{result['state']}"
            f"{' (completed)' if result['completed'] else ''}, {result['transmissions']} transmissions by voice, "
            f"readbacks correct {result['readbacks_ok']}/{result['readbacks']}"
        )
        return 0

    from gateway.fly import FlightError, HttpPilot

    pilot = HttpPilot(args.url, seed=args.seed, wrong_readbacks=args.wrong_readbacks, echo=None if args.quiet else print)
    try:
        report = pilot.fly(flow=args.flow)
    except (FlightError, httpx.HTTPError) as exc:
        print(f"livefreq fly: {exc}", file=sys.stderr)
        return 1
    finally:
        pilot.close()
    print(
        f"session {report.session_id}: {'completed' if report.completed else 'NOT completed'}, "
        f"{report.transmissions} transmissions, {report.readbacks} readbacks"
        + (f", wrong values caught {report.wrong_caught}/{report.wrong_sent}" if args.wrong_readbacks else "")
    )
    for miss in report.misses:
        print(f"  MISSED wrong readback: {miss}")
    for line in report.unrecognized:
        print(f"  unrecognized: {line}")
    ok = report.completed and not report.misses and not report.unrecognized
    return 0 if ok else 1


def _add_flows_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir", dest="flows_dir", default=None, help="flow directory (default: LIVEFREQ_FLOWS_DIR or flows)"
    )


def _add_report_path(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--json",
        dest="json_path",
        default=default,
        metavar="PATH",
        help="where to write the JSON report (default: %(default)s)",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {value}")
    return value


def _usage(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """Handler for a command group called without its action: help on stderr, usage error."""

    def show(_: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return show


def main(argv: list[str] | None = None) -> int:
    """Console entry point (`livefreq = "gateway.cli:main"`); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(handler(args))
    except CliError as exc:
        print(f"livefreq: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130


# --------------------------------------------------------------------------- settings


def _settings(**overrides: Any) -> Settings:
    """Settings from the environment (LIVEFREQ_*), with the options given on the command line."""
    from gateway.settings import Settings

    from pydantic import ValidationError

    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        raise CliError(f"invalid settings: {exc}") from None


# --------------------------------------------------------------------------- serve


def cmd_serve(args: argparse.Namespace) -> int:
    """Run uvicorn on the app built from the settings (env, then command-line options)."""
    import uvicorn

    from gateway.app import create_app
    from gateway.llm.prompts import PromptError
    from gateway.store import StoreError

    settings = _settings(host=args.host, port=args.port, log_level=args.log_level)
    level = settings.log_level.lower()
    if level not in LOG_LEVELS:
        raise CliError(f"unknown log level {settings.log_level!r} (one of {', '.join(LOG_LEVELS)})")
    logging.basicConfig(level="DEBUG" if level == "trace" else level.upper(), format="%(levelname)s:     %(message)s")
    try:
        app = create_app(settings)
    except (StoreError, PromptError) as exc:  # a SQLite file in use, a Redis that does not answer, bad prompts
        raise CliError(str(exc)) from None
    wildcard = settings.host in ("0.0.0.0", "::")
    if not app.state.auth.enabled and settings.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning(
            "listening on %s without authentication: anyone who reaches this port may start sessions "
            "and use the speech engines (set LIVEFREQ_API_KEYS or LIVEFREQ_API_KEYS_FILE; README \"Security\")",
            settings.host,
        )
    log.info(
        "livefreq gateway on http://%s:%d%s (%d flows from %s)",
        "127.0.0.1" if wildcard else _url_host(settings.host),
        settings.port,
        f", listening on all interfaces ({settings.host})" if wildcard else "",
        len(app.state.service.registry),
        settings.flows_dir,
    )
    # no permessage-deflate: PCM audio does not compress, and deflating every 20 ms frame in and
    # every 100 ms frame out took 4 % of the gateway's CPU under load (py-spy, 50 pilots)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=level, ws_per_message_deflate=False)
    return EXIT_OK


def cmd_keys_new(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """A new API key and its configuration entry (gateway/auth.py keeps digests only)."""
    from gateway.auth import AuthConfigError, new_key, parse_key_entry

    out = out or sys.stdout
    key, entry = new_key()
    line = f"{args.label} {entry}" if args.label else entry
    try:
        key_id = parse_key_entry(line, "--label").key_id
    except AuthConfigError as exc:
        raise CliError(str(exc)) from None
    print(f"key (give to the client, shown once): {key}", file=out)
    print(f"entry (for LIVEFREQ_API_KEYS_FILE):   {line}", file=out)
    print(f"key id (owner of its sessions):       {key_id}", file=out)
    return EXIT_OK


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


# --------------------------------------------------------------------------- flows


def _flows_dir(args: argparse.Namespace) -> Path:
    if args.flows_dir is not None:
        return Path(args.flows_dir)
    return Path(_settings().flows_dir)


def _load_flows(args: argparse.Namespace) -> tuple[FlowRegistry, list[FlowLoadError]]:
    """The flows of the directory the options name, and the errors of the files that did not load."""
    from engine.loader import load_registry
    from gateway.flows_source import DirectoryFlowSource

    directory = _flows_dir(args)
    if not directory.is_dir():
        raise CliError(f"flow directory not found: {directory}")
    load_errors: list[FlowLoadError] = []
    registry = load_registry(DirectoryFlowSource(directory), errors=load_errors)
    return registry, load_errors


def cmd_flows_lint(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Load every flow (collecting load errors), lint the ones that loaded, print and count."""
    from engine.loader import LoadProblem, lint_registry
    from engine.registry import KNOWN_SCENARIO_VARIABLES

    out = out or sys.stdout
    registry, load_errors = _load_flows(args)
    issues = lint_registry(registry, KNOWN_SCENARIO_VARIABLES)
    errors = 0
    for exc in load_errors:
        for problem in exc.problems or [LoadProblem(str(exc))]:
            head = _display_path(exc.source) + (f":{problem.line}" if problem.line is not None else "")
            print(_issue_line(head, problem.location, "error", problem.message), file=out)
            errors += 1
    for issue in issues:
        where = ".".join(p for p in (issue.state, issue.field) if p) or None
        print(_issue_line(_display_path(issue.file), where, issue.severity, issue.message), file=out)
        if issue.severity == "error":
            errors += 1
    warnings = sum(1 for i in issues if i.severity == "warning")
    states = sum(len(flow.states) for flow in registry)
    flows = len(registry) + len(load_errors)
    print(f"{flows} flows, {states} states, {errors} errors, {warnings} warnings", file=out)
    return EXIT_FAILED if errors else EXIT_OK


def _issue_line(head: str, where: str | None, severity: str, message: str) -> str:
    """`file[:line]: STATE.field: error: message`, the shape editors and CI logs link."""
    return f"{head}: {where}: {severity}: {message}" if where else f"{head}: {severity}: {message}"


def _display_path(source: str) -> str:
    """A flow's file relative to the working directory when it is below it (shorter lines)."""
    try:
        return str(Path(source).resolve().relative_to(Path.cwd()))
    except (ValueError, OSError):
        return source


def cmd_flows_list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """One line per loaded flow; flows that fail to load are named on stderr (exit 1)."""
    out = out or sys.stdout
    registry, load_errors = _load_flows(args)
    rows = [
        (
            flow.slug + (" *" if flow.slug == registry.main_flow else ""),
            flow.name,
            flow.entry_mode.value,
            str(len(flow.states)),
        )
        for flow in registry
    ]
    _table(("flow", "name", "entry", "states"), rows, out, right=(3,))
    if registry.main_flow:
        print(f"* main flow: {registry.main_flow}", file=out)
    for exc in load_errors:
        print(f"livefreq: cannot load {exc.source} (run `livefreq flows lint`)", file=sys.stderr)
    return EXIT_FAILED if load_errors else EXIT_OK


def _table(head: tuple[str, ...], rows: list[tuple[str, ...]], out: TextIO, right: tuple[int, ...] = ()) -> None:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: tuple[str, ...]) -> str:
        parts = [str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(parts).rstrip()

    print(line(head), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in rows:
        print(line(row), file=out)


def cmd_chat(args: argparse.Namespace) -> int:
    """The terminal trainer on an in-process service whose clock only `:wait` moves."""
    from gateway.chat import BAR, ChatTrainer, Style, VirtualClock, input_lines
    from gateway.service import RadioService, ServiceError

    out = sys.stdout
    # A trainer session lives as long as the terminal does, however far `:wait` moves the clock.
    settings = _settings(flows_dir=args.flows_dir, session_ttl_s=CHAT_SESSION_TTL_S)
    clock = VirtualClock()
    service = RadioService(settings, clock=clock)
    scenario = {k: v for k, v in (("airport", args.airport), ("callsign", args.callsign)) if v}
    style = Style.for_stream(out)
    trainer = ChatTrainer(service, clock, out, style, speech=args.speech, trace=args.trace)
    try:
        trainer.start(flow=args.flow, scenario=scenario, seed=args.seed)
    except ServiceError as exc:
        raise CliError(exc.message) from None
    try:
        if not trainer.finished:
            callsign = str(service.get(trainer.session_id).variables.get("callsign", "PILOT"))
            trainer.run(input_lines(sys.stdin, out, style, lambda: f"{callsign.rjust(trainer.gutter)} {BAR} "))
        else:
            trainer.print_summary()
    finally:
        trainer.close()
    return EXIT_OK


# --------------------------------------------------------------------------- bench


def cmd_bench_list(args: argparse.Namespace) -> int:
    """`livefreq bench` without a target: what can be measured."""
    print("available benchmarks:")
    for name, text in BENCHMARKS.items():
        print(f"  {name:<8} {text}")
    print("run one with `livefreq bench NAME --help` for its options")
    return EXIT_OK


def cmd_bench_engine(args: argparse.Namespace) -> int:
    """Measure every mode, print the table (and the profile), write the JSON report."""
    from gateway.bench import (
        TARGET_TX_PER_S,
        BenchError,
        Progress,
        bench_engine,
        bench_http,
        bench_service,
        bench_service_sqlite,
        profile_engine,
    )
    from gateway.service import RadioService

    settings = _settings(flows_dir=args.flows_dir)
    service = RadioService(settings)
    if args.flow is not None and args.flow not in service.registry:
        raise CliError(f"unknown flow {args.flow!r} (known: {', '.join(f.slug for f in service.registry)})")
    try:
        runs = [
            bench_engine(service, args.n, args.flow, Progress("engine", args.n)),
            bench_service(service, args.n, args.flow, Progress("service", args.n)),
            bench_service_sqlite(settings, args.n, args.flow, Progress("service-sqlite", args.n)),
        ]
        if args.http:
            runs.append(bench_http(settings, args.n, args.flow, Progress("http", args.n)))
    except BenchError as exc:
        raise CliError(str(exc)) from None
    results = [run.result() for run in runs]
    rows = [
        (r["mode"], str(r["transmissions"]), f"{r['tx_per_s']:.0f}", f"{r['p50_ms']:.3f}", f"{r['p99_ms']:.3f}")
        for r in results
    ]
    _table(("mode", "transmissions", "tx/s", "p50 ms", "p99 ms"), rows, sys.stdout, right=(1, 2, 3, 4))
    engine_rate = results[0]["tx_per_s"] or 0.0
    meets = engine_rate >= TARGET_TX_PER_S
    print(
        f"in-process engine: {engine_rate:.0f} tx/s {'meets' if meets else 'is below'} the target of {TARGET_TX_PER_S:.0f} tx/s on one core"
    )
    report: dict[str, Any] = {
        "benchmark": "engine",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "n": args.n,
        "flow": args.flow or service.registry.main_flow,
        "target_tx_per_s": TARGET_TX_PER_S,
        "meets_target": meets,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "results": results,
    }
    if args.profile:
        n = min(args.n, PROFILE_MAX_TX)
        own, cumulative = profile_engine(service, n, args.flow)
        _print_profile(f"profile of {n} in-process transmissions, by own time", own, "tottime_s")
        _print_profile("by cumulative time", cumulative, "cumtime_s")
        report["profile"] = own
        report["profile_cumulative"] = cumulative
    path = _write_report(args.json_path, report)
    print(f"wrote {path}")
    return EXIT_OK


def cmd_bench_voice(args: argparse.Namespace) -> int:
    """Measure the voice path, print the table, write the JSON report and the PNG histogram."""
    from gateway.bench import BenchError
    from gateway.bench_voice import format_table, run_voice_bench, write_histogram
    from gateway.speech.stt.base import SttError
    from gateway.speech.tts.base import TtsError

    settings = _settings(flows_dir=args.flows_dir, stt_engine=args.stt, tts_engine=args.tts)
    try:
        report = run_voice_bench(settings, args.n, url=args.url)
    except (BenchError, SttError, TtsError, ValueError) as exc:
        raise CliError(str(exc)) from None
    _table(("metric", "n", "p50", "p95", "mean"), format_table(report), sys.stdout, right=(1, 2, 3, 4))
    first_audio = report["metrics"]["ptt_up_to_first_audio_ms"]
    if first_audio["n"]:
        print(
            f"PTT release -> first ATC audio byte, one session: p50 {first_audio['p50']:.0f} ms, "
            f"p95 {first_audio['p95']:.0f} ms over {first_audio['n']} controller replies"
        )
    png = write_histogram(report, Path(args.png_path))
    report["png"] = str(png)
    path = _write_report(args.json_path, report)
    print(f"wrote {path} and {png}")
    return EXIT_OK


def cmd_bench_router(args: argparse.Namespace) -> int:
    """Measure both router paths, print the tables, write the JSON report."""
    from gateway.bench_router import RouterBenchError, format_tables, run_router_bench
    from gateway.llm import ChatCompletionsProvider
    from gateway.llm.prompts import PromptError

    settings = _settings(flows_dir=args.flows_dir, llm_url=args.llm_url, llm_model=args.llm_model)
    try:
        provider = ChatCompletionsProvider.from_settings(settings)
        report = run_router_bench(settings, seeds=args.seeds, provider=provider, echo=lambda line: print(line, file=sys.stderr))
    except (RouterBenchError, PromptError) as exc:
        raise CliError(str(exc)) from None
    corpus, paraphrases = format_tables(report)
    _table(("textbook corpus", "transmissions", "without LLM", "ambiguous", "below threshold", "share"), corpus, sys.stdout, right=(1, 2, 3, 4, 5))
    share, target = report["share_without_llm"], report["target_share_without_llm"]
    print(
        f"decided without an LLM: {100 * share:.1f}% of textbook transmissions "
        f"({'meets' if report['meets_target'] else 'misses'} the target of {100 * target:.0f}%)\n"
    )
    _table(("state", "expected", "deterministic (consulted because)", "LLM path (outcome)", "right"), paraphrases, sys.stdout)
    s = report["paraphrase_summary"]
    print(
        f"paraphrases: {s['paraphrases']}; the deterministic router decides {s['deterministic_decided']} alone "
        f"({s['deterministic_correct']} right, {s['deterministic_wrong']} wrong) and leaves {s['left_to_llm']} to the LLM "
        f"({s['left_to_llm_ambiguous']} near ties, {s['left_to_llm_below_threshold']} below threshold); "
        f"without an LLM the engine answers {s['deterministic_only_correct']} of {s['paraphrases']} as expected"
    )
    offered = ", ".join(f"{count} offer {n}" for n, count in s["left_to_llm_offered"].items())
    print(
        f"left to the LLM: {offered} candidate(s) besides 'none'; 'none' is right for {s['left_to_llm_expect_none']}; "
        f"reference (always the first offered candidate, no model): {s['first_candidate_resolved_correctly']} "
        f"of {s['left_to_llm']} resolved correctly"
    )
    if s["llm"] is None:
        print("LLM path: not measured (no LLM configured: --llm-url URL --llm-model NAME, or LIVEFREQ_LLM_URL/_MODEL)")
    else:
        print(
            f"LLM path ({s['llm']['model']} at {s['llm']['url']}): {s['llm_resolved_correctly']} of the {s['left_to_llm']} "
            f"left to it resolved correctly ({s['llm_answered_correctly']} by the model's answer, of "
            f"{s['llm_answered']} answers; the rest by a fallback); {s['llm_fallbacks']} fallbacks; "
            f"{s['llm_path_correct']} of {s['paraphrases']} right in all; outcomes {s['llm_outcomes']}; "
            f"latency p50 {_ms(s['llm_latency_ms_p50'])}, p95 {_ms(s['llm_latency_ms_p95'])}; "
            f"{s['llm_tokens']} tokens ({s['llm_tokens_per_call']} per call)"
        )
    path = _write_report(args.json_path, report)
    print(f"wrote {path}")
    return EXIT_OK


def cmd_bench_assistant(args: argparse.Namespace) -> int:
    from gateway.bench_assistant import run_assistant_bench

    llm = None
    if args.llm_url:
        if not args.llm_model:
            print("--llm-model is required with --llm-url", file=sys.stderr)
            return EXIT_FAILED
        from assistant.llm import AssistantLlm, LlmConfig
        from gateway.llm.chat import AssistantChat

        llm = AssistantLlm(AssistantChat(args.llm_url, args.llm_model, timeout_s=args.llm_timeout), LlmConfig.load())
        return _bench_assistant_llm(args, llm)
    report = run_assistant_bench(repeat=args.repeat, limit=args.limit, seed=args.seed)
    rows = [(tool, str(v["n"]), str(v["right"]), f"{100 * v['accuracy']:.0f}%") for tool, v in report["per_tool"].items()]
    rows.append(("all", str(report["questions"]), str(report["correct"]), f"{100 * report['accuracy']:.1f}%"))
    _table(("tool", "questions", "right", "accuracy"), rows, sys.stdout, right=(1, 2, 3))
    f, d = report["first_event_ms"], report["done_ms"]
    print(f"first event p50 {f['p50']:.1f} ms, p95 {f['p95']:.1f} ms; done p50 {d['p50']:.1f} ms, p95 {d['p95']:.1f} ms "
          f"(index warm-up {report['warm_s']:.2f} s, once)")
    if report.get("llm_planner"):
        lp = report["llm_planner"]
        print(f"planner: {report['planner']}: {lp['used']}/{lp['calls']} plans used, {len(lp['fallbacks'])} fell back; "
              f"tokens {lp['tokens']['total']} (p50 {lp['latency_ms_p50']} ms per planner call)")
    for w in report["wrong"]:
        print(f"  wrong: {w['question']!r}: {w['got']} (expected {w['expected']})")
    print(f"wrote {_write_report(args.json_path, report)}")
    return EXIT_OK


def _bench_assistant_llm(args: argparse.Namespace, llm: Any) -> int:
    from gateway.bench_assistant import run_llm_bench

    report = run_llm_bench(llm, limit=args.limit, seed=args.seed, graph_runs=args.graph_runs, echo=lambda line: print(line, file=sys.stderr, flush=True))
    rows = [(tool, str(v["n"]), str(v["right"]), f"{100 * v['accuracy']:.0f}%") for tool, v in report["per_tool"].items()]
    rows.append(("all", str(report["questions"]), str(report["correct"]), f"{100 * report['accuracy']:.1f}%"))
    _table(("tool", "questions", "right", "accuracy"), rows, sys.stdout, right=(1, 2, 3))
    f, d = report["first_event_ms"], report["done_ms"]
    if f and d:
        print(f"{report['planner']}, {report['graph_runs']} questions through the graph: first event p50 {f['p50'] / 1000:.1f} s, "
              f"p95 {f['p95'] / 1000:.1f} s; done p50 {d['p50'] / 1000:.1f} s, p95 {d['p95'] / 1000:.1f} s")
    print(f"LLM-planned questions: {report['llm_planned_correct']}/{report['llm_planned_questions']} right; "
          f"the deterministic planner on the same {report['questions']}: {report['deterministic_on_same_sample']} right")
    for name in ("llm_planner", "llm_formatter"):
        st = report[name]
        print(f"{name}: {st['used']}/{st['calls']} used, fallbacks {st['fallbacks'] or 'none'}")
    print(f"wrote {_write_report(args.json_path, report)}")
    return EXIT_OK


def cmd_bench_rules(args: argparse.Namespace) -> int:
    from gateway.bench_rules import format_table, run_rules_bench

    report = run_rules_bench(limit=args.limit, seed=args.seed)
    _table(("retriever", "recall@1", "recall@5", "MRR@10", "p50 ms", "p95 ms"), format_table(report), sys.stdout, right=(1, 2, 3, 4, 5))
    print(f"{report['questions']} questions; winner {report['winner']}, the assistant uses {report['assistant_uses']}")
    print(f"wrote {_write_report(args.json_path, report)}")
    return EXIT_OK


def cmd_ask(args: argparse.Namespace) -> int:
    import json as _json

    from assistant.context import AssistantContext
    from assistant.graph import build_agent, run_agent

    from gateway.providers import DataProviders

    settings = _settings()
    weather = DataProviders.from_settings(settings).weather
    from gateway.airports.repository import default_repository

    repo = default_repository()

    def wx(icao: str) -> dict[str, Any] | None:
        airport = repo.get(icao)
        if airport is None:
            return None
        report = weather.generated(icao)
        atis = weather.airport_atis(airport, report)
        return {"raw": report.raw, "source": report.source, "letter": atis.letter, "atis": atis.text}

    graph = build_agent(AssistantContext.load(flows_dir=settings.flows_dir, weather=wx))
    turns = args.question if len(args.question) > 1 else [" ".join(args.question)]
    msgs = []
    for i, t in enumerate(turns):
        msgs.append({"role": "user", "content": t})
        if i < len(turns) - 1:
            msgs.append({"role": "assistant", "content": "..."})
    state = run_agent(graph, msgs)
    dump = lambda v: _json.dumps(v, indent=2, default=str, ensure_ascii=False)  # noqa: E731
    if args.plan or args.verbose:
        plan = state.get("plan")
        print("router:", getattr(state.get("router_decision"), "path", None))
        print("plan:", dump(plan.model_dump() if plan else None))
    if args.tool_result or args.verbose:
        print("tool_result:", dump(state.get("tool_result")))
    if args.verbose:
        print("thinking:", state.get("thinking"))
        print("ui_payload keys:", sorted((state.get("ui_payload") or {}).keys()))
        print("suggested:", dump(state.get("suggested_queries")))
        print(f"time: {1000 * state['duration_s']:.1f} ms (includes loading the indexes)")
    print(state.get("final_answer"))
    return EXIT_FAILED if state.get("error") else EXIT_OK


def cmd_bench_readback(args: argparse.Namespace) -> int:
    """Run the readback benchmark, print the confusion tables and headlines, write the JSON report."""
    from gateway.bench import Progress
    from gateway.bench_readback import (
        CONFUSION_HEAD,
        ReadbackBenchError,
        confusion_rows,
        default_bench,
        espeak_available,
        headline,
        run_text_bench,
        run_voice_bench,
        tables,
    )
    from gateway.readback_pilot import DriveError
    from gateway.speech.stt.base import SttError

    if not 0.0 <= args.wrong <= 1.0:
        raise CliError("--wrong must be between 0 and 1")
    n = args.n or (2000 if args.mode == "text" else 300)
    settings = _settings(flows_dir=args.flows_dir, stt_engine=args.stt)
    try:
        bench = default_bench(settings)
        if args.mode == "text":
            report = run_text_bench(bench, n, args.seed, args.wrong, Progress("readback text", n, unit="readbacks"))
        else:
            if not espeak_available():
                raise CliError("voice mode needs espeak-ng (apt-get install espeak-ng, or scripts/install-system-deps.sh)")
            report = run_voice_bench(
                bench, settings, n, args.seed, args.wrong, Progress("readback voice", n, unit="readbacks"), bias=args.bias, channel=args.channel
            )
    except (ReadbackBenchError, DriveError, SttError) as exc:
        raise CliError(str(exc)) from None
    right = tuple(range(1, len(CONFUSION_HEAD)))
    for title, result in tables(report):
        print(f"{title}: {result['n']} readbacks ({result['correct']} correct, {result['changed']} with a value changed, {result['dropped']} with one dropped)")
        _table(CONFUSION_HEAD, confusion_rows(result), sys.stdout, right=right)
        print()
    for line in headline(report):
        print(line)
    path = _write_report(args.json_path or f"reports/bench-readback-{args.mode}.json", report)
    print(f"wrote {path}")
    return EXIT_OK


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


# --------------------------------------------------------------------------- corpus and load


def _default_corpus_dir() -> Path:
    from gateway.corpus import DEFAULT_CORPUS_DIR

    return DEFAULT_CORPUS_DIR


def _corpus_progress(label: str) -> Callable[[int, int], None]:
    from gateway.bench import Progress

    bar: dict[int, Progress] = {}

    def update(done: int, total: int) -> None:
        progress = bar.setdefault(total, Progress(label, total, unit="recordings"))
        progress.update(done)
        if done == total:
            progress.done()

    return update


def cmd_corpus_build(args: argparse.Namespace) -> int:
    """Build (or refresh) the corpus and say what it holds."""
    from gateway.corpus import CorpusError, build_corpus

    if not 0.0 <= args.wrong_share <= 1.0:
        raise CliError("--wrong-share must be between 0 and 1")
    settings = _settings(flows_dir=args.flows_dir)
    try:
        corpus = build_corpus(
            Path(args.out),
            args.scenarios,
            turns=args.turns,
            first_seed=args.first_seed,
            flow=args.flow,
            wrong_share=args.wrong_share,
            settings=settings,
            progress=_corpus_progress("corpus"),
        )
    except CorpusError as exc:
        raise CliError(str(exc)) from None
    wrong = sum(1 for e in corpus.entries if e.kind == "wrong")
    seconds = sum(e.audio_s or 0.0 for e in corpus.entries)
    print(
        f"corpus: {len(corpus.entries)} recordings ({wrong} wrong readbacks), {seconds / 60:.1f} min of audio, "
        f"{len(corpus.seeds)} scenarios in {corpus.root}/ (manifest.jsonl)"
    )
    return EXIT_OK


def _range(text: str, option: str) -> tuple[float, float]:
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise CliError(f"{option} wants MIN,MAX seconds, got {text!r}") from None
    return low, high


def _load_corpus_for(args: argparse.Namespace, scenarios: int) -> Any:
    """The corpus of --audio, or the default one, built or extended to `scenarios` scenarios."""
    from gateway.corpus import CorpusError, build_corpus, load_corpus

    try:
        if args.audio:
            return load_corpus(Path(args.audio))
        root = _default_corpus_dir()
        try:
            corpus = load_corpus(root)
            if len(corpus.seeds) >= scenarios:
                return corpus
        except CorpusError:
            pass
        print(f"load: building the corpus of {scenarios} scenarios in {root} (once; reused afterwards)", file=sys.stderr)
        return build_corpus(root, scenarios, progress=_corpus_progress("corpus"))
    except CorpusError as exc:
        raise CliError(str(exc)) from None


def cmd_load(args: argparse.Namespace) -> int:
    """One load run, or --find-capacity's steps; table, JSON and PNG per run."""
    import contextlib

    from gateway.bench import BenchError
    from gateway.load import (
        CAPACITY_P95_MS,
        LoadConfig,
        capacity_steps,
        format_table,
        gateway_process,
        run_load,
        write_outputs,
    )

    report_dir = Path(args.report)
    steps = list(capacity_steps(args.sessions, args.max_sessions)) if args.find_capacity else [args.sessions]
    configs = [
        LoadConfig(
            n,
            args.duration,
            think_s=_range(args.think, "--think"),
            pause_s=_range(args.pause, "--pause"),
            seed=args.seed,
            token=args.token,
        )
        for n in steps
    ]
    try:
        for config in configs:
            config.check()
    except BenchError as exc:
        raise CliError(str(exc)) from None
    corpus = _load_corpus_for(args, min(max(steps), 100))  # beyond 100 pilots, scenarios are shared (a warning says so)
    results: list[dict[str, Any]] = []
    if args.url and args.find_capacity:
        print("load: steps share the gateway at --url: its TTS cache carries over from step to step", file=sys.stderr)
    try:
        for config in configs:
            with contextlib.ExitStack() as stack:
                if args.url:
                    url, pid = args.url, None
                else:  # a fresh gateway per step: no step speaks from the TTS cache of the one before
                    print("load: starting a gateway on loopback (default engines) and waiting for it to be ready", file=sys.stderr)
                    log_name = f"gateway-{config.sessions}.log" if args.find_capacity else "gateway.log"
                    url, pid = stack.enter_context(gateway_process(report_dir / log_name))
                report = run_load(config, corpus, url, pid=pid, label=f"load {config.sessions}")
                name = f"load-{config.sessions}" if args.find_capacity else "load"
                json_path, png = write_outputs(report, report_dir, name)
                _table(("what", "figure"), format_table(report), sys.stdout)
                print(f"wrote {json_path} and {png}\n")
                results.append(report)
                if report["targets"]["over_capacity"]:
                    break
    except BenchError as exc:
        raise CliError(str(exc)) from None
    if args.find_capacity:
        under = [r for r in results if not r["targets"]["over_capacity"]]
        over = next((r for r in results if r["targets"]["over_capacity"]), None)
        summary = {
            "benchmark": "load-capacity",
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "limit_p95_ms": CAPACITY_P95_MS,
            "steps": [
                {"sessions": r["config"]["sessions"], "p95_ms": r["latency_ms"]["ptt_up_to_first_audio"]["p95"],
                 "errors": r["errors"]["total"], "load_average": r["load_average"]}
                for r in results
            ],
            "capacity_sessions": under[-1]["config"]["sessions"] if under else 0,
            "first_over_sessions": over["config"]["sessions"] if over else None,
        }
        _write_report(str(report_dir / "capacity.json"), summary)
        for step in summary["steps"]:
            print(f"  {step['sessions']:>4} sessions: p95 {step['p95_ms']} ms, {step['errors']} errors")
        if over is None:
            print(f"capacity: p95 stayed under {CAPACITY_P95_MS:.0f} ms up to {summary['capacity_sessions']} sessions (the largest step tried)")
        elif not under:
            print(
                f"capacity: below {over['config']['sessions']} sessions (p95 was "
                f"{over['latency_ms']['ptt_up_to_first_audio']['p95']:.0f} ms there); start lower with --sessions"
            )
        else:
            print(
                f"capacity: {summary['capacity_sessions']} sessions (p95 <= {CAPACITY_P95_MS:.0f} ms); "
                f"at {over['config']['sessions']} sessions p95 was {over['latency_ms']['ptt_up_to_first_audio']['p95']:.0f} ms"
            )
        return EXIT_OK
    report = results[0]
    targets = report["targets"]
    latency = report["latency_ms"]["ptt_up_to_first_audio"]
    if latency["n"]:
        p50 = f"p50 {latency['p50']:.0f} ms" + (
            f" ({'within' if targets['p50_ok'] else 'over'} {targets['p50_ms_max']:.0f} ms), " if targets["p50_ms_max"] else ", "
        )
        print(
            f"PTT release -> first ATC audio byte, {report['config']['sessions']} session(s): {p50}"
            f"p95 {latency['p95']:.0f} ms ({'within' if targets['p95_ok'] else 'over'} {targets['p95_ms_max']:.0f} ms); "
            f"{report['errors']['total']} errors, {report['messages']['total_faults']} lost/out-of-order messages"
        )
    elif not report["transmissions"]:
        # pilots join over the first pause and pause again before a new call: a run shorter than
        # that measures nothing, which must not read like a quiet success
        low, high = report["config"]["pause_s"]
        print(
            f"load: no pilot transmitted within {report['config']['duration_s']:g} s: pilots join over the first "
            f"--pause ({low:g}-{high:g} s) and pause again before a new call; run longer or shorten --pause",
            file=sys.stderr,
        )
    return EXIT_OK


def _write_report(json_path: str, report: dict[str, Any]) -> Path:
    """Write a benchmark's JSON report (creating its directory); the path written."""
    path = Path(json_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return path


def _print_profile(title: str, rows: list[dict[str, Any]], key: str) -> None:
    print(f"\n{title} (top {len(rows)}):")
    for r in rows:
        share = f" {r['share_pct']:5.1f}%" if key == "tottime_s" else ""
        print(f"  {r[key]:8.3f}s{share} {r['calls']:>9}  {r['function']}")


if __name__ == "__main__":
    sys.exit(main())
