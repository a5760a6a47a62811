#!/usr/bin/env python3
"""A flight-simulator bridge: simulator variables in, livefreq `telemetry` and `tune` out.

A plugin in the simulator (SimConnect for MSFS/P3D, a dataref reader for X-Plane) writes one JSON
object per sample to this bridge's input, with a time and the variables by their simulator names:

    {"t": 12.5, "SIM ON GROUND": 1, "PLANE ALTITUDE": 364, "AIRSPEED INDICATED": 88, ...}
    {"t": 12.5, "sim/flightmodel/failures/onground_any": 1, "sim/flightmodel/position/elevation": 111, ...}

The bridge converts units, sends `telemetry` when the aircraft state changed enough to matter (at
most `--rate` per second, well under the gateway's message limit) and `tune` when COM1 changes,
and prints what the controller says. Scenarios move on the aircraft state alone: a takeoff at
the holding point gets "contact departure", and dialling that frequency hands over (flows/
tower_departure.yaml), with no word spoken.

    python examples/sim_bridge.py --sim simconnect < samples.jsonl
    python examples/sim_bridge.py --sim xplane --simulate takeoff --speed 10    # a made-up takeoff

`--simulate takeoff` feeds a takeoff and climb from the session's departure airport (with a
bounce at lift-off, as real readings have) and tunes the departure frequency the controller gives. Uses the livefreq client library (`gateway.client`); voice can go on the same
connection (`transmit_audio`), this bridge only carries the aircraft state.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from gateway.client import ClientBase, open_client

FT_PER_M = 3.28084
KT_PER_MS = 1.943844


def _bool(value: Any) -> bool:
    return bool(round(float(value)))


def _mhz(value: Any) -> str:
    return f"{float(value):.3f}"


def _squawk(value: Any) -> str:
    return f"{int(value):04d}"


# simulator variable -> (telemetry field, conversion). SimConnect variables as a plugin requests
# them ("feet", "knots", "feet per minute", "degrees", "MHz", a decimal transponder code); X-Plane
# datarefs in their own units (metres, metres per second, kHz).
MAPPINGS: dict[str, dict[str, tuple[str, Callable[[Any], Any]]]] = {
    "simconnect": {
        "SIM ON GROUND": ("on_ground", _bool),
        "ON ANY RUNWAY": ("on_runway", _bool),
        "PLANE ALTITUDE": ("altitude_ft", float),
        "AIRSPEED INDICATED": ("ias_kt", float),
        "GROUND VELOCITY": ("gs_kt", float),
        "VERTICAL SPEED": ("vs_fpm", float),
        "PLANE HEADING DEGREES MAGNETIC": ("heading_deg", float),
        "PLANE LATITUDE": ("lat", float),
        "PLANE LONGITUDE": ("lon", float),
        "TRANSPONDER CODE:1": ("squawk", _squawk),
        "COM ACTIVE FREQUENCY:1": ("com1", _mhz),
    },
    "xplane": {
        "sim/flightmodel/failures/onground_any": ("on_ground", _bool),
        "sim/flightmodel/position/elevation": ("altitude_ft", lambda m: float(m) * FT_PER_M),
        "sim/flightmodel/position/indicated_airspeed": ("ias_kt", float),
        "sim/flightmodel/position/groundspeed": ("gs_kt", lambda ms: float(ms) * KT_PER_MS),
        "sim/flightmodel/position/vh_ind_fpm": ("vs_fpm", float),
        "sim/flightmodel/position/mag_psi": ("heading_deg", float),
        "sim/flightmodel/position/latitude": ("lat", float),
        "sim/flightmodel/position/longitude": ("lon", float),
        "sim/cockpit/radios/transponder_code": ("squawk", _squawk),
        "sim/cockpit2/radios/actuators/com1_frequency_hz_833": ("com1", lambda khz: f"{int(khz) / 1000:.3f}"),
    },
}

# how much a value must change before it is worth a message (noise in the last digits is not)
THRESHOLDS = {"altitude_ft": 20.0, "ias_kt": 2.0, "gs_kt": 2.0, "vs_fpm": 100.0, "heading_deg": 2.0, "lat": 1e-4, "lon": 1e-4}


def to_aircraft_state(sample: dict[str, Any], sim: str) -> dict[str, Any]:
    """One simulator sample as livefreq telemetry fields (unknown variables are left out)."""
    out: dict[str, Any] = {}
    for name, (target, convert) in MAPPINGS[sim].items():
        if name in sample and sample[name] is not None:
            out[target] = convert(sample[name])
    return out


@dataclass
class SimBridge:
    """Turns a stream of aircraft states into `telemetry` and `tune` messages on one client."""

    client: ClientBase
    rate_hz: float = 4.0
    sent: dict[str, Any] = field(default_factory=dict)  # the state the gateway has
    telemetry_messages: int = 0
    tunes: list[str] = field(default_factory=list)
    _last_sent_at: float | None = None

    async def update(self, state: dict[str, Any], now: float) -> None:
        """Send what changed in `state`; `now` is the wall clock in seconds (the rate limit's)."""
        com1 = state.pop("com1", None)
        if com1 is not None and com1 != self.sent.get("com1"):
            self.sent["com1"] = com1
            self.tunes.append(com1)
            await self.client.tune(com1)
        changed = {k: v for k, v in state.items() if self._differs(k, v)}
        if not changed:
            return
        discrete = any(k in ("on_ground", "on_runway", "squawk") for k in changed)
        if not discrete and self._last_sent_at is not None and now - self._last_sent_at < 1.0 / self.rate_hz:
            return  # a continuous value can wait for the next slot; a switch cannot
        self.sent.update(state)
        self._last_sent_at = now
        self.telemetry_messages += 1
        await self.client.telemetry(**state)

    def _differs(self, key: str, value: Any) -> bool:
        old = self.sent.get(key)
        if old is None or isinstance(value, bool | str):
            return old != value
        return abs(float(value) - float(old)) >= THRESHOLDS.get(key, 0.0)


# --------------------------------------------------------------------------- a simulated takeoff


def simulated_takeoff(sim: str, elevation_ft: float, heading: float = 250.0, com1: str = "118.700") -> Iterator[dict[str, Any]]:
    """Samples (2 per second) of a takeoff and climb in `sim`'s variable names: 10 s at the
    holding point, a 25 s roll to 150 kt, a bounce at lift-off, then a 2000 ft/min climb for 60 s.
    `com1` is the tower frequency the pilot is on."""
    t = 0.0
    while t <= 95.0:
        if t < 10:
            ground, alt, ias, vs, runway = True, elevation_ft, 0.0, 0.0, t >= 5
        elif t < 35:
            ground, alt, ias, vs, runway = True, elevation_ft, 6.0 * (t - 10), 0.0, True
        else:
            climb = t - 35
            ground = climb < 1.0 or 2.0 <= climb < 2.5  # lift-off, then a bounce half a second long
            alt = elevation_ft + (0.0 if ground else 2000.0 / 60.0 * climb)
            ias, vs, runway = min(180.0, 150.0 + climb), 0.0 if ground else 2000.0, climb < 8
        yield _sample(sim, t, ground, runway, alt, ias, vs, heading, com1)
        t += 0.5


def _sample(sim: str, t: float, ground: bool, runway: bool, alt: float, ias: float, vs: float, heading: float, com1: str) -> dict[str, Any]:
    if sim == "xplane":
        return {
            "t": t,
            "sim/flightmodel/failures/onground_any": int(ground),
            "sim/flightmodel/position/elevation": alt / FT_PER_M,
            "sim/flightmodel/position/indicated_airspeed": ias,
            "sim/flightmodel/position/groundspeed": ias / KT_PER_MS,
            "sim/flightmodel/position/vh_ind_fpm": vs,
            "sim/flightmodel/position/mag_psi": heading,
            "sim/cockpit2/radios/actuators/com1_frequency_hz_833": round(float(com1) * 1000),
        }
    return {
        "t": t, "SIM ON GROUND": int(ground), "ON ANY RUNWAY": int(runway), "PLANE ALTITUDE": alt,
        "AIRSPEED INDICATED": ias, "GROUND VELOCITY": ias, "VERTICAL SPEED": vs,
        "PLANE HEADING DEGREES MAGNETIC": heading, "COM ACTIVE FREQUENCY:1": float(com1),
    }


def tune_sample(sim: str, t: float, frequency: str) -> dict[str, Any]:
    """A sample in which only COM1 changed (the pilot dialled `frequency`)."""
    if sim == "xplane":
        return {"t": t, "sim/cockpit2/radios/actuators/com1_frequency_hz_833": round(float(frequency) * 1000)}
    return {"t": t, "COM ACTIVE FREQUENCY:1": float(frequency)}


# --------------------------------------------------------------------------- running it


async def read_samples(stream: TextIO) -> AsyncIterator[dict[str, Any]]:
    """JSON lines from a file or stdin (read in a thread: a pipe from a simulator blocks)."""
    while True:
        line = await asyncio.to_thread(stream.readline)
        if not line:
            return
        if line.strip():
            yield json.loads(line)


async def replay(samples: AsyncIterator[dict[str, Any]], speed: float) -> AsyncIterator[dict[str, Any]]:
    """Samples at the pace of their `t` (divided by `speed`); samples without `t` at once."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    async for sample in samples:
        if "t" in sample and speed > 0:
            delay = start + float(sample["t"]) / speed - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
        yield sample


async def run(args: argparse.Namespace, out: TextIO) -> dict[str, Any]:
    client = await open_client(args.url, transport=args.transport, token=args.token)
    try:
        if args.resume:
            session_id, _, token = args.resume.partition(":")
            started = await client.resume(session_id, token)
        else:
            scenario = {k: v for k, v in (("airport", args.airport), ("callsign", args.callsign)) if v}
            started = await client.start(flow=args.flow, seed=args.seed, scenario=scenario or None)
        scenario = started.get("scenario") or {}
        print(f"session {started['session_id']}: {started['flow']}:{started['state']} on {started.get('frequency')}", file=out)
        printer = EventPrinter(client, out)
        printing = asyncio.create_task(printer.follow())
        bridge = SimBridge(client, rate_hz=args.rate)
        samples = _simulated(args.sim, scenario, client) if args.simulate else read_samples(sys.stdin)
        async for sample in replay(samples, args.speed):
            await bridge.update(to_aircraft_state(sample, args.sim), asyncio.get_running_loop().time())
        await _quiet(client)
        await printer.stop(printing)
        states = [e for e in client.rx.events if e["type"] == "state"]
        last = states[-1] if states else started
        return {
            "session_id": started["session_id"],
            "flow": last.get("flow"), "state": last.get("state"),
            "station": last.get("station"), "frequency": last.get("frequency"),
            "telemetry_messages": bridge.telemetry_messages, "tunes": bridge.tunes,
            "controller": [e["text"] for e in client.rx.events if e["type"] == "atc.message"],
            "errors": [e["code"] for e in client.rx.events if e["type"] == "error"],
        }
    finally:
        await client.close()


async def _simulated(sim: str, scenario: dict[str, Any], client: ClientBase) -> AsyncIterator[dict[str, Any]]:
    """The made-up takeoff; once the controller has given the departure frequency (its
    `atc.message` event, as a pilot hears it), the pilot dials it."""
    departure = str(scenario.get("departure_freq") or "")
    tuned = False
    last_t = 0.0
    for sample in simulated_takeoff(sim, float(scenario.get("elevation_ft") or 0), com1=str(scenario.get("tower_freq") or "118.700")):
        last_t = sample["t"]
        heard = any(e["type"] == "atc.message" and departure and departure in e.get("text", "") for e in client.rx.events)
        if heard and not tuned:
            tuned = True
            yield tune_sample(sim, last_t, departure)
        if tuned and "COM ACTIVE FREQUENCY:1" in sample:
            sample["COM ACTIVE FREQUENCY:1"] = float(departure)
        if tuned and "sim/cockpit2/radios/actuators/com1_frequency_hz_833" in sample:
            sample["sim/cockpit2/radios/actuators/com1_frequency_hz_833"] = round(float(departure) * 1000)
        yield sample


class EventPrinter:
    """Prints what the controller says and what moved the session, as events arrive."""

    def __init__(self, client: ClientBase, out: TextIO) -> None:
        self.client, self.out, self.seen = client, out, 0

    async def follow(self) -> None:
        while True:
            await self.client.until(lambda: True if len(self.client.rx.events) > self.seen else None, timeout=3600, what="an event")
            self.flush()

    async def stop(self, task: asyncio.Task[None]) -> None:
        """Ends `follow` and prints what it had not yet printed. The task is awaited, not just
        cancelled: on Python 3.11 a cancel that meets a just-set event can be swallowed, and the
        task would then outlive the connection and die on it."""
        task.cancel()
        try:
            await task
        except (asyncio.CancelledError, ConnectionError):
            pass
        self.flush()

    def flush(self) -> None:
        for event in self.client.rx.events[self.seen:]:
            if event["type"] == "atc.message":
                print(f"ATC: {event['text']}", file=self.out)
            elif event["type"] == "decision" and event.get("cause") in ("telemetry", "tune", "tick"):
                print(f"  {event['cause']}: {event['from_flow']}:{event['from_state']} -> {event['to_flow']}:{event['to_state']}", file=self.out)
            elif event["type"] == "error":
                print(f"  error {event['code']}: {event['message']}", file=self.out)
        self.seen = len(self.client.rx.events)


async def _quiet(client: ClientBase, timeout: float = 60.0) -> None:
    """Until every controller message begun has ended (what the last samples caused is said)."""
    def settled() -> bool | None:
        begun = {e["seq"] for e in client.rx.events if e["type"] == "atc.message"}
        ended = {e["seq"] for e in client.rx.events if e["type"] == "atc.message.end"}
        return True if begun <= ended else None

    await client.until(settled, timeout, "the controller to finish")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8765", help="gateway base URL (default: %(default)s)")
    parser.add_argument("--sim", choices=sorted(MAPPINGS), default="simconnect", help="variable names of the input")
    parser.add_argument("--simulate", choices=("takeoff",), help="feed a made-up takeoff and climb instead of stdin")
    parser.add_argument("--speed", type=float, default=1.0, help="replay speed of the samples' t (default: 1, real time)")
    parser.add_argument("--rate", type=float, default=4.0, help="telemetry messages per second at most (default: 4)")
    parser.add_argument("--transport", choices=("ws", "webrtc"), default="ws")
    parser.add_argument("--flow", default="tower_departure")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--airport", default=None, metavar="ICAO")
    parser.add_argument("--callsign", default=None)
    parser.add_argument("--resume", default=None, metavar="ID:TOKEN", help="resume a session (a voice client may own it)")
    parser.add_argument("--token", default=None, help="API key or session token")
    parser.add_argument("--json", action="store_true", help="print a JSON summary at the end")
    args = parser.parse_args(argv)
    summary = asyncio.run(run(args, sys.stderr if args.json else sys.stdout))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"now {summary['flow']}:{summary['state']} on {summary['station']} {summary['frequency']}; "
              f"{summary['telemetry_messages']} telemetry messages, tuned {summary['tunes']}")
    return 0 if not summary["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
