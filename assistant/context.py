"""What the assistant's tools read: airports, rules, places, our flows, and a weather callable.

The gateway builds one `AssistantContext` from its own repositories (`from_gateway` in
gateway/api/assistant.py); tests and the CLI can use `AssistantContext.load(...)` with paths.
Everything heavy (indexes) is built once, lazily, and shared by every request.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

DATA_DIR = Path(__file__).resolve().parent / "data"
RULES_FILE = DATA_DIR / "rules.json"
# The gateway's package data beside this package (site-packages in a wheel, the checkout in a
# clone); the gateway passes its configured flows explicitly, these serve the CLI and tests.
PACKAGES_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_AIRPORTS = PACKAGES_ROOT / "gateway" / "airports" / "data" / "airports.json.gz"
DEFAULT_FLOWS = PACKAGES_ROOT / "gateway" / "assets" / "flows"

# weather(icao) -> {"raw", "wind", "visibility", "qnh", "letter", "atis", "source", ...} or None
WeatherFn = Callable[[str], "dict[str, Any] | None"]


class AirportSource(Protocol):
    """The small repository interface the assistant needs: raw airport dicts by ICAO code, in the
    shape of gateway/airports/data/airports.json.gz (name, city, country, lat, lon, runways with
    surface and length_ft, frequencies by station)."""

    def raw_airports(self) -> Mapping[str, dict[str, Any]]: ...


class FileAirports:
    def __init__(self, path: Path | str = DEFAULT_AIRPORTS) -> None:
        self.path = Path(path)
        self._data: dict[str, dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def raw_airports(self) -> Mapping[str, dict[str, Any]]:
        if self._data is None:
            with self._lock:
                if self._data is None:
                    with gzip.open(self.path, "rt", encoding="utf-8") as fh:
                        self._data = json.load(fh)["airports"]
        return self._data


@dataclass
class AssistantContext:
    airport_source: AirportSource = field(default_factory=FileAirports)
    rules_path: Path = RULES_FILE
    flows_dir: Path = DEFAULT_FLOWS
    weather: WeatherFn | None = None

    @classmethod
    def load(
        cls,
        airports: Path | str | None = None,
        rules: Path | str | None = None,
        flows_dir: Path | str | None = None,
        weather: WeatherFn | None = None,
    ) -> AssistantContext:
        return cls(
            FileAirports(airports or DEFAULT_AIRPORTS),
            Path(rules or RULES_FILE),
            Path(flows_dir or DEFAULT_FLOWS),
            weather,
        )

    @property
    def airports(self) -> Mapping[str, dict[str, Any]]:
        return self.airport_source.raw_airports()

    @cached_property
    def rules(self) -> Any:
        from assistant.rules_rag import shared_index

        return shared_index(self.rules_path)

    @cached_property
    def places(self) -> Any:
        from assistant.geo import Places

        return Places(self.airports)

    @cached_property
    def phraseology(self) -> Any:
        from assistant.tools.phraseology import PhraseologyBook

        return PhraseologyBook.from_dir(self.flows_dir)

    def warm(self) -> None:
        """Build every index now (the gateway calls this at start-up, off the request path)."""
        _ = self.airports, self.rules, self.places, self.phraseology
        self.places.warm()
        self.rules.warm()

    def iter_airports(self) -> Iterable[dict[str, Any]]:
        return self.airports.values()
