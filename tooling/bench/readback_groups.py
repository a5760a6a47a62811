"""The readback bench's figures by group, for the voice bench and the replay alike: by pilot voice
engine, by the word errors of the transcript decided on, and why each right readback asked again
was asked; each as JSON and as a printed table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.doubt import Doubt
from tooling.bench.common import interval95, interval_text
from tooling.bench.readback import not_understood, verdict

__all__ = [
    "ENGINE_HEAD", "NOT_UNDERSTOOD", "WER_BANDS", "WER_HEAD", "WHY_HEAD", "asked_why", "by_engine", "by_voice",
    "by_why", "by_word_errors", "engine_rows", "why_rows", "word_error_rows",
]  # fmt: skip


def _figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The headline figures of `rows` alone: right readbacks accepted / refused / asked again (with
    its rate and 95 % interval), wrong ones accepted (or moving the state on), and the
    recognizer's word errors."""
    correct = [r for r in rows if r["mode"] == "correct"]
    bad = [r for r in rows if r["mode"] != "correct"]
    said_again = sum(1 for r in correct if r["verdict"] == "say_again")
    refused = sum(1 for r in correct if r["verdict"] not in ("accepted", "say_again"))
    word_errors, words = sum(r.get("word_errors", 0) for r in rows), sum(r.get("words", 0) for r in rows)
    return {
        "n": len(rows),
        "correct": len(correct),
        "accepted": len(correct) - said_again - refused,
        "refused": refused,
        "say_again": said_again,
        "bad": len(bad),
        "wrong_accepted": sum(1 for r in bad if r["verdict"] == "accepted" or r["forward"]),
        "word_errors": word_errors,
        "words": words,
        "wer": round(word_errors / words, 4) if words else None,
        "refused_rate": round(refused / len(correct), 4) if correct else None,
        "say_again_rate": round(said_again / len(correct), 4) if correct else None,
        "say_again_ci95": interval95(said_again, len(correct)),
    }


def _grouped(rows: list[dict[str, Any]], key: Callable[[dict[str, Any]], str]) -> dict[str, dict[str, Any]]:
    """`_figures` of the rows of each group `key(row)` names, in the order groups first appear."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return {name: _figures(group) for name, group in groups.items()}


def by_voice(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """voice (without its espeak-ng variant) -> `_figures` of its transmissions: which pilot voices
    the recognizer struggles with."""
    return _grouped(rows, lambda row: row["voice"].split("+")[0])


def by_engine(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Pilot voice engine -> `_figures` of its transmissions alone."""
    return _grouped(rows, lambda row: row["voice"].partition(":")[0])


# Bands of the word errors of the transcript the engine decided on (edits / words said): how much
# of "asked again" the recognizer's hearing explains. The last band is mostly espeak-ng's.
WER_BANDS: tuple[tuple[str, float], ...] = (
    ("0-10 %", 0.10), ("10-30 %", 0.30), ("30-50 %", 0.50), ("over 50 %", float("inf")),
)  # fmt: skip


