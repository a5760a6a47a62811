"""`livefreq bench readback`: how often the readback check accepts a wrong value or refuses a
correct readback, over every readback state of every flow.

Readbacks come from the independent pilot of `tooling.readback_pilot` (its own words, not the
engine's): N readbacks spread over all readback states, a share `wrong` of them with one value
changed (half) or dropped (half). Each goes to a fresh engine session standing at its state
(brought there by playing the flow with a seeded scenario) and its outcome is classified:

- accepted: the verdict is ok (all fields ok);
- wrong / missing: the verdict refuses it with a wrong (else missing) field;
- say again: a field `unsure`, or no verdict at all (the controller asked to say again, the
  transmission was not recognized).

Per field (the changed or dropped one for a bad readback, every required one for a correct
readback) the same classes give the confusion table. Headlines: wrong readbacks accepted (the
safety figure: should be 0) and correct readbacks refused.

`--mode text` types the readback. `--mode voice` (`tooling.bench.readback_voice`) speaks it
with voices the product never answers with (espeak-ng English voices and variants at 150-190
wpm; the product's controller is piper joe), through headset noise at a random SNR of 10-25 dB
and the VHF radio effect, resampled to 16 kHz, recognized by the gateway's own STT exactly as a
live transmission is (the stack's engine, `stt_context` of the session's state, the CPU pool),
then the transcript goes to the engine. The report adds the word error rate. `--bias off`
recognizes without the state's expected phrases and values; `--bias both` decodes every
recording both ways and counts wrong readbacks accepted under bias but not without: biasing
must never turn a wrong value into the right one.
"""

from __future__ import annotations

import inspect
import platform
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from engine.models import Decision, Session
from engine.registry import FlowRegistry
from engine.session import SessionEngine
from tooling.bench.common import interval95, interval_text
from tooling.readback_pilot.driver import StateDriver, last_atc_text, moved_forward, render_context
from tooling.readback_pilot.phrasing import Readback, carrier_of, phrase_readback, readback_states
from tooling.readback_pilot.words import kind_of

if TYPE_CHECKING:
    from gateway.settings import Settings
    from tooling.bench.common import Progress

SCENARIO_SEEDS = 12  # scenarios the readbacks are spread over (airports, callsigns, values)
EXAMPLES_PER_CLASS = 50
CORRECT_COLUMNS = ("accepted", "refused_wrong", "refused_missing", "say_again")
BAD_COLUMNS = ("caught_wrong", "caught_missing", "say_again", "ACCEPTED")


class ReadbackBenchError(RuntimeError):
    pass


@dataclass
class Case:
    index: int
    flow: str
    state: str
    seed: int  # scenario seed
    readback: Readback


class Bench:
    """The flows, an engine, and sessions at each readback state per scenario (copied per case)."""

    def __init__(self, registry: FlowRegistry, scenario: Callable[[int], dict[str, Any]]) -> None:
        self.registry = registry
        self.engine = SessionEngine(registry)
        self.driver = StateDriver(self.engine)
        self.scenario = scenario
        self.states = readback_states(registry)
        self.fields: tuple[str, ...] = ()  # `focus`
        self.corrections = 0.0  # share of readbacks with a pilot's own "correction" (`phrase_readback`)
        self._at: dict[tuple[str, str, int], tuple[Session, float]] = {}

    def at_state(self, flow: str, state: str, seed: int) -> tuple[Session, float]:
        key = (flow, state, seed)
        if key not in self._at:
            got = self.driver.reach(flow, state, self.scenario(seed), session_id=f"bench-{seed}")
            self._at[key] = (got.session, got.now)
        session, now = self._at[key]
        return session.model_copy(deep=True), now

    def focus(self, fields: tuple[str, ...]) -> None:
        """Only the states whose readback holds one of `fields` (variable names: "sid",
        "destination"), and a bad readback changes or drops one of them; a SID its fix name."""
        states = [(f, s) for f, s in self.states if set(fields) & set(self.registry.get(f).states[s].readback_required)]
        if not states:
            raise ReadbackBenchError(f"no readback state holds any of {', '.join(fields)}")
        self.states, self.fields = states, fields

    def draws(self, n: int, seed: int, wrong: float) -> list[tuple[str, str, int, str]]:
        """(flow, state, scenario seed, mode) of each of `n` readbacks: every readback state round
        robin, shuffled, `wrong` of them bad (half changed, half dropped). What `cases` phrases,
        and what `readback_replay` finds a recorded transmission's session by."""
        rng = random.Random(f"bench-readback:{seed}")
        order = [self.states[i % len(self.states)] for i in range(n)]
        rng.shuffle(order)
        out: list[tuple[str, str, int, str]] = []
        for flow, state in order:
            scen = rng.randrange(SCENARIO_SEEDS)
            r = rng.random()
            out.append((flow, state, scen, "correct" if r >= wrong else ("wrong" if r < wrong / 2 else "drop")))
        return out

    def cases(self, n: int, seed: int, wrong: float, forms: str = "all") -> list[Case]:
        """`n` readbacks over every readback state (`draws`), each phrased by the independent pilot."""
        out: list[Case] = []
        for i, (flow, state, scen, mode) in enumerate(self.draws(n, seed, wrong)):
            session, _ = self.at_state(flow, state, scen)
            required = self.registry.get(flow).states[state].readback_required
            phrase_rng = random.Random(f"{seed}:{i}")
            focus = [f for f in required if f in self.fields]
            said = phrase_readback(
                phrase_rng, required, render_context(self.engine, session), mode=mode,
                field=phrase_rng.choice(focus) if focus and mode != "correct" else None,
                carrier=carrier_of(self.registry, flow, state), forms=forms, fix_names=bool(focus),
                heard=last_atc_text(session), corrections=self.corrections,
            )
            out.append(Case(i, flow, state, scen, said))
        return out

    def decide(self, case: Case, text: str, hearing: Any = None) -> tuple[Decision, Session, bool]:
        session, now = self.at_state(case.flow, case.state, case.seed)
        kwargs = {"hearing": hearing} if hearing is not None and "hearing" in inspect.signature(self.engine.transmit).parameters else {}
        decision = self.engine.transmit(session, text, now + 5.0, **kwargs)
        return decision, session, moved_forward(decision, case.flow, case.state, session)


