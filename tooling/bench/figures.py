"""Figures the voice benchmark and the load tester both report: percentile summaries, the latency
histogram PNG, and the machine's load average (other work slows every figure)."""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["latency_histogram", "load_average", "summarize"]


def summarize(values: Sequence[float | None]) -> dict[str, float | int | None]:
    """n, p50, p95, p99 (linear interpolation between ranks), mean, min and max of the values given."""
    import numpy as np

    data = [float(v) for v in values if v is not None]
    if not data:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "mean": None, "min": None, "max": None}
    arr = np.asarray(data)
    return {
        "n": len(data),
        "p50": round(float(np.percentile(arr, 50)), 4),
        "p95": round(float(np.percentile(arr, 95)), 4),
        "p99": round(float(np.percentile(arr, 99)), 4),
        "mean": round(statistics.fmean(data), 4),
        "min": round(min(data), 4),
        "max": round(max(data), 4),
    }


def latency_histogram(exchanges: Sequence[dict[str, Any]], metric: dict[str, Any], title: str, path: Path) -> Path:
    """A PNG histogram of the exchanges' `first_audio_ms` (PTT release -> first controller audio
    byte) with the p50 and p95 of `metric` marked; replies that waited behind another controller
    call are stacked in their own colour. `livefreq bench voice` and `livefreq load` draw it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    replied = [e for e in exchanges if e.get("first_audio_ms") is not None]
    latencies = [e["first_audio_ms"] for e in replied]
    direct = [e["first_audio_ms"] for e in replied if not e.get("spoken_before_reply")]
    queued = [e["first_audio_ms"] for e in replied if e.get("spoken_before_reply")]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    try:
        if latencies:
            ax.hist(
                [direct, queued],
                bins=max(20, min(60, 4 * len(latencies))),
                stacked=True,
                color=["#4c78a8", "#f58518"],
                edgecolor="white",
                label=["reply spoken first", "after another controller call (e.g. a silence prompt)"],
            )
            for key, style in (("p50", "-"), ("p95", "--")):
                if metric.get(key) is not None:
                    ax.axvline(metric[key], color="#e45756", linestyle=style, label=f"{key} {metric[key]:.0f} ms")
            ax.legend()
        else:
            ax.text(0.5, 0.5, "no controller reply was measured", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("milliseconds")
        ax.set_ylabel("transmissions")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path


def load_average() -> float | None:
    """The 1-minute load average (other work on the machine slows every figure), where known."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None
