"""The assistant's LLM path: a planner that asks a model for a structured plan, validated against
the tool manifest, and a formatter that lets the model word the answer from the tool's facts.

Pure like the rest of assistant/: no HTTP here. The gateway injects a `ChatFn` (one
chat-completions call, gateway/llm/chat.py); tests may inject any callable.

Two-tier configuration (seed 002): behaviour (prompts, temperature, max tokens, streaming) in
`assistant/prompts/config.json` with the prompts as files beside it; infrastructure (URL, model,
key, timeout) in the gateway's settings.

Every failure falls back to the deterministic path and says so: an invented tool or argument,
malformed JSON, a timeout or an HTTP error is a `fallback` outcome in the call record and in
`planning_reasoning` / `thinking`. The records (one per model call, with token counts) go to
state's `llm_calls`; the streaming adapter sums them into `done.tokens`.
"""

from __future__ import annotations

import inspect
import json
import string
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from assistant.state import AviationPlan
from assistant.tools import DESCRIPTIONS, TOOLS
from assistant.tools.airports import SUPPORTED_FILTERS

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
DEFAULT_CONFIG = PROMPTS_DIR / "config.json"
UNSUPPORTED_FILTERS = ("has_avgas", "has_jet_a", "point_of_entry", "has_procedures", "max_landing_fee")


@dataclass
class ChatResult:
    """One chat-completions call: the text, or why there is none (`error`: timeout, http_error,
    transport_error, bad_response), and its token counts."""

    content: str | None = None
    error: str | None = None
    detail: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0
    model: str | None = None


class ChatFn(Protocol):
    def __call__(
        self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int,
        schema: dict[str, Any] | None = None, on_token: Callable[[str], None] | None = None,
    ) -> ChatResult: ...


# ------------------------------------------------------------------ configuration


class StageConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    system_prompt: str
    user_prompt: str
    temperature: float = Field(default=0.0, ge=0, le=2)
    max_tokens: int = Field(default=400, gt=0)


class PlannerConfig(StageConfig):
    structured_output: bool = True
    show_deterministic_hint: bool = True


class FormatterConfig(StageConfig):
    stream: bool = True
    max_tool_result_chars: int = Field(default=6000, gt=0)


class LlmConfig(BaseModel):
    model_config = ConfigDict(extra="ignore")  # "_comment"
    planner: PlannerConfig
    formatter: FormatterConfig
    prompts: dict[str, str] = Field(default_factory=dict, exclude=True)

    @classmethod
    def load(cls, path: Path | str | None = None) -> LlmConfig:
        path = Path(path or DEFAULT_CONFIG)
        cfg = cls.model_validate(json.loads(path.read_text(encoding="utf-8")))
        for stage in (cfg.planner, cfg.formatter):
            for name in (stage.system_prompt, stage.user_prompt):
                cfg.prompts[name] = (path.parent / name).read_text(encoding="utf-8")
        return cfg

    def render(self, name: str, **values: Any) -> str:
        return string.Template(self.prompts[name]).safe_substitute(**{k: str(v) for k, v in values.items()})


# ------------------------------------------------------------------ the manifest as models


class ToolFilters(BaseModel):
    model_config = ConfigDict(extra="forbid")
    has_hard_runway: bool | None = None
    min_runway_length_ft: float | None = None
    max_runway_length_ft: float | None = None
    country: str | None = Field(default=None, min_length=2, max_length=2)
    has_avgas: bool | None = None
    has_jet_a: bool | None = None
    point_of_entry: bool | None = None
    has_procedures: bool | None = None
    max_landing_fee: Any = None


assert set(SUPPORTED_FILTERS) | set(UNSUPPORTED_FILTERS) == set(ToolFilters.model_fields)


def _argument_models() -> dict[str, type[BaseModel]]:
    models: dict[str, type[BaseModel]] = {}
    for name, fn in TOOLS.items():
        hints = typing.get_type_hints(fn)
        fields: dict[str, Any] = {}
        for p in list(inspect.signature(fn).parameters.values())[1:]:
            if p.name == "retrieved":  # the rules agent's, never the planner's
                continue
            ann = hints.get(p.name, Any)
            if p.name == "filters":
                ann = ToolFilters | None
            fields[p.name] = (ann, ... if p.default is inspect.Parameter.empty else p.default)
        models[name] = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return models


ARGUMENT_MODELS = _argument_models()


class LlmPlan(BaseModel):
    """What the model must answer."""

    model_config = ConfigDict(extra="forbid")
    selected_tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    reasoning: str | None = None


def plan_schema() -> dict[str, Any]:
    """The answer's JSON schema (response_format): the tool is one of the manifest's names."""
    return {
        "type": "object",
        "properties": {
            "selected_tool": {"type": "string", "enum": list(TOOLS)},
            "arguments": {"type": "object"},
            "reasoning": {"type": "string"},
        },
        "required": ["selected_tool", "arguments"],
        "additionalProperties": False,
    }


def manifest_text() -> str:
    lines = []
    for name, model in ARGUMENT_MODELS.items():
        params = ", ".join(
            f"{n}{'' if f.is_required() else '?'}" for n, f in model.model_fields.items()
        )
        lines.append(f"- {name}({params}): {DESCRIPTIONS[name]}")
    return "\n".join(lines)


