"""A scripted pilot that flies a whole scenario against a running gateway over HTTP.

It is how a new user (and our tests) checks the text API end to end: start a session, answer every
pilot turn with the phrase the state expects, spoken the way a pilot on the radio says it ("tree",
"fife", "niner", "decimal", readback items in a different order), wait for the controller when the
scenario makes the pilot wait, and stop when the session completes. With `wrong_readbacks`, every
readback is first sent with one wrong value, which the gateway must catch before the correct one
is sent.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import httpx

from engine import phraseology


@dataclass
class FlightReport:
    session_id: str = ""
    completed: bool = False
    transmissions: int = 0
    readbacks: int = 0
    wrong_sent: int = 0
    wrong_caught: int = 0
    misses: list[str] = field(default_factory=list)  # wrong readbacks the gateway accepted
    unrecognized: list[str] = field(default_factory=list)
    states: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)


class FlightError(RuntimeError):
    pass


def wrong_value(kind: str, shown: str) -> str | None:
    """A plausible but wrong value of the same kind, as written in a clearance."""
    if kind == "runway":
        m = re.fullmatch(r"(\d{2})([LRC]?)", shown)
        if not m:
            return None
        side = {"R": "L", "L": "R", "C": "L"}.get(m.group(2))
        return m.group(1) + side if side else f"{(int(m.group(1)) % 36) + 1:02d}"
    if kind == "frequency":
        mhz = float(shown)
        return f"{mhz + 0.05:.3f}" if mhz < 136.9 else f"{mhz - 0.05:.3f}"
    if kind == "squawk" and len(shown) == 4:
        swapped = shown[:2] + shown[3] + shown[2]
        return swapped if swapped != shown else shown[:3] + str((int(shown[3]) + 1) % 8)
    if kind in ("altitude", "qnh", "heading") and shown.isdigit():
        step = {"altitude": 1000, "qnh": 2, "heading": 30}[kind]
        value = int(shown) + step
        return f"{value % 360:03d}" if kind == "heading" else str(value)
    if kind == "flight_level" and shown.upper().startswith("FL"):
        return f"FL{int(shown[2:]) + 20:03d}"
    if kind in ("sid", "star"):
        m = re.fullmatch(r"([A-Z]+) ?(\d)([A-Z])", shown)
        return f"{m.group(1)} {m.group(2)}{'G' if m.group(3) != 'G' else 'H'}" if m else None
    if kind in ("designator", "route"):
        m = re.search(r"(\d+)(?!.*\d)", shown)
        return shown[: m.start()] + str(int(m.group(1)) + 1) + shown[m.end():] if m else None
    return None


@dataclass(frozen=True)
class WrongReadback:
    """A readback with one value changed: what to say, and which field the controller must catch."""

    phrase: str  # as written, like the expected phrase it came from
    field: str  # the variable whose value is wrong
    issued: str  # the value the controller gave
    said: str  # the wrong value in `phrase`


def wrong_readback(phrase: str, fields: list[str], variables: dict[str, Any], n: int = 0) -> WrongReadback | None:
    """`phrase` (a correct readback) with the value of one of `fields` replaced by a plausible
    wrong one, trying the fields from the `n`-th on (so successive readbacks vary the field); None
    when no field's value appears in the phrase or has a wrong counterpart."""
    if not fields:
        return None
    order = fields[n % len(fields):] + fields[: n % len(fields)]
    for name in order:
        kind = phraseology.kind_for_variable(name)
        shown = phraseology.display_value(kind, variables.get(name)) if variables.get(name) is not None else ""
        bad = wrong_value(kind, shown) if shown else None
        pattern = rf"(?<![\w.]){re.escape(shown)}(?![\w.])"
        if bad and re.search(pattern, phrase):
            return WrongReadback(re.sub(pattern, bad, phrase, count=1), name, shown, bad)
    return None


