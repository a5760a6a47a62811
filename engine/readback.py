"""The one readback check: did the pilot read back every required value, by meaning?

For each required variable the value of its kind is looked for in the transcript
(`engine.phraseology`), in any word order:

- "ok": the issued value was heard (121.8 for 121.800, "tree fife niner" for 359);
- "wrong": values of that kind were heard, none equal to the issued one (25L for 25R, squawk 4712
  for 4721, "climb four thousand" for 5000); reported with the expected and heard text forms;
- "missing": nothing of that kind was heard, or the variable has no value.

Several values of one kind may be heard (two frequencies, an altitude and a level); the field is
ok if one of them is the issued value. One exception keeps a self-correction honest: after the
word "correction", values heard after it replace those heard before it, so "runway two five
right, correction, two five left" is wrong. A wrong value is never accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.models import ReadbackResult
from engine.phraseology import kind_for_variable, tokenize
from engine.phraseology.context import Context
from engine.phraseology.handlers import Kind, canonical_of, kind

CORRECTION_WORDS = frozenset({"correction"})


class ReadbackEvaluator:
    """Stateless; one instance may serve every session."""

    def evaluate(self, required: list[str], variables: Mapping[str, Any], transcript: str) -> ReadbackResult:
        t = tokenize(transcript)
        correction = max((i for i, w in enumerate(t.words) if w in CORRECTION_WORDS), default=-1)
        fields: dict[str, str] = {}
        missing: list[str] = []
        wrong: list[dict[str, str]] = []
        for name in required:
            if name in fields:
                continue
            handler = kind(kind_for_variable(name))
            value = variables.get(name)
            expected = canonical_of(handler, value)
            if expected is None and value is not None and value != "":
                handler = kind("text")  # a value its kind cannot parse is checked as its words
                expected = canonical_of(handler, value)
            if expected is None:
                fields[name] = "missing"
                missing.append(name)
                continue
            found = handler.find(t, Context(expected, variables, name))
            heard = [v for i, v in found if i > correction] if correction >= 0 else []
            heard = heard or [v for _i, v in found]
            if any(handler.equal(expected, v) for v in heard):
                fields[name] = "ok"
            elif heard:
                fields[name] = "wrong"
                wrong.append({"field": name, "expected": _shown(handler, expected), "heard": _shown(handler, heard[0])})
            else:
                fields[name] = "missing"
                missing.append(name)
        return ReadbackResult(ok=all(s == "ok" for s in fields.values()), fields=fields, missing=missing, wrong=wrong)


def _shown(handler: Kind, value: str) -> str:
    canon = canonical_of(handler, value)
    return handler.display(canon) if canon is not None else value
