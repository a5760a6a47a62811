"""The built wheel serves the radio outside the checkout, with the base dependencies only.

`python -m build --wheel`, then a new venv with `pip install --no-deps` of that wheel, run from a
directory outside the checkout: `livefreq serve` must answer /health ready and a WebSocket session
must complete a clearance, which proves the flows, the browser client and the prompts travel as
package data. Installing the ~1 GB of third-party dependencies on every run would be slow, so the
venv borrows them from this interpreter's site-packages through a .pth line (added to sys.path
after the venv's own site-packages; the editable install's own .pth there is not processed, so
`gateway` can only come from the wheel, which the test checks). The optional extras (aiortc, redis,
vosk, edge-tts, matplotlib) are importable here, so the venv blocks them at import: the server must
start without them. A real fresh install (downloads and all) is the manual check in docs/operations.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

REPO_ROOT = Path(__file__).resolve().parents[1]
OPTIONAL = ("aiortc", "redis", "vosk", "edge_tts", "matplotlib")
READY_TIMEOUT_S = 240.0
SCENARIO = {"callsign": "DLH359", "callsign_spoken": "Lufthansa 359", "airport": "EDDF"}

# put in the venv's site-packages and imported by a .pth line: the optional extras cannot be imported
BLOCKER = f'''"""Hide the optional extras from the wheel under test (tests/test_wheel_install.py)."""
import sys

BLOCKED = {OPTIONAL!r}


class _Blocker:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked: an optional extra)", name=name)
        return None


sys.meta_path.insert(0, _Blocker)
'''


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding only the freshly built wheel (third-party packages borrowed, extras hidden)."""
    root = tmp_path_factory.mktemp("wheelcheck")
    dist = root / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO_ROOT)], check=True, capture_output=True)
    (wheel,) = dist.glob("livefreq-*.whl")
    venv = root / "venv"
    # without a pip of its own (seeding one costs seconds): this interpreter's pip installs into it
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)], check=True, cwd=root)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True, capture_output=True, text=True).stdout.strip())
    borrowed = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    (site / "_livefreq_block_extras.py").write_text(BLOCKER)
    (site / "zz_borrowed_deps.pth").write_text("import _livefreq_block_extras\n" + "".join(f"{path}\n" for path in borrowed))
    return venv


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIVEFREQ_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["XDG_DATA_HOME"] = str(home / "data")  # the default SQLite store, outside the user's
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _serve(venv: Path, cwd: Path) -> Iterator[str]:
    """`livefreq serve` from the venv, started in `cwd`; yields the base URL once /health is ready."""
    port = _free_port()
    log = (cwd / "serve.log").open("wb")
    process = subprocess.Popen(
        [str(venv / "bin" / "livefreq"), "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=cwd, env=_environment(cwd), stdout=log, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            assert process.poll() is None, (cwd / "serve.log").read_text()
            with contextlib.suppress(httpx.TransportError):
                health = httpx.get(f"{base}/health", timeout=5).json()
                if health.get("ready"):
                    break
            assert time.monotonic() < deadline, f"not ready: {(cwd / 'serve.log').read_text()}"
            time.sleep(0.5)  # polling a process that loads its speech models
        yield base
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=20)
        if process.poll() is None:
            process.kill()
        log.close()


async def _next(ws: Any, kind: str, **match: Any) -> dict[str, Any]:
    """The next text event of type `kind` (and the given field values); audio frames are skipped."""
    while True:
        frame = await ws.recv()
        if isinstance(frame, bytes):
            continue
        event = json.loads(frame)
        assert event["type"] != "error" or not event.get("fatal"), event
        if event["type"] == kind and all(event.get(k) == v for k, v in match.items()):
            return event


async def fly_clearance(base: str) -> list[str]:
    """Request, receive and read back an IFR clearance and the ground frequency over WS /v1/radio;
    returns the states the decisions went to."""
    visited: list[str] = []
    async with websockets.connect(base.replace("http", "ws") + "/v1/radio", max_size=None) as ws:
        await ws.send(json.dumps({"type": "session.start", "flow": "clearance", "seed": 7, "scenario": SCENARIO}))
        started = await _next(ws, "session.started")
        state = await _next(ws, "state")
        letter = started["scenario"]["atis_letter"]  # the current one: the clearance comes alone
        calls = [f"Frankfurt delivery Lufthansa 359 information {letter} request IFR clearance"]
        for expected_state in ("CD_READBACK", "CD_GROUND_RB", "startup_pushback"):
            await ws.send(json.dumps({"type": "text", "text": calls[-1]}))
            decision = await _next(ws, "decision")
            visited.append(decision["to_state"])
            state = await _next(ws, "state")
            if expected_state == "startup_pushback":
                assert state["flow"] == "startup_pushback", state
                break
            assert state["state"] == expected_state, (decision, state)
            calls.append(state["expected_pilot"][0])  # the readback the controller expects
    return visited


@pytest.mark.slow
def test_the_wheel_serves_a_clearance_outside_the_checkout(wheel_venv: Path, tmp_path: Path) -> None:
    where = subprocess.run(
        [str(wheel_venv / "bin" / "python"), "-c", "import gateway, engine, assistant; print(gateway.__file__)"],
        cwd=tmp_path, env=_environment(tmp_path), check=True, capture_output=True, text=True,
    ).stdout.strip()
    assert where.startswith(str(wheel_venv)), where  # the wheel's copy, not the checkout
    with _serve(wheel_venv, tmp_path) as base:
        assert httpx.get(f"{base}/").text.lstrip().lower().startswith("<!doctype html")  # static/ shipped
        assert "clearance" in httpx.get(f"{base}/api/decision-flows/runtime").json()["flows"]
        offer = httpx.post(f"{base}/v1/webrtc/offer", json={"type": "offer", "sdp": "v=0"})
        assert offer.status_code == 501 and "livefreq[webrtc]" in offer.json()["error"]["message"]
        visited = asyncio.run(asyncio.wait_for(fly_clearance(base), 120))
    assert visited[:2] == ["CD_READBACK", "CD_GROUND_RB"], visited


@pytest.mark.slow
def test_the_wheel_refuses_the_redis_store_without_its_extra(wheel_venv: Path, tmp_path: Path) -> None:
    env = {**_environment(tmp_path), "LIVEFREQ_STORE": "redis"}
    result = subprocess.run(
        [str(wheel_venv / "bin" / "livefreq"), "serve", "--port", str(_free_port())],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert "pip install livefreq[redis]" in result.stderr, result.stderr
