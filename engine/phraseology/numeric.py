"""Values spoken digit by digit after their keyword: heading, squawk, QNH, speed, wind.

A bare number in a transcript is ambiguous, so each of these is read after its keyword
("heading", "squawk"/"transponder"/"code", "qnh"/"altimeter", "speed"/"knots", "wind"), with
two forms pilots use where nothing else can be meant: a heading after the direction of turn
("left three six zero"), and a QNH in hectopascals said bare where the state asks for one
("descend 3000 feet, one zero zero four"; never in a recognizer alternative with doubted words).
Whatever number follows the keyword is reported, valid or not, so "squawk 472" reads back as
wrong rather than missing.
"""

from __future__ import annotations

import re
from typing import Any

from engine.phraseology.context import Context, other_digits
from engine.phraseology.directions import is_turn
from engine.phraseology.hits import Found, Hit
from engine.phraseology.numbers import speak_digits
from engine.phraseology.transcript import Transcript


def _digits(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text if text.isdigit() else None


def _after(
    t: Transcript,
    anchors: frozenset[str],
    skip: frozenset[str] = frozenset(),
    length: int = 0,
    ctx: Context | None = None,
) -> Found:
    """A hit (index, numeral) for each integer that follows an anchor word, skipping `skip` words.

    A value said digit by digit with a pause inside ("heading zero seven, zero", as a recognizer
    writes it) arrives as two numbers: while the first is shorter than the kind's `length`, the
    integers right after it are joined to it as long as the whole fits.

    A value of the kind's full `length` said bare right after one (`second_value`: "squawk 3535,
    3553") is a second value of the kind, as "squawk 3535, squawk 3553" is: the pilot corrected
    himself, the word "correction" left out or not heard, and the first must not stand alone."""
    found: Found = []
    for i, word in enumerate(t.words):
        if word not in anchors:
            continue
        j = i + 1
        while t.word(j) in skip:
            j += 1
        number = t.number(j)
        if number is None:
            continue
        k = j + 1
        while (
            number.isdigit() and len(number) < length and (more := t.integer(k)) and len(number) + len(more) <= length
        ):
            number, k = number + more, k + 1
        found.append(Hit(j, number))
        if ctx is not None and (again := second_value(t, k, number, length, ctx)) is not None:
            found.append(Hit(k, again))
    return found


def second_value(t: Transcript, k: int, first: str, length: int, ctx: Context) -> str | None:
    """The integer at word `k`, right after a value `first` of `length` digits, where it has that
    many digits too, differs, is no other kind's by its unit ("heading 230, 120 knots"), and says
    no other scenario value (`ctx.variables`, our callsign among them: "squawk 3535, 1014" with the
    QNH 1014 issued is the QNH said bare)."""
    more = t.integer(k)
    if not length or more is None or len(first) != length or len(more) != length or more == first:
        return None
    if t.word(k + 1) in _NOT_QNH_AFTER:
        return None
    return None if more in other_digits(ctx) else more


# --------------------------------------------------------------------------- heading

_HEADING_TEXT = re.compile(r"^\s*(?:HEADING|HDG)?\s*(\d{1,3})\s*(?:°|DEG(?:REES)?)?\s*$", re.IGNORECASE)


def heading_canonical(value: Any) -> str | None:
    match = _HEADING_TEXT.match(str(value))
    if not match:
        return None
    n = int(match.group(1))
    return f"{n or 360:03d}" if 0 <= n <= 360 else None


def heading_speak(canon: str) -> str:
    return speak_digits(canon)


def heading_find(t: Transcript, ctx: Context) -> Found:
    """Headings heard after "heading". A heard "zero" (or "zero zero") is garbled, shown "000",
    never 360: seen by voice, "heading zero tree zero" cut to "heading zero" read back an issued 360."""
    anchors = frozenset({"heading"})
    found = [
        Hit(h.index, "000", garbled=True)
        if h.value.isdigit() and int(h.value) == 0
        else Hit(h.index, heading_canonical(h.value) or h.value)
        for h in _after(t, anchors, frozenset({"to"}), length=3, ctx=ctx)
    ]
    # with them, any said after the direction of turn: "heading 180, correction, turn right 140"
    # (a heading corrected into a wrong one had been accepted, and into the right one refused)
    return found + [h for h in _turn_headings(t) if all(h.index != f.index for f in found)]


def _turn_headings(t: Transcript) -> Found:
    """ "Left three six zero", "turn right zero niner zero": a heading said after the direction
    of turn without its word, as pilots read it back: three digits that make a heading, after a
    side said as a turn (`directions.is_turn`: never a runway's side)."""
    found: Found = []
    for i in range(len(t.words) - 1):
        number = t.integer(i + 1)
        heading = heading_canonical(number) if number is not None and len(number) == 3 and int(number) else None
        if heading is not None and is_turn(t, i):
            found.append(Hit(i + 1, heading))
    return found


# --------------------------------------------------------------------------- squawk

_SQUAWK_ANCHORS = frozenset({"squawk", "squawking", "transponder", "code"})


def squawk_canonical(value: Any) -> str | None:
    text = _digits(value)
    if text is None or len(text) > 4:
        return None
    if not isinstance(value, str):
        text = text.zfill(4)  # an int loses its leading zeros: 421 -> "0421"
    return text if len(text) == 4 and set(text) <= set("01234567") else None


def squawk_find(t: Transcript, ctx: Context) -> Found:
    return _after(t, _SQUAWK_ANCHORS, frozenset({"code", "transponder", "squawk"}), length=4, ctx=ctx)


# --------------------------------------------------------------------------- QNH / altimeter


def qnh_canonical(value: Any) -> str | None:
    """1013 -> "1013"; an inHg altimeter 29.92 -> "2992"."""
    if isinstance(value, float) and not value.is_integer():
        value = f"{value:.2f}"
    text = str(value).strip().upper().removeprefix("QNH").removeprefix("A").strip().replace(".", "")
    return text if text.isdigit() and 3 <= len(text) <= 4 else None


# A bare number is a QNH only of four digits in hectopascals, never right after another value's word.
_HPA = range(1000, 1100)
_NOT_QNH_BEFORE = frozenset(
    """
    squawk squawking code transponder heading runway stand gate level flight climb climbing descend
    descending maintain maintaining altitude to speed decimal point wind frequency contact tower
    ground approach departure radar
""".split()
)
_NOT_QNH_AFTER = frozenset({"feet", "ft", "knots", "degrees", "decimal", "point", "hundred", "thousand"})


def qnh_find(t: Transcript, ctx: Context) -> Found:
    """QNH after "qnh"/"altimeter"; where the state asks for a QNH in hectopascals, also a
    bare four-digit number of that range said alone ("descend 3000 feet, one zero zero four"),
    as pilots read it back: one that is not the issued QNH is then a wrong QNH, not a missing one.
    Three digits ("niner niner eight") stay unread: by voice a garbled callsign's flight number
    ("a nine a five two") is one."""
    anchors = frozenset({"qnh", "altimeter"})
    found = [
        Hit(h.index, qnh_canonical(h.value) or h.value)
        for h in _after(t, anchors, frozenset({"is", "of", "setting"}), length=4, ctx=ctx)
    ]
    hpa = (ctx.expected or "").isdigit() and int(ctx.expected or 0) in _HPA
    if found or not ctx.required or not hpa or t.doubted:
        return found
    return [
        Hit(i, word)
        for i, word in enumerate(t.words)
        if word.isdigit()
        and int(word) in _HPA
        and i not in t.multiplied
        and t.word(i - 1) not in _NOT_QNH_BEFORE
        and t.word(i + 1) not in _NOT_QNH_AFTER
    ]


# --------------------------------------------------------------------------- speed


def speed_canonical(value: Any) -> str | None:
    text = str(value).strip().upper().removesuffix("KNOTS").removesuffix("KTS").removesuffix("KT").strip()
    return str(int(text)) if text.isdigit() and 0 < int(text) < 1000 else None


def speed_find(t: Transcript, ctx: Context) -> Found:
    found = {
        h.index: h.value for h in _after(t, frozenset({"speed", "reduce", "increase"}), frozenset({"to", "speed"}))
    }
    for i, word in enumerate(t.words):
        if word.isdigit() and t.word(i + 1) == "knots" and "wind" not in t.words[max(0, i - 4) : i]:
            found[i] = word
    return [Hit(i, speed_canonical(v) or v) for i, v in sorted(found.items())]


# --------------------------------------------------------------------------- wind

_WIND_TEXT = re.compile(
    r"^\s*(\d{3}|VRB)\s*(?:/|\s|DEGREES)?\s*(\d{1,3})(?:\s*G(\d{2,3}))?\s*(?:KT|KTS|KNOTS)?\s*$", re.IGNORECASE
)


def wind_canonical(value: Any) -> str | None:
    """ "250/12", "25012KT", "250 12", "VRB/03", "250/12G25" -> "250/12" ("250/12G25", "VRB/03")."""
    match = _WIND_TEXT.match(str(value))
    if not match:
        return None
    direction = match.group(1).upper()
    if direction != "VRB":
        direction = f"{int(direction) % 360 or 360:03d}"
    gust = f"G{int(match.group(3)):02d}" if match.group(3) else ""
    return f"{direction}/{int(match.group(2)):02d}{gust}"


def wind_speak(canon: str) -> str:
    direction, _, speed = canon.partition("/")
    speed, _, gust = speed.partition("G")
    if int(speed) == 0:
        return "calm"
    head = "variable" if direction == "VRB" else f"{speak_digits(direction)} degrees"
    text = f"{head}, {speak_digits(str(int(speed)))} knots"
    return f"{text}, gusting {speak_digits(gust)} knots" if gust else text


def wind_find(t: Transcript, ctx: Context) -> Found:
    found: Found = []
    for i, word in enumerate(t.words):
        if word != "wind":
            continue
        j = i + 1
        direction = t.integer(j) or ("VRB" if t.word(j) in ("variable", "vrb") else None)
        if direction is None:
            continue
        j += 2 if t.word(j + 1) == "degrees" else 1
        speed = t.integer(j)
        if speed is None:
            continue
        gust = ""
        if t.word(j + 1) == "knots":
            j += 1
        if t.word(j + 1) in ("gusting", "gusts", "g") and t.integer(j + 2):
            gust = f"G{t.integer(j + 2)}"
        found.append(Hit(i + 1, wind_canonical(f"{direction}/{speed}{gust}") or f"{direction}/{speed}"))
    return found
