"""The independent pilot's own word tables (never `engine.phraseology`'s): digits, NATO letters,
numbers in words, which kind of value each readback variable holds, and the forms a run allows."""

from __future__ import annotations

import contextvars
import random

__all__ = ["AIRPORT_NAMES", "CARRIERS", "FORMS", "SOUND_ALIKES", "kind_of", "pick"]

# --------------------------------------------------------------------------- word tables (own)

DIGITS_PLAIN = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
DIGITS_ICAO = ("zero", "one", "two", "tree", "four", "fife", "six", "seven", "eight", "niner")
DIGITS_HYPHEN = ("zee-ro", "wun", "too", "tree", "fow-er", "fife", "six", "sev-en", "ait", "nin-er")
TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

NATO: dict[str, tuple[str, ...]] = {
    "A": ("alfa", "alpha"), "B": ("bravo",), "C": ("charlie",), "D": ("delta",), "E": ("echo",),
    "F": ("foxtrot",), "G": ("golf",), "H": ("hotel",), "I": ("india",), "J": ("juliett", "juliet"),
    "K": ("kilo",), "L": ("lima",), "M": ("mike",), "N": ("november",), "O": ("oscar",), "P": ("papa",),
    "Q": ("quebec",), "R": ("romeo",), "S": ("sierra",), "T": ("tango",), "U": ("uniform",),
    "V": ("victor",), "W": ("whiskey",), "X": ("x-ray", "xray"), "Y": ("yankee",), "Z": ("zulu",),
}
SIDES = {"L": ("left",), "R": ("right",), "C": ("center", "centre")}

# Which kind of value a readback variable holds (own table: names as the flows use them).
VARIABLE_KINDS: dict[str, str] = {
    "destination": "airport", "sid": "sid", "squawk": "squawk", "atis_letter": "letter",
    "initial_altitude_ft": "altitude", "cleared_altitude_ft": "altitude", "arrival_altitude_ft": "altitude",
    "cruise_level": "flight_level", "descent_level": "flight_level", "heading": "heading",
    "runway": "runway", "arrival_runway": "runway", "qnh": "qnh", "arrival_qnh": "qnh",
    "holding_point": "holding_point", "arrival_holding_point": "holding_point",
    "stand": "stand", "arrival_stand": "stand", "taxi_route": "route", "arrival_taxi_route": "route",
}
# Station said before a frequency ("ground one two one decimal eight").
FREQ_STATIONS = {
    "ground": ("ground",), "tower": ("tower",), "departure": ("departure",), "approach": ("approach",),
    "center": ("center", "radar"), "delivery": ("delivery",),
}
# Words a request adds to an initial call whose readback is checked (ATIS letter): by intent.
CARRIERS: dict[str, tuple[str, ...]] = {
    "request_clearance": ("request IFR clearance", "requesting IFR clearance", "request clearance"),
    "request_taxi": ("request taxi for circuits", "request taxi for the circuit", "requesting taxi for circuits"),
}
FILLERS_FRONT = ("", "", "", "roger", "wilco", "okay")
FILLERS_BACK = ("", "", "", "wilco", "roger")
# Airports by ICAO code, for destinations (own table; the scenario's DESTINATIONS and a few more).
AIRPORT_NAMES: dict[str, tuple[str, ...]] = {
    "EDDM": ("Munich",), "EDDH": ("Hamburg",), "EDDB": ("Berlin",), "EDDL": ("Dusseldorf", "Düsseldorf"),
    "EGLL": ("London Heathrow", "Heathrow"), "EGKK": ("London Gatwick", "Gatwick"), "LFPG": ("Paris", "Charles de Gaulle"),
    "EHAM": ("Amsterdam", "Schiphol"), "LSZH": ("Zurich",), "LOWW": ("Vienna",), "EKCH": ("Copenhagen",),
    "ENGM": ("Oslo",), "ESSA": ("Stockholm", "Arlanda"), "EFHK": ("Helsinki",), "EPWA": ("Warsaw",),
    "LKPR": ("Prague",), "EBBR": ("Brussels",), "LEMD": ("Madrid",), "LEBL": ("Barcelona",), "LIRF": ("Rome",),
    "LPPT": ("Lisbon",), "EIDW": ("Dublin",), "EDDF": ("Frankfurt",), "EDDS": ("Stuttgart",), "EDDK": ("Cologne",),
    # the sound-alikes below, never issued by the scenarios
    "EDDG": ("Munster",), "EDDV": ("Hannover",), "EDDW": ("Bremen",), "ENBR": ("Bergen",), "EGGW": ("Luton",),
    "LFLL": ("Lyon",), "LIRP": ("Pisa",), "EHRD": ("Rotterdam",), "LIPX": ("Verona",), "EBOS": ("Ostend",),
    "LGIR": ("Heraklion",), "LPPR": ("Porto",), "EGGD": ("Bristol",), "LFRB": ("Brest",), "LIPE": ("Bologna",),
    "LOWL": ("Linz",), "EPLB": ("Lublin",), "EDLW": ("Dortmund",), "LPMA": ("Madeira",), "LFCR": ("Rodez",),
}
# Airports whose names a pilot may say for a destination's, or a recognizer write as it (chosen by
# ear, not by the engine's rules): a wrong clearance limit is one of these half the time where
# the issued one has any. Whisper, prompted with the issued city, writes it for a sound-alike
# said ("Bremen" as "Berlin"), which only a check of the city said can catch.
SOUND_ALIKES: dict[str, tuple[str, ...]] = {
    "EDDM": ("EDDG",), "EDDH": ("EDDV",), "EDDB": ("EDDW", "ENBR"), "EGLL": ("EGGW", "LFLL"), "EGKK": ("EGGW", "LFLL"),
    "LFPG": ("LIRP",), "EHAM": ("EHRD",), "LOWW": ("LIPX",), "ENGM": ("EBOS",), "EFHK": ("LGIR",), "LKPR": ("LPPR",),
    "EBBR": ("EGGD", "LFRB"), "LEBL": ("LIPE",), "LPPT": ("LOWL",), "EIDW": ("EPLB",), "EDDL": ("EDLW",),
    "LEMD": ("LPMA",), "LIRF": ("LFCR",),
}  # fmt: skip


