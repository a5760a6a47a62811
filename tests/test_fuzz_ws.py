"""Hypothesis against a live `WS /v1/radio`: random, mutated and out-of-order protocol v1 frames.

Each example is one pilot on one socket (sometimes two, when it drops the connection and resumes)
sending a sequence of steps drawn while it runs, so every draw knows where the session stands:
valid messages of every type, mutated JSON (keys dropped, added or retyped, wrong sample rates,
huge strings, deep nesting), truncated JSON and random text, random binary frames (empty, odd,
up to past the 64 KiB limit), push-to-talk bursts of speech or noise, and ptt events out of order
(ptt.up first, double ptt.down, typed text while keyed).

After each text frame (or run of binary frames) a `ping` is sent and the replies are read up to
its `pong`: the server handles a socket's frames in order, so they belong to what was just sent
(some ptt sequences go out back to back instead, to race each other). Everything is checked
against a model of the protocol: every text frame is strict JSON (no NaN) with a known `type`;
every `error` has a code from the table in docs/protocol-v1.md, and exactly the codes the model
predicts (``ptt_not_down`` for ptt.up before ptt.down, ``no_session`` before session.start,
``frame_too_large`` past 64 KiB, ...); controller audio only inside its `atc.message`, in `seq`
order; no controller message starts while the pilot holds the key (ptt, or vox speech); the
socket stays open unless a fatal error was announced. After all examples: `/health` is ok,
every session the fuzzer started can still be read, a new session answers a typed transmission
with a decision, and the server logged no error.

The server runs the real speech stack with the light engines (pocketsphinx, espeak-ng) loaded
once, with `audio_pacing` off and a 1 s transmission limit: the fuzzing is about the protocol and
the audio path (resampling, framing, voice detection, recognition of what arrives), which are the
same whatever the engines, and a whisper decode per burst would use the budget on one model.

Budget: `EXAMPLES` examples of at most `MAX_STEPS` steps (scaled by ``LIVEFREQ_FUZZ_SCALE``); how
many examples, steps and frames were tried is printed in the terminal summary and written to
``reports/fuzz-ws.json``.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from gateway.app import create_app
from gateway.audio.resample import resample
from gateway.radio import protocol as p
from gateway.radio.events import SERVER_EVENTS
from gateway.settings import REPO_ROOT, Settings
from gateway.speech.stack import SpeechStack
from gateway.speech.tts.espeak import EspeakTts
from tests.conftest import run_server
from tests.support.fuzz_report import ErrorLog, FuzzReport, budget

EXAMPLES = 50
MAX_STEPS = 10
REPLY_TIMEOUT_S = 20.0  # a step unanswered this long is a hang
SETTINGS = Settings(
    speech_preload=False, stt_engine="sphinx", tts_engine="espeak", audio_pacing=False, max_transmission_s=1.0
)
LIMIT = SETTINGS.max_frame_bytes
SCENARIOS = ({"callsign": "DLH359"}, {"runway": "25R"}, {"nonsense": 1}, {"callsign": None}, {"approach_freq": 119.2})
PILOT_PHRASES = ("request IFR clearance", "say again", "radio check", "wilco", "ready for departure", "mayday mayday")


def documented_error_codes() -> frozenset[str]:
    """The codes of the "Error codes" table in docs/protocol-v1.md (first column, in backticks)."""
    text = (REPO_ROOT / "docs" / "protocol-v1.md").read_text()
    table = text.split("## Error codes", 1)[1]
    codes: set[str] = set()
    for line in table.splitlines()[1:]:
        if line.startswith("## "):
            break
        if line.startswith("|") and not line.startswith("|--") and not line.startswith("| code"):
            codes.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return frozenset(codes)


CODES = documented_error_codes()


# --------------------------------------------------------------------------- the server


@dataclass
class World:
    """The live server and what examples may use: resumable sessions, speech at every rate."""

    base: str
    ws_url: str
    flows: list[str]
    voices: list[str]
    resumable: list[tuple[str, str]]  # (session_id, resume_token) created over HTTP
    speech: dict[int, bytes]  # input rate -> a pilot phrase at that rate
    seen_sessions: set[str] = field(default_factory=set)


@pytest.fixture(scope="module")
def logged() -> Iterator[ErrorLog]:
    with ErrorLog() as log:
        yield log


@pytest.fixture(scope="module")
def world(logged: ErrorLog) -> Iterator[World]:
    stack = SpeechStack(SETTINGS)
    asyncio.run(stack.load())
    espeak = EspeakTts()
    phrase = asyncio.run(espeak.synthesize("Lufthansa three five niner, request taxi"))
    speech = {rate: resample(phrase, espeak.sample_rate, rate) for rate in p.SAMPLE_RATES}
    with run_server(create_app(SETTINGS, speech=stack)) as base:
        runtime = httpx.get(f"{base}/api/decision-flows/runtime", timeout=10).json()
        flows = [slug for slug, flow in runtime["flows"].items() if flow["entry_mode"] in ("main", "linear")]
        voices = [v["id"] for v in httpx.get(f"{base}/api/voices", timeout=10).json()["voices"]]
        resumable = []
        for seed in range(3):
            body = {"flow": "clearance", "seed": seed}
            created = httpx.post(f"{base}/api/radio/sessions", json=body, timeout=30).json()
            resumable.append((created["session"]["id"], created["resume_token"]))
        yield World(base, base.replace("http", "ws", 1) + "/v1/radio", flows, voices, resumable, speech)


@pytest.fixture(scope="module")
def report(request: pytest.FixtureRequest) -> Iterator[FuzzReport]:
    fuzz = FuzzReport("ws")
    yield fuzz
    c = fuzz.counts
    fuzz.finish(
        request.config,
        f"{c['examples']} examples, {c['steps']} steps, {c['frames']} frames ({c['text_frames']} text, "
        f"{c['binary_frames']} binary) sent to WS /v1/radio",
        examples=c["examples"],
        steps=c["steps"],
        frames=c["frames"],
    )


# --------------------------------------------------------------------------- the model


@dataclass
class Model:
    """What the protocol says this socket's state is."""

    started: bool = False
    mode: str = "ptt"
    rate: int = 16000
    keyed: bool = False
    session: tuple[str, str] | None = None  # (id, token) of this example's session, for resume
    closed: bool = False