def default_bench(settings: Settings | None = None) -> Bench:
    """The repository's flows (or the settings' flows_dir) and scenarios resolved from the
    airport data with seeds 0..SCENARIO_SEEDS-1."""
    from engine.loader import load_registry
    from engine.scenario import resolve_airports, resolve_scenario
    from gateway.airports.repository import default_repository
    from gateway.flows_source import DirectoryFlowSource
    from gateway.settings import Settings

    settings = settings or Settings()
    registry = load_registry(DirectoryFlowSource(settings.flows_dir))
    repo = default_repository()
    cache: dict[int, dict[str, Any]] = {}

    def scenario(seed: int) -> dict[str, Any]:
        if seed not in cache:
            dep, dest = resolve_airports({}, seed)
            cache[seed] = resolve_scenario({}, airport=repo.get(dep), destination=repo.get(dest), seed=seed)
        return cache[seed]

    return Bench(registry, scenario)


# --------------------------------------------------------------------------- classification


def not_understood(decision: Decision) -> bool:
    """Whether the transmission was not understood as a readback at all (asked again whole)."""
    return decision.readback is None or not decision.recognized or decision.intent == "say_again"


def verdict(decision: Decision) -> str:
    """accepted | wrong | missing | say_again for one transmission."""
    rb = decision.readback
    if rb is None or not_understood(decision):
        return "say_again"
    if rb.ok:
        return "accepted"
    if any(v == "wrong" for v in rb.fields.values()):
        return "wrong"  # the controller corrects a wrong value even when another was heard unsure
    if any(v == "unsure" for v in rb.fields.values()):
        return "say_again"
    return "missing"


def field_class(case: Case, decision: Decision, name: str) -> str:
    """The column of one field's outcome (CORRECT_COLUMNS for correct readbacks, else BAD_COLUMNS)."""
    rb = decision.readback
    status = rb.fields.get(name) if rb is not None and decision.recognized and decision.intent != "say_again" else None
    if case.readback.mode == "correct":
        return {"ok": "accepted", "wrong": "refused_wrong", "missing": "refused_missing"}.get(status or "", "say_again")
    return {"wrong": "caught_wrong", "missing": "caught_missing", "ok": "ACCEPTED"}.get(status or "", "say_again")


