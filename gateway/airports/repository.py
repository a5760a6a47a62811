"""Airport lookups over the dataset shipped with the package (built by scripts/build_airports.py).

The gzipped JSON (~1 MB, ~11k airports) is read once, on first use, and kept as plain dicts;
an `AirportInfo` is validated only when asked for and then cached, so start-up stays fast and
a lookup is a dict access.
"""

from __future__ import annotations

import gzip
import json
import threading
from pathlib import Path
from typing import Any

from engine.airport import AirportInfo

DATA_FILE = Path(__file__).resolve().parent / "data" / "airports.json.gz"


class AirportRepository:
    def __init__(self, path: Path | str = DATA_FILE) -> None:
        self.path = Path(path)
        self._raw: dict[str, dict[str, Any]] | None = None
        self._models: dict[str, AirportInfo] = {}
        self._lock = threading.Lock()

    @property
    def _airports(self) -> dict[str, dict[str, Any]]:
        if self._raw is None:
            with self._lock:
                if self._raw is None:
                    with gzip.open(self.path, "rt", encoding="utf-8") as fh:
                        self._raw = json.load(fh)["airports"]
        return self._raw

    def __len__(self) -> int:
        return len(self._airports)

    def __contains__(self, icao: object) -> bool:
        return isinstance(icao, str) and icao.strip().upper() in self._airports

    def get(self, icao: str | None) -> AirportInfo | None:
        """The airport by ICAO code (any case), or None when unknown."""
        if not icao:
            return None
        key = icao.strip().upper()
        model = self._models.get(key)
        if model is None:
            raw = self._airports.get(key)
            if raw is None:
                return None
            model = self._models.setdefault(key, AirportInfo.model_validate(raw))
        return model

    def frequencies(self, icao: str) -> dict[str, list[str]]:
        """Station -> frequencies ("121.800"); empty when the airport or its data is unknown."""
        airport = self.get(icao)
        return {k: list(v) for k, v in airport.frequencies.items()} if airport else {}

    def search(self, prefix: str, limit: int = 20) -> list[AirportInfo]:
        """Airports whose ICAO or IATA code, or a word of the name or city, starts with `prefix`.

        Code matches come first, then name/city matches, each sorted by ICAO.
        """
        needle = prefix.strip().casefold()
        if not needle or limit <= 0:
            return []
        by_code: list[str] = []
        by_name: list[str] = []
        for icao, raw in self._airports.items():
            if icao.casefold().startswith(needle) or (raw.get("iata") or "").casefold().startswith(needle):
                by_code.append(icao)
            elif any(
                word.startswith(needle) or text.startswith(needle)
                for text in (raw["name"].casefold(), (raw.get("city") or "").casefold())
                for word in text.split()
            ):
                by_name.append(icao)
        found = sorted(by_code) + sorted(by_name)
        return [a for a in (self.get(icao) for icao in found[:limit]) if a is not None]


_default: AirportRepository | None = None


def default_repository() -> AirportRepository:
    """The process-wide repository over the shipped dataset (loaded lazily)."""
    global _default
    if _default is None:
        _default = AirportRepository()
    return _default