@dataclass
class Step:
    kind: str
    frames: list[str | bytes]
    rapid: bool = False  # sent back to back, answered as one group (races between the events)


@dataclass
class Expect:
    certain: list[str] = field(default_factory=list)  # error codes that must come
    possible: set[str] = field(default_factory=set)  # error codes that may come
    attach: bool = False  # a session.start/resume the model cannot judge: session.started or an error


def expect_text(model: Model, text: str) -> tuple[Expect, p.ClientMessage | None]:
    try:
        msg = p.parse_client(text)
    except p.ProtocolError as exc:
        return Expect([exc.code]), None
    if isinstance(msg, p.Ping):
        return Expect(), msg
    if isinstance(msg, (p.SessionStart, p.SessionResume)):
        if model.started:
            return Expect(["session_active"]), msg
        if isinstance(msg, p.SessionStart):
            return Expect(possible={"unknown_flow", "validation_error", "unknown_voice"}, attach=True), msg
        return Expect(possible={"unknown_session", "bad_token", "unknown_voice"}, attach=True), msg
    if isinstance(msg, p.Ask):  # the briefing assistant answers without a session too (gateway/ask.py)
        return Expect(possible={"assistant_unavailable"}), msg
    if not model.started:
        return Expect(["no_session"]), msg
    if isinstance(msg, p.PttDown):
        return Expect(["wrong_mode"] if model.mode == "vox" else []), msg
    if isinstance(msg, p.PttUp):
        return Expect([] if model.keyed else ["ptt_not_down"]), msg
    if isinstance(msg, p.Text):
        return Expect([] if msg.text.strip() else ["validation_error"]), msg
    return Expect(), msg  # telemetry, tune, audio.played


def expect_binary(model: Model, data: bytes) -> Expect:
    if not model.started:
        return Expect(["no_session"])
    if len(data) > LIMIT:
        return Expect(["frame_too_large"])
    if len(data) % 2:
        return Expect(["bad_audio"])
    return Expect(possible={"transmission_too_long"})


# --------------------------------------------------------------------------- strategies

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)


def audio_format(valid: bool) -> st.SearchStrategy[dict[str, Any]]:
    if valid:
        return st.fixed_dictionaries(
            {"format": st.just("pcm_s16le"), "sample_rate": st.sampled_from(p.SAMPLE_RATES), "channels": st.just(1)}
        )
    wrong_rate = st.sampled_from([0, -16000, 11025, 22050, 96000, 2**31, 16000.5, "16000", None]) | st.integers()
    return st.fixed_dictionaries(
        {
            "format": st.sampled_from(["pcm_s16le", "opus", "pcm_f32le", ""]),
            "sample_rate": wrong_rate,
            "channels": st.sampled_from([1, 2, 0]),
        }
    )


