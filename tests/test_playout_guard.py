"""The playout guard (gateway/radio/playout_guard.py): a controller message started by the rule
never runs dry while synthesis stays within the speed measured, the rule holds no longer than
that needs, and the speed window adapts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.radio.playout_guard import MIN_MEASURED_S, PRIOR, Speed, SpeedWindow, may_start, required_ready_s

MARGIN = 0.2


def lateness(ready_s: float, pieces: list[tuple[float, float]]) -> float:
    """How late the latest pending piece comes (negative: the least slack), playing from 0 with
    `ready_s` of audio ready and `pieces` as (synthesis seconds, audio seconds), synthesized one
    after another from 0 on."""
    synthesized_by, played_by = 0.0, ready_s
    worst = float("-inf")
    for synth_s, audio_s in pieces:
        synthesized_by += synth_s
        worst = max(worst, synthesized_by - played_by)
        played_by += audio_s
    return worst


speeds = st.builds(
    Speed,
    synth_s_per_char=st.floats(0.0005, 0.2),  # piper idle (~20x real time) to far slower than real time
    audio_s_per_char=st.floats(0.03, 0.12),
)
pending = st.lists(st.integers(1, 120), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(speed=speeds, chars=pending, ready_s=st.floats(0.0, 20.0), data=st.data())
def test_a_message_started_by_the_rule_never_runs_dry_within_the_measured_speed(
    speed: Speed, chars: list[int], ready_s: float, data: st.DataObject
) -> None:
    # each piece synthesizes at most as slowly, and gives at least as much audio, as measured
    pieces = [
        (
            speed.synth_s_per_char * c * data.draw(st.floats(0.0, 1.0)),
            speed.audio_s_per_char * c * data.draw(st.floats(1.0, 2.0)),
        )
        for c in chars
    ]
    if may_start(ready_s, chars, speed, MARGIN):
        assert lateness(ready_s, pieces) <= -MARGIN + 1e-9


@settings(max_examples=200, deadline=None)
@given(speed=speeds, chars=pending)
def test_the_rule_holds_no_longer_than_the_worst_speed_needs(speed: Speed, chars: list[int]) -> None:
    need = required_ready_s(chars, speed, MARGIN)
    at_worst = [(speed.synth_s_per_char * c, speed.audio_s_per_char * c) for c in chars]
    assert may_start(need, chars, speed, MARGIN)
    assert abs(lateness(need, at_worst) + MARGIN) < 1e-9  # the least slack is exactly the margin
    if need > 0.01:
        assert not may_start(need - 0.01, chars, speed, MARGIN)


def test_an_idle_machine_starts_a_message_on_its_first_piece() -> None:
    # "Ocean 534, Frankfurt Delivery," ready (about 2 s); piper at 15x real time
    idle = Speed(synth_s_per_char=0.065 / 15, audio_s_per_char=0.065)
    rest = [len("cleared to Barcelona via GEDER 4K departure,"), len("climb 6000 feet,"), len("squawk 5624.")]
    assert may_start(2.0, rest, idle)
    assert may_start(2.0, rest, PRIOR)  # nothing measured yet: no hold either


def test_synthesis_slower_than_real_time_waits_for_most_of_the_message() -> None:
    slow = Speed(synth_s_per_char=0.1, audio_s_per_char=0.065)  # 1.5x slower than real time
    long_first, long_last = [44, 16, 12], [12, 16, 44]
    # the long first piece must be ready before the ready audio has played: 0.1 * 44 + margin
    assert abs(required_ready_s(long_first, slow, MARGIN) - (0.1 * 44 + MARGIN)) < 1e-9
    # the last must be ready before all before it has played: 0.1 * 72 + margin - 0.065 * 28
    need = required_ready_s(long_last, slow, MARGIN)
    assert abs(need - (0.1 * 72 + MARGIN - 0.065 * 28)) < 1e-9
    assert not may_start(2.0, long_last, slow) and may_start(need, long_last, slow)


def test_a_message_wholly_synthesized_may_always_start() -> None:
    assert may_start(0.0, [], Speed(synth_s_per_char=10.0, audio_s_per_char=0.01))
    assert required_ready_s([], PRIOR) == 0.0


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_window_plans_with_the_slowest_recent_synthesis_and_forgets_it() -> None:
    clock = Clock()
    window = SpeedWindow(window_s=30.0, clock=clock)
    assert window.worst() == PRIOR
    window.observe(chars=40, audio_s=2.6, wall_s=0.2)  # 0.005 s per char
    clock.now += 10
    window.observe(chars=20, audio_s=1.0, wall_s=1.0)  # under load: 0.05 s per char
    clock.now += 10
    window.observe(chars=30, audio_s=2.1, wall_s=0.3)
    worst = window.worst()
    assert worst.synth_s_per_char == 0.05 and worst.audio_s_per_char == 0.05
    clock.now += 15  # the slow one is 25 s old, the first 35 s: gone
    assert window.worst().synth_s_per_char == 0.05
    clock.now += 10
    assert window.worst() == Speed(synth_s_per_char=0.01, audio_s_per_char=0.07)
    clock.now += 60
    assert window.worst() == PRIOR  # nothing recent: back to the prior


def test_a_cached_piece_teaches_the_audio_length_but_not_the_synthesis_speed() -> None:
    window = SpeedWindow(clock=Clock())
    window.observe(chars=30, audio_s=1.5, wall_s=MIN_MEASURED_S / 10)
    window.observe(chars=0, audio_s=0.0, wall_s=1.0)  # an empty piece teaches nothing
    assert window.worst() == Speed(synth_s_per_char=PRIOR.synth_s_per_char, audio_s_per_char=0.05)
    assert window.worst().real_time_factor == PRIOR.synth_s_per_char / 0.05
