"""RadioService: the one application service behind HTTP, the CLI chat and the WebSocket.

It owns what the pure engine must not: session ids and resume tokens, the wall clock, scenario
resolution from the airport data, storage, transcripts and expiry. Every adapter calls these
methods and maps the errors below to its own wire format; none of them talks to the engine for
a live session directly, so what a session did is always in its transcript.

Concurrency: methods are synchronous and short (no I/O beyond the repository). One re-entrant
lock serialises the load-decide-store sequence, so the event loop, the background clock
(`tick_all`) and a CLI thread may share one service. The radio's `*_async` methods run that
work in worker threads, in order per session (gateway/store/writer.py): a store that waits for a
disk or a network never stalls the event loop. Other processes (nodes sharing a Redis store) may
write the same session at once: every write checks the version it read (`SessionRepository.save(
expect=...)`), and on a conflict the sequence runs again on the fresh copy (the engine is pure,
deciding again is safe); nothing is published before the write is in.

Timers and expiry: the store keeps when each session is due next (the engine's `next_wakeup`), so
`tick_all` ticks the due sessions of every node, each under a short lease: one node fires a timer;
it also deletes a session idle (no create, transmission or reset) for `settings.session_ttl_s`
(the store's index of last activity, shared by every node), invisible to `get` before.

Weather and flight plans (gateway/providers): `start`, the adapters' asynchronous way in, looks
up a flight plan the session starts from and fetches the airports' METARs (waiting at most
`weather_wait_s`) before the synchronous `create`, which hands the reports to the engine's
scenario resolution as data; without live weather the scenario's is generated. A running session on live weather follows its airport's ATIS: before each input the
service gives the engine the airport's latest report (`engine.weather.refresh_weather`), so a
pilot reporting a letter that is no longer current is told the new one.
"""

from __future__ import annotations

import logging
import secrets
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from engine.atis import Atis
from engine.hearing import Hearing
from engine.loader import load_registry
from engine.models import Decision, Flow, Session
from engine.registry import FlowRegistry
from engine.scenario import flight_plan_variables, resolve_airports, resolve_scenario
from engine.session import SessionEngine
from engine.weather import WeatherReport
from gateway import metrics
from gateway.airports.repository import AirportRepository, default_repository
from gateway.clock import scaled_clock
from gateway.flows_source import DirectoryFlowSource
from gateway.hub import DecisionHub
from gateway.llm import ChatCompletionsProvider, RouterProvider, consult
from gateway.providers import DataProviders, FlightPlan, ProviderError
from gateway.service import checks
from gateway.service.dry_runs import DryRuns
from gateway.service.errors import ProviderUnavailable, UnknownFlightPlan
from gateway.service.evaluation import Evaluation, evaluate
from gateway.service.persistence import Ledger, heard
from gateway.service.weather import SessionWeather
from gateway.settings import Settings
from gateway.store import MemorySessionRepository, SessionRepository, StoredSession
from gateway.store.writer import OrderedWriter

log = logging.getLogger("gateway.service")

# Wall seconds a node holds a due session while ticking it (one synchronous tick takes about a
# millisecond, so nothing renews it); a node that dies holding one delays that timer this long.
TIMER_LEASE_S = 5.0

T = TypeVar("T")


