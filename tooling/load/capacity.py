"""`livefreq load --find-capacity` and `--offer-factor`: a node's capacity, found and then held.

Why two modes: the gateway refuses voice sessions past the capacity it knows (gateway/capacity.py,
`/health` `voice`), and that capacity is only as good as the measurement behind it.

- ``--find-capacity`` steps the session count up (`tooling.load.run.capacity_steps`), each step on
  a fresh gateway with admission off, and stops at the first step past capacity: p95 of PTT
  release -> first controller audio over `CAPACITY_P95_MS` (1 s), or any audio gap (controller
  audio arriving slower than real time). The capacity is the largest step within both; written
  to ``capacity.json`` with ``capacity.png`` (p95 and gaps per step).
- ``--offer-factor F`` reads the node's capacity from `/health` and offers F times as many pilots
  at once: the admitted ones must keep p95 within 1 s with no gap and every transmission
  answered, the others must be refused at once with `too_many_sessions`.
"""

from __future__ import annotations

import asyncio
import math
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tooling.bench.common import BenchError
from tooling.load.report import CAPACITY_P95_MS

__all__ = [
    "REFUSAL_AT_ONCE_MS",
    "capacity_lines",
    "capacity_plot",
    "capacity_summary",
    "offer_line",
    "offer_verdict",
    "offered_sessions",
    "wait_capacity",
]

REFUSAL_AT_ONCE_MS = 1000.0  # a refusal slower than this (connect + session.start) is not "at once"
CAPACITY_WAIT_S = 120.0  # the gateway's self-test runs after its models load: seconds at most


def capacity_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The steps of a `--find-capacity` run and the capacity they show."""
    steps = [
        {
            "sessions": r["config"]["sessions"],
            "p95_ms": r["latency_ms"]["ptt_up_to_first_audio"]["p95"],
            "p50_ms": r["latency_ms"]["ptt_up_to_first_audio"]["p50"],
            "replies": r["replies"],
            "audio_gaps": r["audio"]["gaps"],
            "gap_ms_max": r["audio"]["gap_ms_max"],
            "errors": r["errors"]["total"],
            "lost_or_out_of_order": r["messages"]["total_faults"],
            "cpu_cores_used": r["server"].get("cpu_cores_used"),
            "load_average": r["load_average"],
            "other_cpu_cores": r.get("other_cpu_cores"),
            "over_capacity": r["targets"]["over_capacity"],
        }
        for r in results
    ]
    under = [s for s in steps if not s["over_capacity"]]
    over = next((s for s in steps if s["over_capacity"]), None)
    return {
        "benchmark": "load-capacity",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "criterion": {"p95_ms_max": CAPACITY_P95_MS, "audio_gaps": 0, "metric": "PTT release -> first controller audio byte"},
        "steps": steps,
        "capacity_sessions": under[-1]["sessions"] if under else 0,
        "first_over_sessions": over["sessions"] if over else None,
    }


def capacity_lines(summary: dict[str, Any]) -> list[str]:
    """What the terminal shows: each step, then the capacity."""
    lines = [
        f"  {s['sessions']:>4} sessions: p95 {_ms(s['p95_ms'])}, {s['audio_gaps']} audio gaps, {s['errors']} errors"
        + ("  <- past capacity" if s["over_capacity"] else "")
        for s in summary["steps"]
    ]
    limit = f"p95 <= {CAPACITY_P95_MS:.0f} ms and no audio gap"
    over = next((s for s in summary["steps"] if s["over_capacity"]), None)
    if over is None:
        lines.append(f"capacity: at least {summary['capacity_sessions']} sessions ({limit} up to the largest step tried; raise --max-sessions)")
    elif not summary["capacity_sessions"]:
        lines.append(f"capacity: below {over['sessions']} sessions (p95 {_ms(over['p95_ms'])}, {over['audio_gaps']} gaps there); start lower with --sessions")
    else:
        lines.append(
            f"capacity: {summary['capacity_sessions']} sessions ({limit}); at {over['sessions']} sessions "
            f"p95 was {_ms(over['p95_ms'])} with {over['audio_gaps']} audio gaps"
        )
    return lines


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def capacity_plot(summary: dict[str, Any], path: Path) -> Path:
    """p95 per step against the 1 s limit, audio gaps per step as bars, the capacity marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = summary["steps"]
    sessions = [s["sessions"] for s in steps]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    try:
        gaps_ax = ax.twinx()
        width = max(1.0, 0.4 * min((b - a for a, b in zip(sessions, sessions[1:], strict=False)), default=5))
        gaps_ax.bar(sessions, [s["audio_gaps"] for s in steps], width=width, color="#f58518", alpha=0.35, label="audio gaps")
        gaps_ax.set_ylabel("audio gaps (controller audio slower than real time)")
        gaps_ax.set_ylim(0, max([1, *(s["audio_gaps"] for s in steps)]) * 1.1)  # no gaps: a 0-1 axis, not -0.04..0.04
        ax.plot(sessions, [s["p95_ms"] for s in steps], marker="o", color="#4c78a8", label="p95")
        ax.plot(sessions, [s["p50_ms"] for s in steps], marker=".", linestyle=":", color="#4c78a8", label="p50")
        ax.axhline(CAPACITY_P95_MS, color="#e45756", linestyle="--", label=f"limit {CAPACITY_P95_MS:.0f} ms")
        if summary["capacity_sessions"]:
            ax.axvline(summary["capacity_sessions"], color="#54a24b", label=f"capacity {summary['capacity_sessions']} sessions")
        ax.set_zorder(gaps_ax.get_zorder() + 1)
        ax.patch.set_visible(False)
        ax.set_xlabel("concurrent pilots")
        ax.set_ylabel("PTT release -> first controller audio (ms)")
        ax.set_title("livefreq load --find-capacity: p95 <= 1 s and no audio gap", fontsize=10)
        handles = ax.get_legend_handles_labels()
        extra = gaps_ax.get_legend_handles_labels()
        ax.legend(handles[0] + extra[0], handles[1] + extra[1], loc="upper left", fontsize=8)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path


