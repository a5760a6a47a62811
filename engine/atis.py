"""The ATIS: an airport's recorded broadcast, built from a weather report in the standard order.

The order is ICAO's (Annex 11, 4.3.6; Doc 4444, 11.4.3.3): aerodrome and information letter,
time of observation, expected approach, runway in use, surface wind, visibility, present
weather, cloud, temperature and dew point, QNH, and "advise on initial contact you have
information ...". Each part is a small template rendered by the same renderer as every
controller message (`engine.messages.render_pair`), so the text shows values as written and the
speech speaks them in ICAO form ("QNH one zero one eight", "two fife zero degrees").

The information letter moves on (`next_letter`) whenever the observation changes; the first
letter of a day is derived from the observation time (`first_letter`), so gateways that start
at different moments broadcast the same letter for the same METAR.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from engine.messages import render_pair
from engine.weather import COVER_WORDS, TEN_KM, WeatherReport

LETTERS = string.ascii_uppercase

# The parts of an ATIS in broadcast order: (template, variables it needs). A part whose variables
# are not all known is left out (no present weather, no approach type).
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "This is {{airport_name}} information {{atis_letter}}, time {{atis_time}}",
        ("airport_name", "atis_letter", "atis_time"),
    ),
    ("Expect {{approach_type}} approach", ("approach_type",)),
    ("Runway in use {{runway}}", ("runway",)),
    ("Wind {{wind}}", ("wind",)),
    ("Varying between {{wind_from}} and {{wind_to}} degrees", ("wind_from", "wind_to")),
    ("{{cavok}}", ("cavok",)),
    ("Visibility {{visibility}}", ("visibility",)),
    ("{{present_weather}}", ("present_weather",)),
    ("{{clouds}}", ("clouds",)),
    ("Temperature {{temperature}}, dew point {{dewpoint}}", ("temperature", "dewpoint")),
    ("QNH {{qnh}}", ("qnh",)),
    ("Advise on initial contact you have information {{atis_letter}}", ("atis_letter",)),
)


@dataclass(frozen=True, slots=True)
class Atis:
    """One ATIS broadcast: what it says, and the values it says."""

    icao: str
    letter: str
    text: str
    speech: str
    runway: str | None
    report: WeatherReport


def next_letter(letter: str | None) -> str:
    """The information letter after `letter` (Z wraps to A; none yet: A)."""
    if not letter or letter.upper() not in LETTERS:
        return "A"
    return LETTERS[(LETTERS.index(letter.upper()) + 1) % len(LETTERS)]


def first_letter(report: WeatherReport) -> str:
    """A letter for the first observation a gateway sees: one step per half-hourly METAR of the
    day, so the letters of one day run A, B, C... as the observations come."""
    observed = report.observed_at
    if observed is None:
        return "A"
    return LETTERS[(observed.hour * 2 + (observed.minute >= 30)) % len(LETTERS)]


def atis_variables(
    report: WeatherReport, *, airport_name: str, letter: str, runway: str | None, approach_type: str | None = "ILS"
) -> dict[str, Any]:
    """The values of an ATIS's parts (see `PARTS`), from a report; unknown ones are absent."""
    out: dict[str, Any] = {
        "airport_name": airport_name,
        "atis_letter": letter,
        "wind": report.wind,
        "qnh": report.qnh_hpa,
    }
    if report.observed_at is not None:
        out["atis_time"] = report.observed_at.strftime("%H%M")
    if approach_type:
        out["approach_type"] = approach_type
    if runway:
        out["runway"] = runway
    if report.wind_range and report.wind_speed_kt:
        out["wind_from"], out["wind_to"] = (f"{d:03d}" for d in report.wind_range)
    if report.cavok:
        out["cavok"] = "CAVOK"
    else:
        if report.visibility_m is not None:
            out["visibility"] = _visibility(report.visibility_m)
        if report.weather:
            out["present_weather"] = ", ".join(report.weather).capitalize()
        out["clouds"] = _clouds(report)
    if report.temperature_c is not None and report.dewpoint_c is not None:
        out["temperature"] = _celsius(report.temperature_c)
        out["dewpoint"] = _celsius(report.dewpoint_c)
    return out


def build_atis(
    report: WeatherReport, *, airport_name: str, letter: str, runway: str | None, approach_type: str | None = "ILS"
) -> Atis:
    """The ATIS for `report` broadcast as information `letter` with `runway` in use."""
    values = atis_variables(
        report, airport_name=airport_name, letter=letter, runway=runway, approach_type=approach_type
    )
    texts: list[str] = []
    spoken: list[str] = []
    for template, needs in PARTS:
        if all(values.get(name) not in (None, "") for name in needs):
            text, speech, _missing = render_pair(template, values)
            texts.append(text)
            spoken.append(speech)
    return Atis(
        icao=report.icao,
        letter=letter,
        text=". ".join(texts) + ".",
        speech=". ".join(spoken) + ".",
        runway=runway,
        report=report,
    )


def _visibility(metres: int) -> str:
    if metres >= TEN_KM:
        return "10 kilometres or more"
    if metres >= 5000:
        return f"{metres // 1000} kilometres"
    return f"{metres} metres"


def _clouds(report: WeatherReport) -> str:
    if not report.clouds:
        return "No significant cloud"
    layers = []
    for layer in report.clouds:
        words = COVER_WORDS.get(layer.cover, layer.cover.lower())
        base = f" {layer.base_ft} feet" if layer.base_ft is not None else ""
        kind = {"CB": " cumulonimbus", "TCU": " towering cumulus"}.get(layer.kind or "", "")
        layers.append(f"{words}{base}{kind}")
    return ("Clouds " + ", ".join(layers)) if layers else "No significant cloud"


def _celsius(value: int) -> str:
    return f"minus {-value}" if value < 0 else str(value)
