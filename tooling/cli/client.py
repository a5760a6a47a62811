"""`livefreq client`: one transmission from a WAV file (or a phrase) and what the controller says back.

    livefreq client --wav call.wav [--url http://127.0.0.1:8765] [--transport ws|webrtc] [--out DIR]
    livefreq client --say ["TEXT"] ...        # TEXT synthesized with the pilot voice; alone: the expected call

It starts a session (or resumes one with ``--resume ID:TOKEN``), waits for the controller's opening
calls, keys the mic, plays the audio in real time, releases, and prints the transcript, the
decision and each controller reply with its text; every reply's audio is saved as a WAV in
``--out`` (and the pilot's audio too, with ``--say``). ``--json`` prints one JSON object instead,
for scripts. Exit code 0 when the transmission was heard and decided, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from gateway.audio.pcm import PcmError, read_wav, write_wav
from gateway.client import ClientBase, ProtocolRefused, open_client

PROTOCOL_RATES = (8000, 16000, 24000, 32000, 44100, 48000)
OUTPUT_RATE = 24000  # asked of a WebSocket gateway; a WebRTC track is 48 kHz


def cmd_client(args: argparse.Namespace) -> int:
    out: TextIO = sys.stderr if args.json else sys.stdout
    try:
        result = asyncio.run(run_client(args, out))
    except (OSError, TimeoutError, ConnectionError, PcmError, ProtocolRefused, ValueError) as exc:
        print(f"livefreq client: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0 if result.get("decision") else 1


async def run_client(args: argparse.Namespace, out: TextIO) -> dict[str, Any]:
    pcm, rate = (_load_wav(args.wav) if args.wav is not None else (b"", 16000))
    options: dict[str, Any] = {"output_rate": OUTPUT_RATE} if args.transport == "ws" else {}
    client = await open_client(args.url, transport=args.transport, token=args.token, keep_audio=True, **options)
    result: dict[str, Any] = {"transport": args.transport}
    try:
        started = await _attach(client, args, rate)
        result["session"] = {k: started.get(k) for k in ("session_id", "resume_token", "session_token", "flow", "state", "station", "frequency")}
        print(f"session {started['session_id']} at {started['flow']}:{started['state']}, "
              f"{started.get('station')} {started.get('frequency')} "
              f"(resume with --resume {started['session_id']}:{started['resume_token']})", file=out)
        await _hear(client, started.get("messages") or [], 0, args.timeout, args.out, out, result)
        if args.say is not None:
            phrase = args.say or _expected(client, started)
            pcm, rate = await asyncio.to_thread(_synthesize, phrase)
            args.out.mkdir(parents=True, exist_ok=True)
            write_wav(args.out / "pilot.wav", pcm, rate)
            print(f"pilot: saying {phrase!r} (saved {args.out / 'pilot.wav'})", file=out)
        mark = client.mark()
        print(f"pilot: transmitting {len(pcm) / 2 / rate:.1f} s of audio (push-to-talk, real time)", file=out)
        released = await client.transmit_audio(pcm, rate, realtime=True)
        final = await client.wait_type("transcript", args.timeout, mark, final=True)
        result["transcript"] = final.get("text") or ""
        print(f"transcript: {result['transcript']!r}", file=out)
        if final.get("transmission_id") is None:
            print("decision: none (nothing was understood)", file=out)
            return result
        decision = await client.wait_type("decision", args.timeout, mark, transmission_id=final["transmission_id"])
        result["decision"] = {k: decision.get(k) for k in ("from_flow", "from_state", "to_flow", "to_state", "recognized", "intent", "readback")}
        print(f"decision: {_describe(decision)}", file=out)
        replies = await _hear(client, decision.get("messages") or [], mark, args.timeout, args.out, out, result)
        first = client.rx.first_audio_at.get(replies[0]["message_id"]) if replies else None
        if first is not None:
            result["first_audio_ms"] = round((first - released) * 1000)
            print(f"first controller audio {result['first_audio_ms']} ms after the release", file=out)
        states = [e for e in client.rx.events[mark:] if e["type"] == "state"]
        if states:
            latest = states[-1]
            result["state"] = {k: latest.get(k) for k in ("flow", "state", "station", "frequency", "expected_pilot")}
            print(f"now: {latest['flow']}:{latest['state']}; expected next: {(latest.get('expected_pilot') or ['(listen)'])[0]!r}", file=out)
        return result
    finally:
        await client.close()


async def _attach(client: ClientBase, args: argparse.Namespace, rate: int) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if client.transport == "ws":
        fields["input_audio"] = {"format": "pcm_s16le", "sample_rate": rate, "channels": 1}
        fields["output_audio"] = {"format": "pcm_s16le", "sample_rate": OUTPUT_RATE, "channels": 1}
    if args.resume:
        session_id, _, token = args.resume.partition(":")
        if not token:
            raise ValueError("--resume takes SESSION_ID:RESUME_TOKEN")
        return await client.resume(session_id, token, timeout=args.timeout, **fields)
    scenario = {k: v for k, v in (("airport", args.airport), ("callsign", args.callsign)) if v}
    return await client.start(flow=args.flow, seed=args.seed, scenario=scenario or None, timeout=args.timeout, **fields)


async def _hear(
    client: ClientBase, messages: list[dict[str, Any]], start: int, timeout: float, folder: Path, out: TextIO, result: dict[str, Any]
) -> list[dict[str, Any]]:
    """Wait for each of `messages` to be spoken whole; print it and save its audio."""
    heard: list[dict[str, Any]] = []
    for ref in messages:
        seq = ref["seq"]
        event = await client.wait_type("atc.message", timeout, start, seq=seq)
        end = await client.wait_type("atc.message.end", timeout + 120, start, seq=seq)
        message_id = event["message_id"]
        if client.transport == "webrtc" and end.get("audio_ms"):
            # the end follows the last frame sent; let the track's last frames arrive
            wanted = (end["audio_ms"] - 20) / 1000 * 2 * client.output_rate
            try:
                await client.until(lambda: True if client.rx.audio.get(message_id, 0) >= wanted else None, 2.0, "the message's audio")
            except TimeoutError:
                pass
        spoken = [m for m in client.messages(start) if m.event["message_id"] == message_id]
        audio = spoken[0] if spoken else None
        entry: dict[str, Any] = {"seq": seq, "message_id": message_id, "text": event.get("text"), "interrupted": end.get("interrupted", False)}
        if audio is not None and audio.pcm:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"atc-{seq}.wav"
            write_wav(path, audio.pcm, audio.sample_rate)
            entry.update(audio_s=round(audio.seconds, 2), wav=str(path))
        heard.append(entry)
        saved = f" ({entry['audio_s']:.1f} s of audio saved to {entry['wav']})" if "wav" in entry else " (no audio)"
        print(f"ATC [{seq}]: {event.get('text')!r}{saved}", file=out)
    result.setdefault("controller", []).extend(heard)
    return heard


def _expected(client: ClientBase, started: dict[str, Any]) -> str:
    states = [e for e in client.rx.events if e["type"] == "state"]
    expected = (states[-1] if states else started).get("expected_pilot") or []
    if not expected:
        raise ValueError("the state expects no pilot call right now; give --say a phrase")
    return str(expected[0])


def _synthesize(phrase: str) -> tuple[bytes, int]:
    from tooling.voicekit import pilot_pcm  # piper: only when asked for

    return pilot_pcm(phrase, 16000), 16000


def _load_wav(path: Path) -> tuple[bytes, int]:
    pcm, rate = read_wav(path)
    if rate not in PROTOCOL_RATES:
        from gateway.audio.resample import resample

        pcm, rate = resample(pcm, rate, 48000), 48000
    if not pcm:
        raise ValueError(f"{path}: no audio")
    return pcm, rate


def _describe(decision: dict[str, Any]) -> str:
    moved = f"{decision.get('from_flow')}:{decision.get('from_state')} -> {decision.get('to_flow')}:{decision.get('to_state')}"
    if not decision.get("recognized"):
        return f"{moved}, not recognized (the controller asks to say again)"
    text = f"{moved}, recognized as {decision.get('intent')}"
    readback = decision.get("readback")
    if readback is not None:
        bad = [f"{k} {v}" for k, v in (readback.get("fields") or {}).items() if v != "ok"]
        text += ", readback correct" if readback.get("ok") else f", readback NOT correct ({', '.join(bad)})"
    return text
