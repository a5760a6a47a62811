"""Controller messages: one template rendered twice, as text for the log and as ICAO speech.

The text form shows values as written in a clearance ("runway 25R, contact tower 118.700"); the
speech form renders each variable through the phraseology package by its kind and then normalizes
what is left ("runway two fife right, contact tower one one eight decimal seven"). Both come from
the one renderer and the one normalizer, never from per-flow code.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from engine import phraseology
from engine.models import ControllerMessage, Flow, Role, Session, State
from engine.phraseology.stations import station_title
from engine.templates import render


@lru_cache(maxsize=1024)
def _kind(name: str) -> str:
    return phraseology.kind_for_variable(name)


# Values shown exactly as the scenario states them (telephony is already the display form).
_AS_GIVEN = frozenset({"callsign_spoken"})


def _display(name: str, value: Any) -> str:
    if name in _AS_GIVEN:
        return str(value)
    return phraseology.display_value(_kind(name), value)


def _speak(name: str, value: Any) -> str:
    return phraseology.speak_value(_kind(name), value)


def station_of(flow: Flow, state: State | None) -> str | None:
    return (state.station if state is not None and state.station else None) or flow.station


def frequency_var(flow: Flow, station: str) -> str:
    return f"{station}_freq" if flow.airport_var == "airport" else f"dest_{station}_freq"


def station_frequency(flow: Flow, station: str, variables: dict[str, Any]) -> str | None:
    """`station`'s frequency variable as text: a scenario may give it as a number (118.7)."""
    value = variables.get(frequency_var(flow, station))
    return None if value is None else str(value)


def station_context(flow: Flow, station: str | None, variables: dict[str, Any]) -> dict[str, Any]:
    """Derived per-message variables: who is speaking and on which frequency."""
    if not station:
        return {}
    city = variables.get(f"{flow.airport_var}_name") or variables.get(flow.airport_var) or ""
    title = station_title(station)
    return {
        "station_name": f"{city} {title}".strip(),
        "station_freq": station_frequency(flow, station, variables),
    }


def speaking_context(
    session: Session, flow: Flow, state: State | None, host: Flow
) -> tuple[str | None, dict[str, Any]]:
    """Station and derived variables for a message. Flows that name no station (radio check,
    emergency) speak for the station the pilot is on, at the airport of the flow they interrupted
    (`host`)."""
    station = station_of(flow, state)
    if station:
        return station, station_context(flow, station, session.variables)
    return session.station, station_context(host, session.station, session.variables)


def render_pair(template: str, variables: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(text, speech, missing variable names) for one template."""
    text = render(template, variables, formatter=_display)
    spoken = render(template, variables, formatter=_speak)
    return text.text, phraseology.speak_text(spoken.text), sorted(set(text.missing) | set(spoken.missing))


def render_text(template: str, variables: dict[str, Any]) -> str:
    return render(template, variables, formatter=_display).text


def build_message(
    session: Session,
    flow: Flow,
    state: State | None,
    template: str,
    now: float,
    host: Flow | None = None,
) -> tuple[ControllerMessage, list[str]]:
    """Render a controller message with the next sequence number (the caller appends it)."""
    station, derived = speaking_context(session, flow, state, host or flow)
    ctx = {**session.variables, **derived}
    text, speech, missing = render_pair(template, ctx)
    session.seq += 1
    msg = ControllerMessage(
        message_id=f"{session.session_id}-m{session.seq}",
        seq=session.seq,
        role=Role.ATC,
        station=station,
        frequency=ctx.get("station_freq"),
        template=template,
        text=text,
        speech=speech,
        flow=flow.slug,
        state=state.id if state is not None else None,
        at=now,
    )
    return msg, missing
