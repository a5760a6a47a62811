"""The LLM router's prompts: two text files under version control, filled from a `RouterQuery`.

Why files: what the model is told is configuration a school tunes for its model (a small local
model wants shorter, blunter instructions than a hosted one), reviewed like code but changed
without touching it (`LIVEFREQ_LLM_PROMPTS_DIR` points at another copy). ``system.txt`` is sent
as is; ``user.txt`` is a `string.Template` (``${name}`` placeholders, `PLACEHOLDERS`), so a
prompt file can reach nothing but the query's own fields.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from string import Template

from engine.router_llm import NONE, QueryCandidate, RouterQuery

PLACEHOLDERS = (
    "flow",
    "state",
    "state_name",
    "summary",
    "station",
    "controller_said",
    "transcript",
    "variables",
    "candidates",
    "matcher",
    "answer_schema",
)
# `matcher` (why the model is asked: a near tie, or no phrase close enough) is not in the shipped
# user.txt: told that the matcher "found no candidate close enough", small local models answer
# "none" to paraphrases they otherwise place (docs/manual.md "The LLM router", measured by `livefreq bench
# router`). A prompt for a model that weighs it may still name it.


class PromptError(ValueError):
    """A prompt file is missing or names a placeholder that does not exist."""


@dataclass(frozen=True, slots=True)
class PromptSet:
    system: str
    user: Template

    @classmethod
    def load(cls, directory: Path) -> PromptSet:
        """Read and check ``system.txt`` and ``user.txt`` (errors at start-up, not mid-flight)."""
        try:
            system = (directory / "system.txt").read_text(encoding="utf-8").strip()
            user = Template((directory / "user.txt").read_text(encoding="utf-8").strip())
        except OSError as exc:
            raise PromptError(f"cannot read the LLM router's prompts in {directory}: {exc}") from exc
        if not user.is_valid():
            raise PromptError(f"{directory / 'user.txt'}: a '$' that is not a ${{placeholder}} (write $$ for a dollar)")
        unknown = sorted(set(user.get_identifiers()) - set(PLACEHOLDERS))
        if unknown:
            raise PromptError(f"{directory / 'user.txt'}: unknown placeholder(s) {unknown}; known: {list(PLACEHOLDERS)}")
        return cls(system, user)

    def messages(self, query: RouterQuery) -> list[dict[str, str]]:
        """The chat messages for one query."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user.substitute(fields(query))}]


def fields(query: RouterQuery) -> dict[str, str]:
    """Every placeholder's text for `query`."""
    if query.reason == "ambiguous":
        matcher = f"found a near tie between candidates; alone it would take {query.deterministic}"
    else:
        matcher = f"found no candidate close enough to the words (threshold {query.threshold:g} of 100)"
    return {
        "flow": query.flow,
        "state": query.state,
        "state_name": f" ({query.state_name})" if query.state_name else "",
        "summary": query.summary or "",
        "station": query.station or "the controller",
        "controller_said": f'"{query.controller_said}"' if query.controller_said else "nothing yet",
        "transcript": query.transcript,
        "variables": json.dumps(query.variables, ensure_ascii=False),
        "candidates": "\n".join(_candidate_line(c) for c in query.candidates) + f'\n- {NONE}: none of these fits',
        "matcher": matcher,
        "answer_schema": json.dumps(query.answer_schema(), ensure_ascii=False),
    }


def _candidate_line(c: QueryCandidate) -> str:
    text = f"- {c.id} ({c.kind}"
    text += f', "{c.label}")' if c.label else ")"
    if c.meaning:
        text += f": {c.meaning}"
    if c.expected:
        text += "; the pilot would say for example: " + " / ".join(f'"{e}"' for e in c.expected)
    return text
