"""The one canonical model of livefreq: flows, states, transitions, sessions and decisions.

Everything the engine reads or writes is one of these pydantic v2 models. YAML flows in both
schema versions (seed 000's legacy field names such as ``say_tpl``/``next``/``ok_next`` and our
own ``say``/``transitions``) are folded into the same `Flow`/`State`/`Transition` here, so nothing
downstream ever branches on the schema version.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from engine.doubt import Reason

SCHEMA_VERSION = "2"


class Role(StrEnum):
    PILOT = "pilot"
    ATC = "atc"
    SYSTEM = "system"


class TransitionKind(StrEnum):
    """How a transition is chosen. One model for every kind (seed 000, 'Transition')."""

    NEXT = "next"  # ordinary route (pilot intent, or the only way on from an atc/system state)
    OK = "ok"  # the pilot's readback was correct
    BAD = "bad"  # the pilot's readback was wrong or incomplete
    TIMER = "timer"  # fires after `after_s` seconds in the state
    AUTO = "auto"  # taken as soon as its guard/triggers hold (telemetry, flags)
    INTERRUPT = "interrupt"  # suspend this flow and enter another
    RETURN = "return"  # leave this flow and resume the stacked one


class FlowMode(StrEnum):
    MAIN = "main"  # replace the main flow (gate-to-gate chaining)
    LINEAR = "linear"  # enter a flow, come back when it ends
    PARALLEL = "parallel"  # run beside the active flow
    INTERRUPT = "interrupt"  # suspend the active flow; globally triggerable


class DomainModel(BaseModel):
    """The base of the engine's models: an unknown field is an error, never silently dropped
    (a misspelled key in a flow or a message fails where it is written)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class AircraftState(DomainModel):
    """What a simulator may report about the aircraft (the `telemetry` message, the HTTP
    telemetry body): the names guards read as ``telemetry.<name>``. Every field is optional; a
    report changes the fields it carries and keeps the others."""

    on_ground: bool | None = None
    on_runway: bool | None = None  # on any runway surface (SimConnect ON ANY RUNWAY)
    altitude_ft: float | None = None  # above mean sea level (compare with `elevation_ft`)
    ias_kt: float | None = None  # indicated airspeed
    gs_kt: float | None = None  # ground speed
    vs_fpm: float | None = None  # vertical speed, feet per minute, climbing > 0
    heading_deg: float | None = None
    lat: float | None = None
    lon: float | None = None
    squawk: str | None = None
    com1: str | None = None  # active COM1 frequency ("127.275"); `tune` sets it too


TELEMETRY_KEYS: tuple[str, ...] = tuple(AircraftState.model_fields)
_HOLD_TEMPLATE = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")


class Trigger(DomainModel):
    """A deterministic condition on the pilot's words or the aircraft's state.

    kind ``regex``: ``pattern`` searched (case-insensitive) in the normalized transcript.
    kind ``telemetry``: ``expr`` is a guard expression over telemetry that must stay true for
    ``hold_s`` seconds (scenario time) before it counts, so a bounce on the runway or a frequency
    dialled through is noise, not an event. ``hold_s`` is a number or ``"{{variable}}"``: a
    scenario variable (declared with a default in the flow's ``variables``) that a client may
    set per session, e.g. a simulator whose readings are noisier.
    kind ``intent``: ``intent`` names a phraseology intent (e.g. ``radio_check``, ``mayday``).
    """

    kind: Literal["regex", "telemetry", "intent"] = "regex"
    pattern: str | None = None
    expr: str | None = None
    intent: str | None = None
    hold_s: float | str = 0.0

    @field_validator("hold_s")
    @classmethod
    def _hold_template(cls, value: float | str) -> float | str:
        if isinstance(value, str) and not _HOLD_TEMPLATE.match(value):
            raise ValueError(f"hold_s is a number of seconds or '{{{{variable}}}}', not {value!r}")
        if not isinstance(value, str) and not 0 <= value < float("inf"):
            raise ValueError(f"hold_s must be zero or more seconds, not {value!r}")
        return value

    @property
    def hold_var(self) -> str | None:
        """The variable that sets ``hold_s``, when it is a template."""
        if isinstance(self.hold_s, str):
            match = _HOLD_TEMPLATE.match(self.hold_s)
            return match.group(1) if match else None
        return None

    def hold(self, variables: dict[str, Any]) -> float:
        """``hold_s`` in seconds for a session's `variables` (a template whose value is not a
        non-negative number holds 0 s; lint reports such flows)."""
        if not isinstance(self.hold_s, str):
            return max(0.0, float(self.hold_s))
        name = self.hold_var
        value = variables.get(name) if name else None
        if isinstance(value, bool) or value is None:
            return 0.0
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            return 0.0
        return seconds if seconds >= 0 and seconds != float("inf") else 0.0

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"kind": "regex", "pattern": data}
        if isinstance(data, dict) and "kind" not in data:
            data = dict(data)
            if "regex" in data:
                data["pattern"] = data.pop("regex")
                data["kind"] = "regex"
            elif "telemetry" in data:
                data["expr"] = data.pop("telemetry")
                data["kind"] = "telemetry"
            elif "intent" in data:
                data["kind"] = "intent"
        return data


