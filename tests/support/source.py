"""Parsing the project's own source in tests that read it (import rules, engine parts)."""

from __future__ import annotations

import ast

_TRIES = 3


def parse_source(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, tried again on CPython 3.11's spurious "AST constructor recursion depth
    mismatch" SystemError (cpython#106905): a parse in another thread at the same moment upsets
    the interpreter's shared depth count, and the suite has such threads (a session's gateway
    evaluating flow guards, which parse too: engine/guards.py retries the same way). Seen on a
    clean-clone run of tests/test_import_rules.py; the source itself is fine."""
    for _ in range(_TRIES - 1):
        try:
            return ast.parse(source, filename)
        except SystemError:
            continue
    return ast.parse(source, filename)
