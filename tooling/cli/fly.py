"""`livefreq fly`: the scripted pilot flies a whole scenario against a running gateway, over HTTP
or (`--voice`) by voice over the WebSocket radio."""

from __future__ import annotations

import argparse
import sys

__all__ = ["cmd_fly"]


def cmd_fly(args: argparse.Namespace) -> int:
    import httpx

    if args.voice:
        import asyncio

        from tooling.fly import fly_by_voice

        try:
            result = asyncio.run(
                fly_by_voice(args.url, flow=args.flow, seed=args.seed, until_flow=args.until_flow,
                             echo=(lambda line: None) if args.quiet else print)
            )
        except (OSError, TimeoutError, httpx.HTTPError) as exc:
            print(f"livefreq fly --voice: {exc}", file=sys.stderr)
            return 1
        print(
            f"session {result['session_id']}: at {result['flow']}:{result['state']}"
            f"{' (completed)' if result['completed'] else ''}, {result['transmissions']} transmissions by voice, "
            f"readbacks correct {result['readbacks_ok']}/{result['readbacks']}"
        )
        return 0

    from tooling.fly import FlightError, HttpPilot

    pilot = HttpPilot(args.url, seed=args.seed, wrong_readbacks=args.wrong_readbacks, echo=None if args.quiet else print)
    try:
        report = pilot.fly(flow=args.flow)
    except (FlightError, httpx.HTTPError) as exc:
        print(f"livefreq fly: {exc}", file=sys.stderr)
        return 1
    finally:
        pilot.close()
    print(
        f"session {report.session_id}: {'completed' if report.completed else 'NOT completed'}, "
        f"{report.transmissions} transmissions, {report.readbacks} readbacks"
        + (f", wrong values caught {report.wrong_caught}/{report.wrong_sent}" if args.wrong_readbacks else "")
    )
    for miss in report.misses:
        print(f"  MISSED wrong readback: {miss}")
    for line in report.unrecognized:
        print(f"  unrecognized: {line}")
    ok = report.completed and not report.misses and not report.unrecognized
    return 0 if ok else 1