class Action(DomainModel):
    """A controlled side effect applied when a state is entered (no code, only data)."""

    set: dict[str, Any] = Field(default_factory=dict)  # variables; values may be templates
    flags: dict[str, bool] = Field(default_factory=dict)
    tune: str | None = None  # station whose frequency becomes active, e.g. "tower"


class Handoff(DomainModel):
    to: str  # station name: delivery, ground, tower, departure, approach, center, atis
    freq: str | None = None  # literal frequency or a template such as "{{tower_freq}}"


class Transition(DomainModel):
    kind: TransitionKind = TransitionKind.NEXT
    to: str | None = None  # target state id (in `flow`, or the current flow)
    flow: str | None = None  # target flow slug for flow switching
    mode: FlowMode | None = None  # how `flow` is entered (default: the target flow's entry_mode)
    return_to: str | None = None  # linear/interrupt: state of this flow to resume at (default: stay)
    label: str | None = None
    guard: str | None = None  # safe expression, see engine.guards
    after_s: float | None = None  # timer transitions
    triggers: list[Trigger] = Field(default_factory=list)
    utterance_tpl: str | None = None  # example pilot phrase for this route (router input)
    intent: str | None = None  # short name of the pilot intent this route stands for
    updates: dict[str, Any] = Field(default_factory=dict)  # variable updates on taking it
    flags: dict[str, bool] = Field(default_factory=dict)
    priority: int = 0


class State(DomainModel):
    id: str = ""
    role: Role = Role.SYSTEM
    phase: str | None = None
    name: str | None = None
    summary: str | None = None
    station: str | None = None  # who speaks / whose frequency this is (defaults to the flow's)
    say_tpl: str | None = Field(default=None, validation_alias="say")  # controller text template
    utterance_tpl: str | None = Field(default=None, validation_alias="expect")  # textbook pilot phrase
    readback_required: list[str] = Field(default_factory=list, validation_alias="readback")
    transitions: list[Transition] = Field(default_factory=list)
    triggers: list[Trigger] = Field(default_factory=list)
    conditions: list[str] = Field(default_factory=list)  # guards that must hold to enter
    actions: list[Action] = Field(default_factory=list)
    handoff: Handoff | None = None
    frequency: str | None = None
    frequency_name: str | None = Field(default=None, validation_alias="frequencyName")
    silence_prompt: bool | None = None  # None: flow policy decides
    repeatable: bool = False  # atc states that may be revisited in one auto-advance (loop guard)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        """Fold seed 000 field names (say_template, next/ok_next/... lists) into `transitions`."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for legacy, canon in (
            ("say_template", "say_tpl"),
            ("expected_pilot_template", "utterance_tpl"),
        ):
            if legacy in data and canon not in data and _alias_of(canon) not in data:
                data[canon] = data.pop(legacy)
        transitions = list(data.get("transitions") or [])
        for key, kind in _LEGACY_LISTS.items():
            for item in data.pop(key, None) or []:
                entry = {"to": item} if isinstance(item, str) else dict(item)
                entry.setdefault("kind", kind)
                transitions.append(entry)
        data["transitions"] = transitions
        return data

    def of_kind(self, *kinds: TransitionKind) -> list[Transition]:
        return [t for t in self.transitions if t.kind in kinds]


