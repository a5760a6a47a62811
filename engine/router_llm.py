"""The LLM router's contract: what a model is asked, how its answer is judged, what a failure does.

Seed 000, phase 4: the LLM is a router, not the source of truth. The deterministic router decides
every transmission it can; only when it is ambiguous (a near tie) or finds nothing above the
flow's threshold does the engine describe the question as a `RouterQuery`: the state, what the
controller said last, the pilot's words, the surviving candidates (ids, labels, example phrases)
and the variables they mention. The engine does no I/O, so the gateway asks a model and hands
back an `LlmExchange` (what was sent, what came back or how the call failed, latency, tokens).
`judge` turns it into a `RouterVerdict` by strict rules: one JSON object, one offered id (or
``"none"``: nothing fits, the controller asks to say again), updates only of the flow's
``policies.llm_updates`` with their declared types. The engine applies the verdict in the same
atomic step as any decision (`SessionEngine.transmit(..., llm=verdict)`), after checking that the
question is still the one asked (`fingerprint`): the session may have moved on while the model
thought. Whatever fails is a traced fallback (`FallbackPolicy`), never an invented state.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Literal

from pydantic import Field

from engine.candidates import Candidate
from engine.models import DomainModel
from engine.router import RouteResult

NONE = "none"  # the answer "none of the candidates fits"
MAX_UPDATE_CHARS = 64

ConsultReason = Literal["ambiguous", "below_threshold"]
# what the engine does when the LLM gives no usable answer: treat the transmission as not
# understood (the controller asks to say again, or corrects an unanswered readback), or take what
# the deterministic router alone would have taken (declaration order on a near tie)
FallbackPolicy = Literal["say_again", "deterministic"]
# how a call failed before any answer: no answer in time, an HTTP error status, no connection,
# or a 200 that is not a chat completion
ExchangeError = Literal["timeout", "http_error", "transport_error", "bad_response"]
Outcome = Literal[
    "chosen",
    "none",
    "timeout",
    "http_error",
    "transport_error",
    "bad_response",
    "malformed_json",
    "unknown_candidate",
    "invalid_updates",
]
USED_OUTCOMES: tuple[str, ...] = ("chosen", "none")

_KIND_MEANING = {
    "ok": "the pilot read back correctly",
    "bad": "the pilot's readback is wrong or incomplete; the controller corrects it",
    "return": "the pilot ends this exchange; the interrupted one resumes",
    "interrupt": "the pilot starts an urgent or side exchange",
}
_JSON_TYPES: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}


class QueryCandidate(DomainModel):
    """One route the model may choose, as the prompt shows it."""

    id: str  # what the model answers; unique within the query
    kind: str  # next, ok, bad, auto, return, interrupt
    label: str | None = None
    meaning: str | None = None  # what taking a route of this kind says about the transmission
    target: str  # "flow:state" it leads to
    expected: list[str] = Field(default_factory=list)  # example pilot phrases, rendered
    score: float = 0.0  # the deterministic router's score (0-100; >100: a trigger was heard)


class RouterQuery(DomainModel):
    """The question put to the LLM router about one transmission (JSON-ready, for prompts)."""

    flow: str
    state: str
    state_name: str | None = None
    summary: str | None = None
    phase: str | None = None
    station: str | None = None
    controller_said: str | None = None  # the controller's last message, the pilot answers it
    transcript: str  # the pilot's words as received
    normalized: str  # as the deterministic router read them
    reason: ConsultReason
    deterministic: str | None = None  # the id the deterministic router would take (near tie)
    threshold: float
    candidates: list[QueryCandidate]
    variables: dict[str, Any] = Field(default_factory=dict)  # the ones the state and routes mention
    updatable: dict[str, str] = Field(default_factory=dict)  # variable -> JSON type the model may set
    fingerprint: str = ""  # the question's identity: flow, state, words, candidates

    def ids(self) -> list[str]:
        return [c.id for c in self.candidates]

    def answer_schema(self) -> dict[str, Any]:
        """JSON schema of the answer, for chat-completions ``response_format`` (strict mode: every
        property required, no others; an update the model does not make is null)."""
        props: dict[str, Any] = {"candidate": {"type": "string", "enum": [*self.ids(), NONE]}}
        required = ["candidate"]
        if self.updatable:
            props["updates"] = {
                "type": "object",
                "properties": {name: {"type": [kind, "null"]} for name, kind in self.updatable.items()},
                "required": list(self.updatable),
                "additionalProperties": False,
            }
            required.append("updates")
        return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


class LlmExchange(DomainModel):
    """One call to a model as the gateway made it: the request, the answer or the failure."""

    provider: str = "openai-compatible"
    model: str | None = None
    url: str | None = None
    structured: str = "off"  # the response_format sent: "json_schema", "json_object" (both carry the schema) or "off"
    request: dict[str, Any] = Field(default_factory=dict)  # the body sent
    status: int | None = None  # HTTP status
    content: str | None = None  # the model's message text
    error: ExchangeError | None = None
    detail: str | None = None  # what went wrong, for the trace
    latency_ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class RouterVerdict(DomainModel):
    """What the model's answer is worth: a valid choice, "none", or why it cannot be used."""

    fingerprint: str
    outcome: Outcome
    choice: str | None = None  # an id of the query (outcome "chosen")
    updates: dict[str, Any] = Field(default_factory=dict)  # validated against `updatable`
    detail: str = ""
    exchange: LlmExchange

    @property
    def used(self) -> bool:
        return self.outcome in USED_OUTCOMES

    def trace_view(self, reason: str) -> dict[str, Any]:
        """The trace's `router.llm`: request, response, latency, tokens and the verdict."""
        ex = self.exchange
        return {
            "consulted_because": reason,
            "outcome": self.outcome,
            "choice": self.choice,
            "updates": dict(self.updates),
            "detail": self.detail,
            "provider": ex.provider,
            "model": ex.model,
            "url": ex.url,
            "structured": ex.structured,
            "request": ex.request,
            "response": ex.content,
            "status": ex.status,
            "error": ex.error,
            "latency_ms": round(ex.latency_ms, 1),
            "tokens": {"prompt": ex.prompt_tokens, "completion": ex.completion_tokens, "total": ex.total_tokens},
        }


