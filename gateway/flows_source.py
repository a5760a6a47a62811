"""Flows from a directory of YAML files: the disk adapter behind `engine.loader.FlowSource`.

One file per flow, `<slug>.yaml` (or `.yml`). Slugs are checked against `engine.loader.SLUG_RE`
before any path is built, so a slug can never name a file outside the directory.
"""

from __future__ import annotations

from pathlib import Path

from engine.loader import SLUG_RE

__all__ = ["DirectoryFlowSource"]

_SUFFIXES = (".yaml", ".yml")


class DirectoryFlowSource:
    """Lists and reads `<slug>.yaml` files in one directory (not recursive)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def list(self) -> list[str]:
        """Stems of every YAML file, including ill-named ones, so the loader can report them."""
        if not self.path.is_dir():
            raise FileNotFoundError(f"flow directory not found: {self.path}")
        stems = {p.stem for p in self.path.iterdir() if p.suffix in _SUFFIXES and p.is_file()}
        return sorted(stems)

    def read(self, slug: str) -> tuple[str, str]:
        if not SLUG_RE.match(slug):
            raise ValueError(f"invalid flow slug {slug!r}")
        candidates = [self.path / f"{slug}{suffix}" for suffix in _SUFFIXES]
        found = [p for p in candidates if p.is_file()]
        if not found:
            raise FileNotFoundError(f"no flow file for {slug!r} in {self.path}")
        if len(found) > 1:
            raise ValueError(f"both {found[0].name} and {found[1].name} define flow {slug!r}")
        return found[0].read_text(encoding="utf-8"), str(found[0])
