"""RadioService: the one application service behind HTTP, the CLI chat and the WebSocket.

It owns what the pure engine must not: session ids and resume tokens, the wall clock, scenario
resolution from the airport data, storage, transcripts and expiry. Every adapter calls these
methods and maps the errors below to its own wire format; none of them talks to the engine for
a live session directly, so what a session did is always in its transcript.

Concurrency: methods are synchronous and short (no I/O beyond the repository). One re-entrant
lock serialises the load-decide-store sequence, so the event loop, the background clock
(`tick_all`) and a CLI thread may share one service. Other processes (gateway nodes sharing a
Redis store) may write the same session at the same time: every write checks the version it
read (`SessionRepository.save(expect=...)`), and on a conflict the sequence runs again on the
fresh copy. The engine is pure, so deciding again is safe, and nothing is published before the
write is in.

Timers: the store keeps when each session must be visited next (the engine's `next_wakeup`,
written with every save), so `tick_all` asks it for the due sessions, of every node, and ticks
each under a short lease: exactly one node fires a timer.

Weather and flight plans (gateway/providers): `start` is the asynchronous way in that the
gateway's adapters use. It looks up a flight plan the session starts from, and fetches the
airports' METARs (waiting at most `weather_wait_s`) before the synchronous `create`, which hands
the reports to the engine's scenario resolution as data; without live weather the scenario's is
generated. A running session on live weather follows its airport's ATIS: before each input the
service gives the engine the airport's latest report (`engine.weather.refresh_weather`), so a
pilot reporting a letter that is no longer current is told the new one.

Expiry: a session idle (no create, transmission or reset) for `settings.session_ttl_s` is
deleted by `tick_all` (the store's index of last activity, shared by every node) and is already
invisible to `get` before that.
"""

from __future__ import annotations

import logging
import math
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from engine.atis import Atis, build_atis
from engine.identity import own_codes, traffic_codes
from engine.candidates import Candidate
from engine.loader import load_registry
from engine.models import Decision, Flow, FlowFrame, FlowMode, Hearing, Session
from engine.phraseology import callsign_telephony, frequencies
from engine.registry import KNOWN_SCENARIO_VARIABLES, FlowRegistry
from engine.router import RouteResult
from engine.scenario import (
    DERIVED_VARIABLES,
    FLIGHT_PLAN_VARIABLES,
    SCENARIO_VARIABLES,
    flight_plan_variables,
    resolve_airports,
    resolve_scenario,
)
from engine.session import SessionEngine
from engine.weather import WeatherReport, generated_report, refresh_weather
from gateway.airports.repository import AirportRepository, default_repository
from gateway.flows_source import DirectoryFlowSource
from gateway.clock import scaled_clock
from gateway import metrics
from gateway.hub import DecisionHub
from gateway.llm import ChatCompletionsProvider, RouterProvider, consult
from gateway.providers import DataProviders, FlightPlan, MetarError, ProviderError, parse_metar
from gateway.settings import Settings
from gateway.store import (
    AtcEntry,
    MemorySessionRepository,
    PilotEntry,
    SessionRepository,
    StoredSession,
    VersionConflict,
)

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 500
MAX_SEED = 2**63 - 1
_SCALARS = (str, int, float, bool)
# Wall seconds a node holds a due session while ticking it (one synchronous tick takes about a
# millisecond, so nothing renews it); a node that dies holding one delays that timer this long.
TIMER_LEASE_S = 5.0
# Load-decide-store attempts when other nodes keep writing the same session in between.
MAX_ATTEMPTS = 10
T = TypeVar("T")


class ServiceError(Exception):
    """A request the service refuses; `code` is the stable wire code, `field` what was wrong."""

    code = "error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class SessionNotFound(ServiceError):
    code = "unknown_session"


class UnknownFlowError(ServiceError):
    code = "unknown_flow"


class UnknownStateError(ServiceError):
    code = "unknown_state"


