"""FlowRegistry: the loaded flows of one curriculum, looked up by slug.

The registry is built once (by `engine.loader.load_registry`) and then only read, so the derived
views (interrupt flows by priority) are computed at construction. It also remembers which source
each flow came from, so lint and errors can name the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from engine.models import SCHEMA_VERSION, TELEMETRY_KEYS, Flow, FlowMode, InterruptSpec
from engine.scenario import DERIVED_VARIABLES, SCENARIO_VARIABLES

__all__ = [
    "FlowRegistry",
    "UnknownFlow",
    "KNOWN_SCENARIO_VARIABLES",
    "KNOWN_TELEMETRY",
    "PREFERRED_MAIN_FLOWS",
]

# Variables a flow may use: the scenario vocabulary the resolver fills (ARCHITECTURE.md "Scenario
# variables" and the derived arrival/en-route values, one list in engine.scenario) plus what the
# engine derives per message or decision.
ENGINE_VARIABLES: frozenset[str] = frozenset({"station_name", "station_freq", "corrections", "interrupt_intent"})
KNOWN_SCENARIO_VARIABLES: frozenset[str] = frozenset({*SCENARIO_VARIABLES, *DERIVED_VARIABLES, *ENGINE_VARIABLES})

# Telemetry keys a client may send (protocol-v1.md, `telemetry` message): `AircraftState`.
KNOWN_TELEMETRY: frozenset[str] = frozenset(TELEMETRY_KEYS)

# Curriculum entry points, in order of preference, when no main flow is named explicitly.
PREFERRED_MAIN_FLOWS: tuple[str, ...] = ("ifr_departure", "clearance")


class UnknownFlow(KeyError):
    """A flow slug that is not in the registry."""

    def __init__(self, slug: str) -> None:
        super().__init__(slug)
        self.slug = slug

    def __str__(self) -> str:
        return f"unknown flow {self.slug!r}"


class FlowRegistry:
    """All flows by slug, the main (first) flow of the curriculum and the interrupt flows.

    `main_flow` defaults to the first of `PREFERRED_MAIN_FLOWS` that is loaded with
    `entry_mode: main`, else the alphabetically first `entry_mode: main` flow, else None (a registry
    without main flows can still be linted, but no session can start on it).
    """

    def __init__(
        self,
        flows: Mapping[str, Flow] | Iterable[Flow],
        main_flow: str | None = None,
        *,
        sources: Mapping[str, str] | None = None,
    ) -> None:
        items = flows.values() if isinstance(flows, Mapping) else flows
        self.flows: dict[str, Flow] = {flow.slug: flow for flow in sorted(items, key=lambda f: f.slug)}
        self.sources: dict[str, str] = dict(sources or {})
        if main_flow is not None and main_flow not in self.flows:
            raise UnknownFlow(main_flow)
        self.main_flow: str | None = main_flow if main_flow is not None else self._default_main()
        self.schema_version: str = SCHEMA_VERSION  # every flow is served in the canonical model
        default_priority = InterruptSpec().priority
        self._interrupts: tuple[Flow, ...] = tuple(
            sorted(
                (f for f in self.flows.values() if f.entry_mode is FlowMode.INTERRUPT),
                key=lambda f: (-(f.interrupt.priority if f.interrupt else default_priority), f.slug),
            )
        )

    def _default_main(self) -> str | None:
        mains = [slug for slug, flow in self.flows.items() if flow.entry_mode is FlowMode.MAIN]
        for slug in PREFERRED_MAIN_FLOWS:
            if slug in mains:
                return slug
        return mains[0] if mains else None

    def get(self, slug: str) -> Flow:
        try:
            return self.flows[slug]
        except KeyError:
            raise UnknownFlow(slug) from None

    def source_of(self, slug: str) -> str:
        """The file (or other source name) a flow was loaded from; the slug when unknown."""
        return self.sources.get(slug, slug)

    def interrupt_flows(self) -> list[Flow]:
        """Flows with `entry_mode: interrupt`, highest `interrupt.priority` first (then by slug)."""
        return list(self._interrupts)

    def __contains__(self, slug: object) -> bool:
        return slug in self.flows

    def __iter__(self) -> Iterator[Flow]:
        return iter(self.flows.values())

    def __len__(self) -> int:
        return len(self.flows)

    def __repr__(self) -> str:
        return f"FlowRegistry({list(self.flows)!r}, main_flow={self.main_flow!r})"