def spoken(text: str, rng: random.Random, shuffle: bool) -> str:
    """How a pilot says it: ICAO words, lower case, and readback items in another order."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if shuffle and len(parts) > 2:
        body, tail = parts[:-1], parts[-1:]
        rng.shuffle(body)
        parts = tail + body if rng.random() < 0.5 else body + tail
    return phraseology.speak_text(", ".join(parts)).lower()


class HttpPilot:
    """Flies one session; every HTTP call goes through one keep-alive client."""

    def __init__(
        self,
        base_url: str,
        *,
        seed: int = 7,
        wrong_readbacks: bool = False,
        wait_timeout_s: float = 300.0,
        poll_s: float = 0.25,
        echo: Callable[[str], None] | None = None,
        on_reply: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.client = httpx.Client(base_url=base_url.rstrip("/"), timeout=30.0)
        self.rng = random.Random(seed)
        self.seed = seed
        self.wrong_readbacks = wrong_readbacks
        self.wait_timeout_s = wait_timeout_s
        self.poll_s = poll_s
        self.echo = echo or (lambda line: None)
        self.on_reply = on_reply  # (text, reply) for every transmission (the router benchmark)
        self._readback_fields: dict[tuple[str, str], list[str]] = {}

    def close(self) -> None:
        self.client.close()

    def _call(self, method: str, url: str, **kw: Any) -> dict[str, Any]:
        resp = self.client.request(method, url, **kw)
        if resp.status_code >= 400:
            raise FlightError(f"{method} {url} -> {resp.status_code}: {resp.text[:300]}")
        return resp.json()

    def _load_runtime(self) -> None:
        runtime = self._call("GET", "/api/decision-flows/runtime")
        for slug, flow in runtime["flows"].items():
            for sid, state in flow["states"].items():
                if state.get("readback_required"):
                    self._readback_fields[(slug, sid)] = list(state["readback_required"])

    def fly(self, flow: str | None = None, scenario: dict[str, Any] | None = None, max_turns: int = 200) -> FlightReport:
        self._load_runtime()
        report = FlightReport()
        body: dict[str, Any] = {"seed": self.seed}
        if flow:
            body["flow"] = flow
        if scenario:
            body["scenario"] = scenario
        reply = self._call("POST", "/api/radio/sessions", json=body)
        session = reply["session"]
        report.session_id = session["id"]
        self._show(reply)
        expected = reply["expected_pilot"]
        for _ in range(max_turns):
            if session.get("completed"):
                report.completed = True
                break
            if not expected:
                session, expected = self._wait(report.session_id, session)
                continue
            key = (session["flow"], session["state"])
            report.states.append(f"{key[0]}:{key[1]}")
            fields = self._readback_fields.get(key, [])
            if fields:
                report.readbacks += 1
                if self.wrong_readbacks:
                    self._send_wrong(report, session, expected[0], fields, report.readbacks)
            text = spoken(expected[0], self.rng, shuffle=bool(fields))
            reply = self._transmit(report, text)
            if self._overtaken(reply, key):
                report.log.append(f"the controller spoke first at {key[0]}:{key[1]}; answering the new call")
                session, expected = reply["session"], reply["expected_pilot"]
                continue
            if reply["decision"]["recognized"] is False:
                report.unrecognized.append(f"{key[0]}:{key[1]}: {text}")
            if reply["readback"] is not None and not reply["readback"]["ok"]:
                raise FlightError(f"correct readback rejected at {key}: {text!r} -> {reply['readback']}")
            session, expected = reply["session"], reply["expected_pilot"]
        return report

    def _send_wrong(self, report: FlightReport, session: dict[str, Any], phrase: str, fields: list[str], n: int) -> None:
        wrong = wrong_readback(phrase, fields, session["variables"], n)
        if wrong is None:
            return
        text = spoken(wrong.phrase, self.rng, True)
        reply = self._transmit(report, text)
        if self._overtaken(reply, (session["flow"], session["state"])):
            return  # a timer moved the scenario on first: this was no readback of that state
        report.wrong_sent += 1
        rb = reply.get("readback")
        if rb is not None and not rb["ok"] and wrong.field in rb["fields"] and rb["fields"][wrong.field] != "ok":
            report.wrong_caught += 1
        else:
            report.misses.append(f"{session['flow']}:{session['state']} {wrong.field} {wrong.issued}->{wrong.said}: {text}")

    @staticmethod
    def _overtaken(reply: dict[str, Any], key: tuple[str, str]) -> bool:
        """A timed controller call moved the session on before our transmission arrived (as on a
        real frequency); the transmission was decided in another state than the one answered."""
        decision = reply.get("decision") or {}
        return (decision.get("from_flow"), decision.get("from_state")) != key

    def _transmit(self, report: FlightReport, text: str) -> dict[str, Any]:
        report.transmissions += 1
        self.echo(f"PILOT  {text}")
        reply = self._call("POST", f"/api/radio/sessions/{report.session_id}/transmissions", json={"text": text})
        if self.on_reply is not None:
            self.on_reply(text, reply)
        if reply.get("readback") is not None:
            rb = reply["readback"]
            verdict = "correct" if rb["ok"] else f"WRONG {rb.get('wrong')} MISSING {rb.get('missing')}"
            self.echo(f"       readback {verdict}")
        self._show(reply)
        return reply

    def _wait(self, session_id: str, session: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The controller is keeping the pilot waiting (a timer): poll until the turn comes."""
        self.echo(f"       ... waiting for the controller at {session['flow']}:{session['state']}")
        seen = len(self._call("GET", f"/api/radio/sessions/{session_id}/transcript")["entries"])
        deadline = time.monotonic() + self.wait_timeout_s
        while time.monotonic() < deadline:
            time.sleep(self.poll_s)
            view = self._call("GET", f"/api/radio/sessions/{session_id}")
            if (view["session"]["flow"], view["session"]["state"]) != (session["flow"], session["state"]) or view["session"].get("completed"):
                entries = self._call("GET", f"/api/radio/sessions/{session_id}/transcript")["entries"]
                for e in entries[seen:]:
                    if e.get("role") == "atc":
                        self.echo(f"ATC    {e.get('text')}")
                return view["session"], view.get("expected_pilot", [])
        raise FlightError(f"no controller call within {self.wait_timeout_s:g}s at {session['flow']}:{session['state']}")

    def _show(self, reply: dict[str, Any]) -> None:
        for m in reply.get("messages", []):
            self.echo(f"ATC    {m['text']}")


