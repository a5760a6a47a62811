"""`livefreq bench router`: how many transmissions the deterministic router decides alone, and how
many free-form paraphrases each path resolves.

Two measurements (README "The LLM router"):

- **Textbook phraseology**: every pilot transmission of the curriculum's scripts
  (tests/flows/scripts, played by `tooling.flow_scripts`) and of the scripted pilot (`livefreq
  fly`, spoken radio-style with shuffled readbacks, with and without one wrong value per
  readback, over HTTP against an in-process gateway). A transmission is decided without an LLM
  when the deterministic router is neither ambiguous nor below threshold (the engine would not
  consult one). Target: at least 95 %.
- **Paraphrases** (tests/flows/paraphrases.yaml): what trainees say instead, each with the route
  it should take. Each is decided as `POST /api/llm/decide` decides it (`RadioService.evaluate`
  on a throwaway session at its state), first by the deterministic router alone, then, when an
  LLM is configured, with the LLM router asked where the deterministic one cannot decide. A
  reference router that always answers the first offered candidate goes the same path (no
  model): most questions offer one candidate besides "none", so a model's figure means something
  only beside that one.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.models import Decision
from engine.router_llm import USED_OUTCOMES, LlmExchange, RouterQuery, offered
from gateway.llm import RouterProvider
from gateway.service import Evaluation, RadioService
from gateway.settings import REPO_ROOT, Settings
from tooling.bench.common import percentile
from tooling.flow_scripts import SCRIPT_SCENARIO, SCRIPTS_DIR, load_scripts, run_script

PARAPHRASES = REPO_ROOT / "tests" / "flows" / "paraphrases.yaml"
TARGET_SHARE = 0.95
NONE = "none"


class RouterBenchError(Exception):
    """The corpus could not be played (a script failed, a file is malformed)."""


@dataclass
class Tally:
    """Routed transmissions of one corpus and how many needed more than the deterministic router."""

    corpus: str
    transmissions: int = 0  # pilot transmissions sent
    routed: int = 0  # reached the router (not a "say again" or a completed session)
    consults: Counter[str] = field(default_factory=Counter)  # ambiguous / below_threshold
    examples: list[dict[str, str]] = field(default_factory=list)  # the consulted ones

    def add(self, text: str, router: dict[str, Any] | None, where: str) -> None:
        self.transmissions += 1
        if router is None:
            return
        self.routed += 1
        reason = router.get("consult")
        if reason:
            self.consults[reason] += 1
            self.examples.append({"at": where, "text": text, "reason": reason, "router": str(router.get("reason"))})

    @property
    def without_llm(self) -> int:
        return self.transmissions - sum(self.consults.values())

    def result(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "transmissions": self.transmissions,
            "routed": self.routed,
            "decided_without_llm": self.without_llm,
            "ambiguous": self.consults["ambiguous"],
            "below_threshold": self.consults["below_threshold"],
            "share_without_llm": round(self.without_llm / self.transmissions, 4) if self.transmissions else None,
            "consulted": self.examples,
        }


# --------------------------------------------------------------------------- textbook corpus


def script_corpus(service: RadioService, scripts_dir: Path = SCRIPTS_DIR) -> Tally:
    """Every `say` step of every script, replayed on the engine (the scripts' own checks pass)."""
    tally = Tally(f"flow scripts ({_rel(scripts_dir)})")
    for name, script in load_scripts(scripts_dir):

        def observe(text: str, decision: Decision, name: str = name) -> None:
            tally.add(text, decision.trace.router, f"{name} @ {decision.from_flow}:{decision.from_state}")

        try:
            run_script(service.registry, script, dict(SCRIPT_SCENARIO), observe=observe)
        except AssertionError as exc:
            raise RouterBenchError(f"script {name} failed: {exc}") from None
    return tally


def pilot_corpus(settings: Settings, seeds: int, echo: Callable[[str], None] | None = None) -> Tally:
    """The scripted pilot (`livefreq fly`), gate to gate, `seeds` scenarios, each flown with
    correct readbacks and again with one wrong value per readback, over HTTP to an in-process
    gateway (memory store, no speech models) whose clock skips the controller's waits but never
    lets a timer overtake the pilot's answer (tooling/bench/pilot_clock.py): the same flight,
    and the same figures, on every run."""
    from gateway.app import create_app
    from tooling.bench.common import BackgroundServer
    from tooling.bench.pilot_clock import PilotPacedService
    from tooling.fly import FlightError, HttpPilot

    tally = Tally(f"scripted pilot (livefreq fly), {seeds} seed(s), with and without wrong readbacks")
    app_settings = settings.model_copy(update={"store": "memory", "speech_preload": False, "llm_url": None})

    def on_reply(text: str, reply: dict[str, Any]) -> None:
        decision = reply.get("decision") or {}
        tally.add(text, (reply.get("trace") or {}).get("router"), f"{decision.get('from_flow')}:{decision.get('from_state')}")

    with BackgroundServer(create_app(app_settings, service=PilotPacedService(app_settings))) as server:
        for seed in range(seeds):
            for wrong in (False, True):
                pilot = HttpPilot(server.url, seed=seed, wrong_readbacks=wrong, poll_s=0.05, on_reply=on_reply)
                try:
                    report = pilot.fly()
                except FlightError as exc:
                    raise RouterBenchError(f"the scripted pilot failed (seed {seed}): {exc}") from None
                finally:
                    pilot.close()
                if not report.completed:
                    raise RouterBenchError(f"the scripted pilot did not complete its trip (seed {seed})")
                if echo is not None:
                    echo(f"pilot seed {seed}{' wrong readbacks' if wrong else ''}: {report.transmissions} transmissions")
    return tally


# --------------------------------------------------------------------------- paraphrases


@dataclass(frozen=True)
class Paraphrase:
    flow: str
    state: str
    say: str
    expect: str  # a candidate id, or "none"


def load_paraphrases(path: Path = PARAPHRASES) -> list[Paraphrase]:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        return [Paraphrase(str(p["flow"]), str(p["state"]), str(p["say"]), str(p["expect"])) for p in doc["paraphrases"]]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise RouterBenchError(f"cannot read paraphrases from {path}: {exc!r}") from None


def outcome_of(ev: Evaluation) -> dict[str, Any]:
    """What one evaluation chose ("none": not understood), who decided and the LLM's part."""
    router = ev.decision.trace.router or {}
    llm = router.get("llm") or None
    return {
        "chose": ev.chosen.id if ev.chosen is not None else NONE,
        "router": router.get("name"),
        "consult": router.get("consult"),
        "reason": router.get("reason"),
        "llm_outcome": llm.get("outcome") if llm else None,
        "llm_detail": llm.get("detail") if llm else None,  # the verdict: what the model said, or why unusable
        "llm_structured": llm.get("structured") if llm else None,  # the response_format the answer came under
        "llm_latency_ms": llm.get("latency_ms") if llm else None,
        "llm_tokens": (llm.get("tokens") or {}).get("total") if llm else None,
        "fallback": (router.get("fallback") or {}).get("reason"),
        "offered": len(offered(ev.candidates)),  # the candidates a model is shown, besides "none"
    }


class FirstCandidate:
    """The reference router: always the first offered candidate (the flow's first declared route
    that survived guards, triggers and the readback check), never "none". No model, no I/O: the
    figure an LLM must beat on this set to be worth asking."""

    def describe(self) -> dict[str, Any]:
        return {"url": None, "model": "first offered candidate (reference)", "structured_output": False, "response_format": "off"}

    async def ask(self, query: RouterQuery) -> LlmExchange:
        answer = json.dumps({"candidate": query.ids()[0]})
        return LlmExchange(provider="reference", model="first-candidate", content=answer)

    async def aclose(self) -> None:
        return None


async def run_paraphrases(
    service: RadioService, items: list[Paraphrase], provider: RouterProvider | None
) -> list[dict[str, Any]]:
    """Each paraphrase decided by the deterministic router alone, by the reference router
    (`FirstCandidate`) and, with an LLM, through the LLM path."""
    rows: list[dict[str, Any]] = []
    reference = FirstCandidate()
    for item in items:
        service.llm = None
        det = outcome_of(await _evaluate(service, item))
        row: dict[str, Any] = {**item.__dict__, "deterministic": det, "llm_path": None}
        # resolved by the deterministic router: it decided alone, and rightly
        row["deterministic_correct"] = det["consult"] is None and det["chose"] == item.expect
        row["first_candidate_correct"] = (await _routed(service, item, reference))["chose"] == item.expect
        if provider is not None:
            path = await _routed(service, item, provider)
            row["llm_path"] = path
            row["llm_path_correct"] = path["chose"] == item.expect
        rows.append(row)
    return rows


async def _routed(service: RadioService, item: Paraphrase, provider: RouterProvider) -> dict[str, Any]:
    service.llm = provider
    try:
        return outcome_of(await _evaluate(service, item))
    finally:
        service.llm = None


async def _evaluate(service: RadioService, item: Paraphrase) -> Evaluation:
    return await service.evaluate(flow=item.flow, state=item.state, text=item.say, variables=dict(SCRIPT_SCENARIO))


def paraphrase_summary(rows: list[dict[str, Any]], llm: dict[str, Any] | None) -> dict[str, Any]:
    det_alone = [r for r in rows if r["deterministic"]["consult"] is None]
    left = [r for r in rows if r["deterministic"]["consult"] is not None]
    summary: dict[str, Any] = {
        "paraphrases": len(rows),
        "deterministic_decided": len(det_alone),
        "deterministic_correct": sum(r["deterministic_correct"] for r in rows),
        "deterministic_wrong": sum(1 for r in det_alone if not r["deterministic_correct"]),
        "left_to_llm": len(left),
        "left_to_llm_ambiguous": sum(1 for r in left if r["deterministic"]["consult"] == "ambiguous"),
        "left_to_llm_below_threshold": sum(1 for r in left if r["deterministic"]["consult"] == "below_threshold"),
        # with no LLM the engine still answers those: declaration order on a near tie, else "say again"
        "deterministic_only_correct": sum(r["deterministic"]["chose"] == r["expect"] for r in rows),
        # how hard the questions left to the LLM are: how many candidates each offers besides "none",
        # and how many of them "none" answers
        "left_to_llm_offered": dict(sorted(Counter(r["deterministic"]["offered"] for r in left).items())),
        "left_to_llm_expect_none": sum(1 for r in left if r["expect"] == NONE),
        "first_candidate_resolved_correctly": sum(1 for r in left if r["first_candidate_correct"]),
        "llm": llm,
    }
    if llm is not None:
        paths = [r["llm_path"] for r in left if r["llm_path"]]
        # resolved by the LLM path: right in the end, whoever answered (the model or the fallback)
        summary["llm_resolved_correctly"] = sum(1 for r in left if r.get("llm_path_correct"))
        # of which the model's own answer (an offered id or "none"), not a fallback that happened to fit
        answered = [r for r in left if r["llm_path"] and r["llm_path"]["llm_outcome"] in USED_OUTCOMES]
        summary["llm_answered"] = len(answered)
        summary["llm_answered_correctly"] = sum(1 for r in answered if r.get("llm_path_correct"))
        summary["llm_fallbacks"] = sum(1 for p in paths if p["fallback"] is not None)
        summary["llm_path_correct"] = sum(1 for r in rows if r.get("llm_path_correct"))
        summary["llm_outcomes"] = dict(Counter(p["llm_outcome"] for p in paths))
        latencies = sorted(p["llm_latency_ms"] for p in paths if p["llm_latency_ms"] is not None)
        summary["llm_latency_ms_p50"] = percentile(latencies, 50) if latencies else None
        summary["llm_latency_ms_p95"] = percentile(latencies, 95) if latencies else None
        summary["llm_tokens"] = sum(p["llm_tokens"] or 0 for p in paths)
        summary["llm_tokens_per_call"] = round(summary["llm_tokens"] / len(paths)) if paths else None
    return summary


# --------------------------------------------------------------------------- the whole benchmark


def run_router_bench(
    settings: Settings, *, seeds: int = 3, provider: RouterProvider | None = None, echo: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Both measurements; the JSON report (`provider`: the LLM to measure, None for none)."""
    started = time.perf_counter()
    service = RadioService(settings.model_copy(update={"store": "memory", "llm_url": None}))
    tallies = [script_corpus(service), pilot_corpus(settings, seeds, echo)]
    total = Tally("all textbook transmissions")
    for t in tallies:
        total.transmissions += t.transmissions
        total.routed += t.routed
        total.consults.update(t.consults)
    items = load_paraphrases()

    async def paraphrases() -> list[dict[str, Any]]:
        try:
            return await run_paraphrases(service, items, provider)
        finally:
            if provider is not None:
                await provider.aclose()

    rows = asyncio.run(paraphrases())
    llm = provider.describe() if provider is not None else None
    share = total.without_llm / total.transmissions if total.transmissions else 0.0
    return {
        "benchmark": "router",
        "target_share_without_llm": TARGET_SHARE,
        "share_without_llm": round(share, 4),
        "meets_target": share >= TARGET_SHARE,
        "corpora": [t.result() for t in [*tallies, total]],
        "paraphrase_file": _rel(PARAPHRASES),
        "paraphrase_summary": paraphrase_summary(rows, llm),
        "paraphrases": rows,
        "seconds": round(time.perf_counter() - started, 2),
    }


def format_tables(report: dict[str, Any]) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """Rows of the corpus table and of the paraphrase table, for the CLI's printer."""
    corpus = [
        (
            c["corpus"],
            str(c["transmissions"]),
            str(c["decided_without_llm"]),
            str(c["ambiguous"]),
            str(c["below_threshold"]),
            f"{100 * (c['share_without_llm'] or 0):.1f}%",
        )
        for c in report["corpora"]
    ]
    paraphrases = []
    for r in report["paraphrases"]:
        det = r["deterministic"]
        det_text = f"{det['chose']}{'' if det['consult'] is None else ' (' + det['consult'] + ')'}"
        path = r["llm_path"]
        llm_text = "-" if path is None or det["consult"] is None else f"{path['chose']} ({path['llm_outcome'] or path['fallback']})"
        ok = r.get("llm_path_correct") if path is not None else det["chose"] == r["expect"]
        paraphrases.append((f"{r['flow']}:{r['state']}", r["expect"], det_text, llm_text, "yes" if ok else "NO"))
    return corpus, paraphrases


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)
