"""The `livefreq` command tree (argparse): every command, its options and its help.

Handlers are named, not imported ("tooling.cli.serve:cmd_serve"), so building the tree imports no
command module: `livefreq serve` loads the server and nothing of the benchmarks.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from tooling.cli.common import LOG_LEVELS

__all__ = ["BENCHMARKS", "build_parser", "usage"]

BENCHMARKS: dict[str, str] = {
    "engine": "transmissions per second and decision time: in process, and over HTTP with --http",
    "voice": "STT real-time factor and WER, TTS time to first audio, PTT release to first ATC audio byte",
    "router": "share of transmissions decided without an LLM; paraphrases resolved by each router path",
    "assistant": "briefing assistant: tool-selection accuracy on the labelled questions, time to first event and to done",
    "rules": "briefing assistant's rules retrieval: recall@1/@5 and MRR of bm25, embeddings and their hybrid",
    "decode": "whisper final decodes one at a time and in batches: throughput and latency per batch size",
    "readback": "wrong values accepted and correct readbacks refused, per field, over every readback state (text or voice)",
    "callsign": "who is talking: right readbacks said by nearby traffic applied to our aircraft (should be 0), ours accepted",
}


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree. Each subparser's `handler` default names its command function as
    "module:function"; `main` imports that module only when the command runs."""
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
    serve.set_defaults(handler="tooling.cli.serve:cmd_serve")

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
    new_key.set_defaults(handler="tooling.cli.serve:cmd_keys_new")
    keys.set_defaults(handler=usage(keys))

    flows = sub.add_parser("flows", help="check and list the YAML flows", description="Check and list the YAML flows.")
    flows_sub = flows.add_subparsers(dest="flows_command", metavar="ACTION")
    lint = flows_sub.add_parser(
        "lint",
        help="load and lint every flow; exit 1 on any error",
        description="Load and lint every flow of a directory. Prints each issue as "
        "'file: STATE.field: message' and a summary; exits 1 when a flow fails to load or has a lint error.",
    )
    _add_flows_dir(lint)
    lint.set_defaults(handler="tooling.cli.flows:cmd_flows_lint")
    listing = flows_sub.add_parser(
        "list", help="list flows: slug, name, entry mode, states", description="List the flows."
    )
    _add_flows_dir(listing)
    listing.set_defaults(handler="tooling.cli.flows:cmd_flows_list")
    flows.set_defaults(handler=usage(flows))

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
    chat.set_defaults(handler="tooling.cli.chat:cmd_chat")

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
    engine.set_defaults(handler="tooling.cli.bench:cmd_bench_engine")
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
    voice.set_defaults(handler="tooling.cli.bench:cmd_bench_voice")
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
    router.set_defaults(handler="tooling.cli.bench:cmd_bench_router")
    readback = bench_sub.add_parser(
        "readback",
        help=BENCHMARKS["readback"],
        description=(
            "Generated readbacks (an independent pilot: correct, one value changed, one value dropped) at every "
            "readback state of every flow, typed (text) or spoken by pilot voices (Kokoro, espeak-ng, flite) through noise and the radio "
            "effect and recognized by the gateway's STT (voice); prints the confusion table per field and the "
            "wrong values accepted / correct readbacks refused."
        ),
    )
    readback.add_argument(
        "--mode", choices=("text", "voice", "replay"), default="text",
        help="typed or spoken readbacks, or recorded voice runs decided again by today's engine (default: text)",
    )
    readback.add_argument(
        "--reports", nargs="+", default=None, metavar="PATH",
        help="replay: voice reports to decide again (default: every reports/bench-readback-voice-seed*.json)",
    )
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
    readback.add_argument(
        "--mic-level", type=float, default=0.0, metavar="DB",
        help="voice: the pilot microphone's gain in dB, voice and noise alike (e.g. -20 for a quiet one; default: 0)",
    )
    readback.add_argument(
        "--voices", default=None, metavar="ENGINES",
        help="voice: pilot voice engines, comma-separated among kokoro (neural, accented), espeak, flite (default: every one installed); "
        "piper, the controller's own voice, only when named (hunting verdict defects; no must-show figure rests on it)",
    )
    readback.add_argument(
        "--forms", choices=("speech", "spoken"), default="speech",
        help="voice: the textbook forms said in words (speech), or every form the pilot says in words: grouped numbers, "
        "hyphenated ICAO digits, values without their keyword (spoken) (default: speech)",
    )
    readback.add_argument(
        "--no-value-checks", dest="value_checks", action="store_false",
        help="voice: ask again where a value is unsure without checking it in the audio first (gateway/speech/checking.py)",
    )
    readback.add_argument(
        "--no-again", dest="again", action="store_false",
        help="voice: do not play the pilot's answer to a \"say again\" (the items asked, same voice; "
        "tooling/bench/readback_again.py)",
    )
    readback.add_argument(
        "--fields", default=None, metavar="NAMES",
        help="only the states that read back one of these variables (comma-separated, e.g. sid,destination), and a bad "
        "readback changes or drops one of them; a SID changes its fix name (the names the recognizer may be biased to)",
    )
    readback.add_argument(
        "--corrections", type=float, default=0.0, metavar="SHARE",
        help="share of readbacks in which the pilot corrects himself on one value (\"squawk 3553, correction, squawk "
        "3535\"; a wrong readback corrects the issued value into the wrong one) (default: 0)",
    )
    readback.add_argument("--stt", default=None, help="voice: STT engine (default: LIVEFREQ_STT_ENGINE or whisper)")
    readback.add_argument(
        "--out", "--json", dest="json_path", default=None, metavar="PATH",
        help="where to write the JSON report (default: reports/bench-readback-<mode>.json)",
    )
    _add_flows_dir(readback)
    readback.set_defaults(handler="tooling.cli.bench:cmd_bench_readback")
    callsign = bench_sub.add_parser(
        "callsign",
        help=BENCHMARKS["callsign"],
        description=(
            "Right readbacks at every readback state, said in turn by an aircraft of nearby traffic one digit off our "
            "flight number, by another airline with our number, and by us (tooling/bench/callsigns.py); typed (text) or "
            "spoken by the readback bench's pilot voices and recognized by the gateway's STT (voice)."
        ),
    )
    callsign.add_argument("--mode", choices=("text", "voice"), default="text", help="typed or spoken (default: text)")
    callsign.add_argument("--n", type=_positive_int, default=None, help="readbacks (default: 3000 text, 150 voice)")
    callsign.add_argument("--seed", type=int, default=0, help="seed of the readbacks (default: 0)")
    callsign.add_argument(
        "--out", "--json", dest="json_path", default=None, metavar="PATH",
        help="where to write the JSON report (default: reports/bench-callsign-<mode>.json)",
    )
    _add_flows_dir(callsign)
    callsign.set_defaults(handler="tooling.cli.bench_callsign:cmd_bench_callsign")
    decode = bench_sub.add_parser(
        "decode",
        help=BENCHMARKS["decode"],
        description="Decode K synthesized pilot utterances with whisper one at a time and in batches, "
        "interleaved over rounds; a table of throughput and call latency per batch size, a JSON report "
        "and a PNG plot.",
    )
    decode.add_argument("--k", type=_positive_int, default=32, help="utterances (default: %(default)s)")
    decode.add_argument("--batch-sizes", default="1,2,4,8,16", help="comma-separated sizes (default: %(default)s)")
    decode.add_argument("--rounds", type=_positive_int, default=3, help="rounds over all (default: %(default)s)")
    decode.add_argument("--workers", type=_positive_int, default=None, help="decoding threads (default: one per core)")
    decode.add_argument("--cpu-threads", type=_positive_int, default=1, help="threads per model replica (default: 1)")
    _add_report_path(decode, "reports/bench-decode.json")
    decode.add_argument(
        "--png", dest="png_path", default="reports/bench-decode.png", metavar="PATH", help="plot (default: %(default)s)"
    )
    _add_flows_dir(decode)
    decode.set_defaults(handler="tooling.cli.bench:cmd_bench_decode")
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
    bench_assistant.set_defaults(handler="tooling.cli.bench_assistant:cmd_bench_assistant")
    bench_rules = bench_sub.add_parser("rules", help=BENCHMARKS["rules"], description=BENCHMARKS["rules"] + " (tooling/bench/rules.py).")
    bench_rules.add_argument("--limit", type=_positive_int, default=None, help="a seeded sample of this many labelled questions")
    bench_rules.add_argument("--seed", type=int, default=0, help="the sample's seed (default: 0)")
    _add_report_path(bench_rules, "reports/bench-rules.json")
    bench_rules.set_defaults(handler="tooling.cli.bench_assistant:cmd_bench_rules")
    bench.set_defaults(handler="tooling.cli.bench:cmd_bench_list")

    ask = sub.add_parser(
        "ask", help="ask the briefing assistant one question (debug)",
        description="Run one question through the assistant's graph in process and print the answer.",
    )
    ask.add_argument("question", nargs="+", help="the question; several arguments are earlier turns, the last one is asked")
    ask.add_argument("--plan", action="store_true", help="print the plan and the router decision")
    ask.add_argument("--tool-result", action="store_true", help="print the tool result (JSON)")
    ask.add_argument("-v", "--verbose", action="store_true", help="print thinking, the ui_payload and the suggestions too")
    ask.set_defaults(handler="tooling.cli.ask:cmd_ask")

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
    build.set_defaults(handler="tooling.cli.load:cmd_corpus_build")
    corpus.set_defaults(handler=usage(corpus))

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
        help="step the session count up from --sessions (a fresh gateway per step, its admission off) until p95 passes "
        "1 s or controller audio has a gap; print the largest count within both, write capacity.json and capacity.png",
    )
    load.add_argument("--max-sessions", type=_positive_int, default=200, help="with --find-capacity: stop here (default: %(default)s)")
    load.add_argument(
        "--offer-factor",
        type=float,
        default=None,
        metavar="F",
        help="offer F times the node's voice capacity (its /health) at once, e.g. 1.5: report the admitted "
        "(p95, gaps, every transmission answered) and the refused (too_many_sessions at once); ignores --sessions",
    )
    load.set_defaults(handler="tooling.cli.load:cmd_load")

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
    fly.set_defaults(handler="tooling.cli.fly:cmd_fly")

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
    client.set_defaults(handler="tooling.cli.client:cmd_client")
    return parser


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


def usage(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """Handler for a command group called without its action: help on stderr, usage error."""

    def show(_: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return show


def _default_corpus_dir() -> Path:
    from tooling.corpus import DEFAULT_CORPUS_DIR

    return DEFAULT_CORPUS_DIR
