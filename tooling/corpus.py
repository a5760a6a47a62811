"""`livefreq corpus build`: recorded pilot transmissions for load tests, with their ground truth.

A load test must replay what pilots really say, at the moments a scenario asks for it, and know
what each recording says and how the controller must judge it. The corpus makes that from the
project's own pieces, offline:

- **What is said.** For each of K seeded scenarios, a session is flown by text from the main
  flow on a virtual clock (timers fire when due, without waiting): at every pilot turn the
  scripted pilot of `tooling.fly` says the state's expected phrase the way a pilot on the radio
  does (`spoken`: ICAO words, readback items in another order). Live sessions with the same seed
  reach the same states and expect the same phrases, so the load tester finds each recording by
  (seed, flow, state).
- **Wrong readbacks.** At a share of the readback states, a second recording says the readback
  with one value wrong (`wrong_readback`, as `livefreq fly --wrong-readbacks` does); its ground
  truth is the verdict the controller must give (`wrong`, naming the field).
- **How it sounds.** Each recording is the piper voice (`voicekit.pilot_pcm`) at a varied speed
  (`length_scale` 0.85-1.15), through the radio effect at readability 3-5, with band noise of
  -52 to -40 dBFS; all drawn from a generator seeded by the scenario and turn, and the voice
  itself speaks without piper's randomness, so a corpus is reproducible. Each line names the
  voice (`voice`): a rebuild after the pilot voice changed makes its recordings again.

The output is a folder of 16 kHz mono PCM16 WAV files and `manifest.jsonl`, one JSON object per
recording (`CorpusEntry`). Any folder of WAVs with such a manifest can replace it: `file` and
`text` are required; `seed`, `flow`, `state` let the load tester fly scenarios with it (without
them a recording is used where its text matches a phrase the state expects); `kind` and
`expected_readback` mark wrong readbacks. Rebuilding reuses the WAVs whose line is unchanged.
"""

from __future__ import annotations

import json
import random
import wave
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.phraseology import normalize_transcript, speak_text
from gateway.settings import REPO_ROOT

if TYPE_CHECKING:
    from gateway.service import RadioService
    from gateway.settings import Settings

__all__ = [
    "DEFAULT_CORPUS_DIR",
    "MANIFEST",
    "Corpus",
    "CorpusEntry",
    "CorpusError",
    "ScriptTurn",
    "build_corpus",
    "load_corpus",
    "script_scenario",
]

MANIFEST = "manifest.jsonl"
DEFAULT_CORPUS_DIR = REPO_ROOT / "reports" / "corpus"  # generated audio stays out of git (reports/)
SAMPLE_RATE = 16000
DEFAULT_TURNS = 16  # pilot turns per scenario: more than a pilot says in a few minutes of load
WRONG_SHARE = 0.3  # share of readback states that also get a wrong readback
SPEED_RANGE = (0.85, 1.15)  # piper length_scale: fast to slow talkers
RADIO_LEVELS = (3, 4, 5)
NOISE_DBFS_RANGE = (-52.0, -40.0)
MAX_TIMER_WAITS = 20  # timer firings waited for per scenario before the script gives up


class CorpusError(Exception):
    """The corpus cannot be built or read (no manifest, bad line, missing WAV)."""


