"""Controller and pilot phrase templates: `{{var}}` (YAML schema) and legacy `{var}` (seed 000).

Substitution is a regex over plain names, never `str.format`: a template comes from a flow file and
must not be able to reach Python attributes (`{x.__class__}`) or format specs. A variable that has
no value is rendered as `[name?]` and reported, so a broken scenario is audible and traceable
instead of a silent blank. Parsed templates are cached, so rendering is a join over parts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = ["RenderResult", "Formatter", "render", "template_vars", "unknown_placeholders", "NAME_PATTERN"]

NAME_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"

# Double braces are the first alternative, so `{{x}}` is one variable, never `{` + `{x}` + `}`.
# `{{ x }}` may carry blanks; legacy `{x}` may not (braces with blanks stay literal text).
_VAR = re.compile(r"\{\{\s*(" + NAME_PATTERN + r")\s*\}\}|\{(" + NAME_PATTERN + r")\}")
_DOUBLE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_PLAIN = re.compile(r"^\s*" + NAME_PATTERN + r"\s*$")

Formatter = Callable[[str, Any], str]


# A parsed template is a tuple of parts: (False, literal text) or (True, variable name).
_Part = tuple[bool, str]


@dataclass(frozen=True, slots=True)
class RenderResult:
    text: str
    missing: list[str] = field(default_factory=list)  # variables without a value, in order

    @property
    def ok(self) -> bool:
        return not self.missing


@lru_cache(maxsize=8192)
def _parse(tpl: str) -> tuple[_Part, ...]:
    parts: list[_Part] = []
    pos = 0
    for match in _VAR.finditer(tpl):
        if match.start() > pos:
            parts.append((False, tpl[pos : match.start()]))
        parts.append((True, match.group(1) or match.group(2)))
        pos = match.end()
    if pos < len(tpl):
        parts.append((False, tpl[pos:]))
    return tuple(parts)


@lru_cache(maxsize=8192)
def _names(tpl: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(text for is_var, text in _parse(tpl) if is_var))


def template_vars(tpl: str | None) -> list[str]:
    """Names a template references, each once, in order of first appearance."""
    if not tpl:
        return []
    return list(_names(tpl))


def unknown_placeholders(tpl: str | None) -> list[str]:
    """``{{ ... }}`` that are not a plain variable name (``{{ callsign.__class__ }}``,
    ``{{ runway | upper }}``): rendered as the literal text they are, so lint reports them."""
    if not tpl:
        return []
    return [m.group(0) for m in _DOUBLE.finditer(tpl) if not _PLAIN.match(m.group(1))]


def render(tpl: str | None, variables: Mapping[str, Any], *, formatter: Formatter | None = None) -> RenderResult:
    """Substitute `variables` into `tpl`.

    A variable that is absent or None renders as `[name?]` and is listed in `missing`. Each present
    value goes through `formatter(name, value)` when given (the engine passes the phraseology
    package's display or speech form for the variable's kind), else `str(value)`. Errors raised by
    the formatter propagate: a formatter bug should be seen, not papered over.
    """
    if not tpl:
        return RenderResult("")
    out: list[str] = []
    missing: list[str] = []
    for is_var, name in _parse(tpl):
        if not is_var:
            out.append(name)
            continue
        value = variables.get(name)
        if value is None:
            out.append(f"[{name}?]")
            if name not in missing:
                missing.append(name)
        elif formatter is not None:
            out.append(formatter(name, value))
        else:
            out.append(str(value))
    return RenderResult("".join(out), missing)