# Forms: "all" (every way above) or "core": only what a textbook readback says: ICAO or plain
# digit words ("tree fife niner", "three five nine") and written digits; no hyphenated ICAO
# spellings, no grouped numbers ("one twenty-one", "three fifty"), no "tousand", no airport code
# spelled out ("echo delta delta mike").
# "spoken": every form said in words (no written digits or codes); "speech": the textbook forms
# (core) said in words, what the voice benchmark speaks.
FORMS = ("all", "core", "spoken", "speech")
WRITTEN = frozenset({"numeric", "numeric_comma", "numeric_full", "numeric_side", "short", "code"})
CORE_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("readback_pilot_core", default=False)
SPOKEN_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("readback_pilot_spoken", default=False)
# The controller's message being read back, as heard: a pilot climbs or descends as told.
HEARD: contextvars.ContextVar[str] = contextvars.ContextVar("readback_pilot_heard", default="")


def pick(rng: random.Random, options: tuple[str, ...], extended: tuple[str, ...] = ("hyphen", "group")) -> str:
    """`rng.choice(options)`, leaving out the extended forms in core mode (the draw is made from
    the full tuple either way and an extended pick falls back to the first option, so a core
    and an all run of the same seed stay close)."""
    choice = rng.choice(options)
    if CORE_ONLY.get() and choice in extended:
        return next(o for o in options if o not in extended)
    if SPOKEN_ONLY.get() and choice in WRITTEN:
        return next(o for o in options if o not in WRITTEN)
    return choice


def kind_of(name: str) -> str:
    """The kind of a readback variable ("dest_tower_freq" -> "frequency"); unknown -> "text"."""
    if name in VARIABLE_KINDS:
        return VARIABLE_KINDS[name]
    if name.endswith("_freq"):
        return "frequency"
    if name.endswith("_level"):
        return "flight_level"
    if name.endswith("_ft"):
        return "altitude"
    return "text"


class Paused(str):
    """A part said with a pause before and after it (a comma in text): a QNH read back bare
    ("romeo five, one zero one three") runs into the digits before it without one, for a
    listener as for the tokenizer."""


# --------------------------------------------------------------------------- numbers in words


def digit_words(digits: str, rng: random.Random, style: str | None = None) -> str:
    """Each digit as a word, in one style (icao, plain, hyphen, mixed) or as digits ("numeric")."""
    style = style or rng.choice(("icao", "plain", "plain", "hyphen", "mixed", "numeric"))
    if style == "numeric" and SPOKEN_ONLY.get():
        style = "plain"
    if style == "numeric":
        return digits
    core = CORE_ONLY.get()
    if core and style == "hyphen":
        style = "icao"
    mixed = (DIGITS_ICAO, DIGITS_PLAIN) if core else (DIGITS_ICAO, DIGITS_PLAIN, DIGITS_HYPHEN)
    tables = {"icao": (DIGITS_ICAO,), "plain": (DIGITS_PLAIN,), "hyphen": (DIGITS_HYPHEN,), "mixed": mixed}[style]
    return " ".join(rng.choice(tables)[int(d)] for d in digits)


def number_words(n: int) -> str:
    """0..99 in plain English ("twenty-one", "fifty", "seven")."""
    if n < 10:
        return DIGITS_PLAIN[n]
    if n < 20:
        return TEENS[n - 10]
    tens, ones = divmod(n, 10)
    return TENS[tens] if ones == 0 else f"{TENS[tens]}{'-' if ones else ''}{DIGITS_PLAIN[ones]}"


def group_words(digits: str, rng: random.Random) -> str:
    """Digits said in groups, as people read numbers: "121" -> "one twenty-one", "350" -> "three fifty",
    "4721" -> "forty-seven twenty-one", "1013" -> "ten thirteen"; a leading zero is said alone.
    In core mode: plain digit words."""
    if CORE_ONLY.get():
        return digit_words(digits, rng, "plain")
    out: list[str] = []
    rest = digits
    if len(rest) % 2 == 1:
        out.append(DIGITS_PLAIN[int(rest[0])])
        rest = rest[1:]
    for i in range(0, len(rest), 2):
        pair = rest[i : i + 2]
        if pair[0] == "0":
            out.append(f"{'zero' if rng.random() < 0.5 else 'oh'} {DIGITS_PLAIN[int(pair[1])]}")
        else:
            word = number_words(int(pair))
            out.append(word.replace("-", " ") if rng.random() < 0.4 else word)
    return " ".join(out)


def letter_word(letter: str, rng: random.Random) -> str:
    return rng.choice(NATO[letter.upper()])


def capitalize_some(word: str, rng: random.Random) -> str:
    return rng.choice((word, word.lower(), word.capitalize(), word.upper()))