_LEGACY_LISTS: dict[str, str] = {
    "next": "next",
    "ok_next": "ok",
    "bad_next": "bad",
    "timer_next": "timer",
    "auto_transitions": "auto",
    "interrupts": "interrupt",
}


def _alias_of(field: str) -> str:
    return {"say_tpl": "say", "utterance_tpl": "expect"}.get(field, field)


class FlowPolicies(DomainModel):
    """Per-flow behaviour knobs; defaults are the curriculum's house style."""

    max_bad_readbacks: int = 2  # after this many bad readbacks in one state, apply on_max_bad
    # after max_bad_readbacks: "correct_and_continue" repeats every required item ("negative, I
    # say again, cleared to ..., squawk ...") and waits for a correct readback (a wrong or missing
    # value never moves the state on); "repeat" keeps correcting only what was wrong; "end" ends
    # the flow
    on_max_bad: Literal["correct_and_continue", "repeat", "end"] = "correct_and_continue"
    silence_prompt_s: float = 15.0  # silence after an ATC call before "how do you read?"
    silence_prompts_max: int = 2
    silence_prompt_tpl: str = "{{callsign_spoken}}, {{station_name}}, how do you read?"
    say_again_tpl: str = "{{callsign_spoken}}, say again."
    correction_tpl: str = "{{callsign_spoken}}, negative, I say again, {{corrections}}."
    # a readback value the recognizer was unsure of is asked again, never judged (engine/readback.py)
    say_again_items_tpl: str = "{{callsign_spoken}}, say again {{say_again_items}}."
    # another aircraft's callsign, or none on first contact (engine/identity.py)
    station_calling_tpl: str = "Station calling {{station_name}}, say again your callsign."
    # "unable" where a readback is due: the pilot declines, which is no readback; the clearance
    # stands and the state waits for its readback (engine/routing.py `is_unable`)
    unable_tpl: str = "{{callsign_spoken}}, roger, advise when able."
    match_threshold: float = 55.0  # router score (0-100) below which a transmission is unrecognized
    # variables of this flow the LLM router may set along with its choice (engine/router_llm.py);
    # none by default: the LLM chooses a route and nothing else
    llm_updates: list[str] = Field(default_factory=list)


class InterruptSpec(DomainModel):
    """How an `interrupt` flow is entered from anywhere."""

    triggers: list[Trigger] = Field(default_factory=list)
    priority: int = 100


class Flow(DomainModel):
    slug: str
    schema_version: str = SCHEMA_VERSION
    name: str = ""
    description: str = ""
    start_state: str
    end_states: list[str] = Field(default_factory=list)
    entry_mode: FlowMode = FlowMode.MAIN
    station: str | None = None  # default station for states that name none
    airport_var: Literal["airport", "destination"] = "airport"  # whose stations this flow talks to
    variables: dict[str, Any] = Field(default_factory=dict)  # declared variables with defaults
    flags: dict[str, bool] = Field(default_factory=dict)
    policies: FlowPolicies = Field(default_factory=FlowPolicies)
    hooks: dict[str, Any] = Field(default_factory=dict)
    roles: list[Role] = Field(default_factory=lambda: [Role.PILOT, Role.ATC, Role.SYSTEM])
    phases: list[str] = Field(default_factory=list)
    interrupt: InterruptSpec | None = None
    states: dict[str, State]

    @model_validator(mode="after")
    def _ids(self) -> Flow:
        for sid, state in self.states.items():
            state.id = sid
        if not self.phases:
            self.phases = sorted({s.phase for s in self.states.values() if s.phase})
        return self


