"""AgentState (seed 002) and the planner's output, AviationPlan (seed 001)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, Optional, TypedDict

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field


class AviationPlan(BaseModel):
    """One tool from the manifest and its arguments; filters live in ``arguments["filters"]``."""

    selected_tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    answer_style: str = "narrative_markdown"


class RouterDecision(BaseModel):
    path: Literal["rules", "database"]
    reason: str


class AgentState(TypedDict, total=False):
    messages: Annotated[list[BaseMessage], operator.add]
    # planning
    plan: Optional[AviationPlan]
    planning_reasoning: Optional[str]
    # router (rules path)
    router_decision: Optional[RouterDecision]
    retrieved_rules: Optional[list[dict[str, Any]]]
    # tool execution
    tool_result: Optional[Any]
    # output
    formatting_reasoning: Optional[str]
    final_answer: Optional[str]
    thinking: Optional[str]
    ui_payload: Optional[dict[str, Any]]
    error: Optional[str]
    # the LLM path (assistant/llm.py): one record per model call, with its outcome and tokens
    llm_calls: Annotated[list[dict[str, Any]], operator.add]
    # optional
    persona_id: Optional[str]
    suggested_queries: Optional[list[dict[str, Any]]]
