"""The ATIS a session's pilot hears: which airport a tuned frequency belongs to, which weather it
reads, and the broadcast message the radio loops (pure: the gateway passes what it looked up).

The departure airport's ATIS frequencies (the scenario's ``atis_freq`` and every one the airport
data lists) broadcast its ATIS, the destination's (``dest_atis_freq``) its arrival ATIS. Live
weather is the airport's newest report and letter; generated or given weather is the session's
own METAR, letter and runway, so the ATIS agrees with what the controllers say.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from engine.atis import Atis, build_atis
from engine.models import ControllerMessage, Session
from engine.phraseology import frequencies
from engine.weather import WeatherReport, generated_report

# (variable prefix, airport code variable, ATIS frequency variable), departure then destination
_AIRPORTS = (("", "airport", "atis_freq"), ("arrival_", "destination", "dest_atis_freq"))

ListedFrequencies = Callable[[str], Iterable[str]]  # ICAO code -> the ATIS frequencies on record
ParseMetar = Callable[[str, str], WeatherReport | None]  # (METAR, source) -> report, None if unusable


@dataclass(frozen=True)
class AtisStation:
    """The airport whose ATIS a frequency carries, as the session knows it."""

    prefix: str  # "" for the departure airport, "arrival_" for the destination
    icao: str
    name: str
    runway: Any
    letter: str  # the session's information letter (generated or given weather)
    live: bool  # the session follows live weather: the airport's newest report is its ATIS


def tuned_station(session: Session, frequency: str, listed: ListedFrequencies) -> AtisStation | None:
    """The ATIS station on `frequency` for this session, or None when it is no ATIS frequency."""
    tuned = frequencies.canonical(str(frequency))
    if tuned is None:
        return None
    v = session.variables
    for prefix, code_var, freq_var in _AIRPORTS:
        icao = str(v.get(code_var) or "").upper()
        known = {str(v.get(freq_var) or ""), *listed(icao)}
        if tuned not in {frequencies.canonical(f) for f in known if f}:
            continue
        return AtisStation(
            prefix=prefix,
            icao=icao,
            name=str(v.get("airport_name" if not prefix else "destination_name") or icao),
            runway=v.get(f"{prefix}runway"),
            letter=str(v.get(f"{prefix}atis_letter") or "A"),
            live=v.get("weather_source") == "vatsim",
        )
    return None


def session_report(session: Session, station: AtisStation, parse: ParseMetar) -> WeatherReport:
    """A session's own weather at the station: its METAR parsed, or made up again from its wind
    and QNH when there is none that parses."""
    v = session.variables
    given = v.get("weather_source")
    source = given if not station.prefix and given in ("vatsim", "given") else "generated"
    report = parse(str(v.get(f"{station.prefix}metar") or ""), str(source))
    if report is not None:
        return report
    qnh = v.get(f"{station.prefix}qnh")
    return generated_report(
        station.icao,
        session.seed,
        wind=str(v.get(f"{station.prefix}wind") or "") or None,
        qnh=int(qnh) if isinstance(qnh, int) else None,
    )


def station_atis(station: AtisStation, report: WeatherReport, *, live: bool) -> Atis:
    """The ATIS of `station` on `report`: a live report brings its own letter."""
    letter = (report.letter or "A") if live else station.letter
    return build_atis(report, airport_name=station.name, letter=letter, runway=station.runway)


def atis_message(session_id: str, atis: Atis, frequency: str, repetition: int, now: float) -> ControllerMessage:
    """Repetition `repetition` (from 0) of an ATIS broadcast, as the message the radio speaks: no
    numbered controller message of the session (``seq`` 0, station ``atis``)."""
    return ControllerMessage(
        message_id=f"{session_id}-atis-{atis.icao}-{atis.letter}-{repetition + 1}",
        seq=0,
        station="atis",
        frequency=frequencies.canonical(frequency) or frequency,
        template="",
        text=atis.text,
        speech=atis.speech,
        at=now,
    )


def is_broadcast(msg: ControllerMessage) -> bool:
    """An ATIS repetition (also one cut after its loop ended), not a controller message."""
    return msg.seq == 0 and msg.station == "atis"