@dataclass(frozen=True)
class CorpusEntry:
    """One recording and its ground truth (one line of `manifest.jsonl`).

    `kind`: ``correct`` (what the state expects), ``wrong`` (a readback with one value wrong,
    `expected_readback` ``wrong`` and `wrong_field` say what the controller must catch), or
    ``external`` (a recording from elsewhere, matched by its text). `expected_readback` is ``ok``
    for a correct readback and None where the state asks for none.
    """

    file: str
    text: str
    seed: int | None = None
    start_flow: str | None = None
    flow: str | None = None
    state: str | None = None
    turn: int | None = None
    kind: str = "external"
    expected_readback: str | None = None
    wrong_field: str | None = None
    length_scale: float | None = None
    radio_level: int | None = None
    noise_dbfs: float | None = None
    voice: str | None = None  # the synthetic pilot voice that spoke it (`voicekit.pilot_voice_id`)
    audio_s: float | None = None
    sample_rate: int = SAMPLE_RATE

    def as_line(self) -> str:
        return json.dumps({k: v for k, v in asdict(self).items() if v is not None}, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CorpusEntry:
        known = {f.name for f in fields(cls)}
        if not isinstance(data.get("file"), str) or not isinstance(data.get("text"), str):
            raise CorpusError("every manifest line needs a string 'file' and 'text'")
        return cls(**{k: v for k, v in data.items() if k in known})

    def sound(self) -> tuple[float | None, int | None, float | None]:
        return (self.length_scale, self.radio_level, self.noise_dbfs)


@dataclass(frozen=True)
class ScriptTurn:
    """A pilot turn of a text-flown scenario: where it is, what to say, what must be read back."""

    seed: int
    start_flow: str
    flow: str
    state: str
    turn: int
    text: str  # as the scripted pilot says it (ICAO words, lower case)
    readback: list[str]
    wrong: str | None = None  # the same readback with one value wrong, when this turn has one
    wrong_field: str | None = None


@dataclass
class Corpus:
    """A loaded corpus: its folder and entries, indexed for the load tester."""

    root: Path
    entries: list[CorpusEntry]

    @property
    def seeds(self) -> list[int]:
        """The scenario seeds in the corpus, in order (empty for an external corpus)."""
        return sorted({e.seed for e in self.entries if e.seed is not None})

    def start_flow(self, seed: int) -> str | None:
        return next((e.start_flow for e in self.entries if e.seed == seed and e.start_flow), None)

    def for_state(self, seed: int | None, flow: str, state: str, expected: Iterable[str] = ()) -> list[CorpusEntry]:
        """Recordings to say at `flow`:`state` of scenario `seed`: its own (correct first, wrong
        ones after), else any whose text reads the same as an expected phrase."""
        own = [e for e in self.entries if e.seed == seed and e.flow == flow and e.state == state]
        if own:
            return sorted(own, key=lambda e: e.kind != "correct")
        wanted = {normalize_transcript(speak_text(p)) for p in expected}
        return [e for e in self.entries if normalize_transcript(speak_text(e.text)) in wanted]

    def pcm(self, entry: CorpusEntry) -> bytes:
        """The recording as 16 kHz PCM16 mono (resampled if the WAV has another rate)."""
        path = self.root / entry.file
        try:
            with wave.open(str(path), "rb") as wav:
                if wav.getsampwidth() != 2:
                    raise CorpusError(f"{path}: only 16-bit PCM WAV files are supported")
                rate, channels = wav.getframerate(), wav.getnchannels()
                data = wav.readframes(wav.getnframes())
        except (OSError, wave.Error, EOFError) as exc:
            raise CorpusError(f"cannot read {path}: {exc}") from None
        if channels > 1:
            import numpy as np

            data = np.frombuffer(data, dtype=np.int16).reshape(-1, channels).mean(axis=1).astype(np.int16).tobytes()
        if rate != SAMPLE_RATE:
            from gateway.audio.resample import resample

            data = resample(data, rate, SAMPLE_RATE)
        return data


def load_corpus(root: Path) -> Corpus:
    """The corpus in `root` (its `manifest.jsonl`); every file it names must exist."""
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise CorpusError(f"no corpus at {root}: {MANIFEST} is missing (build one with `livefreq corpus build --out {root}`)")
    entries: list[CorpusEntry] = []
    for number, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = CorpusEntry.from_dict(json.loads(line))
        except (ValueError, TypeError, CorpusError) as exc:
            raise CorpusError(f"{manifest}:{number}: {exc}") from None
        if not (root / entry.file).is_file():
            raise CorpusError(f"{manifest}:{number}: {entry.file} does not exist")
        entries.append(entry)
    if not entries:
        raise CorpusError(f"{manifest} lists no recording")
    return Corpus(root, entries)


# --------------------------------------------------------------------------- what is said


def script_scenario(
    service: RadioService,
    seed: int,
    *,
    flow: str | None = None,
    turns: int = DEFAULT_TURNS,
    wrong_share: float = WRONG_SHARE,
) -> list[ScriptTurn]:
    """Fly scenario `seed` by text from `flow` (default: the main flow) on `service`, whose clock
    must be a `tooling.chat.VirtualClock`: the pilot turns, at most `turns` of them.

    A turn with nothing to say waits for the next timer (the clock jumps to it); the script ends
    when the session completes, stalls, or after `turns`.
    """
    from tooling.chat import VirtualClock
    from tooling.fly import spoken, wrong_readback

    clock = service.clock
    if not isinstance(clock, VirtualClock):
        raise TypeError("script_scenario needs a RadioService on a VirtualClock (timers jump, nobody waits)")
    rng = random.Random(f"corpus-{seed}")
    session, decision, _token = service.create(flow=flow, seed=seed)
    sid = session.session_id
    start = session.active.flow
    out: list[ScriptTurn] = []
    expected = decision.expected_pilot
    waits = 0
    try:
        while len(out) < turns:
            session = service.get(sid)
            if session.completed:
                break
            if not expected:
                due = service.engine.next_wakeup(session)
                if due is None or waits >= MAX_TIMER_WAITS:
                    break
                waits += 1
                clock.advance_to(due)
                fired = [d for s, d in service.tick_all() if s == sid]
                if fired:
                    expected = fired[-1].expected_pilot
                continue
            state = service.registry.get(session.active.flow).states[session.active.state]
            readback = list(state.readback_required)
            text = spoken(expected[0], rng, shuffle=bool(readback))
            wrong = wrong_readback(expected[0], readback, session.variables, len(out)) if readback else None
            with_wrong = wrong is not None and rng.random() < wrong_share
            out.append(
                ScriptTurn(
                    seed=seed,
                    start_flow=start,
                    flow=session.active.flow,
                    state=session.active.state,
                    turn=len(out),
                    text=text,
                    readback=readback,
                    wrong=spoken(wrong.phrase, rng, True) if with_wrong and wrong else None,
                    wrong_field=wrong.field if with_wrong and wrong else None,
                )
            )
            clock.advance_to(clock() + 5.0)  # the pilot talks and the controller answers
            decision = service.transmit(sid, text)
            expected = decision.expected_pilot
    finally:
        service.delete(sid)
    return out


# --------------------------------------------------------------------------- the build


def build_corpus(
    out: Path,
    scenarios: int,
    *,
    turns: int = DEFAULT_TURNS,
    first_seed: int = 0,
    flow: str | None = None,
    wrong_share: float = WRONG_SHARE,
    settings: Settings | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Corpus:
    """Write the recordings of `scenarios` seeded scenarios (seeds `first_seed`...) to `out`
    with `manifest.jsonl`; WAVs whose manifest line is unchanged are kept, not synthesized
    again. `progress(done, total)` is called after each recording."""
    from gateway.service import RadioService
    from gateway.settings import Settings
    from tooling.chat import VirtualClock

    service = RadioService(settings or Settings(), clock=VirtualClock())
    script: list[ScriptTurn] = []
    for seed in range(first_seed, first_seed + scenarios):
        script.extend(script_scenario(service, seed, flow=flow, turns=turns, wrong_share=wrong_share))
    planned = [entry for turn in script for entry in _entries(turn)]
    out.mkdir(parents=True, exist_ok=True)
    previous = _previous(out)
    written: list[CorpusEntry] = []
    for done, entry in enumerate(planned, start=1):
        old = previous.get(entry.file)
        if (
            old is not None
            and old.text == entry.text
            and old.sound() == entry.sound()
            and old.voice == entry.voice  # recordings of an earlier pilot voice are made again
            and (out / entry.file).is_file()
        ):
            written.append(old)
        else:
            written.append(_record(out, entry))
        if progress is not None:
            progress(done, len(planned))
    tmp = out / f"{MANIFEST}.tmp"
    tmp.write_text("".join(e.as_line() + "\n" for e in written), encoding="utf-8")
    tmp.replace(out / MANIFEST)
    return Corpus(out, written)


def _entries(turn: ScriptTurn) -> list[CorpusEntry]:
    """The recordings of one turn: the correct phrase, and the wrong readback when it has one."""
    rng = random.Random(f"sound-{turn.seed}-{turn.turn}")
    base = dict(seed=turn.seed, start_flow=turn.start_flow, flow=turn.flow, state=turn.state, turn=turn.turn)
    out = [
        CorpusEntry(
            file=f"s{turn.seed:05d}-t{turn.turn:02d}.wav",
            text=turn.text,
            kind="correct",
            expected_readback="ok" if turn.readback else None,
            **base,
            **_sound(rng),
        )
    ]
    if turn.wrong is not None:
        out.append(
            CorpusEntry(
                file=f"s{turn.seed:05d}-t{turn.turn:02d}-wrong.wav",
                text=turn.wrong,
                kind="wrong",
                expected_readback="wrong",
                wrong_field=turn.wrong_field,
                **base,
                **_sound(rng),
            )
        )
    return out


def _sound(rng: random.Random) -> dict[str, Any]:
    from tooling.voicekit import pilot_voice_id

    return {
        "length_scale": round(rng.uniform(*SPEED_RANGE), 2),
        "radio_level": rng.choice(RADIO_LEVELS),
        "noise_dbfs": round(rng.uniform(*NOISE_DBFS_RANGE), 1),
        "voice": pilot_voice_id(),
    }


def _record(out: Path, entry: CorpusEntry) -> CorpusEntry:
    """Synthesize `entry` with the pilot voice and write its WAV; the entry with its duration."""
    from tooling.voicekit import pilot_pcm

    pcm = pilot_pcm(
        entry.text,
        SAMPLE_RATE,
        radio_level=entry.radio_level or 4,
        noise_dbfs=entry.noise_dbfs if entry.noise_dbfs is not None else -45.0,
        seed=(entry.seed or 0) * 1000 + (entry.turn or 0),
        length_scale=entry.length_scale or 1.0,
    )
    with wave.open(str(out / entry.file), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(SAMPLE_RATE)
        wav.writeframes(pcm)
    return CorpusEntry(**{**asdict(entry), "audio_s": round(len(pcm) / 2 / SAMPLE_RATE, 3)})


def _previous(out: Path) -> dict[str, CorpusEntry]:
    """The readable entries of an earlier build in `out`, by file (a bad line is just rebuilt)."""
    manifest = out / MANIFEST
    if not manifest.is_file():
        return {}
    entries: dict[str, CorpusEntry] = {}
    for line in manifest.read_text(encoding="utf-8").splitlines():
        try:
            entry = CorpusEntry.from_dict(json.loads(line))
        except (ValueError, TypeError, CorpusError):
            continue
        entries[entry.file] = entry
    return entries