class Tally:
    """Counters of one run (one recognition setting in voice mode)."""

    def __init__(self) -> None:
        self.outcomes: dict[str, Counter[str]] = {m: Counter() for m in ("correct", "wrong", "drop")}
        self.by_kind: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: {m: Counter() for m in ("correct", "wrong", "drop")})
        self.by_variable: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: {m: Counter() for m in ("correct", "wrong", "drop")})
        self.examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.failures: Counter[str] = Counter()
        self.wrong_accepted = 0
        self.wrong_kept = 0  # changed or dropped value kept as read back right (a readback in parts)
        self.correct_refused = 0  # refused outright: corrected (wrong/missing), not asked again
        self.correct_said_again = 0  # the controller asked to say again
        self.forward_on_bad = 0
        self.n = 0
        # voice: transmissions whose unsure values were checked in the audio, and confirmed (per mode)
        self.value_checks: dict[str, Counter[str]] = {m: Counter() for m in ("correct", "wrong", "drop")}

    def add(
        self, case: Case, decision: Decision, forward: bool, heard: str | None = None, extra: dict[str, Any] | None = None,
        kept: Mapping[str, Any] | None = None,
    ) -> None:
        """Count one transmission; `kept`: the values the session keeps as read back right at the
        state after it (`Session.readback_heard`): a changed or dropped one there would complete a
        readback in parts, so it counts as `wrong_kept`, however this transmission was answered."""
        self.n += 1
        mode = case.readback.mode
        v = verdict(decision)
        self.outcomes[mode][v] += 1
        checked = [c for step in decision.trace.steps if step.step == "readback" for c in step.data.get("checks", [])]
        if checked:
            self.value_checks[mode]["checked"] += 1
            self.value_checks[mode]["confirmed"] += int(any(c["confirmed"] for c in checked))
        names = list(case.readback.expected) if mode == "correct" else [case.readback.field]
        cols = []
        for name in names:
            assert name is not None
            col = field_class(case, decision, name)
            cols.append(col)
            self.by_kind[kind_of(name)][mode][col] += 1
            self.by_variable[name][mode][col] += 1
        problem = None
        if mode == "correct" and v == "say_again":
            self.correct_said_again += 1
            problem = "correct_said_again"
        elif mode == "correct" and v != "accepted":
            self.correct_refused += 1
            problem = "correct_refused"
        elif mode != "correct" and (v == "accepted" or forward):
            self.wrong_accepted += 1
            self.forward_on_bad += int(forward)
            problem = "wrong_accepted"
        elif mode != "correct" and case.readback.field in (kept or {}):
            self.wrong_kept += 1
            problem = "wrong_kept"
        elif mode != "correct" and cols[0] != ("caught_wrong" if mode == "wrong" else "caught_missing"):
            problem = "misdiagnosed"
        if problem:
            self.failures[problem] += 1
            if len(self.examples[problem]) < EXAMPLES_PER_CLASS:
                rb = decision.readback
                self.examples[problem].append(
                    {
                        "index": case.index, "flow": case.flow, "state": case.state, "scenario_seed": case.seed,
                        "mode": mode, "field": case.readback.field, "transcript": case.readback.text,
                        **({"heard": heard} if heard is not None else {}),
                        "expected": case.readback.expected, "fields": dict(rb.fields) if rb else None,
                        "verdict": v, "moved_on": forward, "controller": [m.text for m in decision.messages],
                        **(extra or {}),
                    }
                )

    def result(self) -> dict[str, Any]:
        def plain(table: dict[str, dict[str, Counter[str]]]) -> dict[str, Any]:
            return {k: {m: dict(c) for m, c in v.items()} for k, v in sorted(table.items())}

        correct = sum(self.outcomes["correct"].values())
        bad = sum(self.outcomes["wrong"].values()) + sum(self.outcomes["drop"].values())
        return {
            "n": self.n,
            "correct": correct,
            "bad": bad,
            "changed": sum(self.outcomes["wrong"].values()),
            "dropped": sum(self.outcomes["drop"].values()),
            "outcomes": {m: dict(c) for m, c in self.outcomes.items()},
            "wrong_accepted": self.wrong_accepted,
            "wrong_moved_on": self.forward_on_bad,
            "wrong_kept": self.wrong_kept,
            "correct_refused": self.correct_refused,
            "correct_said_again": self.correct_said_again,
            "wrong_accepted_rate": round(self.wrong_accepted / bad, 4) if bad else None,
            "correct_refused_rate": round(self.correct_refused / correct, 4) if correct else None,
            "correct_said_again_rate": round(self.correct_said_again / correct, 4) if correct else None,
            "wrong_accepted_ci95": interval95(self.wrong_accepted, bad),
            "correct_refused_ci95": interval95(self.correct_refused, correct),
            "correct_said_again_ci95": interval95(self.correct_said_again, correct),
            "failures": dict(self.failures),
            "value_checks": {m: dict(c) for m, c in self.value_checks.items()},
            "by_kind": plain(self.by_kind),
            "by_variable": plain(self.by_variable),
            "examples": {k: v for k, v in self.examples.items()},
        }


def confusion_rows(result: dict[str, Any], key: str = "by_kind") -> list[tuple[str, ...]]:
    """Rows of the table: field kind, then correct readbacks (n, accepted, refused wrong/missing,
    say again), changed values and dropped values (n, caught wrong/missing, say again, ACCEPTED)."""
    rows = []
    for name, modes in result[key].items():
        c, w, d = modes.get("correct", {}), modes.get("wrong", {}), modes.get("drop", {})
        rows.append(
            (
                name,
                str(sum(c.values())), *(str(c.get(col, 0)) for col in CORRECT_COLUMNS),
                str(sum(w.values())), *(str(w.get(col, 0)) for col in BAD_COLUMNS),
                str(sum(d.values())), *(str(d.get(col, 0)) for col in BAD_COLUMNS),
            )
        )
    return rows