class BadInput(ServiceError):
    code = "validation_error"


class TooManySessions(ServiceError):
    """A limit of `Settings.max_sessions` (the gateway is full: 503) or `max_sessions_per_key`
    (this key has enough: 429) refuses a new session."""

    code = "too_many_sessions"

    def __init__(self, message: str, *, per_key: bool) -> None:
        super().__init__(message)
        self.status = 429 if per_key else 503


class UnknownFlightPlan(ServiceError):
    """No flight plan with that callsign in the data feed (none at all offline)."""

    code = "unknown_flight_plan"


class ProviderUnavailable(ServiceError):
    """The data provider a request needs (the flight plan feed) did not answer."""

    code = "provider_unavailable"


class SessionBusy(ServiceError):
    """Other writers changed the session every time it was decided (`MAX_ATTEMPTS` in a row)."""

    code = "session_busy"


@dataclass(slots=True)
class Evaluation:
    """What the engine made of one utterance on a throwaway session (see `RadioService.evaluate`).

    `chosen` is the candidate the engine followed (None when it asked to say again);
    `candidates` every candidate it weighed, with scores and eliminations.
    """

    session: Session
    decision: Decision
    chosen: Candidate | None
    candidates: list[Candidate]
    route: RouteResult | None
    threshold: float


class RadioService:
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
        self._lock = threading.RLock()
        # Every name a client may set: the shared vocabulary, whatever the scenario resolver fills
        # (so a value it would make up can be given instead) and the flows' own variables.
        self.allowed_variables: frozenset[str] = frozenset(
            {*KNOWN_SCENARIO_VARIABLES, *SCENARIO_VARIABLES, *DERIVED_VARIABLES, *FLIGHT_PLAN_VARIABLES}
            | set(resolve_scenario({}, airport=None, destination=None, seed=0))
            | {name for flow in self.registry for name in flow.variables}
        )

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
        given = self._check_scenario(scenario)
        if flight_plan is not None:
            plan = flight_plan if isinstance(flight_plan, FlightPlan) else await self.find_flight_plan(flight_plan)
            given = {**flight_plan_variables(plan.model_dump()), **given}
        seed = self._check_seed(seed)
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
        slug = self._flow_slug(flow)
        given = self._check_scenario(scenario)
        seed = self._check_seed(seed)
        dep, dest = resolve_airports(given, seed)
        notes: list[str] = []
        variables = resolve_scenario(
            given,
            airport=self.airports.get(dep),
            destination=self.airports.get(dest),
            seed=seed,
            weather=self._weather_of(dep, given.get("metar"), "metar", weather, notes),
            arrival_weather=self._weather_of(dest, given.get("arrival_metar"), "arrival_metar", weather, notes),
        )
        nearby = self._check_traffic(traffic, variables)
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
            self._save(record, [decision], expect=0)  # a conflict: the new id was taken meanwhile
            return session, decision

        with self._lock:
            self._check_capacity(owner)
            session, decision = self._retry(start)
        return session, decision, token

    def get(self, session_id: str) -> Session:
        with self._lock:
            return self._load(session_id)[0].session

    def owner_of(self, session_id: str) -> str | None:
        """The id of the API key that created the session (None: created without authentication);
        `SessionNotFound` when there is no such session."""
        with self._lock:
            return self._load(session_id)[0].owner

    def transmit(self, session_id: str, text: str, *, hearing: Hearing | None = None) -> Decision:
        """One pilot transmission (typed text or a final transcript), decided by the
        deterministic router alone; adapters on an event loop use `transmit_async`.

        `hearing` (voice only) is what the recognizer was unsure of: the engine asks "say again"
        for a readback value the alternatives disagree on. With a hearing the text may be empty
        (speech was heard, no words were recognized): the engine asks to say again."""
        text = self._check_text(text, voice=hearing is not None)
        decision = self._act(
            session_id, lambda session, now: _heard(self.engine.transmit(session, text, now, hearing=hearing), hearing)
        )
        assert decision is not None
        metrics.count_routing(decision, None)
        return decision

    async def transmit_async(self, session_id: str, text: str, *, hearing: Hearing | None = None) -> Decision:
        """One pilot transmission; when the deterministic router cannot decide it and an LLM
        router is configured, the model is asked first.

        Three steps, so that no lock is held and no loop blocked while the model thinks: the
        engine states the question on the stored session (nothing changes), the model is awaited
        and its answer judged (`gateway.llm.consult`), and the transmission is decided with the
        verdict in one load-decide-store like any other. If the session moved on meanwhile (a
        timer, another transmission, another node), the engine sees that the question changed
        and the fallback policy decides, traced as ``stale``.
        """
        text = self._check_text(text, voice=hearing is not None)
        if self.llm is None or not text:
            return self.transmit(session_id, text, hearing=hearing)
        with self._lock:
            query = self.engine.route_query(self._load(session_id)[0].session, text)
        verdict = await consult(self.llm, query) if query is not None else None
        decision = self._act(
            session_id,
            lambda session, now: _heard(self.engine.transmit(session, text, now, llm=verdict, hearing=hearing), hearing),
        )
        assert decision is not None
        metrics.count_routing(decision, verdict)
        return decision

    def telemetry(self, session_id: str, data: Mapping[str, Any]) -> Decision | None:
        """Aircraft state from a simulator; a telemetry trigger may move the scenario on. A
        ``traffic`` list (callsigns of nearby aircraft) replaces the session's."""
        state = dict(data)
        traffic = state.pop("traffic", None)

        def act(session: Session, now: float) -> Decision | None:
            if traffic is not None:
                session.traffic = self._check_traffic(traffic, session.variables)
            return self.engine.telemetry(session, state, now)

        return self._act(session_id, act)

    def defer_silence(self, session_id: str, extra_s: float = 0.0) -> None:
        """Silence prompts count from now (+ `extra_s`): the controller just finished talking, or
        the pilot is transmitting (see SessionEngine.defer_silence)."""

        def defer() -> None:
            found = self.repository.read(session_id)
            if found is None:
                return
            record, version = found
            if self.engine.defer_silence(record.session, self.clock() + extra_s * self.settings.time_scale):
                self._save(record, [], expect=version)

        with self._lock:
            self._retry(defer)

    def mark_delivered(self, session_id: str, seq: int) -> None:
        """A controller message reached the pilot (spoken on a socket, or in an HTTP response)."""
        with self._lock:
            self.repository.set_delivered(session_id, seq)

    def delivered_seq(self, session_id: str) -> int:
        """The last controller message the pilot has received; later ones are replayed on resume."""
        with self._lock:
            record = self.repository.get(session_id)
        return record.delivered_seq if record is not None else 0

    def likely_reply(self, session_id: str) -> list[str]:
        """The controller's reply (spoken forms, in order) if the pilot now says the first phrase
        the state expects: the engine decides it on a copy of the session, nothing is stored.

        The voice path synthesizes it while the pilot is still talking (speculative TTS): a
        reply that then comes true starts playing from the cache. Empty when the state expects
        nothing, or when the pilot would not be answered at once.
        """
        with self._lock:
            record = self.repository.get(session_id)
            if record is None:
                return []
            session = record.session
            expected = self.engine.expected_pilot(session)
            if not expected:
                return []
            try:
                decision = self.engine.transmit(session, expected[0], self.clock())
            except Exception:  # a guess only: never let it break the transmission it serves
                log.exception("predicting the reply of session %s failed", session_id)
                return []
        return [message.speech for message in decision.messages]

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
            record, version = self._load(session_id)
            now = self.clock()
            updates = self._follow_weather(record.session)
            decision = act(record.session, now)
            if updates and decision is not None:
                decision.trace.add("weather", f"information {updates['atis_letter']} is now current", updates=updates)
            record.touched_at = now
            self._save(record, [decision] if decision is not None else [], expect=version)
            return decision

        with self._lock:
            return self._retry(decide)

    def delete(self, session_id: str) -> None:
        with self._lock:
            self._load(session_id)
            self.repository.delete(session_id)

    def transcript(self, session_id: str) -> list[dict[str, Any]]:
        """Every pilot transmission and controller message, in order (JSON-ready dicts)."""
        with self._lock:
            self._load(session_id)
            entries = self.repository.transcript(session_id)
        return [entry.model_dump(mode="json") for entry in entries]

    def check_token(self, session_id: str, token: str) -> bool:
        """True when `token` is the session's resume token (constant-time comparison)."""
        with self._lock:
            record = self.repository.get(session_id)
            if record is None or self._expired(record, self.clock()):
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
            self._expire(now)
            due = self.repository.due(now, self.node, TIMER_LEASE_S)
        for session_id in due:
            with self._lock:
                try:
                    decisions = self._retry(lambda: self._tick(session_id, now))
                finally:
                    self.repository.release(session_id, self.node)
            out.extend((session_id, d) for d in decisions)
        return out

    def _tick(self, session_id: str, now: float) -> list[Decision]:
        found = self.repository.read(session_id)
        if found is None:
            return []
        record, version = found
        try:
            decisions = self.engine.tick(record.session, now)
        except Exception:
            log.exception("tick failed for session %s; its timers are parked until it is used", session_id)
            stored = self.repository.read(session_id)  # the tick changed our copy: store the stored one
            if stored is not None:
                self.repository.save(stored[0], [], wake_at=None, expect=stored[1])
            return []
        self._save(record, decisions, expect=version)
        return decisions

    def session_ids(self) -> list[str]:
        return self.repository.ids()

    def count(self) -> int:
        return len(self.repository)

    # ------------------------------------------------------------------ weather and ATIS

    def _weather_of(
        self, icao: str, metar: Any, field: str, reports: Mapping[str, WeatherReport] | None, notes: list[str]
    ) -> WeatherReport | None:
        """An airport's weather for a new session: the METAR the client gave, else the live report."""
        if metar is not None and metar != "":
            try:
                return parse_metar(str(metar), source="given").model_copy(update={"letter": None})
            except MetarError as exc:
                notes.append(f"scenario.{field} is no usable METAR ({exc}); the weather is generated")
                return None
        if reports is not None and icao in reports:
            return reports[icao]
        return self.providers.weather.cached(icao)

    def _follow_weather(self, session: Session) -> dict[str, Any]:
        """A live-weather session takes its airport's newest ATIS before it acts (see the module
        docstring); returns the variables that changed."""
        if session.variables.get("weather_source") != "vatsim":
            return {}
        report = self.providers.weather.cached(str(session.variables.get("airport", "")))
        return refresh_weather(session, report) if report is not None else {}

    def atis(self, session_id: str, frequency: str) -> Atis | None:
        """The ATIS a session's pilot hears on `frequency`, or None when it is no ATIS frequency.

        The departure airport's ATIS frequencies (the scenario's ``atis_freq`` and every one the
        airport data lists) broadcast its ATIS, the destination's its arrival ATIS. Live weather is
        the airport's newest report and letter; generated or given weather is the session's own
        METAR, letter and runway, so the ATIS agrees with what the controllers say.
        """
        session = self.get(session_id)
        tuned = frequencies.canonical(str(frequency))
        if tuned is None:
            return None
        v = session.variables
        for prefix, code_var, freq_var in (("", "airport", "atis_freq"), ("arrival_", "destination", "dest_atis_freq")):
            icao = str(v.get(code_var) or "").upper()
            airport = self.airports.get(icao)
            listed = {str(v.get(freq_var) or ""), *((airport.frequencies.get("atis") or []) if airport else [])}
            if tuned not in {frequencies.canonical(f) for f in listed if f}:
                continue
            name = str(v.get("airport_name" if not prefix else "destination_name") or icao)
            runway = v.get(f"{prefix}runway")
            live = self.providers.weather.cached(icao) if v.get("weather_source") == "vatsim" else None
            if live is not None:
                return build_atis(live, airport_name=name, letter=live.letter or "A", runway=runway)
            report = self._session_report(session, prefix, icao)
            letter = str(v.get(f"{prefix}atis_letter") or "A")
            return build_atis(report, airport_name=name, letter=letter, runway=runway)
        return None

    def _session_report(self, session: Session, prefix: str, icao: str) -> WeatherReport:
        """A session's own weather at one of its airports: its METAR parsed, or made up again from
        its wind and QNH when there is none that parses."""
        v = session.variables
        source = v.get("weather_source") if not prefix and v.get("weather_source") in ("vatsim", "given") else "generated"
        try:
            return parse_metar(str(v.get(f"{prefix}metar") or ""), source=source)
        except MetarError:
            qnh = v.get(f"{prefix}qnh")
            return generated_report(
                icao, session.seed, wind=str(v.get(f"{prefix}wind") or "") or None,
                qnh=int(qnh) if isinstance(qnh, int) else None,
            )

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

    # ------------------------------------------------------------------ stateless evaluation

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
        """Run one utterance through the engine on a throwaway session at `flow`:`state`.

        For the stateless compatibility API (`POST /api/llm/decide`): nothing is stored. The
        flow's declared variables and flags are the defaults under the given ones. The LLM
        router is asked as for a live transmission, when one is configured. `registry`: the
        flows to decide on instead of the loaded ones (the frontend's state fields applied to a
        copy, gateway/api/compat_state.py).
        """
        engine = self.engine if registry is None else SessionEngine(registry, llm_fallback=self.settings.llm_fallback)
        session = self._throwaway(flow, state, variables, flags)
        query = engine.route_query(session, text) if self.llm is not None else None
        verdict = await consult(self.llm, query) if self.llm is not None and query is not None else None
        decision, routing = engine.decide(session, text, 0.0, llm=verdict)
        if routing is None:
            return Evaluation(session, decision, None, [], None, self.registry.get(flow).policies.match_threshold)
        return Evaluation(session, decision, routing.chosen, routing.candidates, routing.result, routing.threshold)

    def _throwaway(
        self, flow: str, state: str, variables: Mapping[str, Any] | None, flags: Mapping[str, Any] | None
    ) -> Session:
        """A session at `flow`:`state` that is never stored (see `evaluate`)."""
        try:
            target = self.registry.get(flow)
        except KeyError:
            raise UnknownFlowError(f"unknown flow {flow!r}", field="flow_slug") from None
        if state not in target.states:
            raise UnknownStateError(
                f"flow {flow!r} has no state {state!r}", field="state_id"
            )
        given = {**target.variables, **dict(variables or {})}
        if isinstance(given.get("callsign"), str) and "callsign_spoken" not in given:
            given["callsign_spoken"] = callsign_telephony(given["callsign"])
        return Session(
            session_id="decide",
            main_flow=target.slug,
            start_flow=target.slug,
            active=FlowFrame(flow=target.slug, state=state, mode=FlowMode.MAIN),
            variables=given,
            flags={**target.flags, **{str(k): bool(v) for k, v in (flags or {}).items()}},
            station=target.states[state].station or target.station,
        )

    # ------------------------------------------------------------------ internals

    def _flow_slug(self, flow: str | None) -> str:
        slug = flow or self.default_flow
        if slug is None:
            raise UnknownFlowError("no flow given and the curriculum has no main flow", field="flow")
        if slug not in self.registry:
            known = ", ".join(f.slug for f in self.registry)
            raise UnknownFlowError(f"unknown flow {slug!r}; known flows: {known}", field="flow")
        mode = self.registry.get(slug).entry_mode
        if mode in (FlowMode.INTERRUPT, FlowMode.PARALLEL):
            raise BadInput(
                f"flow {slug!r} is a {mode.value} flow, entered from inside other flows; start a main or linear flow",
                field="flow",
            )
        return slug

    def _check_scenario(self, scenario: Mapping[str, Any] | None) -> dict[str, Any]:
        if scenario is None:
            return {}
        if not isinstance(scenario, Mapping):
            raise BadInput("scenario must be an object of variable names to values", field="scenario")
        unknown = sorted(str(k) for k in scenario if k not in self.allowed_variables)
        if unknown:
            allowed = ", ".join(sorted(self.allowed_variables))
            raise BadInput(
                f"unknown scenario variable(s) {', '.join(unknown)}; allowed: {allowed}",
                field=f"scenario.{unknown[0]}",
            )
        for key, value in scenario.items():
            if value is not None and not isinstance(value, _SCALARS):
                raise BadInput(f"scenario.{key} must be a string, number or boolean", field=f"scenario.{key}")
            if isinstance(value, float) and not math.isfinite(value):
                raise BadInput(f"scenario.{key} must be a finite number", field=f"scenario.{key}")
        return {k: v for k, v in scenario.items() if v is not None}

    @staticmethod
    def _check_traffic(traffic: Sequence[str] | None, variables: Mapping[str, Any]) -> list[str]:
        """Canonical callsigns of nearby traffic; `BadInput` for anything else or our own callsign."""
        if traffic is None:
            return []
        if isinstance(traffic, str) or not isinstance(traffic, Sequence):
            raise BadInput("traffic must be a list of callsigns", field="traffic")
        try:
            codes = traffic_codes(traffic)
        except ValueError as exc:
            raise BadInput(f"traffic: {exc}", field="traffic") from None
        _own, mine = own_codes(variables.get("callsign"), variables.get("callsign_spoken"))
        ours = [code for code in codes if code.replace("-", "") in mine]
        if ours:
            raise BadInput(f"traffic names the session's own callsign {ours[0]}", field="traffic")
        return codes

    @staticmethod
    def _check_seed(seed: int | None) -> int:
        if seed is None:
            return secrets.randbelow(2**31)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise BadInput(f"seed must be an integer from 0 to {MAX_SEED}", field="seed")
        return seed

    @staticmethod
    def _check_text(text: str, *, voice: bool = False) -> str:
        """The stripped text; empty only for a `voice` transmission (speech without words)."""
        if not isinstance(text, str) or (not text.strip() and not voice):
            raise BadInput("text must not be empty", field="text")
        text = text.strip()
        if len(text) > MAX_TEXT_CHARS:
            raise BadInput(f"text is longer than {MAX_TEXT_CHARS} characters", field="text")
        return text

    def _check_capacity(self, owner: str | None) -> None:
        """Refuse a new session past the total or per-key limit (called under the lock). Counted
        in the store, so on Redis the limits hold for all nodes together; two nodes creating at
        the same instant may each pass a limit by one."""
        if self.count() >= self.settings.max_sessions:
            raise TooManySessions(
                f"the gateway holds its limit of {self.settings.max_sessions} sessions; retry later", per_key=False
            )
        if owner is not None:
            if self.repository.owned(owner) >= self.settings.max_sessions_per_key:
                raise TooManySessions(
                    f"this API key holds its limit of {self.settings.max_sessions_per_key} sessions; "
                    "end one (DELETE /api/radio/sessions/{id}) or let it expire",
                    per_key=True,
                )

    def _new_id(self) -> str:
        while True:
            session_id = uuid.uuid4().hex
            if self.repository.get(session_id) is None:
                return session_id

    def _load(self, session_id: str) -> tuple[StoredSession, int]:
        """The session and its stored version; SessionNotFound when unknown or expired."""
        found = self.repository.read(session_id)
        if found is None:
            raise SessionNotFound(f"no session {session_id!r}", field="session_id")
        if self._expired(found[0], self.clock()):
            self.repository.delete(session_id)
            raise SessionNotFound(f"session {session_id!r} has expired", field="session_id")
        return found

    def _retry(self, work: Callable[[], T]) -> T:
        """Run a load-decide-store sequence again while another writer saved the session between
        its load and its save (`VersionConflict`): the engine decides again on the fresh copy."""
        for _ in range(MAX_ATTEMPTS - 1):
            try:
                return work()
            except VersionConflict as exc:
                log.debug("session %s changed while deciding; deciding again", exc.session_id)
        try:
            return work()
        except VersionConflict as exc:
            raise SessionBusy(
                f"session {exc.session_id!r} kept changing while it was decided; try again", field="session_id"
            ) from exc

    def _expired(self, record: StoredSession, now: float) -> bool:
        return now - record.touched_at > self.settings.session_ttl_s

    def _expire(self, now: float) -> None:
        ttl = self.settings.session_ttl_s
        for session_id in self.repository.idle(now - ttl):
            if self.repository.delete(session_id):  # another node may have dropped it already
                log.info("session %s expired after %.0f s idle", session_id, ttl)

    def _save(self, record: StoredSession, decisions: Iterable[Decision], *, expect: int) -> None:
        """Store first, then tell the listeners: what a client hears has been saved.

        The session (timers consumed, state moved) and its transcript lines go in one atomic
        `save`, and every caller answers only after this returns: a crash at any instant leaves
        a decision either whole in the store (its reply may be lost, never its effect) or absent
        (the pilot never heard it; a due timer is still pending and fires once on restart).
        `expect` is the version the record was loaded at: if another node stored the session
        since, `VersionConflict` leaves here before anyone is told, and `_retry` decides again.
        """
        decisions = list(decisions)
        session_id = record.session.session_id
        if self.hub.listeners(session_id) == 0:
            # an HTTP caller gets these messages in its response; timer calls nobody heard stay
            # undelivered until a socket resumes the session (see delivered_seq)
            record.delivered_seq = max(
                [record.delivered_seq, *(m.seq for d in decisions if d.cause != "tick" for m in d.messages)]
            )
        # session, transcript and the clock's indexes: one atomic write, refused if stale
        self.repository.save(
            record, _entries(decisions), wake_at=self.engine.next_wakeup(record.session), expect=expect
        )
        for decision in decisions:
            self.hub.publish(session_id, decision)


