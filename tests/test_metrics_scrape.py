"""Reading /metrics in benchmarks: deltas between scrapes and PromQL-style histogram quantiles,
checked against observations made through the gateway's own histogram."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from gateway.metrics import LATENCY_BUCKETS
from tooling.metrics_scrape import histogram_quantile, parse, stage_summary


def test_quantiles_interpolate_within_buckets() -> None:
    buckets = {0.1: 0.0, 0.2: 50.0, 0.4: 100.0, float("inf"): 100.0}
    assert histogram_quantile(buckets, 0.5) == 0.2
    assert abs(histogram_quantile(buckets, 0.25) - 0.15) < 1e-9  # halfway through the (0.1, 0.2] bucket
    assert abs(histogram_quantile(buckets, 0.75) - 0.3) < 1e-9
    assert histogram_quantile({0.1: 0.0, float("inf"): 0.0}, 0.5) is None
    assert histogram_quantile({0.1: 0.0, float("inf"): 3.0}, 0.5) == 0.1  # beyond the last bound


def test_stage_summary_of_the_interval_between_two_scrapes() -> None:
    registry = CollectorRegistry()
    stages = Histogram("livefreq_stage_seconds", "x", ["stage"], buckets=LATENCY_BUCKETS, registry=registry)
    errors = Counter("livefreq_errors_total", "x", ["transport", "code"], registry=registry)
    for value in (5.0, 5.0):  # before the run: must not count
        stages.labels("speech_end_to_first_audio").observe(value)
    before = parse(generate_latest(registry).decode())
    for value in [0.26] * 90 + [0.9] * 10:
        stages.labels("speech_end_to_first_audio").observe(value)
    errors.labels("ws", "rate_limited").inc(3)
    delta = parse(generate_latest(registry).decode()).minus(before)
    summary = stage_summary(delta)["speech_end_to_first_audio"]
    assert summary["n"] == 100 and summary["mean_ms"] == 324.0
    assert 250 < summary["p50_ms"] <= 300 and 850 < summary["p95_ms"] <= 1000
    assert stage_summary(delta)["final_to_decision"]["n"] == 0
    assert delta.value("livefreq_errors_total", transport="ws", code="rate_limited") == 3
