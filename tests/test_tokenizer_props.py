"""Property tests of the tokenizer: every value said in any pronunciation mix extracts exactly.

The speaker here is independent of engine.phraseology: it has its own word tables (ICAO, ICAO
hyphenated and syllable-split, plain English, "oh" for zero, "double"/"triple" for repeats, group
forms such as "one twenty one", fillers, commas) and never calls the package's speech functions.
A callsign (a random airline of `callsigns.AIRLINES` with a 1-4 digit flight number, said by
this speaker too) comes before or after the value, with or without a comma; the callsign hint
is passed through `extract`'s variables (`{"callsign": code}`) except where a comma already
separates a flight number of two or more digits. Shrunk counterexamples that were fixed are
pinned in tests/test_tokenizer_regressions.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import phraseology as p
from engine.phraseology.callsigns import AIRLINES

ICAO_HYPHEN = ("ze-ro", "wun", "too", "tree", "fow-er", "fife", "six", "sev-en", "ait", "nin-er")
ICAO_SPLIT = ("ze ro", "wun", "too", "tree", "fow er", "fife", "six", "sev en", "ait", "nin er")
ICAO_WHOLE = ("zero", "wun", "too", "tree", "fower", "fife", "six", "seven", "ait", "niner")
ENGLISH = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
THOUSAND = ("thousand", "tou-sand", "tou sand", "tousand")
HUNDRED = ("hundred", "hun-dred", "hun dred")
DECIMAL = ("decimal", "point", "dot", "day-see-mal", "day see mal", "dayseemal", "daysimal")
FILLERS = ("uh", "um", "er", "erm", "ah", "eh", "hmm")
PHONETIC = {
    "A": "alfa", "B": "bravo", "C": "charlie", "D": "delta", "E": "echo", "F": "foxtrot", "G": "golf",
    "H": "hotel", "I": "india", "J": "juliett", "K": "kilo", "L": "lima", "M": "mike", "N": "november",
    "O": "oscar", "P": "papa", "Q": "quebec", "R": "romeo", "S": "sierra", "T": "tango", "U": "uniform",
    "V": "victor", "W": "whiskey", "X": "xray", "Y": "yankee", "Z": "zulu",
}
SIDES = {"L": ("left",), "R": ("right",), "C": ("center", "centre")}
# 8.33 kHz channel names (the 25 kHz ones among them) within 100 kHz.
CHANNEL_ENDINGS = ("00", "05", "10", "15", "25", "30", "35", "40", "50", "55", "60", "65", "75", "80", "85", "90")

Draw = st.DrawFn


@dataclass(frozen=True)
class Chunk:
    kind: str  # "one" (a single digit word), "rep" (double/triple), "teen", "bare" (tens), "tens"
    first: int  # the first digit it stands for
    text: str


def digit_word(draw: Draw, d: int) -> str:
    options = [ICAO_HYPHEN[d], ICAO_SPLIT[d], ICAO_WHOLE[d], ENGLISH[d]] + (["oh"] if d == 0 else [])
    return draw(st.sampled_from(options))


def say_digits(draw: Draw, digits: str, *, groups: bool = True, commas: bool = False) -> list[str]:
    """Units (words, or syllable-split words) for a digit string, in any mix of pronunciations."""
    if commas:
        return [digit_word(draw, int(d)) + ("," if k < len(digits) - 1 else "") for k, d in enumerate(digits)]
    chunks: list[Chunk] = []
    i = 0
    while i < len(digits):
        d = int(digits[i])
        run = 1
        while run < 3 and i + run < len(digits) and digits[i + run] == digits[i]:
            run += 1
        choice = draw(st.integers(0, 3))
        if choice == 1 and run >= 2:
            n = draw(st.integers(2, run))
            word = "double" if n == 2 else "triple"
            chunks.append(Chunk("rep", d, f"{word} {digit_word(draw, d)}"))
            i += n
        elif groups and choice == 2 and i + 1 < len(digits) and d != 0:
            b = int(digits[i + 1])
            if d == 1:
                chunks.append(Chunk("teen", d, TEENS[b]))
            elif b == 0:
                chunks.append(Chunk("bare", d, TENS[d]))
            else:
                unit = draw(st.sampled_from([ENGLISH[b], ICAO_WHOLE[b], ICAO_HYPHEN[b]]))
                chunks.append(Chunk("tens", d, f"{TENS[d]} {unit}"))
            i += 2
        else:
            chunks.append(Chunk("one", d, digit_word(draw, d)))
            i += 1
    # "twenty" then "one" is 21, never 20 and 1: a bare tens word is not followed by a digit 1-9,
    # nor by another bare tens word said as digits ("thirty twenty five" -> "thirty two zero five"
    # would be 32 0 5): decided from the end, on what is said after it.
    units: list[str] = []
    digit_after = False  # the unit said next is a lone digit 1-9
    for chunk in reversed(chunks):
        if chunk.kind == "bare" and digit_after:
            units[:0] = [digit_word(draw, chunk.first), digit_word(draw, 0)]
        else:
            units.insert(0, chunk.text)
            digit_after = chunk.kind in ("one", "rep") and chunk.first != 0
            continue
        digit_after = True  # its first digit word (a bare tens word is never zero)
    return units


def say_number_words(draw: Draw, n: int) -> list[str]:
    """1-99 as English words ("fourteen", "forty five") or digits."""
    return say_digits(draw, str(n)) if draw(st.booleans()) else english(draw, n)


def english(draw: Draw, n: int) -> list[str]:
    """1-99 as one English number ("seven", "fourteen", "forty five")."""
    if n < 10:
        return [digit_word(draw, n)]
    if n < 20:
        return [TEENS[n - 10]]
    return [TENS[n // 10]] + ([ENGLISH[n % 10]] if n % 10 else [])


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Said:
    units: tuple[str, ...]
    bare: bool = False  # said without a keyword before it (a suffix or a decimal word identifies it)


@st.composite
def squawks(draw: Draw) -> str:
    return "".join(draw(st.sampled_from("01234567")) for _ in range(4))


def say_squawk(draw: Draw, code: str) -> Said:
    mode = draw(st.integers(0, 3))
    if mode == 0 and code[0] != "0" and code[1:] == "000":
        value = [digit_word(draw, int(code[0])), draw(st.sampled_from(THOUSAND))]
    elif mode == 1 and code[0] != "0" and code[2:] == "00":
        value = say_number_words(draw, int(code[:2])) + [draw(st.sampled_from(HUNDRED))]
    else:
        value = say_digits(draw, code, commas=draw(st.integers(0, 5)) == 0)
    head = draw(st.sampled_from([["squawk"], ["squawk", "code"], ["transponder"], ["squawking"]]))
    return Said(tuple(head + value))


@st.composite
def frequencies(draw: Draw) -> str:
    whole = draw(st.integers(118, 136))
    frac = f"{draw(st.integers(0, 9))}{draw(st.sampled_from(CHANNEL_ENDINGS))}"
    value = f"{whole}.{frac}"
    return value if float(value) <= 136.975 else "136.975"


def say_frequency(draw: Draw, canon: str) -> Said:
    whole, frac = canon.split(".")
    short = frac.rstrip("0") or frac[:1]
    frac = draw(st.sampled_from([frac, short]))
    head = draw(st.sampled_from([[], ["contact", "tower"], ["ground"], ["monitor", "approach"], ["frequency"]]))
    if head and draw(st.integers(0, 3)) == 0:
        # said without the decimal word, after a station or "contact": "ground one two one eight five"
        return Said(tuple(head + say_digits(draw, whole + frac)))
    decimals = say_digits(draw, frac)
    if decimals[0] in (ICAO_HYPHEN[4], ICAO_SPLIT[4], ICAO_WHOLE[4], ENGLISH[4]):
        decimals[0] = draw(st.sampled_from([decimals[0], "for"]))  # the recognizer's "decimal for"
    value = say_digits(draw, whole) + [draw(st.sampled_from(DECIMAL))] + decimals
    return Said(tuple(head + value), bare=not head)


@st.composite
def altitudes(draw: Draw) -> int:
    return draw(st.integers(1, 450)) * 100


def say_feet(draw: Draw, n: int) -> list[str]:
    thousands, hundreds = divmod(n, 1000)
    hundreds //= 100
    mode = draw(st.integers(0, 2))
    if mode == 0:
        return say_digits(draw, str(n), commas=draw(st.integers(0, 5)) == 0)
    if mode == 1 and 0 < thousands < 10 and hundreds:
        return say_number_words(draw, n // 100) + [draw(st.sampled_from(HUNDRED))]  # "forty five hundred"
    words: list[str] = []
    if thousands:
        said = say_number_words(draw, thousands)
        if thousands == 4 and len(said) == 1:
            said = [draw(st.sampled_from([said[0], "for"]))]  # the recognizer's "for thousand"
        words += said + [draw(st.sampled_from(THOUSAND))]
    if hundreds:
        words += [digit_word(draw, hundreds), draw(st.sampled_from(HUNDRED))]
    return words


def say_altitude(draw: Draw, n: int) -> Said:
    value = say_feet(draw, n)
    frame = draw(st.integers(0, 4))
    if frame == 0:
        return Said(tuple(value + ["feet"]), bare=True)
    head = [["climb"], ["descend", "to"], ["maintain"], ["climb", "to", "altitude"], ["descend"]][frame]
    tail = ["feet"] if draw(st.booleans()) else []
    return Said(tuple(head + value + tail))


def say_level(draw: Draw, n: int) -> Said:
    mode = draw(st.integers(0, 2))
    if mode == 0 and n % 100 == 0:
        value = [digit_word(draw, n // 100), draw(st.sampled_from(HUNDRED))]
    elif mode == 1:
        value = say_digits(draw, str(n))
    else:
        value = say_digits(draw, f"{n:03d}", commas=draw(st.integers(0, 5)) == 0)
    head = draw(st.sampled_from([[], ["climb"], ["descend", "to"], ["maintain"]]))
    return Said(tuple(head + ["flight", "level"] + value))


@st.composite
def runways(draw: Draw) -> str:
    return f"{draw(st.integers(1, 36)):02d}{draw(st.sampled_from(['', 'L', 'R', 'C']))}"


def say_runway(draw: Draw, canon: str) -> Said:
    number, side = canon[:2], canon[2:]
    digits = number if draw(st.booleans()) else str(int(number))
    value = say_digits(draw, digits, commas=draw(st.integers(0, 5)) == 0)
    if side:
        value.append(draw(st.sampled_from(SIDES[side])))
    heads = [["runway"], ["line", "up", "runway"], ["cleared", "to", "land", "runway"]] + ([[]] if side else [])
    head = draw(st.sampled_from(heads))
    return Said(tuple(head + value), bare=not head)


def say_heading(draw: Draw, n: int) -> Said:
    digits = f"{n:03d}" if draw(st.booleans()) else str(n)
    value = say_digits(draw, digits, commas=draw(st.integers(0, 5)) == 0)
    head = draw(st.sampled_from([["heading"], ["turn", "left", "heading"], ["fly", "heading"]]))
    return Said(tuple(head + value))


def say_qnh(draw: Draw, n: int) -> Said:
    value = say_digits(draw, str(n), commas=draw(st.integers(0, 5)) == 0)
    return Said(tuple(draw(st.sampled_from([["qnh"], ["q", "n", "h"], ["QNH"]])) + value))


def say_speed(draw: Draw, n: int) -> Said:
    if n >= 100 and draw(st.booleans()):
        hundreds, rest = divmod(n, 100)
        value = [digit_word(draw, hundreds), draw(st.sampled_from(HUNDRED))]
        if rest:  # after "hundred" the rest is one number: "two hundred ten", not "two hundred one zero"
            value += (["and"] if draw(st.booleans()) else []) + english(draw, rest)
    else:
        value = say_digits(draw, str(n), commas=draw(st.integers(0, 5)) == 0)
    frame = draw(st.integers(0, 2))
    if frame == 0:
        return Said(tuple(value + ["knots"]), bare=True)
    head = [[], ["speed"], ["reduce", "speed", "to"]][frame]
    return Said(tuple(head + value + (["knots"] if draw(st.booleans()) else [])))


KINDS: dict[str, tuple[st.SearchStrategy[object], object, object]] = {
    # kind: (values, speaker, canonical form of a value)
    "squawk": (squawks(), say_squawk, str),
    "frequency": (frequencies(), say_frequency, str),
    "altitude": (altitudes(), say_altitude, str),
    "flight_level": (st.integers(10, 450), say_level, lambda n: f"FL{n:03d}"),
    "runway": (runways(), say_runway, str),
    "heading": (st.integers(1, 360), say_heading, lambda n: f"{n:03d}"),
    "qnh": (st.integers(950, 1050), say_qnh, str),
    "speed": (st.integers(60, 399), say_speed, str),
}


# --------------------------------------------------------------------------- callsign and phrase


@dataclass(frozen=True)
class Callsign:
    code: str
    units: tuple[str, ...]
    flight: str


@st.composite
def callsigns(draw: Draw) -> Callsign:
    airline = draw(st.sampled_from(sorted(AIRLINES)))
    flight = str(draw(st.integers(1, 10 ** draw(st.integers(1, 4)) - 1)))
    mode = draw(st.integers(0, 4))
    if mode == 0:
        head = [" ".join(PHONETIC[ch] for ch in airline)]
    elif mode == 1:
        head = [airline]
    else:
        telephony = AIRLINES[airline][0]
        head = [draw(st.sampled_from([telephony, telephony.lower(), telephony.upper()]))]
    return Callsign(f"{airline}{flight}", tuple(head + say_digits(draw, flight)), flight)


@dataclass(frozen=True)
class Phrase:
    text: str
    variables: dict[str, str]


def assemble(draw: Draw, said: Said, callsign: Callsign | None) -> Phrase:
    units = list(said.units)
    variables: dict[str, str] = {}
    if callsign is not None:
        comma = draw(st.booleans())
        cs = list(callsign.units)
        if draw(st.booleans()):
            units = cs[:-1] + [cs[-1] + ("," if comma else "")] + units
        else:
            units = units[:-1] + [units[-1] + ("," if comma else "")] + cs
        # The hint is what lets "swiss one five eight one four thousand" split; a comma after a
        # flight number of two or more digits splits it without the hint.
        if not (comma and len(callsign.flight) >= 2) or draw(st.booleans()):
            variables["callsign"] = callsign.code
    words: list[str] = []
    for unit in units:
        if words and draw(st.integers(0, 7)) == 0:
            filler = draw(st.sampled_from(FILLERS))
            if words[-1].endswith(","):
                words.append(filler + ",")
            else:
                words.append(filler)
        words.append(unit)
    return Phrase(" ".join(words), variables)


@st.composite
def spoken(draw: Draw, kind: str) -> tuple[str, Phrase]:
    values, speaker, canonical = KINDS[kind]
    value = draw(values)
    said = speaker(draw, value)  # type: ignore[operator]
    callsign = draw(st.none() | callsigns())
    return canonical(value), assemble(draw, said, callsign)  # type: ignore[operator]


@st.composite
def spoken_other(draw: Draw, kind: str) -> tuple[str, Phrase]:
    """A value other than the issued one, said: (issued canonical, phrase of the other value)."""
    values, speaker, canonical = KINDS[kind]
    issued = draw(values)
    other = draw(values.filter(lambda v: canonical(v) != canonical(issued)))  # type: ignore[operator]
    said = speaker(draw, other)  # type: ignore[operator]
    callsign = draw(st.none() | callsigns())
    return canonical(issued), assemble(draw, said, callsign)  # type: ignore[operator]


PROPS = settings(max_examples=int(__import__("os").environ.get("TOKENIZER_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False)


def _check(kind: str, canon: str, phrase: Phrase) -> None:
    values = p.extract(kind, phrase.text, phrase.variables)
    heard = p.tokenize(phrase.text, phrase.variables.get("callsign")).text
    assert values == [canon], (phrase.text, phrase.variables, heard, canon, values)


@PROPS
@given(st.data())
def test_every_squawk_extracts_exactly(data: st.DataObject) -> None:
    _check("squawk", *data.draw(spoken("squawk")))


@PROPS
@given(st.data())
def test_every_frequency_extracts_exactly(data: st.DataObject) -> None:
    _check("frequency", *data.draw(spoken("frequency")))


@PROPS
@given(st.data())
def test_every_altitude_extracts_exactly(data: st.DataObject) -> None:
    _check("altitude", *data.draw(spoken("altitude")))


@PROPS
@given(st.data())
def test_every_flight_level_extracts_exactly(data: st.DataObject) -> None:
    _check("flight_level", *data.draw(spoken("flight_level")))


@PROPS
@given(st.data())
def test_every_runway_extracts_exactly(data: st.DataObject) -> None:
    _check("runway", *data.draw(spoken("runway")))


@PROPS
@given(st.data())
def test_every_heading_extracts_exactly(data: st.DataObject) -> None:
    _check("heading", *data.draw(spoken("heading")))


@PROPS
@given(st.data())
def test_every_qnh_extracts_exactly(data: st.DataObject) -> None:
    _check("qnh", *data.draw(spoken("qnh")))


@PROPS
@given(st.data())
def test_every_speed_extracts_exactly(data: st.DataObject) -> None:
    _check("speed", *data.draw(spoken("speed")))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.sampled_from(sorted(KINDS)), st.data())
def test_a_different_value_never_extracts_as_the_issued_one(kind: str, data: st.DataObject) -> None:
    issued, phrase = data.draw(spoken_other(kind))
    values = p.extract(kind, phrase.text, phrase.variables)
    assert issued not in values, (phrase.text, phrase.variables, values)


@settings(max_examples=100, deadline=None)
@given(callsigns(), st.sampled_from(sorted(KINDS)), st.data())
def test_the_callsign_is_still_found(callsign: Callsign, kind: str, data: st.DataObject) -> None:
    """The hint splits numbers but never hides the callsign itself."""
    values, speaker, _canonical = KINDS[kind]
    phrase = assemble(data.draw, speaker(data.draw, data.draw(values)), callsign)  # type: ignore[operator]
    assert callsign.code in p.extract("callsign", phrase.text, phrase.variables), phrase


@settings(max_examples=150, deadline=None)
@given(callsigns(), st.sampled_from(["thousand feet", "hundred feet", ", thousand feet", ". thousand"]))
def test_a_thousand_right_after_our_flight_number_is_no_altitude(callsign: Callsign, rest: str) -> None:
    """ "Jetblue four three eight, thousand feet": the altitude's digit was lost (fresh seed 54,
    5000 ft read back), the "eight" before "thousand" is the flight number's: no altitude of
    8000 or 1000 is read, and the callsign stays whole."""
    text = " ".join(callsign.units) + (rest if rest[0] in ",." else f" {rest}")
    variables = {"callsign": callsign.code}
    assert p.extract("altitude", text, variables) == [], text
    assert callsign.code in p.extract("callsign", text, variables), text


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    via=st.sampled_from(("via", "mia", "mya", "myo")),
    letters=st.lists(st.sampled_from(sorted(PHONETIC)), min_size=1, max_size=3),
    numbers=st.lists(st.integers(min_value=1, max_value=99), min_size=3, max_size=3),
)
def test_via_run_into_a_taxiway_letter_reads_as_said_apart(via: str, letters: list[str], numbers: list[int]) -> None:
    """Whisper runs "via" into the taxiway's letter ("myotango eight", "viapapa four"): any
    spelling of "via" glued to any phonetic letter reads the route exactly as said apart."""
    route = [f"{PHONETIC[letter]} {' '.join(ENGLISH[int(d)] for d in str(n))}" for letter, n in zip(letters, numbers, strict=False)]
    glued = f"taxi {via}{' '.join(route)}, holding point"
    apart = f"taxi via {' '.join(route)}, holding point"
    assert p.normalize_transcript(glued) == p.normalize_transcript(apart)
    want = " ".join(f"{letter}{n}" for letter, n in zip(letters, numbers, strict=False))
    assert p.extract("route", glued) == p.extract("route", apart) == [want], glued
