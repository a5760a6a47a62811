"""Weather as the engine sees it: a parsed METAR, the runway it puts in use, and generated weather.

The gateway fetches and parses METARs (gateway/weather, avwx-engine) and hands the engine a
`WeatherReport`: plain fields, no raw text to interpret. Everything the engine does with weather
is pure: pick the runway for the wind from the airport's real runways (`runway_in_use`), turn a
report into scenario variables (`weather_variables`), keep a running session current when the
airport's weather changes (`refresh_weather`), and make up a realistic report when no real one
is available (`generated_report`, formatted as METAR text by `metar_text`), so a session offline
sounds the same as one with live data and says it was generated.
"""

from __future__ import annotations

import random
import string
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from engine.airport import AirportInfo, best_runway_for_wind
from engine.models import Session
from engine.phraseology.numeric import wind_canonical

# Where a report came from: the VATSIM METAR service, a METAR the client gave in the scenario,
# or made up for the scenario (offline, or the provider failed).
WeatherSource = Literal["vatsim", "given", "generated"]

# Visibility a METAR reports as 9999: "10 kilometres or more".
TEN_KM = 9999

# Cloud covers a METAR reports, in the words an ATIS uses.
COVER_WORDS: dict[str, str] = {
    "FEW": "few",
    "SCT": "scattered",
    "BKN": "broken",
    "OVC": "overcast",
    "VV": "vertical visibility",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CloudLayer(_Model):
    cover: str  # FEW, SCT, BKN, OVC, VV
    base_ft: int | None = None  # above the aerodrome
    kind: str | None = None  # CB, TCU


class WeatherReport(_Model):
    """One observation at one airport (a METAR's fields), and the ATIS letter it is broadcast as."""

    icao: str
    raw: str  # the METAR text it was parsed from (or generated as)
    source: WeatherSource
    observed_at: datetime | None = None
    wind_dir: int | None = None  # degrees; None: variable (VRB) or calm
    wind_speed_kt: int = 0
    gust_kt: int | None = None
    wind_range: tuple[int, int] | None = None  # "240V300"
    visibility_m: int | None = None  # TEN_KM: 10 km or more
    cavok: bool = False
    weather: list[str] = Field(default_factory=list)  # present weather in words: "light rain", "mist"
    clouds: list[CloudLayer] = Field(default_factory=list)
    temperature_c: int | None = None
    dewpoint_c: int | None = None
    qnh_hpa: int
    letter: str | None = None  # the ATIS information letter this observation is broadcast as

    @property
    def wind(self) -> str:
        """As clearances give it: "250/12", "250/12G25", "VRB/03"; calm is "000/00"."""
        if self.wind_speed_kt == 0:
            return "000/00"
        direction = "VRB" if self.wind_dir is None else f"{self.wind_dir % 360 or 360:03d}"
        gust = f"G{self.gust_kt:02d}" if self.gust_kt else ""
        return f"{direction}/{self.wind_speed_kt:02d}{gust}"


def runway_in_use(airport: AirportInfo, report: WeatherReport) -> str | None:
    """The runway end an airport uses in this wind, the same for every session at the airport.

    `engine.airport.best_runway_for_wind` picks the end with the most headwind among the
    airport's long runways; parallel runways tie, and the tie is broken by a generator seeded
    with the airport alone, so every session and the airport's ATIS name the same runway.
    """
    chosen = best_runway_for_wind(airport, report.wind_dir, random.Random(f"{airport.icao}:runway_in_use"))
    return chosen[0] if chosen else None


def weather_variables(report: WeatherReport, airport: AirportInfo | None, *, arrival: bool = False) -> dict[str, Any]:
    """Scenario variables a report sets: wind, QNH, runway, ATIS letter and the METAR itself.

    Departure names (``wind``, ``qnh``, ``runway``, ``atis_letter``, ``metar``) or, with
    `arrival`, the destination's (``arrival_wind``, ``arrival_qnh``, ...). The runway is left
    out when the airport has no runway data.
    """
    prefix = "arrival_" if arrival else ""
    out: dict[str, Any] = {
        f"{prefix}wind": report.wind,
        f"{prefix}qnh": report.qnh_hpa,
        f"{prefix}metar": report.raw,
    }
    if report.letter:
        out[f"{prefix}atis_letter"] = report.letter
    runway = runway_in_use(airport, report) if airport is not None else None
    if runway:
        out[f"{prefix}runway"] = runway
    if not arrival:
        out["weather_source"] = report.source
    return out


def refresh_weather(session: Session, report: WeatherReport) -> dict[str, Any]:
    """Bring a running session's departure weather up to `report`; returns what changed.

    Only a session whose weather came from the same live source at the same airport follows it
    (generated and given weather belong to the scenario), and only when the ATIS letter moved
    on: then the letter, the QNH, the wind and the METAR are the new ones, so a pilot reporting
    the letter heard earlier is told the current one. The runway stays: a runway change is a
    scenario of its own, not a side effect of a new observation.
    """
    variables = session.variables
    if variables.get("weather_source") != report.source or report.source != "vatsim":
        return {}
    if str(variables.get("airport", "")).upper() != report.icao.upper() or not report.letter:
        return {}
    if variables.get("atis_letter") == report.letter:
        return {}
    updates = {
        "atis_letter": report.letter,
        "qnh": report.qnh_hpa,
        "wind": report.wind,
        "metar": report.raw,
    }
    variables.update(updates)
    return updates


# --------------------------------------------------------------------------- generated weather


def generated_report(
    icao: str,
    seed: Any,
    *,
    wind: str | None = None,
    qnh: int | None = None,
    letter: str | None = None,
    observed_at: datetime | None = None,
) -> WeatherReport:
    """A realistic report made up for a scenario (same arguments, same report).

    `wind` ("250/12") and `qnh` are the scenario's own when it has them, so the METAR agrees with
    the clearances; visibility, cloud, present weather and temperatures are drawn from the seed.
    Without `observed_at` the observation time is drawn from the seed too.
    """
    rng = random.Random(f"{seed}:weather")
    direction, speed, gust = (
        _parse_wind(wind) if wind else (rng.randrange(10, 370, 10) % 360 or 360, rng.randint(3, 16), None)
    )
    if qnh is None:
        qnh = min(1035, max(990, round(rng.gauss(1013, 8))))
    if observed_at is None:
        observed_at = datetime(2024, 1, rng.randint(1, 28), rng.randint(0, 23), rng.choice((20, 50)), tzinfo=UTC)
    temperature = rng.randint(-5, 28)
    dewpoint = temperature - rng.randint(1, 10)
    kind = rng.random()
    clouds: list[CloudLayer] = []
    present: list[str] = []
    cavok = False
    if kind < 0.3:
        visibility, cavok = TEN_KM, True
    elif kind < 0.8:
        visibility = TEN_KM
        base = rng.choice((15, 20, 25, 30, 35, 40))
        for cover in sorted(rng.sample(("FEW", "SCT", "BKN"), rng.randint(1, 2)), key=("FEW", "SCT", "BKN").index):
            clouds.append(CloudLayer(cover=cover, base_ft=base * 100))
            base += rng.choice((10, 20, 30, 50))
    else:
        visibility = rng.choice((3000, 4000, 6000, 8000))
        present = [rng.choice(("light rain", "rain", "mist"))]
        clouds = [
            CloudLayer(cover="BKN", base_ft=rng.choice((8, 10, 12, 15)) * 100),
            CloudLayer(cover="OVC", base_ft=rng.choice((20, 25, 30)) * 100),
        ]
    report = WeatherReport(
        icao=icao.upper(),
        raw="",
        source="generated",
        observed_at=observed_at,
        wind_dir=direction,
        wind_speed_kt=speed,
        gust_kt=gust,
        visibility_m=visibility,
        cavok=cavok,
        weather=present,
        clouds=clouds,
        temperature_c=temperature,
        dewpoint_c=dewpoint,
        qnh_hpa=int(qnh),
        letter=letter,
    )
    return report.model_copy(update={"raw": metar_text(report)})


def generated_letter(seed: Any) -> str:
    """An ATIS letter for a scenario without live weather."""
    return random.Random(f"{seed}:atis_letter").choice(string.ascii_uppercase)


_WEATHER_CODES: dict[str, str] = {
    "light rain": "-RA",
    "rain": "RA",
    "heavy rain": "+RA",
    "mist": "BR",
    "fog": "FG",
    "light snow": "-SN",
    "snow": "SN",
    "drizzle": "DZ",
    "haze": "HZ",
    "thunderstorm": "TS",
}


def metar_text(report: WeatherReport) -> str:
    """The METAR a report reads as ("EDDF 151220Z 25012KT 9999 FEW025 18/09 Q1018 NOSIG"), so a
    generated report looks like a real one wherever the METAR is shown."""
    parts = [report.icao]
    if report.observed_at is not None:
        parts.append(report.observed_at.strftime("%d%H%MZ"))
    if report.wind_speed_kt == 0:
        parts.append("00000KT")
    else:
        direction = "VRB" if report.wind_dir is None else f"{report.wind_dir % 360 or 360:03d}"
        gust = f"G{report.gust_kt:02d}" if report.gust_kt else ""
        parts.append(f"{direction}{report.wind_speed_kt:02d}{gust}KT")
    if report.wind_range:
        parts.append(f"{report.wind_range[0]:03d}V{report.wind_range[1]:03d}")
    if report.cavok:
        parts.append("CAVOK")
    else:
        if report.visibility_m is not None:
            parts.append(f"{min(report.visibility_m, TEN_KM):04d}")
        parts.extend(_WEATHER_CODES.get(w, w.upper()) for w in report.weather)
        layers = [f"{c.cover}{(c.base_ft or 0) // 100:03d}{c.kind or ''}" for c in report.clouds]
        parts.extend(layers or ["NSC"])
    if report.temperature_c is not None and report.dewpoint_c is not None:
        parts.append(f"{_temp(report.temperature_c)}/{_temp(report.dewpoint_c)}")
    parts.append(f"Q{report.qnh_hpa:04d}")
    parts.append("NOSIG")
    return " ".join(parts)


def _temp(celsius: int) -> str:
    return f"M{-celsius:02d}" if celsius < 0 else f"{celsius:02d}"


def _parse_wind(wind: str) -> tuple[int | None, int, int | None]:
    """ "250/12", "250/12G25", "VRB/03", "25012KT" -> (direction, speed, gust)."""
    head, _, rest = (wind_canonical(wind) or "000/00").partition("/")
    speed, _, gust = rest.partition("G")
    direction = None if head == "VRB" or not head.isdigit() else int(head) % 360 or 360
    return direction, int(speed) if speed.isdigit() else 0, int(gust) if gust.isdigit() else None
