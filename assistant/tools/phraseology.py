"""Phraseology help from our own flows (flows/*.yaml), so the assistant and the controller never
disagree: for each pilot state with a `readback:` list, the controller's instruction before it
(`say` of the ATC state leading there) and the pilot's expected readback (`expect`), rendered with
example values."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import yaml

from assistant.rules_rag import tokens
from engine.templates import render

EXAMPLE = {
    "callsign_spoken": "Lufthansa three five nine", "station_name": "Frankfurt Ground", "runway": "25C",
    "arrival_runway": "26R", "holding_point": "N4", "heading": "270", "approach_type": "ILS", "qnh": "1013",
    "arrival_altitude_ft": "4000", "taxi_route": "N, N4", "destination_name": "Munich", "dest_approach_freq": "128.025",
    "wind": "250 degrees 8 knots", "push_facing": "east", "descent_level": "flight level 120",
    "cruise_level": "flight level 240", "cleared_altitude_ft": "5000", "atis_letter": "K", "arrival_stand": "G23",
    "stand": "V155", "sid": "MARUN 7F", "initial_altitude_ft": "5000", "arrival_holding_point": "B3",
    "tower_freq": "119.900", "squawk": "4721", "ground_freq": "121.800", "dest_tower_freq": "118.700",
    "dest_ground_freq": "121.830", "departure_freq": "120.150", "circuit_direction": "left", "center_freq": "127.725",
    "arrival_taxi_route": "B, A", "arrival_qnh": "1012", "persons_on_board": "2", "fuel_endurance": "3 hours",
    "arrival_wind": "260 degrees 10 knots", "vacate_hold_s": "10", "tune_hold_s": "10", "airborne_hold_s": "30",
}
# words the flows' own text does not use but trainees do
HINTS = {
    "taxi_out": "taxi clearance taxiing ground", "taxi_in": "taxi in after landing arrival taxi stand parking",
    "clearance": "ifr clearance departure clearance delivery route clearance squawk sid",
    "tower_departure": "takeoff take off line up tower departure", "tower_arrival": "landing land cleared to land vacate go around",
    "startup_pushback": "startup start up pushback push back engine", "approach": "approach ils descend vectors",
    "departure": "departure radar climb", "enroute": "en route cruise level flight level center",
    "vfr_circuit": "vfr circuit touch and go pattern", "emergency": "emergency mayday pan",
}


@dataclass(frozen=True)
class ReadbackItem:
    flow: str
    flow_name: str
    state: str
    summary: str
    readback: tuple[str, ...]
    instruction: str | None  # the controller's words (template)
    readback_example: str | None  # the pilot's expected words (template)

    def as_dict(self) -> dict[str, Any]:
        return {
            "flow": self.flow,
            "flow_name": self.flow_name,
            "state": self.state,
            "summary": self.summary,
            "must_read_back": [f.replace("_", " ") for f in self.readback],
            "readback_fields": list(self.readback),
            "instruction_template": self.instruction,
            "readback_template": self.readback_example,
            "instruction_example": render(self.instruction, EXAMPLE).text if self.instruction else None,
            "readback_example": render(self.readback_example, EXAMPLE).text if self.readback_example else None,
        }


class PhraseologyBook:
    def __init__(self, items: list[ReadbackItem]) -> None:
        self.items = items
        self._bm25 = bm25s.BM25()
        docs = []
        for it in items:
            text = " ".join([
                it.flow.replace("_", " "), it.flow_name, HINTS.get(it.flow, ""), it.summary,
                re.sub(r"\{\{[a-z_]+\}\}", " ", it.instruction or ""), " ".join(f.replace("_", " ") for f in it.readback),
            ])
            docs.append(tokens(text) or ["empty"])
        if items:
            self._bm25.index(docs, show_progress=False)

    @classmethod
    def from_dir(cls, flows_dir: Path | str) -> PhraseologyBook:
        items: list[ReadbackItem] = []
        for path in sorted(Path(flows_dir).glob("*.yaml")):
            try:
                flow = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            except (OSError, yaml.YAMLError):
                continue
            states = flow.get("states") or {}
            for name, st in states.items():
                if not isinstance(st, dict) or not st.get("readback"):
                    continue
                say = None
                for pname, pst in states.items():
                    if isinstance(pst, dict) and pst.get("role") == "atc" and pst.get("say") and any(
                        isinstance(t, dict) and t.get("to") == name for t in pst.get("transitions") or []
                    ):
                        say = pst["say"]
                        break
                items.append(ReadbackItem(
                    str(flow.get("slug") or path.stem), str(flow.get("name") or path.stem), name,
                    " ".join(str(st.get("summary") or "").split()), tuple(st["readback"]), say, st.get("expect"),
                ))
        return cls(items)

    def search(self, question: str, k: int = 3) -> list[ReadbackItem]:
        q = tokens(question)
        if not q or not self.items:
            return []
        docs, scores = self._bm25.retrieve([q], k=min(k, len(self.items)), show_progress=False)
        return [self.items[int(i)] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]


def get_phraseology_help(ctx: Any, topic: str) -> dict[str, Any]:
    found = ctx.phraseology.search(topic, k=3)
    items = [it.as_dict() for it in found]
    return {
        "_tool_type": "phraseology",
        "topic": topic,
        "items": items,
        "source": "livefreq flows (flows/*.yaml): the same readback lists the controller checks",
        "filter_profile": {},
        "pretty": f"{len(items)} readback situation(s) for {topic!r}",
    }
