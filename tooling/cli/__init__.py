"""`livefreq`: the command line (serve, keys, flows, chat, ask, bench, corpus, load, fly, client).

`parser.py` builds the whole argparse tree without importing any command; `main` imports the one
module the command lives in (one module per command group: serve, flows, chat, ask, bench, load,
fly, client) when it runs, and heavy imports (uvicorn, the app, the service, the speech engines)
happen inside the commands, so `livefreq flows lint` in CI stays quick. Every command returns its
exit code: 0 success, 1 a failure the command found (lint errors, a broken flow directory), 2 a
usage error (argparse).
"""

from __future__ import annotations

import importlib
import sys

from tooling.cli.common import EXIT_FAILED, CliError
from tooling.cli.parser import build_parser

__all__ = ["build_parser", "main"]


def main(argv: list[str] | None = None) -> int:
    """Console entry point (`livefreq = "tooling.cli:main"`); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        if isinstance(handler, str):  # "module:function", imported now that it runs
            module, _, name = handler.partition(":")
            handler = getattr(importlib.import_module(module), name)
        return int(handler(args))
    except CliError as exc:
        print(f"livefreq: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