def validate_plan(content: str) -> AviationPlan:
    """The model's text as an AviationPlan, or ValueError saying what is wrong (malformed JSON,
    an invented tool, an invented or mistyped argument)."""
    text = content.strip()
    if text.startswith("```"):  # a fenced answer from a model without structured output
        text = text.strip("`").removeprefix("json").strip()
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON ({exc.msg})") from None
    try:
        plan = LlmPlan.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(f"not a plan: {_first_error(exc)}") from None
    model = ARGUMENT_MODELS.get(plan.selected_tool)
    if model is None:
        raise ValueError(f"invented tool {plan.selected_tool!r}, not in the manifest")
    try:
        args = model.model_validate(plan.arguments)
    except ValidationError as exc:
        raise ValueError(f"bad arguments for {plan.selected_tool}: {_first_error(exc)}") from None
    clean = args.model_dump(exclude_unset=True, exclude_none=True)
    if isinstance(clean.get("filters"), dict):
        clean["filters"] = {k: v for k, v in clean["filters"].items() if v is not None}
    return AviationPlan(selected_tool=plan.selected_tool, arguments=clean)


def _first_error(exc: ValidationError) -> str:
    e = exc.errors()[0]
    where = ".".join(str(x) for x in e.get("loc", ()))
    return f"{where}: {e.get('msg')}" if where else str(e.get("msg"))


# ------------------------------------------------------------------ the two stages


def call_record(stage: str, result: ChatResult, outcome: str) -> dict[str, Any]:
    return {"stage": stage, "outcome": outcome, "model": result.model, "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens, "latency_ms": round(result.latency_ms, 1),
            "error": result.error, "detail": result.detail}


@dataclass
class AssistantLlm:
    chat: ChatFn
    config: LlmConfig = field(default_factory=LlmConfig.load)

    def plan(self, turns: Sequence[str], fallback: AviationPlan, fallback_reasoning: str) -> tuple[AviationPlan, str, list[dict[str, Any]]]:
        """The model's plan, or the deterministic one (`fallback`) with the reason why."""
        cfg = self.config.planner
        if not cfg.enabled:
            return fallback, fallback_reasoning, []
        hint = ""
        if cfg.show_deterministic_hint:
            hint = f"A keyword planner suggests: {json.dumps(fallback.model_dump(include={'selected_tool', 'arguments'}))}"
        messages = [
            {"role": "system", "content": self.config.render(cfg.system_prompt, manifest=manifest_text())},
            {"role": "user", "content": self.config.render(
                cfg.user_prompt, conversation="\n".join(f"- {t}" for t in turns[:-1]) or "(none)", question=turns[-1], hint=hint)},
        ]
        result = self.chat(messages, temperature=cfg.temperature, max_tokens=cfg.max_tokens,
                           schema=plan_schema() if cfg.structured_output else None)
        if result.error or result.content is None:
            why = f"{result.error or 'no answer'}: {result.detail or ''}".strip(": ")
            return fallback, f"LLM planner failed ({why}); used the deterministic plan. {fallback_reasoning}", [
                call_record("planner", result, f"fallback: {result.error or 'no answer'}")]
        try:
            plan = validate_plan(result.content)
        except ValueError as exc:
            return fallback, f"LLM planner's answer rejected ({exc}); used the deterministic plan. {fallback_reasoning}", [
                call_record("planner", result, f"fallback: {exc}")]
        said = ""
        try:
            said = str(json.loads(result.content.strip().strip("`").removeprefix("json")).get("reasoning") or "")
        except (ValueError, AttributeError):
            pass
        agree = "agrees with" if plan.selected_tool == fallback.selected_tool else f"differs from ({fallback.selected_tool})"
        reasoning = f"LLM planner ({result.model or 'model'}) chose {plan.selected_tool}; {agree} the deterministic planner." + (f" Model: {said}" if said else "")
        return plan, reasoning, [call_record("planner", result, "used")]

    def format(self, question: str, plan: AviationPlan, result: dict[str, Any], draft: str,
               emit: Callable[[str], None]) -> tuple[str | None, str, list[dict[str, Any]]]:
        """The model's answer, streamed through `emit`; None (and why) when the template answer
        must be used instead. If the model fails after some tokens went out, the template answer
        follows them with a note (the tokens cannot be taken back)."""
        cfg = self.config.formatter
        if not cfg.enabled:
            return None, "LLM formatter off in the configuration.", []
        body = json.dumps(result, default=str, ensure_ascii=False)
        if len(body) > cfg.max_tool_result_chars:
            body = body[: cfg.max_tool_result_chars] + " …(cut)"
        messages = [
            {"role": "system", "content": self.config.render(cfg.system_prompt)},
            {"role": "user", "content": self.config.render(cfg.user_prompt, question=question, tool=plan.selected_tool, draft=draft, result=body)},
        ]
        sent: list[str] = []

        def on_token(tok: str) -> None:
            sent.append(tok)
            emit(tok)

        res = self.chat(messages, temperature=cfg.temperature, max_tokens=cfg.max_tokens, on_token=on_token if cfg.stream else None)
        if res.error or not (res.content or "").strip():
            why = f"LLM formatter failed ({res.error or 'empty answer'}{': ' + res.detail if res.detail else ''}); the template answer is used."
            if sent:
                tail = "\n\n(The model stopped; the answer from the data:)\n\n" + draft
                emit(tail)
                return "".join(sent) + tail, why, [call_record("formatter", res, f"fallback: {res.error or 'empty'}")]
            return None, why, [call_record("formatter", res, f"fallback: {res.error or 'empty'}")]
        if not sent:  # not streamed: one chunk
            emit(res.content or "")
        return res.content, f"LLM formatter ({res.model or 'model'}) wrote the answer from the tool's facts.", [
            call_record("formatter", res, "used")]


def sum_tokens(calls: Sequence[dict[str, Any]] | None) -> dict[str, int]:
    i = sum(int(c.get("input_tokens") or 0) for c in calls or ())
    o = sum(int(c.get("output_tokens") or 0) for c in calls or ())
    return {"input": i, "output": o, "total": i + o}


__all__ = ["AssistantLlm", "ChatFn", "ChatResult", "LlmConfig", "plan_schema", "sum_tokens", "validate_plan"]