@st.composite
def session_start(draw: st.DrawFn, world: World) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "session.start"}
    if draw(st.booleans()):
        msg["flow"] = draw(st.sampled_from(world.flows)) if draw(st.integers(0, 5)) else draw(texts)
    if draw(st.booleans()):
        msg["seed"] = draw(st.integers(0, 2**31))
    if draw(st.booleans()):
        msg["scenario"] = draw(st.sampled_from(SCENARIOS))
    if draw(st.booleans()):
        msg["mode"] = draw(st.sampled_from(["ptt", "vox"]))
    for key in ("input_audio", "output_audio"):
        if draw(st.booleans()):
            msg[key] = draw(audio_format(valid=draw(st.integers(0, 3)) > 0))
    if draw(st.booleans()):
        msg["radio_level"] = draw(st.integers(0, 6))
    if draw(st.booleans()):
        msg["radio_effect"] = draw(st.booleans())
    if draw(st.booleans()):
        msg["voice"] = draw(st.sampled_from(world.voices)) if draw(st.integers(0, 5)) else draw(texts)
    return msg


@st.composite
def session_resume(draw: st.DrawFn, world: World, model: Model) -> dict[str, Any]:
    own = [model.session] if model.session else []
    kind = draw(st.sampled_from(["real", "wrong_token", "garbage", "long"]))
    sid, token = draw(st.sampled_from(own + world.resumable))
    if kind == "wrong_token":
        token = draw(st.text(min_size=1, max_size=50))
    elif kind == "garbage":
        sid, token = draw(st.text(min_size=1, max_size=40)), draw(st.text(min_size=1, max_size=40))
    elif kind == "long":
        sid = "x" * draw(st.integers(0, 300))
    msg: dict[str, Any] = {"type": "session.resume", "session_id": sid, "resume_token": token}
    if draw(st.booleans()):
        msg["mode"] = draw(st.sampled_from(["ptt", "vox"]))
    if draw(st.booleans()):
        msg["input_audio"] = draw(audio_format(valid=draw(st.booleans())))
    return msg


def control(world: World) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.just({"type": "ping"}),
        st.just({"type": "ptt.down"}),
        st.just({"type": "ptt.up"}),
        st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(PILOT_PHRASES) | texts),
        st.builds(lambda f: {"type": "tune", "frequency": f}, st.sampled_from(["118.700", "121.800", "9.9"]) | texts),
        st.builds(lambda m: {"type": "audio.played", "message_id": m}, texts),
        st.builds(
            lambda d: {"type": "telemetry", **d},
            st.fixed_dictionaries(
                {},
                optional={
                    "on_ground": st.booleans(),
                    "altitude_ft": st.floats(-1000, 60000),
                    "ias_kt": st.floats(0, 500),
                    "heading_deg": st.floats(0, 360),
                    "lat": st.floats(-90, 90),
                    "lon": st.floats(-180, 180),
                    "squawk": st.sampled_from(["7000", "7700", "1234"]),
                    "com1": st.sampled_from(["118.700", "121.800"]),
                },
            ),
        ),
    )


@st.composite
def mutated(draw: st.DrawFn, world: World, model: Model) -> dict[str, Any] | list[Any]:
    msg = dict(draw(control(world) | session_start(world) | session_resume(world, model)))
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["drop", "add", "retype", "type", "nest", "huge"]))
        keys = sorted(msg)
        if how == "drop" and keys:
            msg.pop(draw(st.sampled_from(keys)))
        elif how == "add":
            msg[draw(st.text(max_size=12))] = draw(json_values)
        elif how == "retype" and keys:
            msg[draw(st.sampled_from(keys))] = draw(json_values)
        elif how == "type":
            msg["type"] = draw(st.sampled_from(sorted(p.KNOWN_TYPES)) | texts | json_scalars)
        elif how == "nest" and keys:
            depth = draw(st.integers(1, 60))
            value: Any = draw(json_scalars)
            for _ in range(depth):
                value = {"a": value} if draw(st.booleans()) else [value]
            msg[draw(st.sampled_from(keys))] = value
        elif how == "huge" and keys:
            msg[draw(st.sampled_from(keys))] = "A" * draw(st.integers(400, 300_000))
    return [msg] if draw(st.integers(0, 9)) == 0 else msg  # now and then not even an object


