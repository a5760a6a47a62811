"""First contact: where the pilot opens contact with a station, so the controller needs to hear
who is calling (engine/identity.py's rule: "station calling ..., say again your callsign" for a
transmission without a callsign there). Read from the flows alone, once per registry.

Pure: it reads flows and the session, never changes them.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from engine.models import Flow, FlowMode, Role, Session

if TYPE_CHECKING:
    from engine.registry import FlowRegistry


_OPENING: weakref.WeakKeyDictionary[Any, frozenset[tuple[str, str]]] = weakref.WeakKeyDictionary()


def opening_states(flows: Iterable[Flow]) -> frozenset[tuple[str, str]]:
    """(flow, state) of every pilot state where the pilot opens contact with a station.

    Those are the pilot states a pilot arrives at with no controller words before: the start of a
    main or linear flow (a new exchange, usually on a new frequency: clearance, startup, taxi,
    ready for departure, initial contact with departure/center/approach/tower), the state a flow
    switch enters (back to approach after a go-around), and what follows a handoff. Following
    atc/system states that say nothing (a system state choosing a route) is part of the way in.
    Interrupt and parallel flows are entered by the pilot's own words, so their states are replies;
    a flow that names no station has no station to call.
    """
    flows = list(flows)
    by_slug = {f.slug: f for f in flows}
    entries: list[tuple[str, str]] = []
    for flow in flows:
        if flow.entry_mode not in (FlowMode.INTERRUPT, FlowMode.PARALLEL):
            entries.append((flow.slug, flow.start_state))
        for state in flow.states.values():
            # a silent handoff (a system state changing the frequency): the pilot calls the new
            # station next; after a spoken one ("contact tower 118.7") the pilot reads it back first
            hands_off = (state.handoff is not None or any(a.tune for a in state.actions)) and not state.say_tpl
            for t in state.transitions:
                if t.flow:
                    target = by_slug.get(t.flow)
                    if target is not None and target.entry_mode not in (FlowMode.INTERRUPT, FlowMode.PARALLEL):
                        entries.append((t.flow, t.to or target.start_state))
                elif hands_off and t.to:
                    entries.append((flow.slug, t.to))
    out: set[tuple[str, str]] = set()
    seen: set[tuple[str, str]] = set()
    while entries:
        key = entries.pop()
        if key in seen:
            continue
        seen.add(key)
        here = by_slug.get(key[0])
        at = here.states.get(key[1]) if here else None
        if here is None or at is None:
            continue
        if at.role is Role.PILOT:
            if at.station or here.station:  # no station, no 'station calling'
                out.add(key)
        elif not at.say_tpl:  # the controller says nothing here: the way in goes on
            entries.extend((here.slug, t.to) for t in at.transitions if t.to and not t.flow)
    return frozenset(out)


def opening_state(registry: FlowRegistry, flow: str, state: str) -> bool:
    """True when `flow`:`state` is a pilot state where the pilot opens contact (`opening_states`)."""
    found = _OPENING.get(registry)
    if found is None:
        found = opening_states(registry)
        _OPENING[registry] = found
    return (flow, state) in found


def addressed_here(session: Session, registry: FlowRegistry) -> bool:
    """The controller spoke to us in the active state already (a say again, a silence prompt):
    it knows who we are. Its own 'station calling' requests do not count."""
    for message in reversed(session.message_history):
        if message.flow is None:
            return False
        try:
            refusal = registry.get(message.flow).policies.station_calling_tpl
        except KeyError:
            refusal = None
        if message.template == refusal:
            continue
        return (message.flow, message.state) == (session.active.flow, session.active.state)
    return False


def first_contact(session: Session, registry: FlowRegistry) -> bool:
    """The session stands where the pilot opens contact (`opening_state`) and the controller has
    not spoken to it there yet (`addressed_here`)."""
    return opening_state(registry, session.active.flow, session.active.state) and not addressed_here(session, registry)
