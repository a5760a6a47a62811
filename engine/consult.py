"""LLM consultation: a validated choice among the surviving candidates, a fallback, a trace.

When the deterministic router is unsure (a near tie, or no score above the threshold) the gateway
asks an LLM router the question built here (engine/router_llm.py) and passes its verdict with the
transmission. The verdict is used only if it answers the same question and names a candidate that
was offered; otherwise the configured fallback policy decides. Every step is traced and the
session's LLM usage counted. It never changes the flow.
"""

from __future__ import annotations

from typing import Any

from engine.candidates import Candidate
from engine.models import Decision, Flow, Session, State
from engine.router import RouteResult
from engine.router_llm import ConsultReason, FallbackPolicy, RouterQuery, RouterVerdict, build_query, json_type, offered
from engine.templates import template_vars


class LlmConsultation:
    """Builds the LLM router's question and applies its verdict."""

    def __init__(self, fallback: FallbackPolicy = "say_again") -> None:
        self.fallback_policy: FallbackPolicy = fallback  # when the LLM router's answer is unusable

    @staticmethod
    def count(session: Session, llm: RouterVerdict | None) -> None:
        """Tokens are spent whatever becomes of the answer."""
        if llm is None:
            return
        usage = session.llm
        usage.calls += 1
        usage.prompt_tokens += llm.exchange.prompt_tokens
        usage.completion_tokens += llm.exchange.completion_tokens
        usage.total_tokens += llm.exchange.total_tokens

    @staticmethod
    def query(
        session: Session,
        flow: Flow,
        state: State,
        text: str,
        norm: str,
        cands: list[Candidate],
        result: RouteResult,
        reason: ConsultReason,
        ctx: dict[str, Any],
    ) -> RouterQuery:
        """The LLM router's question: the state, the words, the survivors and the variables
        they mention (never the whole scenario)."""
        names: set[str] = {"callsign", "callsign_spoken", "station_name", *state.readback_required}
        for tpl in (state.say_tpl, state.utterance_tpl, *(c.transition.utterance_tpl for _, c in offered(cands))):
            names.update(template_vars(tpl))
        variables = {n: ctx[n] for n in sorted(names) if isinstance(ctx.get(n), str | int | float | bool)}
        last = session.message_history[-1].text if session.message_history else None
        return build_query(
            flow=flow.slug,
            state=state.id,
            state_name=state.name,
            summary=state.summary,
            phase=state.phase,
            station=session.station,
            controller_said=last,
            transcript=text,
            normalized=norm,
            reason=reason,
            result=result,
            candidates=cands,
            threshold=flow.policies.match_threshold,
            variables=variables,
            updatable={name: json_type(flow.variables.get(name)) for name in flow.policies.llm_updates},
        )

    def consult(
        self,
        session: Session,
        d: Decision,
        query: RouterQuery,
        result: RouteResult,
        cands: list[Candidate],
        llm: RouterVerdict | None,
    ) -> RouteResult:
        """Apply the LLM router's verdict to an ambiguous or below-threshold result."""
        why = "a near tie" if query.reason == "ambiguous" else f"no score reached {query.threshold:g}"
        if llm is None:
            d.trace.add("llm", f"{why}; no LLM router asked: the deterministic result stands", consult=query.reason)
            return result
        view = llm.trace_view(query.reason)
        by_id = dict(offered(cands))
        if llm.fingerprint != query.fingerprint or (llm.choice is not None and llm.choice not in by_id):
            view["outcome"] = "stale"
            return self.fallback(session, d, result, view, "stale", "the session moved on while the LLM answered")
        if llm.outcome == "chosen" and llm.choice is not None:
            chosen = by_id[llm.choice]
            d.trace.add("llm", f"{why}; the LLM chose {llm.choice}", choice=llm.choice, tokens=view["tokens"])
            return RouteResult(
                chosen,
                "llm",
                result.scores,
                f"LLM chose {llm.choice} ({query.reason})",
                llm=view,
                updates=dict(llm.updates),
            )
        if llm.outcome == "none":
            d.trace.add("llm", f"{why}; the LLM found no candidate that fits", tokens=view["tokens"])
            return RouteResult(None, "llm", result.scores, "LLM: no candidate fits", llm=view)
        return self.fallback(session, d, result, view, llm.outcome, llm.detail)

    def fallback(
        self, session: Session, d: Decision, result: RouteResult, view: dict[str, Any], reason: str, detail: str
    ) -> RouteResult:
        """The LLM's answer is unusable: the configured policy decides, and the trace says why."""
        session.llm.fallbacks += 1
        policy = self.fallback_policy
        fallback = {"reason": reason, "detail": detail, "policy": policy}
        d.trace.add("llm", f"LLM fallback ({reason}: {detail}); policy {policy}", fallback=fallback)
        if policy == "deterministic":
            return RouteResult(
                result.chosen,
                result.router,
                result.scores,
                f"{result.reason}; LLM fallback ({reason})",
                ambiguous=result.ambiguous,
                llm=view,
                fallback=fallback,
            )
        return RouteResult(
            None, "fallback", result.scores, f"LLM fallback ({reason}): say again", llm=view, fallback=fallback
        )

    @staticmethod
    def unused(session: Session, d: Decision, llm: RouterVerdict | None, why: str) -> None:
        """A verdict for a question no longer asked (the session moved on): counted and traced."""
        if llm is None:
            return
        session.llm.fallbacks += 1
        d.trace.add("llm", f"LLM answer not used: {why}", reason="stale", outcome=llm.outcome)
