"""YAML flows → `Flow` models, the registry of a curriculum, and lint.

Reading files is an adapter's job (`gateway.flows_source.DirectoryFlowSource`); the engine only sees
text through the `FlowSource` protocol, so the same loader serves a directory, a package, a database
or a test's dict (`MemoryFlowSource`).

Errors are for people editing YAML: every `FlowLoadError` names the source, the line when it can be
found, the path inside the document (`states.CD_ISSUE.transitions[0].after_s`) and what is wrong.
`load_registry` reads every flow before failing, so one run reports every broken file.

Schema versions: "1" (seed 000's field names: `say_tpl`, `utterance_tpl`, `readback_required`,
`next`/`ok_next`/`bad_next`/`timer_next`/`auto_transitions`) and "2" (`say`, `expect`, `readback`,
`transitions`). `engine.models.State` folds both into one model, so the version only gates what is
accepted; a file without `schema_version` is read as the current version.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Protocol

import yaml
from pydantic import ValidationError

from engine.flow_errors import FlowLoadError, FlowLoadErrors, LoadProblem
from engine.flow_lint import LintIssue, lint_flow, lint_registry
from engine.flow_yaml import (
    StrictLoader,
    check_legacy_lists,
    line_of,
    normalize_version,
    short,
    validation_problems,
    yaml_problem,
)
from engine.models import Flow
from engine.registry import FlowRegistry, UnknownFlow

__all__ = [
    "SLUG_RE",
    "SUPPORTED_SCHEMA_VERSIONS",
    "LoadProblem",
    "FlowLoadError",
    "FlowLoadErrors",
    "FlowSource",
    "MemoryFlowSource",
    "load_flow_text",
    "load_registry",
    "LintIssue",
    "lint_flow",
    "lint_registry",
]

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
SUPPORTED_SCHEMA_VERSIONS: tuple[str, ...] = ("1", "2")


# --------------------------------------------------------------------------- sources


class FlowSource(Protocol):
    """Where flow texts come from. The engine never opens files itself."""

    def list(self) -> list[str]:
        """Slugs of the available flows."""
        ...

    def read(self, slug: str) -> tuple[str, str]:
        """(YAML text, source name for messages) of one flow."""
        ...


class MemoryFlowSource:
    """Flow texts held in memory, keyed by slug (tests, embedded curricula)."""

    def __init__(self, texts: Mapping[str, str], prefix: str = "flows/") -> None:
        self._texts = dict(texts)
        self._prefix = prefix

    def list(self) -> list[str]:
        return sorted(self._texts)

    def read(self, slug: str) -> tuple[str, str]:
        return self._texts[slug], f"{self._prefix}{slug}.yaml"


# --------------------------------------------------------------------------- loading


def load_flow_text(text: str, source: str, *, expected_slug: str | None = None) -> Flow:
    """Parse and validate one flow document; raises `FlowLoadError`.

    `expected_slug` is the slug the flow was listed under (its file stem): the document's `slug`
    must equal it, and a document without `slug` takes it.
    """
    try:
        data = yaml.load(text, Loader=StrictLoader)  # a SafeLoader: plain data only, no objects
    except yaml.YAMLError as exc:
        raise FlowLoadError(source, [yaml_problem(exc)]) from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise FlowLoadError.single(source, "YAML error: the document is nested too deeply") from None
    if data is None:
        raise FlowLoadError.single(source, "empty flow document")
    if not isinstance(data, dict):
        raise FlowLoadError.single(source, f"a flow must be a mapping at the top level, not {type(data).__name__}")

    problems: list[LoadProblem] = []
    if "schema_version" in data:
        version = normalize_version(data["schema_version"])
        if version not in SUPPORTED_SCHEMA_VERSIONS:
            supported = ", ".join(f'"{v}"' for v in SUPPORTED_SCHEMA_VERSIONS)
            problems.append(
                LoadProblem(
                    f"unsupported schema_version {short(data['schema_version'])} (supported: {supported})",
                    "schema_version",
                    line_of(yaml.compose(text, Loader=yaml.SafeLoader), ["schema_version"]),
                )
            )
        else:
            data["schema_version"] = version
    if expected_slug is not None and "slug" not in data:
        data["slug"] = expected_slug
    problems += check_legacy_lists(data)
    if problems:
        raise FlowLoadError(source, problems)

    try:
        flow = Flow.model_validate(data)
    except ValidationError as exc:
        raise FlowLoadError(source, validation_problems(exc, text)) from None
    except (TypeError, AttributeError) as exc:  # a legacy shape the model's folding could not read
        raise FlowLoadError.single(source, f"invalid flow structure: {exc}") from None

    if not SLUG_RE.match(flow.slug):
        raise FlowLoadError.single(
            source, f"invalid slug {flow.slug!r}: use lower case letters, digits, '_' and '-'", "slug"
        )
    if expected_slug is not None and flow.slug != expected_slug:
        raise FlowLoadError.single(source, f"slug {flow.slug!r} does not match the file name {expected_slug!r}", "slug")
    return flow


def load_registry(
    source: FlowSource,
    *,
    main_flow: str | None = None,
    errors: list[FlowLoadError] | None = None,
) -> FlowRegistry:
    """Load every flow of `source` into a `FlowRegistry`.

    Every flow is attempted. With `errors=None` any failure raises `FlowLoadErrors` listing all of
    them (a server must not start on a half-loaded curriculum). With a list, failures are appended
    to it and the registry holds the flows that did load (`livefreq flows lint` reports both).
    An unknown `main_flow` is an error of the same kind; in collecting mode the default is used.
    """
    collected: list[FlowLoadError] = []
    flows: list[Flow] = []
    sources: dict[str, str] = {}
    for slug in source.list():
        if not SLUG_RE.match(slug):
            collected.append(
                FlowLoadError.single(slug, f"invalid flow name {slug!r}: use lower case letters, digits, '_' and '-'")
            )
            continue
        name = slug
        try:
            text, name = source.read(slug)
            flow = load_flow_text(text, name, expected_slug=slug)
        except FlowLoadError as exc:
            collected.append(exc)
            continue
        except (OSError, UnicodeDecodeError, KeyError, ValueError) as exc:
            collected.append(FlowLoadError.single(name, f"cannot read flow: {exc}"))
            continue
        flows.append(flow)
        sources[flow.slug] = name
    try:
        registry = FlowRegistry(flows, main_flow, sources=sources)
    except UnknownFlow as exc:
        collected.append(FlowLoadError.single("(registry)", f"main flow {exc.slug!r} is not loaded"))
        registry = FlowRegistry(flows, None, sources=sources)
    if errors is not None:
        errors.extend(collected)
    elif collected:
        raise FlowLoadErrors(collected)
    return registry