# --------------------------------------------------------------------------- asking


def consult_reason(result: RouteResult, candidates: list[Candidate]) -> ConsultReason | None:
    """Why the LLM should be asked about a deterministic result; None when it stands alone.

    Nothing is asked when no candidate survived guards, triggers and the readback check: there
    is nothing to choose from, and the model must never bring back an eliminated route. Nor when
    exactly one candidate remains (seed 000 step 7, rule ``single_remaining``: engine/router.py).
    ``below_threshold``: no candidate remains, some are uncertain (rule ``uncertain``);
    ``ambiguous``: a near tie among the remaining ones (rule ``best_remaining``).
    """
    if not any(not c.eliminated for c in candidates):
        return None
    if result.chosen is None:
        return "below_threshold"
    if result.ambiguous:
        return "ambiguous"
    return None


def offered(candidates: list[Candidate]) -> list[tuple[str, Candidate]]:
    """The candidates the model may choose, under the ids it sees (a repeated id gets ``#2``...):
    the remaining ones when some remain (step 8: "only those candidates"), else every candidate
    not eliminated (all uncertain: engine/router.py)."""
    out: list[tuple[str, Candidate]] = []
    seen: set[str] = {NONE}
    remaining = any(c.status == "remains" and not c.eliminated for c in candidates)
    for cand in candidates:
        if cand.eliminated or (remaining and cand.status != "remains"):
            continue
        base = cand.id
        qid, n = base, 1
        while qid in seen:
            n += 1
            qid = f"{base}#{n}"
        seen.add(qid)
        out.append((qid, cand))
    return out


def json_type(value: Any) -> str:
    """The JSON type of a declared variable's default (strings when it has none)."""
    return _JSON_TYPES.get(type(value), "string")


