"""Reading a gateway's `GET /metrics` from a benchmark: samples, deltas between two scrapes, and
percentiles of the stage histograms.

`livefreq bench voice` and `livefreq load` time the voice path from the client; the same run's
server-side stage figures come from here, so the stage split a report shows is the one the
gateway's own metrics show in production. Parsing is prometheus_client's
(`text_string_to_metric_families`); a percentile is interpolated within its histogram bucket
the way PromQL's `histogram_quantile` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx
from prometheus_client.parser import text_string_to_metric_families

from gateway.metrics import STAGES

SampleKey = tuple[str, tuple[tuple[str, str], ...]]  # (sample name, sorted labels)


@dataclass(frozen=True)
class Scrape:
    """One reading of /metrics: every sample by name and labels."""

    samples: dict[SampleKey, float]

    def value(self, name: str, **labels: str) -> float | None:
        return self.samples.get((name, tuple(sorted(labels.items()))))

    def minus(self, earlier: Scrape) -> Scrape:
        """Counters and histograms over the interval between `earlier` and this scrape (gauges
        keep this scrape's value)."""
        out = dict(self.samples)
        for key, value in earlier.samples.items():
            name = key[0]
            if key in out and name.endswith(("_total", "_count", "_sum", "_bucket")):
                out[key] = out[key] - value
        return Scrape(out)


def parse(text: str) -> Scrape:
    samples: dict[SampleKey, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = float(sample.value)
    return Scrape(samples)


def scrape(base_url: str, timeout_s: float = 5.0, token: str | None = None) -> Scrape | None:
    """The gateway's metrics, or None when it has no /metrics (an older gateway, a proxy, a
    gateway that requires an API key and was given none)."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    try:
        response = httpx.get(f"{base_url.rstrip('/')}/metrics", timeout=timeout_s, headers=headers)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    return parse(response.text)


def histogram_quantile(buckets: Mapping[float, float], q: float) -> float | None:
    """The `q` quantile from cumulative bucket counts {upper bound: count}, linearly interpolated
    within the bucket (PromQL's rule); None without observations. Observations past the last
    finite bound report that bound."""
    bounds = sorted(buckets)
    if not bounds:
        return None
    total = buckets[bounds[-1]]
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for bound in bounds:
        count = buckets[bound]
        if count >= rank:
            if bound == float("inf"):
                return lower
            if count == below:
                return bound
            return lower + (bound - lower) * (rank - below) / (count - below)
        lower, below = bound, count
    return lower


def stage_summary(scrape: Scrape) -> dict[str, dict[str, float | int | None]]:
    """{stage: {n, mean_ms, p50_ms, p95_ms, p99_ms}} of `livefreq_stage_seconds`."""
    out: dict[str, dict[str, float | int | None]] = {}
    for stage in STAGES:
        buckets: dict[float, float] = {}
        for (name, labels), value in scrape.samples.items():
            if name != "livefreq_stage_seconds_bucket":
                continue
            label = dict(labels)
            if label.get("stage") == stage:
                buckets[float(label["le"])] = value
        n = scrape.value("livefreq_stage_seconds_count", stage=stage) or 0.0
        total = scrape.value("livefreq_stage_seconds_sum", stage=stage) or 0.0

        def ms(q: float) -> float | None:
            value = histogram_quantile(buckets, q)
            return None if value is None else round(value * 1000, 1)

        out[stage] = {
            "n": int(n),
            "mean_ms": round(total / n * 1000, 1) if n else None,
            "p50_ms": ms(0.5),
            "p95_ms": ms(0.95),
            "p99_ms": ms(0.99),
        }
    return out
