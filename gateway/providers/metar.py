"""METAR text -> `engine.weather.WeatherReport`, parsed by avwx-engine.

avwx-engine is a maintained METAR parser that knows the ICAO and North American formats, their
units and their oddities (``/////KT``, ``CAVOK``, ``1/2SM``, ``A3012``), so nothing here reads
the text itself: this module only converts avwx's values to the units the engine works in (knots,
metres, hectopascals) and refuses a report the scenario cannot use (no wind or no QNH). It uses
``avwx.current.metar.parse``, which parses without loading avwx's station database.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from avwx.current import metar as avwx_metar
from avwx.exceptions import BadStation

from engine.weather import TEN_KM, CloudLayer, WeatherReport, WeatherSource

HPA_PER_INHG = 33.8639
METRES_PER_SM = 1609.344
KT_PER_MPS = 1.943844
KT_PER_KMH = 0.539957


class MetarError(ValueError):
    """A METAR that does not parse, or lacks what a scenario needs (wind, QNH)."""


def parse_metar(raw: str, *, source: WeatherSource, issued: date | None = None) -> WeatherReport:
    """Parse one METAR; `issued` dates its day-of-month time (default: today, UTC)."""
    text = " ".join(str(raw).split())
    station = text[:4].upper()
    if len(text) < 10 or not station.isalnum():
        raise MetarError(f"not a METAR: {text[:60]!r}")
    try:
        data, units, _ = avwx_metar.parse(station, text, issued=issued or datetime.now(UTC).date())
    except (BadStation, ValueError, IndexError, KeyError, TypeError) as exc:
        raise MetarError(f"METAR of {station} does not parse: {exc}") from exc
    if data is None or units is None:
        raise MetarError(f"METAR of {station} does not parse")
    if data.wind_speed is None or data.wind_speed.value is None:
        raise MetarError(f"METAR of {station} has no wind: {text}")
    if data.altimeter is None or data.altimeter.value is None:
        raise MetarError(f"METAR of {station} has no QNH: {text}")
    speed_factor = {"kt": 1.0, "m/s": KT_PER_MPS, "mps": KT_PER_MPS, "km/h": KT_PER_KMH}.get(units.wind_speed.lower(), 1.0)
    speed = round(float(data.wind_speed.value) * speed_factor)
    gust = data.wind_gust.value if data.wind_gust is not None and data.wind_gust.value is not None else None
    direction = data.wind_direction.value if data.wind_direction is not None else None
    qnh = float(data.altimeter.value)
    if units.altimeter.lower() == "inhg":
        qnh *= HPA_PER_INHG
    visibility = data.visibility.value if data.visibility is not None else None
    if visibility is not None and units.visibility.lower() == "sm":
        visibility = min(TEN_KM, round(float(visibility) * METRES_PER_SM))
    cavok = data.visibility is not None and data.visibility.repr == "CAVOK"
    variable = [d.value for d in data.wind_variable_direction if d.value is not None]
    return WeatherReport(
        icao=station,
        raw=text,
        source=source,
        observed_at=data.time.dt if data.time is not None else None,
        wind_dir=int(direction) % 360 or 360 if direction is not None and speed else None,
        wind_speed_kt=speed,
        gust_kt=round(float(gust) * speed_factor) if gust else None,
        wind_range=(int(variable[0]), int(variable[1])) if len(variable) == 2 else None,
        visibility_m=int(visibility) if visibility is not None else None,
        cavok=cavok,
        weather=[str(code.value).lower() for code in data.wx_codes],
        clouds=[
            CloudLayer(cover=c.type, base_ft=c.base * 100 if c.base is not None else None, kind=c.modifier)
            for c in data.clouds
            if c.type
        ],
        temperature_c=int(data.temperature.value) if data.temperature and data.temperature.value is not None else None,
        dewpoint_c=int(data.dewpoint.value) if data.dewpoint and data.dewpoint.value is not None else None,
        qnh_hpa=round(qnh),
    )
