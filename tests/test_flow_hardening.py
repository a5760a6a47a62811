"""Flow files cannot run code or reach outside their directory (issue 6, "Hardening").

- YAML is loaded safely: Python tags are refused without running anything, and documents that
  explode through aliases ("billion laughs") or nesting are refused before they are built.
- A slug is a name, never a path: the loader, the directory source and every API taking a flow
  (HTTP session create, `/api/llm/decide`, WebSocket `session.start`) refuse ``../x`` and
  absolute paths with a typed error.
- Guards run on an AST allow-list: hostile guards in a real flow, played by a real gateway, run
  nothing, answer False, and lint names them.
- Templates substitute plain names only: ``{{ callsign.__class__ }}`` and friends reach no
  Python attribute, in the rendered text and in the speech, and lint names them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from starlette.types import ASGIApp
from websockets.sync.client import connect

from engine.guards import compile_guard, holds
from engine.loader import FlowLoadError, MemoryFlowSource, lint_registry, load_flow_text, load_registry
from gateway.app import create_app
from gateway.flows_source import DirectoryFlowSource
from gateway.settings import Settings

LIGHT = {"speech_preload": False, "stt_engine": "sphinx", "tts_engine": "espeak"}
PATH_SLUGS = ["../secret", "..", "/etc/passwd", "flows/../secret", "sub/clearance", "..\\secret", "clearance/"]


# --------------------------------------------------------------------------- YAML


@pytest.mark.parametrize(
    "tag",
    [
        "!!python/object/apply:os.system ['touch {marker}']",
        "!!python/object/new:subprocess.Popen [['touch', '{marker}']]",
        "!!python/name:os.system",
        "!!python/module:os",
    ],
)
def test_python_tags_are_refused_and_run_nothing(tag: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = f"slug: x\nstart_state: A\nend_states: [A]\nname: {tag.format(marker=marker)}\nstates: {{A: {{}}}}\n"
    with pytest.raises(FlowLoadError):
        load_flow_text(text, "flows/x.yaml", expected_slug="x")
    assert not marker.exists()


def test_alias_bombs_and_deep_nesting_are_refused() -> None:
    lists = "".join(f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 9))
    bomb = f"slug: x\nstart_state: A\nend_states: [A]\nvariables:\n  l0: &l0 [a, a, a, a, a, a, a, a, a]\n{lists}states: {{A: {{}}}}\n"
    with pytest.raises(FlowLoadError, match="expands to .* nodes through aliases"):
        load_flow_text(bomb, "flows/x.yaml")
    with pytest.raises(FlowLoadError, match="nested too deeply"):
        load_flow_text("slug: x\nvariables: {a: " + "[" * 5000 + "]" * 5000 + "}\n", "flows/x.yaml")
    shared = "slug: x\nstart_state: A\nend_states: [A]\nflags: &f {ready: false}\nvariables: {copy: *f}\nstates: {A: {}}\n"
    assert load_flow_text(shared, "flows/x.yaml").variables == {"copy": {"ready": False}}  # plain anchors still work


# --------------------------------------------------------------------------- slugs


@pytest.mark.parametrize("slug", PATH_SLUGS)
def test_a_slug_is_never_a_path_for_the_loader(slug: str, tmp_path: Path) -> None:
    flows = tmp_path / "flows"
    flows.mkdir()
    (tmp_path / "secret.yaml").write_text("slug: secret\nstart_state: A\nend_states: [A]\nstates: {A: {}}\n")
    with pytest.raises(ValueError):
        DirectoryFlowSource(flows).read(slug)
    found: list[FlowLoadError] = []
    load_registry(MemoryFlowSource({slug: "x: 1"}), errors=found)
    assert found and "invalid flow name" in found[0].message
    body = f"slug: '{slug}'\nstart_state: A\nend_states: [A]\nstates: {{A: {{}}}}\n"
    with pytest.raises(FlowLoadError, match="invalid slug"):
        load_flow_text(body, "flows/x.yaml")


def test_every_api_taking_a_flow_refuses_a_path(live_server: str) -> None:
    for slug in PATH_SLUGS:
        created = httpx.post(f"{live_server}/api/radio/sessions", json={"flow": slug}, timeout=10)
        assert created.status_code == 422 and created.json()["error"]["code"] == "unknown_flow", created.text
        decided = httpx.post(
            f"{live_server}/api/llm/decide",
            json={"state_id": "CD_INITIAL", "flow_slug": slug, "pilot_utterance": "request clearance"},
            timeout=10,
        )
        assert decided.status_code == 422 and decided.json()["error"]["code"] == "unknown_flow", decided.text
    with connect(live_server.replace("http", "ws", 1) + "/v1/radio", open_timeout=10) as ws:
        for slug in PATH_SLUGS:
            ws.send(json.dumps({"type": "session.start", "flow": slug}))
            while True:
                event = json.loads(ws.recv(timeout=10))
                if event["type"] == "error":
                    break
            assert event["code"] == "unknown_flow" and event["fatal"] is False, event


# --------------------------------------------------------------------------- guards and templates

HOSTILE_GUARDS = [
    "__import__('os').system('touch {marker}')",
    "open('{marker}', 'w')",
    "().__class__.__base__.__subclasses__()",
    "[c for c in ().__class__.__bases__]",
    "telemetry.__class__.__init__.__globals__",
    "vars.__dict__",
    "(lambda: __import__('os'))()",
    "callsign.__class__ == callsign",
    "getattr(flags, 'x')",
    "eval('1')",
]
HOSTILE_TEMPLATE = (
    "{{ callsign.__class__ }} {{ callsign.__class__.__mro__ }} {{ callsign | attr('__class__') }} "
    "{callsign.__init__.__globals__} {callsign!r} {{callsign}}"
)


def hostile_flow(marker: Path) -> str:
    guards = "\n".join(
        f"      - {{to: PWNED, guard: {json.dumps(g.format(marker=marker))}}}" for g in HOSTILE_GUARDS
    )
    return f"""\
