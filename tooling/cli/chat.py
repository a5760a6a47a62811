"""`livefreq chat`: the terminal trainer on an in-process service."""

from __future__ import annotations

import argparse
import sys

from tooling.cli.common import EXIT_OK, CliError, load_settings

__all__ = ["cmd_chat"]

CHAT_SESSION_TTL_S = 10.0 * 365 * 24 * 3600


def cmd_chat(args: argparse.Namespace) -> int:
    """The terminal trainer on an in-process service whose clock only `:wait` moves."""
    from gateway.service import RadioService, ServiceError
    from tooling.chat import BAR, ChatTrainer, Style, VirtualClock, input_lines

    out = sys.stdout
    # A trainer session lives as long as the terminal does, however far `:wait` moves the clock.
    settings = load_settings(flows_dir=args.flows_dir, session_ttl_s=CHAT_SESSION_TTL_S)
    clock = VirtualClock()
    service = RadioService(settings, clock=clock)
    scenario = {k: v for k, v in (("airport", args.airport), ("callsign", args.callsign)) if v}
    style = Style.for_stream(out)
    trainer = ChatTrainer(service, clock, out, style, speech=args.speech, trace=args.trace)
    try:
        trainer.start(flow=args.flow, scenario=scenario, seed=args.seed)
    except ServiceError as exc:
        raise CliError(exc.message) from None
    try:
        if not trainer.finished:
            callsign = str(service.get(trainer.session_id).variables.get("callsign", "PILOT"))
            trainer.run(input_lines(sys.stdin, out, style, lambda: f"{callsign.rjust(trainer.gutter)} {BAR} "))
        else:
            trainer.print_summary()
    finally:
        trainer.close()
    return EXIT_OK
