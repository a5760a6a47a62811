"""The gateway's scenario clock: wall time, optionally compressed for training.

Sessions store times from this clock. A `time_scale` above 1 makes controller waits pass faster
(10: a "expect departure in one minute" lasts 6 s) without touching the flows, which is what a
trainee practising only the radio calls wants, and what a scripted end-to-end flight uses.
"""

from __future__ import annotations

import time
from typing import Callable


def scaled_clock(scale: float = 1.0, base: Callable[[], float] = time.time) -> Callable[[], float]:
    if scale == 1.0:
        return base
    origin = base()
    return lambda: origin + (base() - origin) * scale
