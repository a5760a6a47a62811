"""Speaking: the controller's messages, in order, and the values they issue.

Renders a template in the speaking context of a state (its station, or the station the pilot is on
for flows that name none), numbers the message, keeps the session's message history bounded and
records the values the controller issued (what later readbacks are checked against). Repeats the
last message on "say again" and prompts a silent pilot. It never changes the flow.
"""

from __future__ import annotations

from typing import Any

from engine import readback_policy
from engine.corrections import correction_items
from engine.messages import build_message, render_text, speaking_context
from engine.models import Decision, Flow, ReadbackResult, Role, Session, State
from engine.phraseology.instructions import record_instructions
from engine.readback import record_issued
from engine.registry import FlowRegistry
from engine.templates import template_vars
from engine.timing import Timing

HISTORY_LIMIT = 500
GO_AHEAD_TPL = "{{callsign_spoken}}, {{station_name}}, go ahead."


class Speaker:
    """Says the controller's messages into a decision and the session's history."""

    def __init__(self, registry: FlowRegistry, timing: Timing | None = None) -> None:
        self.registry = registry
        self.timing = timing or Timing(registry)

    def host(self, session: Session, flow: Flow) -> Flow:
        """The flow whose airport a station-less flow speaks for: the one it interrupted."""
        if flow.station or not session.flow_stack:
            return flow
        return self.registry.get(session.flow_stack[-1].flow)

    def render_ctx(self, session: Session, flow: Flow, state: State | None) -> dict[str, Any]:
        """The session's variables and the derived values of the state's speaking context."""
        _, derived = speaking_context(session, flow, state, self.host(session, flow))
        return {**session.variables, **derived}

    def expected_pilot(self, session: Session) -> list[str]:
        """Example phrases for the pilot's turn (rendered text), main route first; after a bad
        readback, what is still to read back ("QNH 1004, Lufthansa 359") before them."""
        flow = self.registry.get(session.active.flow)
        state = flow.states[session.active.state]
        if state.role is not Role.PILOT or session.completed:
            return []
        ctx = self.render_ctx(session, flow, state)
        out: list[str] = []
        left = readback_policy.left_to_read(session, flow, state, ctx)
        if left:  # a readback in parts: what is still to read back, first
            result = ReadbackResult(ok=False, fields=dict.fromkeys(left, "missing"), missing=left)
            items = correction_items(state.readback_required, ctx, result)
            text = ", ".join([*items, str(ctx.get("callsign_spoken") or "")]).strip(", ")
            out.append(text[:1].upper() + text[1:])
        for tpl in [state.utterance_tpl, *(t.utterance_tpl for t in state.transitions)]:
            if tpl:
                text = render_text(tpl, ctx)
                text = text[:1].upper() + text[1:]  # "{{turn}} heading ..." starts a sentence too
                if text not in out:
                    out.append(text)
        return out

    def say(self, session: Session, d: Decision, flow: Flow, state: State | None, template: str, now: float) -> None:
        """One controller message from `template`, appended to the decision and the history."""
        msg, missing = build_message(session, flow, state, template, now, host=self.host(session, flow))
        names = template_vars(template)
        if names:  # what the controller just said is what later transmissions are checked against
            ctx = self.render_ctx(session, flow, state)
            record_issued(session.issued.setdefault(flow.slug, {}), {n: ctx.get(n) for n in names})
        if msg.text:  # and its instructions in words: "descend", "line up and wait"
            record_instructions(session.issued.setdefault(flow.slug, {}), msg.text)
        if missing:
            d.trace.add("error", f"template of {msg.state} has no value for {missing}", missing=missing)
            d.trace.errors.append(f"missing_variables:{','.join(missing)}")
        session.message_history.append(msg)
        if len(session.message_history) > HISTORY_LIMIT:
            del session.message_history[: len(session.message_history) - HISTORY_LIMIT]
        d.messages.append(msg)

    def say_again(self, session: Session, d: Decision, now: float) -> None:
        """The pilot asked to say again: the last message once more ("go ahead" if none yet)."""
        d.intent = "say_again"
        flow = self.registry.get(session.active.flow)
        state = flow.states[session.active.state]
        last = session.message_history[-1] if session.message_history else None
        if last is None:
            d.trace.add("select", "say again, but nothing was said yet: controller answers 'go ahead'")
            self.say(session, d, flow, state, GO_AHEAD_TPL, now)
            return
        session.seq += 1
        repeat = last.model_copy(
            update={"seq": session.seq, "message_id": f"{session.session_id}-m{session.seq}", "at": now}
        )
        session.message_history.append(repeat)
        d.messages.append(repeat)
        d.trace.add("select", f"say again: repeated message {last.message_id}")
        self.timing.arm_silence(session, flow, state, now, force=True)

    def silence_prompt(self, session: Session, d: Decision, flow: Flow, state: State, now: float) -> None:
        """The pilot did not answer: the flow's silence prompt, and the next one armed."""
        session.silence_prompts += 1
        d.intent = "silence_prompt"
        self.say(session, d, flow, state, flow.policies.silence_prompt_tpl, now)
        self.timing.next_prompt(session, flow, state, now)

    def ask(self, session: Session, d: Decision, flow: Flow, state: State, template: str, now: float) -> None:
        """A question to the pilot (say again, who is calling, a correction): said, and the
        silence clock of the pilot's turn restarted."""
        self.say(session, d, flow, state, template, now)
        self.timing.arm_silence(session, flow, state, now, force=True)
