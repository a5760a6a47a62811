"""`livefreq serve` (the gateway under uvicorn) and `livefreq keys new` (an API key and its entry)."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TextIO

from tooling.cli.common import EXIT_OK, LOG_LEVELS, CliError, load_settings

__all__ = ["cmd_keys_new", "cmd_serve"]

log = logging.getLogger("livefreq.cli")


def cmd_serve(args: argparse.Namespace) -> int:
    """Run uvicorn on the app built from the settings (env, then command-line options)."""
    import uvicorn

    from gateway.app import create_app
    from gateway.llm.prompts import PromptError
    from gateway.store import StoreError

    settings = load_settings(host=args.host, port=args.port, log_level=args.log_level)
    level = settings.log_level.lower()
    if level not in LOG_LEVELS:
        raise CliError(f"unknown log level {settings.log_level!r} (one of {', '.join(LOG_LEVELS)})")
    logging.basicConfig(level="DEBUG" if level == "trace" else level.upper(), format="%(levelname)s:     %(message)s")
    try:
        app = create_app(settings)
    except (StoreError, PromptError) as exc:  # a SQLite file in use, a Redis that does not answer, bad prompts
        raise CliError(str(exc)) from None
    wildcard = settings.host in ("0.0.0.0", "::")
    if not app.state.auth.enabled and settings.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning(
            "listening on %s without authentication: anyone who reaches this port may start sessions "
            "and use the speech engines (set LIVEFREQ_API_KEYS or LIVEFREQ_API_KEYS_FILE; README \"Security\")",
            settings.host,
        )
    log.info(
        "livefreq gateway on http://%s:%d%s (%d flows from %s)",
        "127.0.0.1" if wildcard else _url_host(settings.host),
        settings.port,
        f", listening on all interfaces ({settings.host})" if wildcard else "",
        len(app.state.service.registry),
        settings.flows_dir,
    )
    # no permessage-deflate: PCM audio does not compress, and deflating every 20 ms frame in and
    # every 100 ms frame out took 4 % of the gateway's CPU under load (py-spy, 50 pilots)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=level, ws_per_message_deflate=False)
    return EXIT_OK


def cmd_keys_new(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """A new API key and its configuration entry (gateway/auth.py keeps digests only)."""
    from gateway.auth import AuthConfigError, new_key, parse_key_entry

    out = out or sys.stdout
    key, entry = new_key()
    line = f"{args.label} {entry}" if args.label else entry
    try:
        key_id = parse_key_entry(line, "--label").key_id
    except AuthConfigError as exc:
        raise CliError(str(exc)) from None
    print(f"key (give to the client, shown once): {key}", file=out)
    print(f"entry (for LIVEFREQ_API_KEYS_FILE):   {line}", file=out)
    print(f"key id (owner of its sessions):       {key_id}", file=out)
    return EXIT_OK


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