# --------------------------------------------------------------------------- runtime


class FlowFrame(DomainModel):
    """A flow the session is in (active, stacked or parallel) and where it stands."""

    flow: str
    state: str
    mode: FlowMode = FlowMode.MAIN
    return_to: str | None = None  # state to resume in the stacked flow when this one ends


class TimerRecord(DomainModel):
    id: str
    kind: Literal["transition", "silence", "telemetry"] = "transition"
    flow: str
    state: str
    due: float
    transition_index: int | None = None
    consumed: bool = False
    cancelled: bool = False


class ControllerMessage(DomainModel):
    message_id: str
    seq: int
    role: Role = Role.ATC
    station: str | None = None
    frequency: str | None = None
    template: str
    text: str
    speech: str
    flow: str | None = None
    state: str | None = None
    at: float = 0.0


FieldStatus = Literal["ok", "missing", "wrong", "unsure"]  # a readback field's verdict


class ReadbackResult(DomainModel):
    ok: bool
    fields: dict[str, FieldStatus] = Field(default_factory=dict)
    missing: list[str] = Field(default_factory=list)
    wrong: list[dict[str, str]] = Field(default_factory=list)  # {field, expected, heard}
    unsure: list[str] = Field(default_factory=list)  # heard differently by the alternatives: "say again"
    # heard as another value by the best transcript: no check in the audio confirms it; not on the wire
    contradicted: list[str] = Field(default_factory=list, exclude=True)
    # heard right only by a check in the audio (engine/value_check.py `apply_checks`); not on the wire
    confirmed: list[str] = Field(default_factory=list, exclude=True)
    # heard as another value by some transcript and as the issued one by none; not on the wire
    otherwise: list[str] = Field(default_factory=list, exclude=True)
    # by voice, a frequency heard as issued but written short ("decimal five" for 136.500), or a
    # clearance limit heard as issued (the prompt names it): unsure until the audio rules out its
    # rivals (engine/value_rivals.py); not on the wire
    rivalled: list[str] = Field(default_factory=list, exclude=True)
    # field -> question (value_check.check_question) -> the best margin the checks in the audio
    # gave its issued value, none confirming it; not on the wire
    margins: dict[str, dict[str, float]] = Field(default_factory=dict, exclude=True)
    # field -> why it is unsure (which hearing disagreed, garbled, rivals pending: engine/doubt.py),
    # for the trace; not on the wire
    why: dict[str, Reason] = Field(default_factory=dict, exclude=True)


class CandidateTrace(DomainModel):
    id: str  # target state id (or flow:state)
    flow: str
    kind: str
    label: str | None = None
    score: float | None = None
    eliminated: bool = False
    reason: str | None = None
    status: str | None = None  # eliminated | remains | uncertain (engine/router.py, steps 7/8)
    evidence: str | None = None  # why it remains or is uncertain


class TraceStep(DomainModel):
    step: str  # candidates | guard | trigger | readback | router | select | advance | flow | timer | error
    detail: str
    data: dict[str, Any] = Field(default_factory=dict)


class Trace(DomainModel):
    steps: list[TraceStep] = Field(default_factory=list)
    candidates: list[CandidateTrace] = Field(default_factory=list)
    readback: ReadbackResult | None = None
    # {name (deterministic, llm, fallback), scores, threshold, reason, ambiguous, consult (why the
    # LLM router was or would be asked), llm (its request, response, latency, tokens), fallback}
    router: dict[str, Any] | None = None
    auto_advance: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)

    def add(self, step: str, detail: str, **data: Any) -> None:
        self.steps.append(TraceStep(step=step, detail=detail, data=data))


