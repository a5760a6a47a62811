"""Where the gateway's own data files are, found through `importlib.resources`.

The flows, the browser client and the LLM prompts ship inside the packages (gateway/assets/,
gateway/llm/prompts/), so the same lookup works from a checkout (editable install) and from an
installed wheel, whatever the working directory. Settings use these as defaults; every one can be
overridden (``LIVEFREQ_FLOWS_DIR``, ``LIVEFREQ_STATIC_DIR``, ``LIVEFREQ_LLM_PROMPTS_DIR``).
"""

from __future__ import annotations

import atexit
import contextlib
from importlib.resources import as_file, files
from importlib.resources.abc import Traversable
from pathlib import Path

_extracted = contextlib.ExitStack()  # directories unpacked from a zip import, removed at exit
atexit.register(_extracted.close)


def _directory(package: str, *parts: str) -> Path:
    """A real directory for `parts` inside `package`: the files themselves when the package is
    on disk (a wheel installed by pip, a checkout), a temporary copy when it is imported from a zip."""
    resource: Traversable = files(package).joinpath(*parts)
    if isinstance(resource, Path):
        return resource
    return _extracted.enter_context(as_file(resource))


def flows_dir() -> Path:
    """The YAML flows and scenario templates (one file per flow)."""
    return _directory("gateway.assets", "flows")


def static_dir() -> Path:
    """The browser radio client and assistant panel (``index.html``, ``js/``, ``radio.css``)."""
    return _directory("gateway.assets", "static")


def llm_prompts_dir() -> Path:
    """The LLM router's prompt templates (``system.txt``, ``user.txt``)."""
    return _directory("gateway.llm", "prompts")
