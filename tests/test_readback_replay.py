"""Every recorded voice run decided again by today's engine (`livefreq bench readback --mode replay`,
tooling/bench/readback_replay.py): the safety gate by voice that needs no recognizer.

The reports in reports/ hold what whisper wrote for thousands of spoken readbacks (right, changed
and dropped values, pilot voices the product never speaks with), and what it was unsure of. A rule
the readback check gains is run here over all of them: it must never accept a wrong readback, nor
let one move the state on. Seed runs recorded at other flow states cannot be matched and are
skipped, so the test also holds that most of them still are matched.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tooling.bench.readback_replay import LEFT_OUT, default_reports
from tooling.cli import main

ROOT = Path(__file__).resolve().parents[1]


# The runs are decided again in SHARDS parts, each a test of its own, so that the suite's workers
# can share them: in one test the replay was the suite's largest by far (303 of 543 s on two
# workers, stop 66, 182 runs; on a slower host it would be the long pole), and the runs grow by
# one or two a fresh seed. On that host the suite took the same time in parts (547 s).
SHARDS = 4


# its own limit, not the suite's 300 s (a clean clone on 2 busy cores took over 300 s with 116 runs)
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("shard", range(SHARDS), ids=[f"part{k + 1}of{SHARDS}" for k in range(SHARDS)])
def test_no_recorded_wrong_readback_is_accepted_by_todays_engine(shard: int, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "replay.json"
    runs = default_reports(ROOT)
    assert len(runs) >= 30
    part = runs[shard::SHARDS]  # every run lands in one part: together they are `--mode replay`'s default
    assert main(["bench", "readback", "--mode", "replay", "--reports", *map(str, part), "--out", str(out)]) == 0
    printed, _err = capsys.readouterr()
    report = json.loads(out.read_text())
    assert len(report["files"]) >= 0.9 * len(part), report["skipped"]
    assert not set(report["files"]) & set(LEFT_OUT)
    assert report["transmissions"] >= 15_000 / SHARDS and report["bad"] >= 5_000 / SHARDS
    accepted = [r for r in report["rows"] if r["mode"] != "correct" and (r["verdict"] == "accepted" or r["forward"])]
    assert report["wrong_accepted"] == len(accepted) == 0, accepted[:5]
    # nor keep a changed or dropped value as read back right, which a readback in parts would complete
    kept = [r for r in report["rows"] if r["mode"] != "correct" and set(r["off"]) & set(r["kept"])]
    assert report["wrong_kept"] == len(kept) == 0, kept[:5]
    assert report["bad_unknown"] <= 0.05 * report["bad"]
    # nor accept a wrong readback in the pilot's recorded answer to "say again" (runs since stop 48)
    assert report["answers"] >= 20 / SHARDS and report["answers_wrong_accepted"] == 0
    assert "wrong readbacks accepted: 0 of" in printed
    # the replay is the engine's own verdict: a correct readback accepted moves its state on
    assert all(r["forward"] for r in report["rows"] if r["verdict"] == "accepted" and r["fields"])
    # the same figures by how well the recognizer heard: every band holds no wrong readback accepted
    bands = report["by_word_errors"]
    assert sum(b["n"] for b in bands.values()) == sum(1 for r in report["rows"] if r.get("words")) - report["correct_stale"]
    assert all(b["wrong_accepted"] == 0 for b in bands.values()) and "by the word errors" in printed
    # every right readback asked again is counted by why (at least one reason kind each)
    asked = sum(1 for r in report["rows"] if r["mode"] == "correct" and r["verdict"] == "say_again" and r.get("said_typed") in (None, "accepted"))
    assert asked == report["correct_said_again"] <= sum(c["readbacks"] for c in report["asked_why"].values())
    assert "why the right readbacks asked again were asked" in printed and "unknown" not in report["asked_why"]
    # no recorded check scored words today's question would not put its value in (runs since stop 56)
    assert report["placed_otherwise"] == 0, [r for r in report["rows"] if r.get("placed_otherwise")][:5]


def test_the_parts_together_are_every_run_the_replay_reads_by_default() -> None:
    runs = default_reports(ROOT)
    parts = [runs[k::SHARDS] for k in range(SHARDS)]
    assert sorted(p for part in parts for p in part) == sorted(runs) and all(parts)


def test_replay_by_default_reads_every_run_but_those_left_out(tmp_path, capsys, monkeypatch) -> None:
    """`--mode replay` alone reads `default_reports` and names each run left out, and why (here
    over its first run only, for time: the parts above decide every one)."""
    from tooling.bench import readback_replay

    monkeypatch.chdir(ROOT)
    first = default_reports(ROOT)[:1]
    monkeypatch.setattr(readback_replay, "default_reports", lambda root: first)
    out = tmp_path / "replay.json"
    assert main(["bench", "readback", "--mode", "replay", "--out", str(out)]) == 0
    _printed, err = capsys.readouterr()
    assert json.loads(out.read_text())["files"] == [p.name for p in first]
    assert all(f"left out {name}" in err for name in LEFT_OUT)


def test_replay_names_a_report_it_cannot_read(tmp_path, capsys) -> None:
    bad = tmp_path / "bench-readback-voice-seed99.json"
    bad.write_text("{not json", encoding="utf-8")
    other = tmp_path / "bench-readback-text.json"
    other.write_text(json.dumps({"benchmark": "readback", "mode": "text"}), encoding="utf-8")
    assert main(["bench", "readback", "--mode", "replay", "--reports", str(bad), str(other), "--out", str(tmp_path / "r.json")]) == 0
    err = capsys.readouterr().err
    assert f"skipped {bad.name}: not readable" in err and f"skipped {other.name}: not a voice readback report" in err
    assert main(["bench", "readback", "--mode", "replay", "--reports", str(tmp_path / "nope.json")]) != 0
    assert "no such report" in capsys.readouterr().err


def test_a_recorded_check_put_where_todays_question_puts_none_is_named() -> None:
    """A recorded frequency check (seed 129 #0: "one three six seven five zero zero" for 136.500)
    placed where today's question places it is replayed as evidence; moved to other words (as the
    first runs of seeds 61 and 110 were, before their placement rules), it is named, and with it
    the run: tiny.en's checks and whisper base's are each asked as the radio asks them."""
    from engine.hearing import Hearing, ValueCheck
    from tooling.bench.readback import default_bench
    from tooling.bench.readback_replay import placed_otherwise
    from tooling.cli.common import load_settings

    report = json.loads((ROOT / "reports" / "bench-readback-voice-seed129.json").read_text())
    row = next(r for r in report["bias_on"]["transmissions"] if r["index"] == 0)
    bench = default_bench(load_settings())
    flow, state, scenario, _mode = bench.draws(report["n"], report["seed"], report["wrong_share"])[0]
    heard = row["heard"].strip()
    session, now = bench.at_state(flow, state, scenario)
    asked = bench.engine.value_query(session, heard, now + 5.0, Hearing(alternatives=row["alternatives"]))
    assert asked is not None
    places = sorted({h.place for h in asked.hypotheses if h.field == "tower_freq" and not h.appended})
    assert places
    first = {k: v for k, v in row["checks"][0].items() if k != "place"}
    elsewhere = (places[0][1], places[0][1] + 1)  # the word after the value's place
    assert elsewhere not in places

    def hearing(place: tuple[int, int] | None, bigger: bool = False) -> Hearing:
        check = ValueCheck(**{**first, "appended": place is None, "place": place, "bigger": bigger})
        return Hearing(alternatives=row["alternatives"], checks=[check])

    unchanged = session.model_dump()

    def named(h: Hearing) -> list[str]:
        return placed_otherwise(bench, session, now + 5.0, heard, h)

    assert named(hearing(places[0])) == []
    assert named(hearing(None)) == []  # after the transcript
    assert named(hearing(elsewhere)) == ["tower_freq"]
    assert named(hearing(elsewhere, bigger=True)) == ["tower_freq"]
    assert session.model_dump() == unchanged  # asked of the session, which it leaves as it was


def test_a_run_focused_on_some_fields_is_decided_again_as_it_was_drawn() -> None:
    """`--fields destination` runs draw from the states holding a clearance limit only: the replay
    focuses a copy of its bench as the run did (the shared one keeps every state). Seed 137's run
    with the listed city rivals alone accepted "Dusseldorf or TELOS or GEDEM" for a said
    Amsterdam (#2); today's engine asks it again (a limit named in a choice), on the recorded
    hearing alone."""
    from tooling.bench.readback import default_bench
    from tooling.bench.readback_replay import replay_reports
    from tooling.cli.common import load_settings

    bench = default_bench(load_settings())
    every = list(bench.states)
    path = ROOT / "reports" / "bench-readback-voice-seed137-destination-listed-rivals.json"
    out = replay_reports(bench, [path])
    assert out["files"] == [path.name] and not out["skipped"] and bench.states == every
    rows = {r["index"]: r for r in out["rows"]}
    assert len(rows) == 100 and rows[2]["recorded"] == "accepted" and rows[2]["mode"] == "wrong"
    assert rows[2]["verdict"] == "say_again" and not rows[2]["forward"]
    assert all(r["verdict"] != "accepted" for r in out["rows"] if r["mode"] != "correct")


def test_a_recorded_check_todays_question_asks_nowhere_is_left_out() -> None:
    """Fresh seed 151 #165: a dropped ATIS letter R confirmed by a check over "rome" (the pilot's
    "roger"), a place no anchor word precedes. Today's question tries such a letter after the
    transcript only (`value_places.letter_anchored`), so the replay decides the transmission
    without the recorded in-place check, as the radio would hear it now: the letter is missing."""
    from tooling.bench.readback import default_bench
    from tooling.bench.readback_replay import replay_reports
    from tooling.cli.common import load_settings

    path = ROOT / "reports" / "bench-readback-voice-seed151.json"
    out = replay_reports(default_bench(load_settings()), [path])
    rows = {r["index"]: r for r in out["rows"]}
    assert rows[165]["mode"] == "drop" and rows[165]["recorded"] == "accepted"
    assert rows[165]["unasked"] == ["atis_letter"] and rows[165]["verdict"] == "missing" and not rows[165]["forward"]
    assert all(r["verdict"] != "accepted" and not r["forward"] for r in out["rows"] if r["mode"] != "correct")