class Decision(DomainModel):
    """What one input (transmission, tick, telemetry, start) did to a session."""

    transmission_id: str | None = None
    cause: Literal["start", "transmit", "tick", "telemetry", "tune", "reset"] = "transmit"
    pilot_text: str | None = None
    intent: str | None = None
    from_flow: str | None = None
    from_state: str | None = None
    to_flow: str | None = None
    to_state: str | None = None
    transition: Transition | None = None
    readback: ReadbackResult | None = None
    updates: dict[str, Any] = Field(default_factory=dict)
    flags: dict[str, bool] = Field(default_factory=dict)
    messages: list[ControllerMessage] = Field(default_factory=list)
    expected_pilot: list[str] = Field(default_factory=list)
    recognized: bool = True
    completed: bool = False
    at: float = 0.0
    trace: Trace = Field(default_factory=Trace)

    @property
    def settled(self) -> bool:
        """Understood as heard: recognized, no "say again", and any readback correct. A voice
        transmission that would not settle is worth a second hearing (gateway.speech.rehearing)."""
        return self.recognized and self.intent != "say_again" and (self.readback is None or self.readback.ok)


class LlmUsage(DomainModel):
    """What a session's transmissions cost at the LLM router, summed over the session."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    fallbacks: int = 0  # calls whose answer was not used (timeout, HTTP error, invalid answer, stale)


class DecisionRecord(DomainModel):
    """The compact history line kept in the session for each decision."""

    transmission_id: str | None
    cause: str
    pilot_text: str | None
    from_state: str | None
    to_state: str | None
    readback_ok: bool | None
    at: float


class Session(DomainModel):
    """A pilot's running scenario: everything needed to continue it anywhere (RuntimeSession)."""

    session_id: str
    main_flow: str
    start_flow: str | None = None  # where the scenario began (reset goes back there)
    active: FlowFrame
    flow_stack: list[FlowFrame] = Field(default_factory=list)
    parallel_flows: list[FlowFrame] = Field(default_factory=list)
    variables: dict[str, Any] = Field(default_factory=dict)
    flags: dict[str, bool] = Field(default_factory=dict)
    telemetry: dict[str, Any] = Field(default_factory=dict)
    telemetry_since: dict[str, float] = Field(default_factory=dict)  # trigger key -> first true
    message_history: list[ControllerMessage] = Field(default_factory=list)
    decision_history: list[DecisionRecord] = Field(default_factory=list)
    timers: list[TimerRecord] = Field(default_factory=list)
    seq: int = 0
    transmissions: int = 0
    timer_counter: int = 0
    bad_readbacks: int = 0  # consecutive bad readbacks at `readback_state`
    readback_state: str | None = None  # "flow:state" whose readback is being counted
    # variable -> issued value read back right at `readback_state`, as the last bad readback there
    # left it (cleared when the state moves on): a readback in parts ("say again QNH" answered
    # "QNH 1004") keeps them (readback_policy `bad_readback`, `_keep_heard`)
    readback_heard: dict[str, str] = Field(default_factory=dict)
    # what the transmissions asked again at `readback_state` heard against an issued value, for the
    # answer (readback_policy `bad_readback`): the variables a transcript heard as another value
    # (none as the issued one), and the margin the checks in the audio held against each, net
    readback_otherwise: list[str] = Field(default_factory=list)
    readback_margins: dict[str, dict[str, float]] = Field(default_factory=dict)
    silence_prompts: int = 0  # in the current state
    station: str | None = None
    frequency: str | None = None
    completed: bool = False
    created_at: float = 0.0
    updated_at: float = 0.0
    seed: int | None = None
    llm: LlmUsage = Field(default_factory=LlmUsage)  # the LLM router's calls and tokens
    traffic: list[str] = Field(default_factory=list)  # callsigns of nearby aircraft (never ours)
    # flow slug -> {variable: value} the controller said in that flow and has not superseded since
    # (engine/readback.py record_issued); a transmission is checked against its flow's values
    issued: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @property
    def active_flow(self) -> str:
        return self.active.flow

    @property
    def current_state(self) -> str:
        return self.active.state

    def clear_readback(self) -> None:
        """Forget the readback counted at `readback_state` (the state moved on, or the flow ended)."""
        self.readback_state, self.bad_readbacks, self.readback_heard = None, 0, {}
        self.readback_otherwise, self.readback_margins = [], {}