def by_word_errors(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Band of the transcript's word errors (`WER_BANDS`, upper bound inclusive) -> `_figures` of
    its transmissions alone: whether the right readbacks asked again are the ones the recognizer
    heard badly (a controller asks again there too) or the engine's doubt about ones it heard
    well. Rows without word counts (recorded before them) are left out."""
    counted = [r for r in rows if r.get("words")]
    grouped = _grouped(counted, lambda row: _band(row["word_errors"] / row["words"]))
    return {name: grouped.get(name, _figures([])) for name, _high in WER_BANDS}


def _band(rate: float) -> str:
    """The name of the band of `WER_BANDS` that holds `rate`."""
    return next(name for name, high in WER_BANDS if rate <= high)


WER_HEAD = ("word errors heard", "readbacks", "wrong accepted", "correct accepted", "refused", "say again", "95% interval")


def word_error_rows(by: dict[str, dict[str, Any]]) -> list[tuple[str, ...]]:
    """The table of `by_word_errors`, one row per band."""
    return [_figures_row(band, c) for band, c in by.items()]


ENGINE_HEAD = (
    "pilot voices", "readbacks", "wrong accepted", "correct accepted", "refused", "say again", "95% interval", "WER",
)


def engine_rows(by: dict[str, dict[str, Any]]) -> list[tuple[str, ...]]:
    """The per-engine table of `by_engine`, one row per pilot voice engine, with its word error rate."""
    return [(*_figures_row(engine, c), _percent(c["wer"])) for engine, c in sorted(by.items())]


def _figures_row(name: str, c: dict[str, Any]) -> tuple[str, ...]:
    """One group's figures (`_figures`) as a row of `WER_HEAD` and `ENGINE_HEAD`, after `name`."""
    return (
        name, str(c["n"]), f"{c['wrong_accepted']} / {c['bad']}", f"{c['accepted']} / {c['correct']}",
        f"{c['refused']} ({_percent(c['refused_rate'])})", f"{c['say_again']} ({_percent(c['say_again_rate'])})",
        interval_text(c.get("say_again_ci95")) or "-",
    )  # fmt: skip


# Why a value of a right readback was asked again, by the engine's kind of reason
# (`ReadbackResult.why`, engine/doubt.py); a transmission not understood at all has no field to ask.
# Only HEARD_RIGHT_ALTERNATIVE_OTHERWISE and RIVALS doubt a value the best transcript heard right;
# the others are the recognizer's (not understood, garbled, lost, heard otherwise).
NOT_UNDERSTOOD = "not_understood"
WHY_KINDS: dict[str, str] = {
    NOT_UNDERSTOOD: "the transmission not understood",
    Doubt.HEARD_RIGHT_ALTERNATIVE_OTHERWISE: "heard right, an n-best hypothesis otherwise",
    Doubt.HEARD_GARBLED_ALTERNATIVE_OTHERWISE: "heard garbled, an n-best hypothesis otherwise",
    Doubt.HEARD_GARBLED: "heard garbled, or as a value its kind cannot have",
    Doubt.HEARD_ONLY_BY_ALTERNATIVE: "not heard, an n-best hypothesis heard one",
    Doubt.HEARD_OTHER_ALTERNATIVE_OTHERWISE: "heard as another value, an n-best hypothesis otherwise",
    Doubt.LOST: "lost in a readback otherwise heard",
    Doubt.RIVALS: "heard right, a rival not ruled out in the audio",
    Doubt.CORRECTED_ELSEWHERE: "an n-best hypothesis has the pilot correct himself, the best none",
}


def asked_why(decision: Any) -> dict[str, str]:
    """Each value asked again and the kind of its reason (`ReadbackResult.why`, engine/doubt.py);
    {"": NOT_UNDERSTOOD} when the transmission was not understood as a readback at all; {} when
    nothing was asked again."""
    if verdict(decision) != "say_again":
        return {}
    rb = decision.readback
    if rb is None or not_understood(decision):
        return {"": NOT_UNDERSTOOD}
    return {name: str(rb.why[name].kind) if name in rb.why else "" for name in rb.unsure}


def by_why(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Why the right readbacks asked again were asked: reason kind -> {"values": values asked
    for it, "readbacks": right readbacks with at least one}. The recognizer's doubt (an n-best
    hypothesis, garbled words) against the engine's caution (rivals, a value lost)."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        if row["mode"] != "correct" or row["verdict"] != "say_again":
            continue
        kinds = [WHY_KINDS.get(kind, kind or "unknown") for kind in (row.get("why") or {"": ""}).values()]
        for kind in kinds:
            out.setdefault(kind, {"values": 0, "readbacks": 0})["values"] += 1
        for kind in set(kinds):
            out[kind]["readbacks"] += 1
    return dict(sorted(out.items(), key=lambda item: -item[1]["values"]))


WHY_HEAD = ("why asked again (right readbacks)", "values", "readbacks")


def why_rows(by: dict[str, dict[str, int]]) -> list[tuple[str, ...]]:
    """The table of `by_why`, one row per reason kind."""
    return [(kind, str(c["values"]), str(c["readbacks"])) for kind, c in by.items()]


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"
