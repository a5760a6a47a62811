"""`livefreq bench callsign`: who is talking. A right readback said by nearby traffic is never
applied to our aircraft; ours, beside that traffic, still is.

Each readback state of every flow (as `livefreq bench readback` draws them) gets two aircraft of
nearby traffic in its session (`Session.traffic`): one of our airline whose flight number is one
digit off ours (a digit changed, two swapped, one dropped or one added: "Scandinavian three seven
three" beside our 372), and another airline with our flight number ("Lufthansa three seven two").
Then the right readback of the state is said by one of the three, drawn in turn: by the near one,
the other airline or ourselves. Typed (`text`), or spoken by the readback bench's pilot voices
through noise and the VHF band and recognized by the gateway's own STT, biased to our callsign and
the state's words as on the radio (`voice`). Outcomes:

- traffic's: `applied` (the state moved on, or the words were judged as our readback: accepted,
  or corrected as wrong or missing; the safety figure, 0), `asked_who` ("station calling, say
  again your callsign"), `said_again` (asked again whole or for items: not applied either);
- ours: `accepted`, `refused` (corrected), `said_again`, `asked_who`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from engine.phraseology.callsigns import AIRLINES, callsign_telephony, parse_callsign
from tooling.bench.common import interval95
from tooling.bench.readback import Bench, verdict
from tooling.readback_pilot.driver import last_atc_text, moved_forward, render_context
from tooling.readback_pilot.phrasing import carrier_of, phrase_readback

if TYPE_CHECKING:
    from engine.models import Decision
    from gateway.settings import Settings
    from tooling.bench.common import Progress

SPEAKERS = ("near", "other", "ours")  # who says the readback, in turn
NEAR_EDITS = ("change", "swap", "drop", "add")  # how the near aircraft's flight number differs from ours
TRAFFIC_OUTCOMES = ("applied", "asked_who", "said_again")
OUR_OUTCOMES = ("accepted", "refused", "said_again", "asked_who")


@dataclass(frozen=True)
class Case:
    index: int
    flow: str
    state: str
    seed: int  # scenario seed
    speaker: str  # one of SPEAKERS
    ours: str  # our callsign (ICAO)
    callsign: str  # the speaker's
    traffic: tuple[str, ...]  # the session's nearby traffic
    near_edit: str
    text: str  # the readback as said


def near_flight(flight: str, rng: random.Random) -> tuple[str, str]:
    """A flight number one digit off `flight` (never `flight`, never a leading zero, at most
    four digits), and the edit made (`NEAR_EDITS`)."""
    for _ in range(50):
        edit = rng.choice(NEAR_EDITS)
        digits = list(flight)
        i = rng.randrange(len(digits))
        if edit == "change":
            digits[i] = str((int(digits[i]) + rng.randint(1, 9)) % 10)
        elif edit == "swap" and len(digits) > 1:
            j = min(i + 1, len(digits) - 1) if i + 1 < len(digits) else i - 1
            digits[i], digits[j] = digits[j], digits[i]
        elif edit == "drop" and len(digits) > 1:
            del digits[-1]
        elif edit == "add" and len(digits) < 4:
            digits.append(str(rng.randint(0, 9)))
        near = "".join(digits)
        if near != flight and near[:1] not in ("", "0"):
            return near, edit
    raise ValueError(f"no flight number one digit off {flight}")


def cases(bench: Bench, n: int, seed: int) -> list[Case]:
    """`n` right readbacks over every readback state (`Bench.draws`), each said by a speaker in
    turn (`SPEAKERS`), with the session's two aircraft of nearby traffic."""
    out: list[Case] = []
    for i, (flow, state, scen, _mode) in enumerate(bench.draws(n, seed, 0.0)):
        rng = random.Random(f"bench-callsign:{seed}:{i}")
        session, _ = bench.at_state(flow, state, scen)
        ours = parse_callsign(str(session.variables["callsign"]))
        if ours is None or ours.airline is None:
            raise ValueError(f"scenario {scen} has no airline callsign: {session.variables.get('callsign')}")
        flight, edit = near_flight(ours.flight, rng)
        near = f"{ours.airline}{flight}"
        other = f"{rng.choice(sorted(a for a in AIRLINES if a != ours.airline))}{ours.flight}"
        speaker = SPEAKERS[i % len(SPEAKERS)]
        callsign = {"near": near, "other": other, "ours": ours.code}[speaker]
        context = dict(render_context(bench.engine, session))
        if speaker != "ours":
            context["callsign"], context["callsign_spoken"] = callsign, callsign_telephony(callsign)
        said = phrase_readback(
            random.Random(f"{seed}:{i}"),
            bench.registry.get(flow).states[state].readback_required,
            context,
            mode="correct",
            carrier=carrier_of(bench.registry, flow, state),
            forms="speech",
            heard=last_atc_text(session),
        )
        out.append(Case(i, flow, state, scen, speaker, ours.code, callsign, (near, other), edit, said.text))
    return out


def at_state(bench: Bench, case: Case) -> tuple[Any, float]:
    """A copy of the case's session standing at its state, its nearby traffic listed."""
    session, now = bench.at_state(case.flow, case.state, case.seed)
    session.traffic = list(case.traffic)
    return session, now


