"""The gateway's scenario clock: wall time, optionally compressed for training.

Sessions store times from this clock. A `time_scale` above 1 makes controller waits pass faster
(10: a "expect departure in one minute" lasts 6 s) without touching the flows, which is what a
trainee practising only the radio calls wants, and what a scripted end-to-end flight uses.

A compressed clock is anchored at a (wall time, scenario time) pair. The session store keeps that
anchor (`SessionRepository.clock_anchor`), so after a restart the scenario clock continues from
where it was, with the downtime compressed like any other wait, instead of starting again at wall
time: stored timers would otherwise be held back by the compression of the previous run.
"""

from __future__ import annotations

import time
from collections.abc import Callable

Anchor = tuple[float, float, float]  # (wall time, scenario time at it, scale)


def scaled_clock(
    scale: float = 1.0, base: Callable[[], float] = time.time, anchor: tuple[float, float] | None = None
) -> Callable[[], float]:
    """Scenario time `scale` times faster than `base`, from `anchor` = (base time, scenario time)
    (default: now, so the scenario clock starts at wall time)."""
    if anchor is None:
        if scale == 1.0:
            return base
        origin = base()
        anchor = (origin, origin)
    real, scenario = anchor
    if scale == 1.0 and real == scenario:
        return base
    return lambda: scenario + (base() - real) * scale


def continue_anchor(stored: Anchor | None, scale: float, now: float) -> Anchor:
    """The anchor a clock of `scale` starting at wall time `now` must use to continue `stored`.

    Same scale: the stored anchor as it is. Another scale (or none stored): a new anchor at `now`
    whose scenario time is what the stored clock reads now, so the scenario clock never jumps.
    """
    if stored is None:
        return (now, now, scale)
    real, scenario, old_scale = stored
    if old_scale == scale:
        return stored
    return (now, scenario + (now - real) * old_scale, scale)