async def fly_by_voice(
    base_url: str,
    *,
    flow: str = "clearance",
    seed: int = 7,
    until_flow: str | None = None,
    max_turns: int = 80,
    echo: Callable[[str], None] = print,
    scenario: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The same trip by voice over the WebSocket radio: each expected phrase is spoken by the
    piper voice through a radio effect and streamed in real time with push-to-talk; the pilot
    waits for the controller when the scenario makes it wait. Stops at `until_flow` or the end."""
    from tooling.voicekit import VoicePilot

    turns = readbacks = readbacks_ok = 0
    async with VoicePilot(base_url, flow=flow, seed=seed, scenario=scenario, timeout_s=180) as pilot:
        while not pilot.completed and turns < max_turns:
            if until_flow and pilot.state.get("flow") == until_flow:
                break
            if not pilot.expected:  # the controller keeps us waiting (a timer): listen
                client = pilot.client
                assert client is not None
                pilot.state = await client.wait_type("state", 600, client.mark())
                continue
            phrase = pilot.expected[0]
            exchange = await pilot.say(phrase)
            turns += 1
            verdict = ""
            if exchange.readback_ok is not None:
                readbacks += 1
                readbacks_ok += int(exchange.readback_ok)
                verdict = "  readback correct" if exchange.readback_ok else "  readback NOT correct"
            echo(f"PILOT  {phrase}\n heard {exchange.transcript}{verdict}")
            if exchange.reply_text:
                echo(f"ATC    {exchange.reply_text}   ({exchange.first_audio_ms:.0f} ms to first audio)")
        return {
            "session_id": pilot.session_id,
            "flow": pilot.state.get("flow"),
            "state": pilot.state.get("state"),
            "completed": pilot.completed,
            "transmissions": turns,
            "readbacks": readbacks,
            "readbacks_ok": readbacks_ok,
        }
