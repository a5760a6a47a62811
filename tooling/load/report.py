"""What a `livefreq load` run reports: latency, WER, readback verdicts, errors, message integrity,
audio gaps, the gateway's CPU and memory; the terminal table, the JSON file and the PNG histogram."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tooling.bench.figures import latency_histogram, load_average, summarize
from tooling.corpus import Corpus
from tooling.load.pilot import LoadConfig, PilotLog
from tooling.metrics_scrape import Scrape, stage_summary
from tooling.voicekit import Received

__all__ = [
    "CAPACITY_P95_MS",
    "audio_gaps",
    "build_report",
    "format_table",
    "message_faults",
    "write_outputs",
]

TARGET_P95_MS = 1200.0  # many sessions (the target for 50)
SINGLE_P50_MS, SINGLE_P95_MS = 350.0, 700.0  # one session alone
CAPACITY_P95_MS = 1000.0  # the capacity: the most sessions with p95 within this and no audio gap (issue 17)
GAP_MIN_S = 0.02  # a player starving for less than one 20 ms frame does not click


def message_faults(rx: Received) -> dict[str, int]:
    """Protocol faults in what one socket received: seq gaps (lost), seqs going back or repeated
    (out of order), a message starting before the previous one ended (interleaved), an end
    without its start, and audio outside any message."""
    faults = Counter[str]()
    last_seq: int | None = None
    open_seq: int | None = None
    for event in rx.events:
        kind = event.get("type")
        if kind == "atc.message":
            seq = int(event.get("seq") or 0)
            if last_seq is not None and seq > last_seq + 1:
                faults["lost"] += seq - last_seq - 1
            elif last_seq is not None and seq <= last_seq:
                faults["out_of_order"] += 1
            if open_seq is not None:
                faults["interleaved"] += 1
            last_seq, open_seq = max(seq, last_seq or 0), seq
        elif kind == "atc.message.end":
            if open_seq is None or event.get("seq") != open_seq:
                faults["unmatched_end"] += 1
            open_seq = None
    faults["stray_audio"] += rx.stray_audio
    return {k: faults.get(k, 0) for k in ("lost", "out_of_order", "interleaved", "unmatched_end", "stray_audio")}


def audio_gaps(frames: list[tuple[float, int]], rate: int = 16000, min_gap_s: float = GAP_MIN_S) -> list[tuple[float, float]]:
    """Where a player starting at the first frame would run dry: (seconds of the message played
    before, seconds of silence) of each gap where audio arrived slower than real time. The
    player resumes when the late frame arrives."""
    if not frames:
        return []
    gaps: list[tuple[float, float]] = []
    clock = frames[0][0]  # when the audio received so far has been played out
    played = 0.0
    for arrived, nbytes in frames:
        if arrived - clock >= min_gap_s:
            gaps.append((played, arrived - clock))
        clock = max(clock, arrived) + nbytes / 2 / rate
        played += nbytes / 2 / rate
    return gaps


def build_report(
    config: LoadConfig,
    corpus: Corpus,
    base_url: str,
    pid: int | None,
    health: dict[str, Any],
    logs: list[PilotLog],
    samples: list[tuple[float, Scrape]],
    wall_s: float,
    load_before: float | None,
    client_cpu_s: float,
    machine_cpu: float | None = None,
) -> dict[str, Any]:
    exchanges = [e for log in logs for e in log.exchanges]
    first_audio = summarize([e["first_audio_ms"] for e in exchanges])
    edits, words = sum(e["word_errors"] for e in exchanges), sum(e["words"] for e in exchanges)
    verdicts = Counter(e["verdict"] for e in exchanges if e["verdict"] is not None)
    judged_correct = verdicts["accepted"] + verdicts["rejected"]
    judged_wrong = verdicts["caught"] + verdicts["caught other field"] + verdicts["missed"]
    received_errors = Counter(
        str(ev.get("code")) for log in logs if log.client is not None for ev in log.client.rx.events if ev.get("type") == "error"
    )
    failures = Counter[str]()
    for log in logs:
        failures.update(log.failures)
    faults = Counter[str]()
    gaps: list[float] = []
    worst: list[dict[str, Any]] = []  # the longest gaps: where in which message
    messages = messages_with_gaps = 0
    for log in logs:
        if log.client is None:
            continue
        faults.update(message_faults(log.client.rx))
        texts = {ev.get("message_id"): ev.get("text") for ev in log.client.rx.events if ev.get("type") == "atc.message"}
        for message_id, frames in log.client.rx.audio_frames.items():
            messages += 1
            found = audio_gaps(frames)
            messages_with_gaps += bool(found)
            gaps.extend(gap for _at, gap in found)
            worst.extend({"gap_ms": round(g * 1000, 1), "after_s": round(at, 2), "message": texts.get(message_id)} for at, g in found)
    worst = sorted(worst, key=lambda w: -w["gap_ms"])[:10]
    server = _server_figures(samples)
    p95 = first_audio["p95"]
    errors_total = sum(received_errors.values()) + sum(failures.values()) + sum(server.get("errors_by_code", {}).values())
    lost_or_disordered = faults["lost"] + faults["out_of_order"] + faults["interleaved"] + faults["unmatched_end"] + faults["stray_audio"]
    talk_s = sum(log.talk_s for log in logs)
    admission = _admission(logs, exchanges)
    return {
        "benchmark": "load",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": {
            "sessions": config.sessions,
            "duration_s": config.duration_s,
            "think_s": list(config.think_s),
            "pause_s": list(config.pause_s),
            "seed": config.seed,
            "corpus": str(corpus.root),
            "corpus_recordings": len(corpus.entries),
            "corpus_scenarios": len(corpus.seeds),
        },
        "gateway": {"url": base_url, "started_here": pid is not None, "pid": pid, "speech": health.get("speech"), "version": health.get("version"),
                    "voice": health.get("voice")},  # its capacity, and the self-test behind it
        "cpu_count": os.cpu_count(),
        "load_average": {"before": load_before, "after": load_average()},
        "wall_s": round(wall_s, 1),
        "transmissions": len(exchanges),
        "replies": first_audio["n"],
        "talk_duty": round(talk_s / (config.sessions * config.duration_s), 3),
        "transmissions_per_pilot_minute": round(len(exchanges) / config.sessions / (config.duration_s / 60), 2),
        "latency_ms": {
            "ptt_up_to_first_audio": first_audio,
            # a session's first reply (the clearance: long, nothing of it cached, every pilot's at
            # about the same time while they join) apart from the rest: capacity's limit so far
            "ptt_up_to_first_audio_opening": summarize([e["first_audio_ms"] for e in exchanges if e.get("reply_seq") == 1]),
            "ptt_up_to_first_audio_later": summarize(
                [e["first_audio_ms"] for e in exchanges if e.get("reply_seq") is not None and e["reply_seq"] > 1]
            ),
            # the replies that waited for rivals scored in the audio (a clearance limit), allowed
            # past the reply's second by design (gateway/speech/hearing_chain.py), apart
            "ptt_up_to_first_audio_rival_checked": summarize(
                [e["first_audio_ms"] for e in exchanges if e.get("rival_checked")]
            ),
            "ptt_up_to_first_audio_unchecked": summarize(
                [e["first_audio_ms"] for e in exchanges if not e.get("rival_checked")]
            ),
            "ptt_up_to_final": summarize([e["final_ms"] for e in exchanges]),
            "ptt_up_to_decision": summarize([e["decision_ms"] for e in exchanges]),
        },
        "wer": round(edits / words, 4) if words else None,
        "not_understood": sum(1 for e in exchanges if e["recognized"] is False),
        "verdicts": {
            "counts": dict(verdicts),
            "correct_readbacks": judged_correct,
            "correct_accepted": verdicts["accepted"],
            "wrong_readbacks": judged_wrong,
            "wrong_caught": verdicts["caught"] + verdicts["caught other field"],
            "wrong_missed": verdicts["missed"],
            "say_again": verdicts["say again"],
            # each recording's first hearing: after "say again" the pilot plays the same recording
            # again, which the recognizer mostly hears the same way, so the counts above repeat it
            "first_hearing": _first_hearings(exchanges),
            "accuracy": round((verdicts["accepted"] + verdicts["caught"] + verdicts["caught other field"]) / (judged_correct + judged_wrong), 4)
            if judged_correct + judged_wrong
            else None,
        },
        "errors": {"total": errors_total, "received_by_code": dict(received_errors), "client": dict(failures), "server_by_code": server.pop("errors_by_code", {})},
        "messages": {"controller_messages": messages, **{k: faults[k] for k in ("lost", "out_of_order", "interleaved", "unmatched_end", "stray_audio")}, "total_faults": lost_or_disordered},
        "audio": {
            "messages": messages,
            "messages_with_gaps": messages_with_gaps,
            "gaps": len(gaps),
            "gap_s_total": round(sum(gaps), 3),
            "gap_ms_max": round(max(gaps) * 1000, 1) if gaps else 0.0,
            "longest": worst,
        },
        "server": server,
        "client_cpu_s": round(client_cpu_s, 1),
        # cores the rest of the machine used meanwhile: a busy machine makes every figure slower
        "other_cpu_cores": _other_cores(machine_cpu, client_cpu_s, server.get("cpu_s"), base_url, wall_s),
        "no_recording": sum(log.no_recording for log in logs),
        "admission": admission,
        "targets": {
            "p50_ms_max": SINGLE_P50_MS if config.sessions == 1 else None,
            "p95_ms_max": SINGLE_P95_MS if config.sessions == 1 else TARGET_P95_MS,
            "p50_ok": config.sessions > 1 or (first_audio["p50"] is not None and first_audio["p50"] <= SINGLE_P50_MS),
            "p95_ok": p95 is not None and p95 <= (SINGLE_P95_MS if config.sessions == 1 else TARGET_P95_MS),
            "no_errors": errors_total == 0,
            "no_lost_or_out_of_order": lost_or_disordered == 0,
            "capacity_p95_ms": CAPACITY_P95_MS,
            "no_audio_gaps": not gaps,
            # past capacity: p95 over the limit, or controller audio that stalled
            "over_capacity": (p95 is not None and p95 > CAPACITY_P95_MS) or bool(gaps),
        },
        "exchanges": exchanges,
    }


def _first_hearings(exchanges: list[dict[str, Any]]) -> dict[str, int]:
    """Verdicts of each pilot's recordings the first time each was heard, by kind:
    {"correct accepted": n, "correct say again": n, "wrong caught": n, ...}."""
    first: dict[tuple[str, str], dict[str, Any]] = {}
    for e in exchanges:
        if e.get("verdict") not in (None, "not judged"):
            first.setdefault((str(e.get("session_id")), str(e.get("file"))), e)
    return dict(sorted(Counter(f"{e['kind']} {e['verdict']}" for e in first.values()).items()))


def _admission(logs: list[PilotLog], exchanges: list[dict[str, Any]]) -> dict[str, Any]:
    """Pilots admitted and refused (by the gateway's code), how fast a refusal came, and the
    admitted pilots' transmissions that got no decision (nothing may be lost)."""
    refused = [log for log in logs if log.refusal is not None]
    return {
        "offered": len(logs),
        "admitted": sum(1 for log in logs if log.session_id is not None),
        "refused": len(refused),
        "refused_by_code": dict(Counter(str(log.refusal["code"]) for log in refused if log.refusal)),
        "refusal_ms": summarize([log.start_ms for log in refused]),
        "retry_after_s": sorted({log.refusal.get("retry_after_s") for log in refused if log.refusal and log.refusal.get("retry_after_s") is not None}),
        "start_ms": summarize([log.start_ms for log in logs if log.session_id is not None]),
        "unanswered": sum(1 for e in exchanges if e["decision_ms"] is None),
        "admitted_failures": sum(sum(log.failures.values()) for log in logs if log.session_id is not None),
    }


def _other_cores(machine_cpu: float | None, client_cpu_s: float, server_cpu_s: float | None, base_url: str, wall_s: float) -> float | None:
    """Cores used during the run by processes other than the pilots and a gateway on this machine."""
    from urllib.parse import urlsplit

    local = urlsplit(base_url).hostname in ("127.0.0.1", "localhost", "::1")
    if machine_cpu is None or wall_s <= 0 or (local and server_cpu_s is None):
        return None
    return round(max(0.0, machine_cpu - client_cpu_s - ((server_cpu_s or 0.0) if local else 0.0)) / wall_s, 2)


def _server_figures(samples: list[tuple[float, Scrape]]) -> dict[str, Any]:
    """CPU and memory of the gateway process over the run, its stage histograms and errors."""
    if len(samples) < 2:
        return {"metrics": False}
    (t0, first), (t1, last) = samples[0], samples[-1]
    rss = [s.value("process_resident_memory_bytes") for _, s in samples]
    rss_mb = [round(v / 2**20, 1) for v in rss if v is not None]
    cpu0, cpu1 = first.value("process_cpu_seconds_total"), last.value("process_cpu_seconds_total")
    windows = [  # cores used between consecutive samples: the steady state, not the ramp-up
        (b.value("process_cpu_seconds_total") - a.value("process_cpu_seconds_total")) / (tb - ta)  # type: ignore[operator]
        for (ta, a), (tb, b) in zip(samples, samples[1:])
        if tb - ta >= 1.0 and a.value("process_cpu_seconds_total") is not None and b.value("process_cpu_seconds_total") is not None
    ]
    delta = last.minus(first)
    errors = _totals(delta, "livefreq_errors_total", ("transport", "code"), int)
    speculative = _totals(delta, "livefreq_speculative_tts_total", ("outcome",), int)
    steps = {name: _totals(delta, f"livefreq_{name}_total", ("outcome",), int) for name in HEARING_STEPS}
    busy = _totals(delta, "livefreq_cpu_busy_seconds_total", ("kind", "priority"), lambda v: round(v, 1))
    return {
        "metrics": True,
        "cpu_pool_busy_s": dict(sorted(busy.items())),
        "cpu_s": round(cpu1 - cpu0, 1) if cpu0 is not None and cpu1 is not None else None,
        "cpu_cores_used": round((cpu1 - cpu0) / (t1 - t0), 2) if cpu0 is not None and cpu1 is not None and t1 > t0 else None,
        "cpu_cores_peak": round(max(windows), 2) if windows else None,  # busiest 5 s
        "rss_mb_start": rss_mb[0] if rss_mb else None,
        "rss_mb_peak": max(rss_mb) if rss_mb else None,
        "rss_mb_end": rss_mb[-1] if rss_mb else None,
        "rss_mb_samples": rss_mb,
        "stages": stage_summary(delta),
        "speculative_tts": speculative,
        # heard_again | checked | unneeded | none | busy | late, per step (gateway/speech/hearing_chain.py)
        **steps,
        "errors_by_code": errors,
    }


# The steps after the first hearing (gateway/speech/hearing_chain.py), each a counter by outcome in
# /metrics (`livefreq_<name>_total`): how often each ran, and was skipped as busy or late, under load.
HEARING_STEPS = (
    "second_hearings", "value_checks", "rival_checks", "third_hearings", "bigger_value_checks", "confirm_hearings",
)


def _totals(delta: Scrape, metric: str, labels: tuple[str, ...], cast: Callable[[float], Any]) -> dict[str, Any]:
    """{"label:label": value} of one counter's labelled series that grew during the run."""
    return {
        ":".join(str(dict(series).get(label, "?")) for label in labels): cast(value)
        for (name, series), value in delta.samples.items()
        if name == metric and value > 0
    }


def format_table(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(what, figure) rows of a run for the terminal."""
    lat = report["latency_ms"]
    v, m, a, s = report["verdicts"], report["messages"], report["audio"], report["server"]

    def ms(stats: dict[str, Any]) -> str:
        if not stats["n"]:
            return "-"
        return f"p50 {stats['p50']:.0f}  p95 {stats['p95']:.0f}  p99 {stats['p99']:.0f}  (n={stats['n']})"

    rows = [
        ("pilots, duration", f"{report['config']['sessions']} for {report['config']['duration_s']:g} s (load average {report['load_average']['before']} -> {report['load_average']['after']}"
         + ("" if report.get("other_cpu_cores") is None else f"; other processes used {report['other_cpu_cores']} cores") + ")"),
        ("transmissions, talk duty", f"{report['transmissions']} ({report['transmissions_per_pilot_minute']}/pilot/min), pilots talking {100 * report['talk_duty']:.0f} % of the time"),
        ("PTT release -> first ATC audio (ms)", ms(lat["ptt_up_to_first_audio"])),
        ("  a session's first reply / later ones", _split(lat)),
        ("  after a rival check / the others", _split(lat, "rival_checked", "unchecked")),
        ("PTT release -> final transcript (ms)", ms(lat["ptt_up_to_final"])),
        ("PTT release -> decision (ms)", ms(lat["ptt_up_to_decision"])),
        ("transcript WER", "-" if report["wer"] is None else f"{100 * report['wer']:.1f} %  ({report['not_understood']} not understood)"),
        ("readback verdicts", f"correct accepted {v['correct_accepted']}/{v['correct_readbacks']}, wrong caught {v['wrong_caught']}/{v['wrong_readbacks']}, wrong missed {v['wrong_missed']}, said again {v.get('say_again', 0)}"
         + ("" if v["accuracy"] is None else f", accuracy {100 * v['accuracy']:.1f} %")),
        ("  first hearing of each recording", ", ".join(f"{k} {n}" for k, n in v.get("first_hearing", {}).items()) or "-"),
        ("errors", f"{report['errors']['total']}" + "".join(f"  {k}={n}" for part in ("received_by_code", "client", "server_by_code") for k, n in report["errors"][part].items())),
        ("messages lost/out of order", f"{m['lost']}/{m['out_of_order']} of {m['controller_messages']} (interleaved {m['interleaved']}, stray audio {m['stray_audio']})"),
        ("audio gaps", f"{a['gaps']} in {a['messages_with_gaps']} of {a['messages']} messages, {a['gap_s_total']:.2f} s in all, longest {a['gap_ms_max']:.0f} ms"),
    ]
    adm = report.get("admission")
    if adm and adm["refused"]:
        rows.append(("admitted / refused", f"{adm['admitted']} / {adm['refused']} of {adm['offered']} "
                     f"({', '.join(f'{k} {n}' for k, n in adm['refused_by_code'].items())}; refusal p95 "
                     f"{adm['refusal_ms']['p95']:.0f} ms, retry_after_s {adm['retry_after_s']})"))
    if s.get("metrics"):
        rows.append(("server CPU", f"{s['cpu_s']} s: {s['cpu_cores_used']} cores of {report['cpu_count']} on average, "
                     f"{s['cpu_cores_peak']} in the busiest 5 s; client (pilots) {report['client_cpu_s']} s"))
        rows.append(("server memory (RSS MB)", f"start {s['rss_mb_start']}, peak {s['rss_mb_peak']}, end {s['rss_mb_end']}"))
        for stage, st in s["stages"].items():
            if st["n"]:
                rows.append((f"server: {stage} (ms)", f"p50 {st['p50_ms']}  p95 {st['p95_ms']}  p99 {st['p99_ms']}  (n={st['n']})"))
        if s.get("cpu_pool_busy_s"):
            rows.append(("server: CPU pool busy (s)", pool_busy_row(s["cpu_pool_busy_s"])))
        if s.get("speculative_tts"):
            rows.append(("server: speculative TTS", ", ".join(f"{k} {n}" for k, n in s["speculative_tts"].items())))
        for name in HEARING_STEPS:
            if s.get(name):
                rows.append((f"server: {name.replace('_', ' ')}", ", ".join(f"{k} {n}" for k, n in s[name].items())))
    return rows


def _split(lat: dict[str, Any], first: str = "opening", second: str = "later") -> str:
    """p95 of two groups of replies (default: a session's first reply and the later ones)."""

    def p95(stats: dict[str, Any] | None) -> str:
        return f"p95 {stats['p95']:.0f} (n={stats['n']})" if stats and stats["n"] else "-"

    prefix = "ptt_up_to_first_audio_"
    return f"{p95(lat.get(prefix + first))} / {p95(lat.get(prefix + second))}"


def pool_busy_row(busy: dict[str, float]) -> str:
    """"tts 61.2 (ahead 40.1, on_air 21.1); stt ..." from {"kind:priority": seconds}."""
    kinds: dict[str, dict[str, float]] = {}
    for key, seconds in busy.items():
        kind, _, level = key.partition(":")
        kinds.setdefault(kind, {})[level] = seconds
    return "; ".join(
        f"{kind} {sum(levels.values()):.1f} ("
        + ", ".join(f"{level} {sec:.1f}" for level, sec in sorted(levels.items(), key=lambda kv: -kv[1]))
        + ")"
        for kind, levels in sorted(kinds.items(), key=lambda kv: -sum(kv[1].values()))
    )


def write_outputs(report: dict[str, Any], report_dir: Path, name: str = "load") -> tuple[Path, Path]:
    """`<name>.json` and `<name>.png` (latency histogram) in `report_dir`."""
    import json

    report_dir.mkdir(parents=True, exist_ok=True)
    speech = report["gateway"].get("speech") or {}
    metric = report["latency_ms"]["ptt_up_to_first_audio"]
    title = (
        f"PTT release -> first ATC audio byte, {report['config']['sessions']} pilots for {report['config']['duration_s']:g} s "
        f"(n={metric['n']}; stt={speech.get('stt')}, tts={speech.get('tts')}; {report['cpu_count']} CPUs)"
    )
    png = latency_histogram(report["exchanges"], metric, title, report_dir / f"{name}.png")
    report["png"] = str(png)
    path = report_dir / f"{name}.json"
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return path, png