def offered_sessions(capacity: int, factor: float) -> int:
    """Pilots to offer: `factor` times the capacity, rounded up (at least one more than it)."""
    if factor <= 1.0:
        raise BenchError("--offer-factor must be above 1 (it offers more sessions than the node's capacity)")
    return max(capacity + 1, math.ceil(factor * capacity))


def offer_verdict(report: dict[str, Any], capacity: int, factor: float) -> dict[str, Any]:
    """Did the node hold its capacity? The admitted kept their latency, the rest were refused at once."""
    adm = report["admission"]
    p95 = report["latency_ms"]["ptt_up_to_first_audio"]["p95"]
    refusal_p95 = adm["refusal_ms"]["p95"]
    refused_codes = set(adm["refused_by_code"])
    checks = {
        "admitted_within_capacity": adm["admitted"] <= capacity,
        "all_others_refused": adm["admitted"] + adm["refused"] == adm["offered"],
        "refused_with_too_many_sessions": refused_codes <= {"too_many_sessions"},
        "refused_at_once": adm["refused"] == 0 or (refusal_p95 is not None and adm["refusal_ms"]["max"] <= REFUSAL_AT_ONCE_MS),
        "refusals_carry_retry_after": adm["refused"] == 0 or bool(adm["retry_after_s"]),
        "admitted_p95_ok": p95 is not None and p95 <= CAPACITY_P95_MS,
        "admitted_no_audio_gaps": report["audio"]["gaps"] == 0,
        "nothing_lost": adm["unanswered"] == 0 and adm["admitted_failures"] == 0 and report["messages"]["total_faults"] == 0,
    }
    return {"capacity": capacity, "factor": factor, "checks": checks, "held": all(checks.values())}


def offer_line(verdict: dict[str, Any], report: dict[str, Any]) -> str:
    adm = report["admission"]
    p95 = report["latency_ms"]["ptt_up_to_first_audio"]["p95"]
    failed = [name for name, ok in verdict["checks"].items() if not ok]
    return (
        f"offered {adm['offered']} pilots to a node of capacity {verdict['capacity']} ({verdict['factor']:g}x): "
        f"{adm['admitted']} admitted (p95 {_ms(p95)}, {report['audio']['gaps']} audio gaps, {adm['unanswered']} unanswered), "
        f"{adm['refused']} refused ({', '.join(f'{k} {n}' for k, n in adm['refused_by_code'].items()) or 'none'}; "
        f"slowest refusal {_ms(adm['refusal_ms']['max'])}); "
        + ("held" if verdict["held"] else f"NOT held: {', '.join(failed)}")
    )


def wait_capacity(base_url: str, token: str | None = None, timeout_s: float = CAPACITY_WAIT_S) -> dict[str, Any]:
    """`/health`'s `voice` once the node knows its capacity (its self-test done, or failed)."""
    return asyncio.run(_wait_capacity(base_url.rstrip("/"), token, timeout_s))


async def _wait_capacity(base_url: str, token: str | None, timeout_s: float) -> dict[str, Any]:
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else None
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(base_url=base_url, timeout=10.0, headers=headers) as client:
        while True:
            voice = (await client.get("/health")).json().get("voice")
            if voice is None:  # a gateway from before admission control
                return {"capacity": None, "source": "off"}
            if voice.get("source") != "unmeasured" or voice.get("error"):
                return dict(voice)
            if time.monotonic() > deadline:
                raise BenchError(f"the gateway at {base_url} did not measure its capacity within {timeout_s:g} s")
            await asyncio.sleep(0.2)  # polling a gateway that runs its self-test