def build_query(
    *,
    flow: str,
    state: str,
    state_name: str | None,
    summary: str | None,
    phase: str | None,
    station: str | None,
    controller_said: str | None,
    transcript: str,
    normalized: str,
    reason: ConsultReason,
    result: RouteResult,
    candidates: list[Candidate],
    threshold: float,
    variables: dict[str, Any],
    updatable: dict[str, str],
) -> RouterQuery:
    """The query for one transmission, with its fingerprint."""
    shown: list[QueryCandidate] = []
    deterministic = None
    for qid, cand in offered(candidates):
        kind = cand.transition.kind.value
        shown.append(
            QueryCandidate(
                id=qid,
                kind=kind,
                label=cand.transition.label or cand.transition.intent,
                meaning=_KIND_MEANING.get(kind),
                target=f"{cand.target_flow}:{cand.target_state}",
                expected=list(cand.examples),
                score=cand.score,
            )
        )
        if result.chosen is cand:
            deterministic = qid
    query = RouterQuery(
        flow=flow,
        state=state,
        state_name=state_name,
        summary=summary,
        phase=phase,
        station=station,
        controller_said=controller_said,
        transcript=transcript,
        normalized=normalized,
        reason=reason,
        deterministic=deterministic,
        threshold=threshold,
        candidates=shown,
        variables=variables,
        updatable=updatable,
    )
    query.fingerprint = fingerprint(query)
    return query


def fingerprint(query: RouterQuery) -> str:
    """Identity of the question: the same words, in the same state, with the same routes and
    phrases (so the same variables) and the same updatable names. A verdict answers only it."""
    key = [
        query.flow,
        query.state,
        query.normalized,
        [(c.id, c.kind, c.target, c.expected) for c in query.candidates],
        sorted(query.updatable.items()),
    ]
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- judging


def judge(query: RouterQuery, exchange: LlmExchange) -> RouterVerdict:
    """Strictly validate the model's answer to `query` (no JSON fished out of prose)."""

    def verdict(
        outcome: Outcome, detail: str, choice: str | None = None, updates: dict[str, Any] | None = None
    ) -> RouterVerdict:
        return RouterVerdict(
            fingerprint=query.fingerprint,
            outcome=outcome,
            choice=choice,
            updates=updates or {},
            detail=detail,
            exchange=exchange,
        )

    if exchange.error is not None:
        return verdict(exchange.error, exchange.detail or exchange.error)
    text = (exchange.content or "").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return verdict("malformed_json", f"not JSON ({exc.msg} at {exc.pos}): {text[:80]!r}")
    except (ValueError, RecursionError) as exc:  # an integer past Python's digit limit, absurd nesting
        return verdict("malformed_json", f"not usable JSON ({exc.__class__.__name__}): {text[:80]!r}")
    if not isinstance(data, dict):
        return verdict("malformed_json", f"a JSON {type(data).__name__}, not an object")
    allowed = {"candidate", "updates"} if query.updatable else {"candidate"}
    extra = sorted(set(data) - allowed)
    if extra:
        return verdict("malformed_json", f"unexpected key(s) {extra}; the answer has {sorted(allowed)}")
    choice = data.get("candidate")
    if not isinstance(choice, str):
        return verdict("malformed_json", f"'candidate' must be a string, not {choice!r}")
    if choice == NONE:
        return verdict("none", "the model found no candidate that fits")
    if choice not in query.ids():
        return verdict("unknown_candidate", f"{choice[:80]!r} is not one of {query.ids()}")
    updates, problem = _check_updates(data.get("updates"), query.updatable)
    if problem:
        return verdict("invalid_updates", problem)
    return verdict("chosen", f"chose {choice}", choice, updates)


def _check_updates(raw: Any, allowed: dict[str, str]) -> tuple[dict[str, Any], str | None]:
    """Updates within the flow's allowed schema: declared names, declared types, nulls skipped."""
    if raw is None:
        return {}, None
    if not isinstance(raw, dict):
        return {}, f"'updates' must be an object, not {type(raw).__name__}"
    out: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in allowed:
            return {}, f"update of {name!r} is outside the flow's llm_updates {sorted(allowed)}"
        if value is None:
            continue
        if not _has_type(value, allowed[name]):
            return {}, f"update {name}={value!r} is not of type {allowed[name]}"
        out[name] = value
    return out, None


def _has_type(value: Any, kind: str) -> bool:
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, str) and len(value) <= MAX_UPDATE_CHARS
