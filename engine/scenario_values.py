"""Plausible random values for a scenario: squawks, QNH, taxiways, stands, SIDs, frequencies.

Each draws from a seeded `random.Random` (engine/scenario.py hands one per variable), so one seed
gives one scenario; the tables say what a controller would and would not assign.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from engine.airport import AirportInfo

# Codes a controller never assigns: hijack, radio failure, emergency, conspicuity/VFR.
RESERVED_SQUAWKS = frozenset({"7500", "7600", "7700", "7000", "2000", "1200", "0000"})

# Invented, pronounceable five-letter fixes for SIDs when the airport has no usable navaid name.
FIXES: tuple[str, ...] = (
    "ABRIX",
    "BALOK",
    "BETRU",
    "DELKA",
    "DOMUS",
    "EKLOR",
    "ELMAR",
    "FARUN",
    "GALEX",
    "GONAT",
    "HAMOR",
    "HELIX",
    "IBERO",
    "IMKAT",
    "KALDO",
    "KERUN",
    "KOVAN",
    "LAMUR",
    "LIPSO",
    "LUMEX",
    "MARTO",
    "MIKOS",
    "NABEL",
    "NORVI",
    "OBLAN",
    "OKTAL",
    "PELIX",
    "PODER",
    "RANOS",
    "RELUK",
    "SAPOR",
    "SIRKA",
    "SOVEL",
    "TABIR",
    "TELOS",
    "TORGA",
    "ULMAR",
    "UVENO",
    "VAKOS",
    "WILDO",
)
SID_FIXES = 6  # SIDs an airport publishes (fixes they end at): what a pilot may read back there
SID_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"  # I and O are not used in procedure names
TAXIWAY_LETTERS = "ABCDEFGHJKLMNPRSTUVWYZ"  # ICAO avoids I, O, Q and X for taxiways
STAND_LETTERS = "ABCDEFGHKV"

# Usual band of each station (MHz); every value is inside the 118.000-136.975 airband.
FREQ_BANDS: dict[str, tuple[float, float]] = {
    "delivery": (121.600, 122.000),
    "ground": (121.600, 121.975),
    "tower": (118.000, 120.975),
    "departure": (119.000, 127.975),
    "approach": (118.500, 128.975),
    "center": (124.000, 136.975),
    "atis": (126.000, 128.975),
}
# 8.33 kHz channel names end in these two digits (the 25 kHz channels are among them).
CHANNEL_ENDINGS = frozenset({0, 5, 10, 15, 25, 30, 35, 40, 50, 55, 60, 65, 75, 80, 85, 90})


def fix_from_name(name: str) -> str | None:
    """A navaid name as a five-letter fix: "Taunus" -> "TAUNU"; short or odd names give None."""
    first = name.split()[0] if name.split() else ""
    letters = first.upper()
    return letters[:5] if len(letters) >= 5 and letters.isascii() and letters.isalpha() else None


def sid_fixes(airport: AirportInfo | None) -> tuple[str, ...]:
    """The fixes an airport's SIDs end at, sorted: up to half of `SID_FIXES` named after navaids a
    little way out, the rest invented (`FIXES`, drawn from the airport's code: the same airport,
    the same SIDs). Every one of them is a SID a pilot may read back there, so the recognizer is
    offered them all alike (`gateway.speech.stack.stt_context`), never the issued one alone."""
    local: set[str] = set()
    if airport:
        home = {w.upper() for w in f"{airport.city} {airport.name}".split()}
        local = {
            fix
            for nav in airport.navaids
            if (nav.distance_nm or 0) >= 8
            and (fix := fix_from_name(nav.name))
            and nav.name.split()[0].upper() not in home
        }
    named = sorted(local)[: SID_FIXES // 2]
    invented = random.Random(f"sid-fixes:{airport.icao if airport else ''}").sample(
        [f for f in FIXES if f not in named], SID_FIXES - len(named)
    )
    return tuple(sorted({*named, *invented}))


def sid(fixes: Sequence[str], rng: random.Random) -> str:
    """ "MARUN 7F": one of the airport's SIDs (`fixes`, its `sid_fixes`), with its number and letter."""
    return f"{rng.choice(fixes)} {rng.randint(1, 9)}{rng.choice(SID_LETTERS)}"


def altitude(rng: random.Random, choices: tuple[int, ...], floor_ft: int) -> int:
    """A usual level-off altitude, but never less than `floor_ft` (rounded up to 1000 ft)."""
    return max(rng.choice(choices), int(math.ceil(floor_ft / 1000.0)) * 1000)


def squawk(rng: random.Random) -> str:
    while True:
        code = "".join(str(rng.randint(0, 7)) for _ in range(4))
        if code not in RESERVED_SQUAWKS:
            return code


def qnh(rng: random.Random) -> int:
    return min(1035, max(990, round(rng.gauss(1013, 8))))


def taxiway(rng: random.Random) -> str:
    return f"{rng.choice(TAXIWAY_LETTERS)}{rng.randint(1, 14)}"


def taxi_route(rng: random.Random) -> str:
    """Two or three taxiway segments on different taxiways: "N3 U4"."""
    letters = rng.sample(TAXIWAY_LETTERS, rng.choice((2, 2, 3)))
    return " ".join(f"{letter}{rng.randint(1, 9)}" for letter in letters)


def stand(rng: random.Random) -> str:
    letter = rng.choice(STAND_LETTERS)
    return f"{letter}{rng.randint(101, 299) if letter == 'V' else rng.randint(1, 60)}"


def frequency(airport: AirportInfo | None, station: str, used: set[str], rng: random.Random) -> str:
    """The airport's own frequency for `station` when known, else a free channel in its band."""
    real = (airport.frequencies.get(station) if airport else None) or []
    if real:
        return rng.choice(real)
    low, high = FREQ_BANDS[station]
    channels = [
        f"{khz / 1000:.3f}"
        for khz in range(round(low * 1000), round(high * 1000) + 1, 5)
        if khz % 100 in CHANNEL_ENDINGS
    ]
    free = [c for c in channels if c not in used]
    return rng.choice(free or channels)