CONFUSION_HEAD = (
    "field", "correct", "accepted", "ref-wrong", "ref-missing", "say-again",
    "changed", "caught-wrong", "caught-missing", "say-again", "ACCEPTED",
    "dropped", "caught-wrong", "caught-missing", "say-again", "ACCEPTED",
)

def report_head(mode: str, n: int, seed: int, wrong: float, bench: Bench, started: float) -> dict[str, Any]:
    return {
        "benchmark": "readback",
        "mode": mode,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "n": n,
        "seed": seed,
        "wrong_share": wrong,
        "states": [f"{f}:{s}" for f, s in bench.states],
        "fields": list(bench.fields),
        **({"corrections": bench.corrections} if bench.corrections else {}),
        "scenario_seeds": SCENARIO_SEEDS,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "elapsed_s": round(time.monotonic() - started, 2),
    }


# --------------------------------------------------------------------------- text


def run_text_bench(bench: Bench, n: int, seed: int, wrong: float, progress: Progress) -> dict[str, Any]:
    started = time.monotonic()
    cases = bench.cases(n, seed, wrong)
    tally = Tally()
    for done, case in enumerate(cases, start=1):
        decision, session, forward = bench.decide(case, case.readback.text)
        tally.add(case, decision, forward, kept=session.readback_heard)
        progress.update(done, f"wrong accepted {tally.wrong_accepted}, correct refused {tally.correct_refused}, said again {tally.correct_said_again}")
    progress.done()
    report = report_head("text", n, seed, wrong, bench, started)
    report.update(tally.result())
    return report


# --------------------------------------------------------------------------- voice


def _within(report: dict[str, Any], key: str) -> str:
    """"; 95 % interval 2.2-7.9%" for a share the report holds the interval of."""
    ci = report.get(f"{key}_ci95")
    return f"; 95% interval {interval_text(ci)}" if ci else ""


def headline(report: dict[str, Any]) -> list[str]:
    lines = [
        f"wrong readbacks accepted: {report['wrong_accepted']} of {report['bad']}"
        f" ({100 * (report['wrong_accepted_rate'] or 0):.2f}%{_within(report, 'wrong_accepted')}; should be 0)",
        f"wrong values kept as read back right, for a readback in parts: {report.get('wrong_kept', 0)} (should be 0)",
        f"correct readbacks refused (corrected, not asked again): {report['correct_refused']} of {report['correct']}"
        f" ({100 * (report['correct_refused_rate'] or 0):.2f}%{_within(report, 'correct_refused')})",
        f"correct readbacks asked again (say again): {report.get('correct_said_again', 0)} of {report['correct']}"
        f" ({100 * (report.get('correct_said_again_rate') or 0):.2f}%{_within(report, 'correct_said_again')})",
    ]
    if report.get("wer") is not None:
        lines.append(f"word error rate: {100 * report['wer']:.1f}% over {report['words']} words")
    checks = report.get("value_checks") or {}
    if any(c.get("checked") for c in checks.values()):
        lines.append(
            "values checked in the audio (gateway/speech/checking.py): confirmed on "
            + ", ".join(f"{c.get('confirmed', 0)} of {c.get('checked', 0)} {m} readbacks" for m, c in checks.items())
        )
    again = report.get("again")
    if again:
        lines.append(
            f"answers to \"say again\" (the items asked, same voice): right readbacks accepted {again['correct_accepted']} "
            f"of {again['correct_answered']}; right readbacks accepted within one \"say again\": "
            f"{again['correct_accepted_within_one']} of {report['correct']} "
            f"({100 * (again['correct_accepted_within_one_rate'] or 0):.2f}%); "
            f"wrong readbacks accepted in the answer: {again['wrong_accepted']} of {again['wrong_answered']} (should be 0)"
        )
    if "wrong_accepted_with_bias" in report:
        lines.append(
            f"wrong readbacks accepted with the expected-readback bias: {report['wrong_accepted_with_bias']}, "
            f"without: {report['wrong_accepted_without_bias']}; accepted only because of the bias: {len(report['accepted_only_with_bias'])}"
        )
    return lines


def tables(report: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(title, result) per recognition setting."""
    if report["mode"] == "text":
        return [("text", report)]
    return [(f"voice, bias {b}", report[f"bias_{b}"]) for b in ("on", "off") if f"bias_{b}" in report]

