"""One simulated pilot of `livefreq load`: a `VoicePilot` flying its seeded scenario by replaying
the corpus recordings with the talk model of `tooling.load.run`; every failure counted, never raised."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import websockets

from gateway.audio.pcm import silence
from gateway.client.base import ProtocolRefused
from tooling.bench.common import BenchError
from tooling.corpus import SAMPLE_RATE, Corpus, CorpusEntry
from tooling.voicekit import Exchange, RadioClient, VoicePilot

__all__ = [
    "AGAIN_LEAD_S",
    "MAX_DURATION_S",
    "MAX_SESSIONS",
    "REPLY_TIMEOUT_S",
    "LoadConfig",
    "PilotLog",
    "fly_pilot",
    "say_again",
]

logger = logging.getLogger("livefreq.load")

# A recording said again (after "say again" or a correction) starts this much later after the
# key-down: the recognizer decodes the same audio the same way, so an exact replay would be heard
# exactly as wrongly as the first time, forever.
AGAIN_LEAD_S = (0.1, 0.4)
REPLY_TIMEOUT_S = 30.0  # a reply later than this is counted as late, and the pilot hangs up
MAX_SESSIONS = 500
MAX_DURATION_S = 3600.0


@dataclass(frozen=True)
class LoadConfig:
    """One run: how many pilots, for how long, and how they pace their talk (module docstring)."""

    sessions: int
    duration_s: float
    think_s: tuple[float, float] = (1.0, 3.0)
    pause_s: tuple[float, float] = (10.0, 30.0)
    seed: int = 0
    token: str | None = field(default=None, repr=False)  # an API key for a gateway that requires one; never reported

    def check(self) -> None:
        if not 1 <= self.sessions <= MAX_SESSIONS:
            raise BenchError(f"--sessions must be 1 to {MAX_SESSIONS}")
        if not 1 <= self.duration_s <= MAX_DURATION_S:
            raise BenchError(f"--duration must be 1 to {MAX_DURATION_S:g} s")
        for name, (low, high) in (("think", self.think_s), ("pause", self.pause_s)):
            if not 0 <= low <= high:
                raise BenchError(f"--{name} wants MIN,MAX seconds with 0 <= MIN <= MAX")


@dataclass
class PilotLog:
    """What one pilot did and saw."""

    index: int
    seed: int | None
    session_id: str | None = None
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)  # client-side: timeout, closed, refused
    no_recording: int = 0  # turns the corpus had nothing for (the pilot stopped there)
    talk_s: float = 0.0
    client: RadioClient | None = None
    start_ms: float | None = None  # session.start -> session.started, or -> the refusal
    refusal: dict[str, Any] | None = None  # the gateway's refusal: {code, retry_after_s}


async def fly_pilot(
    log: PilotLog,
    base_url: str,
    corpus: Corpus,
    config: LoadConfig,
    started: float,
    pcm_cache: dict[str, bytes],
) -> None:
    """One pilot flying scenario `log.seed` until the run's duration is over (see the module
    docstring for the talk model). Every failure is counted in `log`, never raised."""
    rng = random.Random(f"pilot-{config.seed}-{log.index}")
    loop = asyncio.get_running_loop()
    end = started + config.duration_s
    flow = corpus.start_flow(log.seed) if log.seed is not None else None
    pilot = VoicePilot(base_url, flow=flow, seed=log.seed, timeout_s=REPLY_TIMEOUT_S, token=config.token)
    asked = loop.time()
    try:
        await pilot.__aenter__()
        log.start_ms = round(1000 * (loop.time() - asked), 1)
    except ProtocolRefused as exc:  # e.g. unauthorized, too_many_sessions (past the node's capacity)
        log.start_ms = round(1000 * (loop.time() - asked), 1)
        log.refusal = {"code": exc.code, "retry_after_s": exc.event.get("retry_after_s")}
        log.failures[f"refused: {exc.code}"] += 1
        await pilot.__aexit__(None, None, None)
        return
    except (OSError, TimeoutError, ConnectionError, websockets.InvalidHandshake, websockets.ConnectionClosed) as exc:
        log.failures[f"connect: {type(exc).__name__}"] += 1
        await pilot.__aexit__(None, None, None)
        return
    client = pilot.client
    assert client is not None
    log.client, log.session_id = client, pilot.session_id
    answering = False  # the next transmission answers a controller call
    wrong_done: set[tuple[str, str]] = set()
    said: Counter[str] = Counter()  # how often each recording was said
    try:
        await asyncio.sleep(rng.uniform(0.0, config.pause_s[1]))  # pilots join over the first pause
        while loop.time() < end and not pilot.completed:
            pilot.refresh()
            if not pilot.expected:  # the controller keeps the pilot waiting (a timer): listen
                mark = client.mark()
                try:
                    pilot.state = await client.wait_type("state", max(0.1, end - loop.time()), mark)
                except TimeoutError:
                    break
                answering = True
                continue
            key = (str(pilot.state.get("flow")), str(pilot.state.get("state")))
            options = corpus.for_state(log.seed, *key, pilot.expected)
            if not options:
                log.no_recording += 1
                break
            wrong = next((e for e in options if e.kind == "wrong"), None)
            entry: CorpusEntry = wrong if wrong is not None and key not in wrong_done else options[0]
            if entry.kind == "wrong":
                wrong_done.add(key)
            delay = rng.uniform(*(config.think_s if answering else config.pause_s))
            if loop.time() + delay >= end:
                break
            await asyncio.sleep(delay)
            await client.until(lambda: None if client.controller_talking else True, REPLY_TIMEOUT_S, "the controller to finish")
            state = pilot.refresh()
            if (str(state.get("flow")), str(state.get("state"))) != key:
                answering = True  # a timed controller call moved the scenario on meanwhile
                continue
            pcm = pcm_cache.get(entry.file)
            if pcm is None:
                pcm = pcm_cache[entry.file] = await asyncio.to_thread(corpus.pcm, entry)
            if said[entry.file]:
                pcm = say_again(pcm, rng)
            said[entry.file] += 1
            exchange = await pilot.transmit(pcm, entry.text)
            log.talk_s += exchange.audio_s
            log.exchanges.append(_record(exchange, entry))
            answering = exchange.reply_seq is not None
    except TimeoutError:
        log.failures["late reply (timeout)"] += 1
    except (ConnectionError, websockets.ConnectionClosed):
        log.failures["connection closed"] += 1
    except Exception as exc:  # counted, and logged with its traceback: one pilot never stops the run
        logger.exception("pilot %d failed", log.index)
        log.failures[f"pilot error: {type(exc).__name__}"] += 1
    finally:
        with contextlib.suppress(Exception):
            await pilot.__aexit__(None, None, None)


def say_again(pcm: bytes, rng: random.Random) -> bytes:
    """A recording said once more: a pilot never starts at the very same instant after keying."""
    return silence(rng.uniform(*AGAIN_LEAD_S), SAMPLE_RATE) + pcm


def _record(exchange: Exchange, entry: CorpusEntry) -> dict[str, Any]:
    """The exchange as a report row, with the recording's ground truth and the verdict check."""
    row = exchange.as_dict()
    row.update(file=entry.file, kind=entry.kind, expected_readback=entry.expected_readback, wrong_field=entry.wrong_field)
    verdict: str | None = None
    if entry.expected_readback is not None:
        if exchange.readback_ok is None:
            verdict = "not judged"  # decided in another state (a timer moved the scenario on)
        elif not exchange.readback_ok and exchange.readback_unsure and not exchange.readback_wrong:
            verdict = "say again"  # the controller asked for a value it heard unsure: no verdict
        elif entry.expected_readback == "ok":
            verdict = "accepted" if exchange.readback_ok else "rejected"
        elif exchange.readback_ok:
            verdict = "missed"  # a wrong readback the controller took as correct
        else:
            verdict = "caught" if entry.wrong_field in exchange.readback_not_ok else "caught other field"
    row["verdict"] = verdict
    return row