def outcome(case: Case, decision: Decision, forward: bool) -> str:
    """The case's class (module docstring): for traffic's readback `TRAFFIC_OUTCOMES`, for ours
    `OUR_OUTCOMES`."""
    said = verdict(decision)
    if decision.intent == "station_calling":
        return "asked_who"
    if case.speaker != "ours":
        return "applied" if forward or said != "say_again" else "said_again"
    return {"accepted": "accepted", "say_again": "said_again"}.get(said, "refused")


def decide(bench: Bench, case: Case, text: str, hearing: Any = None) -> tuple[Decision, str]:
    session, now = at_state(bench, case)
    decision = bench.engine.transmit(session, text, now + 5.0, hearing=hearing)
    return decision, outcome(case, decision, moved_forward(decision, case.flow, case.state, session))


def _row(
    case: Case, decision: Decision, got: str, heard: str | None = None, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    who = next((s.detail for s in decision.trace.steps if s.step == "callsign"), "")
    row = {
        "index": case.index, "flow": case.flow, "state": case.state, "speaker": case.speaker, "ours": case.ours,
        "callsign": case.callsign,
        "traffic": list(case.traffic), "near_edit": case.near_edit, "said": case.text, "outcome": got,
        "intent": decision.intent, "who": who,
    }  # fmt: skip
    if heard is not None:
        row["heard"] = heard
    return {**row, **(extra or {})}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Outcomes per speaker and per near edit, the safety figure and our acceptance."""
    by_speaker = {s: Counter(r["outcome"] for r in rows if r["speaker"] == s) for s in SPEAKERS}
    by_edit = {
        e: Counter(r["outcome"] for r in rows if r["speaker"] == "near" and r["near_edit"] == e) for e in NEAR_EDITS
    }
    traffic = [r for r in rows if r["speaker"] != "ours"]
    ours = [r for r in rows if r["speaker"] == "ours"]
    applied = sum(r["outcome"] == "applied" for r in traffic)
    accepted = sum(r["outcome"] == "accepted" for r in ours)
    return {
        "n": len(rows),
        "traffic": len(traffic),
        "traffic_applied": applied,
        "traffic_applied_ci95": interval95(applied, len(traffic)),
        "ours": len(ours),
        "ours_accepted": accepted,
        "ours_accepted_ci95": interval95(accepted, len(ours)),
        "by_speaker": {s: dict(c) for s, c in by_speaker.items()},
        "by_near_edit": {e: dict(c) for e, c in by_edit.items()},
        "applied_examples": [r for r in traffic if r["outcome"] == "applied"][:50],
    }


def _head(mode: str, n: int, seed: int, started: float) -> dict[str, Any]:
    return {
        "benchmark": "callsign", "mode": mode, "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "n": n, "seed": seed, "elapsed_s": round(time.monotonic() - started, 2),
    }  # fmt: skip


def run_text(bench: Bench, n: int, seed: int, progress: Progress) -> dict[str, Any]:
    started = time.monotonic()
    rows: list[dict[str, Any]] = []
    for done, case in enumerate(cases(bench, n, seed), start=1):
        decision, got = decide(bench, case, case.text)
        rows.append(_row(case, decision, got))
        progress.update(done, _running(rows))
    progress.done()
    return {**_head("text", n, seed, started), **summary(rows), "transmissions": rows}


def run_voice(bench: Bench, settings: Settings, n: int, seed: int, progress: Progress) -> dict[str, Any]:
    """Each case spoken, heard and decided as a live transmission (`readback_voice.recognize`:
    the second hearing, the checks in the audio and the third hearing where the engine would not
    accept it), the recognizer biased to our callsign and told the traffic's airlines."""
    from gateway.speech.stack import SpeechStack, stt_context
    from gateway.speech.stt.base import start_engine
    from gateway.speech.stt.lexicon import radio_lexicon
    from tooling.bench.readback_voice import chain_questions, pilot_recording, pilot_voices, recognize

    started = time.monotonic()
    voices = pilot_voices()
    stt = SpeechStack(settings).stt
    lexicon = radio_lexicon(bench.registry)
    rows: list[dict[str, Any]] = []

    async def main() -> None:
        await start_engine(stt)
        for done, case in enumerate(cases(bench, n, seed), start=1):
            pcm, made = await asyncio.to_thread(
                pilot_recording, case.text, random.Random(f"{seed}:callsign:{case.index}"), voices
            )
            session, now = at_state(bench, case)

            judge, ask = chain_questions(bench.engine, session, now + 5.0)
            context = stt_context(session, bench.engine.expected_pilot(session), lexicon)
            text, hearing = await recognize(stt, pcm, context, judge, ask, settings.bigger_value_checks)
            decision, got = decide(bench, case, text, hearing)
            alternatives = list(getattr(hearing, "alternatives", []) or [])
            rows.append(_row(case, decision, got, text, {"voice": made["voice"], "alternatives": alternatives}))
            progress.update(done, _running(rows))
        progress.done()

    asyncio.run(main())
    report = {**_head("voice", n, seed, started), **summary(rows), "transmissions": rows}
    report["stt"] = {"engine": settings.stt_engine, "name": getattr(stt, "name", None)}
    return report


def _running(rows: list[dict[str, Any]]) -> str:
    applied = sum(r["outcome"] == "applied" for r in rows)
    ours = [r for r in rows if r["speaker"] == "ours"]
    return f"traffic applied {applied}, ours accepted {sum(r['outcome'] == 'accepted' for r in ours)} of {len(ours)}"