def noise(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


@st.composite
def binary(draw: st.DrawFn) -> bytes:
    size = draw(
        st.sampled_from([0, 1, 2, 3, 639, 640, LIMIT - 1, LIMIT, LIMIT + 1, LIMIT + 2, 70_001, 1_000_000])
        | st.integers(0, 4096)
        | st.integers(0, 2 * LIMIT)
    )
    if draw(st.booleans()):
        return draw(st.sampled_from([b"\x00", b"\xff"])) * size
    return noise(size, draw(st.integers(0, 2**16)))


@st.composite
def burst(draw: st.DrawFn, world: World, model: Model) -> list[str | bytes]:
    """Audio as a microphone sends it (20 ms frames at the declared rate), keyed or not."""
    rate = model.rate if draw(st.integers(0, 4)) else draw(st.sampled_from(p.SAMPLE_RATES))  # sometimes the wrong rate
    frame = rate // 50 * 2
    source = draw(st.sampled_from(["speech", "noise", "silence"]))
    count = draw(st.integers(1, 80))
    if source == "speech":
        pcm = world.speech[rate]
        start = draw(st.integers(0, max(0, len(pcm) // frame - 1))) * frame
        audio = (pcm[start:] + pcm)[: count * frame]
    elif source == "noise":
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        samples = rng.normal(0, draw(st.sampled_from([300, 8000])), count * frame // 2)
        audio = np.clip(samples, -32768, 32767).astype("<i2").tobytes()
    else:
        audio = bytes(count * frame)
    frames: list[str | bytes] = [audio[i : i + frame] for i in range(0, len(audio), frame)]
    if model.mode == "ptt" and draw(st.integers(0, 3)):
        frames = [json.dumps({"type": "ptt.down"}), *frames]
        if draw(st.integers(0, 3)):
            frames.append(json.dumps({"type": "ptt.up"}))
    return frames


def _text(value: Any) -> str:
    return json.dumps(value)  # NaN and Infinity go out as such: Python's json.loads reads them


PTT_EVENTS = {"d": {"type": "ptt.down"}, "u": {"type": "ptt.up"}, "t": {"type": "text", "text": "say again"}}
# orders worth trying often: release first, double key, typed while keyed, release and key again at once
PTT_SCRIPTS = ("u", "dd", "dtu", "dtud", "ud", "dudu", "tdut")
KINDS = (
    "burst", "control", "mutated", "valid", "json", "burst", "text", "mutated", "truncated", "deep", "control", "binary",
    "reconnect",
)


@st.composite
def step(draw: st.DrawFn, world: World, model: Model) -> Step:
    if not model.started and draw(st.integers(0, 4)):  # mostly get a session first: the deep states are there
        kind = draw(st.sampled_from(["start", "start", "start", "resume"]))
    else:
        kind = draw(st.sampled_from(KINDS))
    if kind == "start":
        return Step(kind, [_text(draw(session_start(world)))])
    if kind == "resume":
        return Step(kind, [_text(draw(session_resume(world, model)))])
    if kind == "valid":
        msg = draw(control(world) | session_start(world) | session_resume(world, model))
        return Step(kind, [_text(msg)])
    if kind == "control":  # out of order ptt on purpose: several ptt/text events in a row
        msgs = draw(st.text("dut", min_size=1, max_size=5) | st.sampled_from(PTT_SCRIPTS))
        return Step(kind, [_text(PTT_EVENTS[c]) for c in msgs], rapid=draw(st.booleans()))
    if kind == "burst":
        return Step(kind, draw(burst(world, model)))
    if kind == "mutated":
        return Step(kind, [_text(draw(mutated(world, model)))])
    if kind == "json":
        return Step(kind, [_text(draw(json_values))])
    if kind == "text":
        return Step(kind, [draw(texts)])
    if kind == "truncated":
        full = _text(draw(control(world) | session_start(world)))
        return Step(kind, [full[: draw(st.integers(0, max(0, len(full) - 1)))]])
    if kind == "deep":
        depth = draw(st.integers(1, 100) | st.integers(3000, 200_000))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
        inner = opener * depth + "1" + closer * depth
        return Step(kind, [inner if draw(st.booleans()) else '{"type": "text", "text": ' + inner + "}"])
    if kind == "binary":
        return Step(kind, [draw(binary())])
    return Step("reconnect", [])


# --------------------------------------------------------------------------- the client


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


class Pilot:
    """One socket and the checks on everything it receives, whatever was sent."""

    def __init__(self, world: World, report: FuzzReport) -> None:
        self.world = world
        self.report = report
        began = time.perf_counter()
        self.ws: ClientConnection = connect(world.ws_url, max_size=None, max_queue=None, open_timeout=10).__enter__()
        self.report.add("ms:connect", round((time.perf_counter() - began) * 1000))
        self.on_air: str | None = None  # message_id of the atc.message being received
        self.last_seq = 0
        self.fatal = False
        self.vox_speaking = False  # between vad speaking:true and speaking:false
        self.vox_keyed = False  # ... and the server has handled the frame that started it (a pong came since)

    def close(self) -> None:
        began = time.perf_counter()
        self.ws.close()
        self.report.add("ms:close", round((time.perf_counter() - began) * 1000))

    def exchange(self, frames: list[str | bytes], pongs: int) -> list[dict[str, Any]]:
        """Send `frames` and a ping; every event up to the last of `pongs` + 1 pongs, checked."""
        for frame in frames:
            self.ws.send(frame)
            self.report.add("frames")
            self.report.add("text_frames" if isinstance(frame, str) else "binary_frames")
        self.ws.send('{"type": "ping"}')
        events: list[dict[str, Any]] = []
        while True:
            try:
                frame = self.ws.recv(timeout=REPLY_TIMEOUT_S)
            except TimeoutError:
                raise AssertionError(f"no pong within {REPLY_TIMEOUT_S:g} s: the server hangs") from None
            except ConnectionClosed as exc:
                assert self.fatal, f"the server closed the socket without a fatal error: {exc!r}"
                raise
            if isinstance(frame, bytes):
                assert self.on_air is not None, "controller audio outside an atc.message"
                continue
            event = self.check(frame)
            if event["type"] == "pong":
                if pongs == 0:
                    return events
                pongs -= 1
            events.append(event)

    def check(self, frame: str) -> dict[str, Any]:
        event = _strict_json(frame)
        assert isinstance(event, dict), f"not an event {frame[:200]!r}"
        # every event the radio socket may send, the briefing assistant's (an `ask` frame) too, typed
        try:
            SERVER_EVENTS.validate_python(event)
        except ValidationError as exc:
            raise AssertionError(f"unknown or malformed server event {frame[:200]!r}: {exc}") from exc
        kind = event["type"]
        self.report.add(f"received:{kind}")
        if kind == "error":
            assert event["code"] in CODES, f"undocumented error code {event['code']!r}: {event}"
            assert event["code"] != "internal", f"internal error: {event}"
            assert isinstance(event["message"], str) and isinstance(event["fatal"], bool), event
            self.fatal = self.fatal or event["fatal"]
            self.report.add(f"error:{event['code']}")
        elif kind == "atc.message":
            assert self.on_air is None, "controller messages interleaved"
            assert event["seq"] > self.last_seq, f"seq {event['seq']} after {self.last_seq}"
            assert not self.vox_keyed, f"the controller started {event['text']!r} while the pilot talked (vox)"
            self.on_air, self.last_seq = event["message_id"], event["seq"]
        elif kind == "atc.message.end":
            assert event["message_id"] == self.on_air, "atc.message.end of a message not on air"
            self.on_air = None
        elif kind == "vad":
            self.vox_speaking, self.vox_keyed = event["speaking"], False
        elif kind == "pong":
            self.vox_keyed = self.vox_speaking
        elif kind == "session.started":
            self.world.seen_sessions.add(event["session_id"])
        return event


def groups(step_: Step) -> list[list[str | bytes]]:
    """The step's frames cut after every text frame (unless rapid): each group is answered before
    the next is sent, so errors and controller messages are known to belong to it (binary runs
    stay one burst)."""
    if step_.rapid:
        return [step_.frames]
    out: list[list[str | bytes]] = [[]]
    for frame in step_.frames:
        out[-1].append(frame)
        if isinstance(frame, str):
            out.append([])
    return [g for g in out if g]


def run_group(pilot: Pilot, model: Model, frames: list[str | bytes], world: World, kind: str) -> None:
    expects: list[Expect] = []
    attaches: list[p.SessionStart | p.SessionResume] = []
    keyed_before, released, pings = model.keyed, False, 0
    for frame in frames:  # predicted in order: a ptt.down changes what the next frame means
        if isinstance(frame, bytes):
            expects.append(expect_binary(model, frame))
            continue
        expect, msg = expect_text(model, frame)
        expects.append(expect)
        accepted = msg is not None and not expect.certain
        if isinstance(msg, p.Ping):
            pings += 1
        elif isinstance(msg, (p.SessionStart, p.SessionResume)) and expect.attach:
            attaches.append(msg)
        elif isinstance(msg, p.PttDown) and accepted:
            model.keyed = True
        elif isinstance(msg, p.PttUp) and accepted:
            model.keyed, released = False, True
    events = pilot.exchange(frames, pongs=pings)
    where = f"{kind}: {_show(frames)}"
    codes = [e["code"] for e in events if e["type"] == "error"]
    remaining = list(codes)
    for code in (c for e in expects for c in e.certain):
        assert code in remaining, f"expected error {code!r}, got {codes} for {where}"
        remaining.remove(code)
    possible = {c for e in expects for c in e.possible}
    assert set(remaining) <= possible, f"unexpected errors {remaining} for {where}"
    if keyed_before and not released:
        starts = [e["text"] for e in events if e["type"] == "atc.message"]
        assert not starts, f"the controller started {starts[0]!r} while the pilot held the key, after {where}"
    if model.keyed and not started_in(events):  # still keyed: one more round trip must bring no controller call
        later = pilot.exchange([], pongs=0)
        starts = [e["text"] for e in later if e["type"] == "atc.message"]
        assert not starts, f"the controller started {starts[0]!r} while the pilot held the key, after {where}"
        assert not [e for e in later if e["type"] == "error"], f"errors for nothing sent, after {where}"
    started = [e for e in events if e["type"] == "session.started"]
    if attaches:
        assert started or codes, f"neither session.started nor an error for {where}"
    if started:
        event = started[-1]
        model.started, model.mode, model.keyed = True, event["mode"], False
        fmt = attaches[-1].input_audio
        model.rate = fmt.sample_rate if fmt is not None else 16000
        model.session = (event["session_id"], event["resume_token"])


def started_in(events: list[dict[str, Any]]) -> bool:
    return any(e["type"] == "session.started" for e in events)


def _show(frames: list[str | bytes]) -> str:
    return repr([f[:120] if isinstance(f, str) else f"<{len(f)} bytes>" for f in frames])


# --------------------------------------------------------------------------- the tests


def test_radio_survives_fuzzing(world: World, report: FuzzReport) -> None:
    @settings(
        max_examples=budget(EXAMPLES),
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )
    @given(data=st.data())
    def fuzz(data: st.DataObject) -> None:
        report.add("examples")
        model = Model()
        pilot = Pilot(world, report)
        try:
            for index in range(data.draw(st.integers(1, MAX_STEPS), label="steps")):
                step_ = data.draw(step(world, model), label=f"step {index}")
                report.add("steps")
                report.add(f"kind:{step_.kind}")
                if step_.kind == "reconnect":  # drop the socket (mid-transmission, maybe) and come back
                    pilot.close()
                    pilot = Pilot(world, report)
                    model = Model(session=model.session)
                    continue
                began = time.perf_counter()
                for group in groups(step_):
                    run_group(pilot, model, group, world, step_.kind)
                    if pilot.fatal:
                        break
                report.add(f"ms:{step_.kind}", round((time.perf_counter() - began) * 1000))
                if pilot.fatal:
                    break
        finally:
            pilot.close()

    fuzz()


def test_server_healthy_after_fuzzing(world: World, logged: ErrorLog) -> None:
    """Healthy, every session the fuzzer started still there, a new one flies, nothing logged."""
    health = httpx.get(f"{world.base}/health", timeout=10)
    assert health.status_code == 200 and health.json()["ok"] is True
    for session_id in sorted(world.seen_sessions):
        assert httpx.get(f"{world.base}/api/radio/sessions/{session_id}", timeout=10).status_code == 200, session_id
    with connect(world.ws_url, max_size=None, max_queue=None, open_timeout=10) as ws:
        ws.send(json.dumps({"type": "session.start", "flow": "clearance", "seed": 1}))
        ws.send(json.dumps({"type": "text", "text": "request IFR clearance"}))
        while True:
            frame = ws.recv(timeout=REPLY_TIMEOUT_S)
            if isinstance(frame, str) and _strict_json(frame)["type"] == "decision":
                break
    assert logged.messages == []