schema_version: "2"
slug: hostile
start_state: A
end_states: [END]
variables: {{callsign: DLH359}}
states:
  A:
    role: pilot
    expect: "request clearance"
    transitions:
{guards}
      - {{to: PWNED, kind: auto, triggers: [{{telemetry: {json.dumps(HOSTILE_GUARDS[0].format(marker=marker))}}}]}}
      - {{to: SAY, triggers: ["clearance"]}}
  PWNED:
    role: atc
    conditions: [{json.dumps(HOSTILE_GUARDS[1].format(marker=marker))}]
    say: "guard ran"
    transitions: [{{to: END}}]
  SAY:
    role: atc
    say: {json.dumps(HOSTILE_TEMPLATE)}
    transitions: [{{to: END}}]
  END: {{role: system}}
"""


def test_hostile_guards_run_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for guard in HOSTILE_GUARDS:
        expr = guard.format(marker=marker)
        with pytest.raises(ValueError):
            compile_guard(expr)
        assert holds(expr, {"callsign": "DLH359"}, {}, {"on_ground": True}) is False
    # arithmetic on a huge number (a client may send any scenario value) yields None, not a CPU bill
    huge = " * ".join(["n"] * 300) + " > 0"
    assert holds(huge, {"n": 10**4000}) is False
    assert holds("n * 2 > 0", {"n": 3}) is True
    assert not marker.exists()


def test_a_hostile_flow_played_by_a_real_gateway(tmp_path: Path, serve: Callable[[ASGIApp], str]) -> None:
    """Lint names every hostile guard and template; the gateway plays the flow anyway (it loads
    without lint) and runs none of it: no file appears, the guards are false, the text is literal."""
    marker = tmp_path / "pwned"
    flows = tmp_path / "flows"
    flows.mkdir()
    (flows / "hostile.yaml").write_text(hostile_flow(marker), encoding="utf-8")
    registry = load_registry(DirectoryFlowSource(flows))
    issues = [str(i) for i in lint_registry(registry) if i.severity == "error"]
    assert sum("invalid guard" in i for i in issues) == len(HOSTILE_GUARDS) + 2  # + the trigger and the condition
    assert sum("is not a variable name" in i for i in issues) == 3  # the three {{ ... }} that are not names

    base = serve(create_app(Settings(**LIGHT, flows_dir=flows)))
    created = httpx.post(f"{base}/api/radio/sessions", json={}, timeout=30)
    assert created.status_code == 201, created.text
    session = created.json()["session"]["id"]
    url = f"{base}/api/radio/sessions/{session}"
    tele = httpx.post(f"{url}/telemetry", json={"on_ground": True}, timeout=30)
    assert tele.status_code == 200 and tele.json()["session"]["state"] == "A", tele.text
    said = httpx.post(f"{url}/transmissions", json={"text": "request clearance"}, timeout=30)
    assert said.status_code == 200, said.text
    body = said.json()
    eliminated = [c for c in body["trace"]["candidates"] if c["id"] == "PWNED"]
    assert eliminated and all(c["eliminated"] for c in eliminated)
    message = body["messages"][0]
    assert message["text"].startswith("{{ callsign.__class__ }} {{ callsign.__class__.__mro__ }}")
    callsign = body["session"]["variables"]["callsign"]
    assert message["text"].endswith("{callsign.__init__.__globals__} {callsign!r} " + callsign)
    for said_form in (message["text"], message["speech"]):  # no Python object was reached, spoken or shown
        assert not any(leak in said_form for leak in ("<class", "<built-in", "'__name__'", "(<class")), said_form
    assert not marker.exists()
