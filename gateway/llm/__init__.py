"""The LLM router's adapters: the chat-completions provider, its prompt files, one consultation.

The contract (what is asked, how the answer is judged, what a failure does) is pure and lives in
engine/router_llm.py; this package only talks to the model. `consult` is the one place a query
becomes a verdict, for the service's transmissions and the compatibility API alike.
"""

from __future__ import annotations

import logging

from engine.router_llm import LlmExchange, RouterQuery, RouterVerdict, judge
from gateway import metrics
from gateway.llm.client import ChatCompletionsProvider, RouterProvider

__all__ = ["ChatCompletionsProvider", "RouterProvider", "consult"]

log = logging.getLogger(__name__)


async def consult(provider: RouterProvider, query: RouterQuery) -> RouterVerdict:
    """Ask `provider` about `query` and judge the answer; counted in /metrics. Never raises: a
    provider that breaks its promise is a transport error, and the fallback answers."""
    try:
        exchange = await provider.ask(query)
    except Exception as exc:
        log.exception("the LLM router's provider failed")
        exchange = LlmExchange(error="transport_error", detail=f"{type(exc).__name__}: {exc}")
    verdict = judge(query, exchange)
    metrics.count_llm_call(verdict)
    if not verdict.used:
        log.info("LLM router: %s (%s) at %s:%s", verdict.outcome, verdict.detail, query.flow, query.state)
    return verdict