def _heard(decision: Decision, hearing: Hearing | None) -> Decision:
    """`decision` with the recognizer's hearing in its trace (step ``hearing``), when it had one."""
    if hearing is not None:
        detail = (
            f"recognizer: {len(hearing.alternatives)} alternative transcript(s)"
            + (", cut off" if hearing.cut_off else "")
            + (f", confidence {hearing.confidence:.2f}" if hearing.confidence is not None else "")
        )
        decision.trace.add("hearing", detail, **hearing.model_dump())
    return decision


def _entries(decisions: Iterable[Decision]) -> list[PilotEntry | AtcEntry]:
    """Transcript lines of decisions, in the order they happened."""
    out: list[PilotEntry | AtcEntry] = []
    for d in decisions:
        if d.cause == "transmit" and d.pilot_text is not None:
            out.append(
                PilotEntry(
                    at=d.at,
                    flow=d.from_flow,
                    state=d.from_state,
                    text=d.pilot_text,
                    transmission_id=d.transmission_id,
                    to_flow=d.to_flow,
                    to_state=d.to_state,
                    recognized=d.recognized,
                    intent=d.intent,
                    readback=d.readback,
                )
            )
        for m in d.messages:
            out.append(
                AtcEntry(
                    at=m.at,
                    flow=m.flow,
                    state=m.state,
                    cause=d.cause,
                    seq=m.seq,
                    message_id=m.message_id,
                    station=m.station,
                    frequency=m.frequency,
                    text=m.text,
                    speech=m.speech,
                )
            )
    return out