class RadioService(DryRuns):
    _check_text = staticmethod(checks.check_text)  # the text rule (tests/test_openapi.py holds the schema to it)

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        registry: FlowRegistry | None = None,
        airports: AirportRepository | None = None,
        repository: SessionRepository | None = None,
        clock: Callable[[], float] | None = None,
        providers: DataProviders | None = None,
        llm: RouterProvider | None = None,
    ) -> None:
        self.settings = settings or Settings()
        # weather, ATIS and flight plans (offline unless settings say vatsim)
        self.providers = providers or DataProviders.from_settings(self.settings)
        self.registry = registry or load_registry(
            DirectoryFlowSource(self.settings.flows_dir), main_flow=self.settings.default_flow
        )
        self.airports = airports or default_repository()
        self.weather = SessionWeather(self.providers, self.airports)
        self.repository: SessionRepository = repository if repository is not None else MemorySessionRepository()
        if clock is None:  # the store's anchor: a compressed scenario clock continues across restarts
            scale = self.settings.time_scale
            clock = scaled_clock(scale, anchor=self.repository.clock_anchor(scale, time.time()))
        self.clock = clock
        self.engine = SessionEngine(self.registry, llm_fallback=self.settings.llm_fallback)
        # the LLM router (gateway/llm): asked only about what the deterministic router cannot decide
        self.llm: RouterProvider | None = llm if llm is not None else ChatCompletionsProvider.from_settings(self.settings)
        self.hub = DecisionHub()  # live listeners (WebSocket connections) per session
        self.assistant: Any = None  # the briefing assistant (gateway/api/assistant.py), for the radio's ask channel
        self.node = self.settings.node_id  # holder of this process's timer leases
        self.ledger = Ledger(self.repository, self.hub, self.engine, lambda: self.clock(), self.settings)
        self._lock = self.ledger.lock
        self.writer = OrderedWriter()  # the radio's store work, off the event loop
        self.allowed_variables = checks.allowed_variables(self.registry)

    # ------------------------------------------------------------------ sessions
    async def start(
        self,
        *,
        flow: str | None = None,
        scenario: Mapping[str, Any] | None = None,
        seed: int | None = None,
        owner: str | None = None,
        flight_plan: FlightPlan | str | None = None,
        traffic: Sequence[str] | None = None,
    ) -> tuple[Session, Decision, str]:
        """`create` with today's data: the flight plan (a plan, or a callsign to look up in the
        feed) fills departure, destination, route and cruise level under the scenario's own
        values, and the airports' live weather is fetched first (at most `weather_wait_s`)."""
        given = checks.check_scenario(scenario, self.allowed_variables)
        if flight_plan is not None:
            plan = flight_plan if isinstance(flight_plan, FlightPlan) else await self.find_flight_plan(flight_plan)
            given = {**flight_plan_variables(plan.model_dump()), **given}
        seed = checks.check_seed(seed)
        weather = await self.providers.weather.for_airports(resolve_airports(given, seed))
        return self.create(flow=flow, scenario=given, seed=seed, owner=owner, weather=weather, traffic=traffic)

    async def find_flight_plan(self, callsign: str) -> FlightPlan:
        """The filed plan of exactly `callsign` in the data feed."""
        try:
            plans = await self.providers.flight_plans(callsign)
        except ProviderError as exc:
            raise ProviderUnavailable(f"the flight plan feed is unavailable: {exc.message}", field="flight_plan") from exc
        plan = next((p for p in plans if p.callsign == callsign.strip().upper()), None)
        if plan is None:
            where = "the VATSIM data feed" if self.providers.feed is not None else "any feed (LIVEFREQ_DATA_PROVIDER=offline)"
            raise UnknownFlightPlan(f"no flight plan for {callsign!r} in {where}", field="flight_plan")
        return plan

    def create(
        self,
        *,
        flow: str | None = None,
        scenario: Mapping[str, Any] | None = None,
        seed: int | None = None,
        owner: str | None = None,
        weather: Mapping[str, WeatherReport] | None = None,
        traffic: Sequence[str] | None = None,
    ) -> tuple[Session, Decision, str]:
        """Start a scenario; returns the session, its opening decision and the resume token.

        Unset scenario variables are filled from the airport data and the seed (random when not
        given, and kept in `session.seed` so the scenario can be replayed). `owner` is the id of
        the API key creating it (gateway/auth.py), counted against `max_sessions_per_key`.
        `weather`: live reports by ICAO code (from `start`); otherwise the weather service's cached
        ones, else generated weather. A ``metar`` (or ``arrival_metar``) in the scenario is
        parsed and used as that airport's weather; one that does not parse is kept as given, like
        any scenario value, and the weather is generated (the opening decision's trace says so).
        `traffic`: callsigns of nearby aircraft (`Session.traffic`; never the session's own).
        """
        slug = checks.flow_slug(self.registry, flow, self.default_flow)
        given = checks.check_scenario(scenario, self.allowed_variables)
        seed = checks.check_seed(seed)
        dep, dest = resolve_airports(given, seed)
        notes: list[str] = []
        variables = resolve_scenario(
            given,
            airport=self.airports.get(dep),
            destination=self.airports.get(dest),
            seed=seed,
            weather=self.weather.of(dep, given.get("metar"), "metar", weather, notes),
            arrival_weather=self.weather.of(dest, given.get("arrival_metar"), "arrival_metar", weather, notes),
        )
        nearby = checks.check_traffic(traffic, variables)
        token = secrets.token_urlsafe(24)

        def start() -> tuple[Session, Decision]:
            now = self.clock()
            session_id = self._new_id()
            session, decision = self.engine.start(
                variables=variables, session_id=session_id, flow=slug, now=now, seed=seed
            )
            session.traffic = list(nearby)
            for note in notes:
                decision.trace.add("weather", note)
            record = StoredSession(session=session, resume_token=token, touched_at=now, owner=owner)
            self.ledger.save(record, [decision], expect=0)  # a conflict: the new id was taken meanwhile
            return session, decision

        with self._lock:
            self.ledger.check_capacity(owner)
            session, decision = self.ledger.retry(start)
        return session, decision, token

    def get(self, session_id: str) -> Session:
        with self._lock:
            return self.ledger.load(session_id)[0].session

    def owner_of(self, session_id: str) -> str | None:
        """The id of the API key that created the session (None: created without authentication);
        `SessionNotFound` when there is no such session."""
        with self._lock:
            return self.ledger.load(session_id)[0].owner

    def transmit(self, session_id: str, text: str, *, hearing: Hearing | None = None) -> Decision:
        """One pilot transmission (typed text or a final transcript), decided by the
        deterministic router alone; adapters on an event loop use `transmit_async`.

        `hearing` (voice only) is what the recognizer was unsure of: the engine asks "say again"
        for a readback value the alternatives disagree on. With a hearing the text may be empty
        (speech was heard, no words were recognized): the engine asks to say again."""
        text = checks.check_text(text, voice=hearing is not None)
        decision = self._act(
            session_id, lambda session, now: heard(self.engine.transmit(session, text, now, hearing=hearing), hearing)
        )
        assert decision is not None
        metrics.count_routing(decision, None)
        return decision

    def telemetry(self, session_id: str, data: Mapping[str, Any]) -> Decision | None:
        """Aircraft state from a simulator; a telemetry trigger may move the scenario on. A
        ``traffic`` list (callsigns of nearby aircraft) replaces the session's."""
        state = dict(data)
        traffic = state.pop("traffic", None)

        def act(session: Session, now: float) -> Decision | None:
            if traffic is not None:
                session.traffic = checks.check_traffic(traffic, session.variables)
            return self.engine.telemetry(session, state, now)

        return self._act(session_id, act)

    def defer_silence(self, session_id: str, extra_s: float = 0.0) -> None:
        """Silence prompts count from now (+ `extra_s`): the controller just finished talking, or
        the pilot is transmitting (see SessionEngine.defer_silence)."""

        self._defer_silence_until(session_id, self.clock() + extra_s * self.settings.time_scale)

    def _defer_silence_until(self, session_id: str, until: float) -> None:
        def defer() -> None:
            found = self.repository.read(session_id)
            if found is None:
                return
            record, version = found
            if self.engine.defer_silence(record.session, until):
                self.ledger.save(record, [], expect=version)

        with self._lock:
            self.ledger.retry(defer)

    def mark_delivered(self, session_id: str, seq: int) -> None:
        """A controller message reached the pilot (spoken on a socket, or in an HTTP response)."""
        with self._lock:
            self.repository.set_delivered(session_id, seq)

    def delivered_seq(self, session_id: str) -> int:
        """The last controller message the pilot has received; later ones are replayed on resume."""
        with self._lock:
            record = self.repository.get(session_id)
        return record.delivered_seq if record is not None else 0

    def tune(self, session_id: str, frequency: str) -> Decision | None:
        """The pilot changed frequency (`com1`); guards and triggers may use it."""
        return self._act(session_id, lambda session, now: self.engine.tune(session, frequency, now))

    def reset(self, session_id: str) -> Decision:
        """Back to the first state of the scenario, same variables, same resume token."""
        decision = self._act(session_id, self.engine.reset)
        assert decision is not None
        return decision

    def _act(self, session_id: str, act: Callable[[Session, float], Decision | None]) -> Decision | None:
        """Load the session, let the engine act on it now, store it (and tell listeners) at once."""

        def decide() -> Decision | None:
            record, version = self.ledger.load(session_id)
            now = self.clock()
            updates = self.weather.follow(record.session)
            decision = act(record.session, now)
            if updates and decision is not None:
                decision.trace.add("weather", f"information {updates['atis_letter']} is now current", updates=updates)
            record.touched_at = now
            self.ledger.save(record, [decision] if decision is not None else [], expect=version)
            return decision

        with self._lock:
            return self.ledger.retry(decide)

    def delete(self, session_id: str) -> None:
        with self._lock:
            self.ledger.load(session_id)
            self.repository.delete(session_id)

    def transcript(self, session_id: str) -> list[dict[str, Any]]:
        """Every pilot transmission and controller message, in order (JSON-ready dicts)."""
        with self._lock:
            self.ledger.load(session_id)
            entries = self.repository.transcript(session_id)
        return [entry.model_dump(mode="json") for entry in entries]

    def check_token(self, session_id: str, token: str) -> bool:
        """True when `token` is the session's resume token (constant-time comparison)."""
        with self._lock:
            record = self.repository.get(session_id)
            if record is None or self.ledger.expired(record, self.clock()):
                return False
        return secrets.compare_digest(record.resume_token.encode(), str(token).encode())

    def tick_all(self) -> list[tuple[str, Decision]]:
        """Drop expired sessions and fire every due timer; the background clock calls this.

        Only sessions whose next wake-up has come are loaded, so an idle server does no work.
        The store leases each due session to this node while it is ticked: with several nodes
        on one store, each timer fires on exactly one of them.
        """
        now = self.clock()
        out: list[tuple[str, Decision]] = []
        with self._lock:
            self.ledger.expire(now)
            due = self.repository.due(now, self.node, TIMER_LEASE_S)
        for session_id in due:
            with self._lock:
                try:
                    decisions = self.ledger.retry(lambda: self.ledger.tick(session_id, now))
                finally:
                    self.repository.release(session_id, self.node)
            out.extend((session_id, d) for d in decisions)
        return out

    def session_ids(self) -> list[str]:
        return self.repository.ids()

    def count(self) -> int:
        return len(self.repository)

    # ------------------------------------------------------------------ flows and views

    def flows(self) -> list[Flow]:
        """Every loaded flow (canonical model), by slug."""
        return list(self.registry)

    @property
    def default_flow(self) -> str | None:
        return self.settings.default_flow or self.registry.main_flow

    def expected_pilot(self, session: Session) -> list[str]:
        return self.engine.expected_pilot(session)

    def phase(self, session: Session) -> str | None:
        flow = self.registry.flows.get(session.active.flow)
        state = flow.states.get(session.active.state) if flow else None
        return state.phase if state else None


    async def evaluate(
        self,
        *,
        flow: str,
        state: str,
        text: str,
        variables: Mapping[str, Any] | None = None,
        flags: Mapping[str, Any] | None = None,
        registry: FlowRegistry | None = None,
    ) -> Evaluation:
        """Run one utterance through the engine on a throwaway session at `flow`:`state`, nothing
        stored (gateway/service/evaluation.py); `registry`: the flows to decide on instead of the
        loaded ones (the frontend's state fields applied to a copy, gateway/api/compat_state.py)."""
        engine = self.engine if registry is None else SessionEngine(registry, llm_fallback=self.settings.llm_fallback)
        return await evaluate(
            engine, self.llm, self.registry, flow=flow, state=state, text=text, variables=variables, flags=flags
        )

    # ------------------------------------------------------------------ the radio, off the event loop

    async def transmit_async(self, session_id: str, text: str, *, hearing: Hearing | None = None) -> Decision:
        """One pilot transmission; when the deterministic router cannot decide it and an LLM
        router is configured, the model is asked first.

        Three steps, so that no lock is held and no loop blocked while the model thinks: the
        engine states the question on the stored session (nothing changes), the model is awaited
        and its answer judged (`gateway.llm.consult`), and the transmission is decided with the
        verdict in one load-decide-store like any other. If the session moved on meanwhile (a
        timer, another transmission, another node), the engine sees that the question changed
        and the fallback policy decides, traced as ``stale``. The store work runs in a worker
        thread, after the session's earlier writes (`writer`).
        """
        text = checks.check_text(text, voice=hearing is not None)
        self.hub.bind()
        if self.llm is None or not text:
            return await self.writer.run(session_id, lambda: self.transmit(session_id, text, hearing=hearing))
        query = await self.writer.run(session_id, lambda: self._route_query(session_id, text))
        verdict = await consult(self.llm, query) if query is not None else None

        def decide() -> Decision:
            decision = self._act(
                session_id,
                lambda session, now: heard(self.engine.transmit(session, text, now, llm=verdict, hearing=hearing), hearing),
            )
            assert decision is not None
            return decision

        decision = await self.writer.run(session_id, decide)
        metrics.count_routing(decision, verdict)
        return decision

    def _route_query(self, session_id: str, text: str) -> Any:
        with self._lock:
            return self.engine.route_query(self.ledger.load(session_id)[0].session, text)

    async def get_async(self, session_id: str) -> Session:
        """`get`, after the session's queued writes, off the event loop."""
        return await self.writer.run(session_id, lambda: self.get(session_id))

    async def telemetry_async(self, session_id: str, data: Mapping[str, Any]) -> Decision | None:
        self.hub.bind()
        return await self.writer.run(session_id, lambda: self.telemetry(session_id, data))

    async def tune_async(self, session_id: str, frequency: str) -> Decision | None:
        self.hub.bind()
        return await self.writer.run(session_id, lambda: self.tune(session_id, frequency))

    async def defer_silence_async(self, session_id: str, extra_s: float = 0.0) -> None:
        until = self.clock() + extra_s * self.settings.time_scale  # from now, not from when it runs
        await self.writer.run(session_id, lambda: self._defer_silence_until(session_id, until))

    def defer_silence_soon(self, session_id: str, extra_s: float = 0.0) -> None:
        """`defer_silence_async` without waiting for it (still before the session's next write)."""
        until = self.clock() + extra_s * self.settings.time_scale
        self.writer.submit(session_id, lambda: self._defer_silence_until(session_id, until))

    async def delivered_async(self, session_id: str, seq: int) -> None:
        """A controller message was spoken on the radio: it is delivered, and the pilot's reply
        time (the silence prompts) counts from now."""
        self.hub.bind()
        now = self.clock()

        def delivered() -> None:
            self.mark_delivered(session_id, seq)
            self._defer_silence_until(session_id, now)

        await self.writer.run(session_id, delivered)

    async def off_loop(self, session_id: str, work: Callable[[str], T]) -> T:
        """`work(session_id)` (e.g. `self.reset`) in a worker thread, after the session's queued
        writes: how the HTTP routes read and write the store without blocking the event loop."""
        self.hub.bind()
        return await self.writer.run(session_id, lambda: work(session_id))

    async def flush(self, session_id: str | None = None) -> None:
        """Wait for the queued store work (of one session, or all): a connection closing, shutdown."""
        await self.writer.flush(session_id)

    def atis(self, session_id: str, frequency: str) -> Atis | None:
        """The ATIS a session's pilot hears on `frequency`, or None when it is no ATIS frequency."""
        return self.weather.atis(self.get(session_id), frequency)

    # ------------------------------------------------------------------ internals

    def _new_id(self) -> str:
        while True:
            session_id = uuid.uuid4().hex
            if self.repository.get(session_id) is None:
                return session_id
