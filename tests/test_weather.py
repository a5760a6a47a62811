"""Weather, ATIS and flight plans: avwx parsing, the runway for the wind, the ATIS in standard order,
and the providers against a fake VATSIM on loopback (tests/support/fake_vatsim.py) serving recorded
METAR and data-feed payloads, malformed, slow and failing ones included.

Time in the providers' caches is a virtual clock (`Clock`), so TTLs and remembered failures are
tested without waiting; the one real wait is a slow provider answering after the gateway's timeout.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx
import pytest

from engine.atis import PARTS, build_atis, first_letter, next_letter
from engine.weather import WeatherReport, generated_report, runway_in_use
from gateway.airports import default_repository
from gateway.app import create_app
from gateway.providers import DataProviders, MetarError, ProviderError, parse_metar
from gateway.service import RadioService, UnknownFlightPlan
from gateway.settings import Settings
from gateway.store import MemorySessionRepository
from tests.conftest import run_server
from tests.support.fake_vatsim import FakeVatsim, Fault, fake_vatsim, payload

EDDF = payload("metar-EDDF.txt")
EDDF_NEXT = payload("metar-EDDF-next.txt")
EDDM = payload("metar-EDDM.txt")
WESTERLY = {"25L", "25C", "25R"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def settings_for(fake: FakeVatsim, **extra) -> Settings:
    values = dict(
        speech_preload=False,
        store="memory",
        data_provider="vatsim",
        vatsim_metar_url=fake.metar_url,
        vatsim_data_url=fake.data_url,
        provider_timeout_s=1.0,
        provider_retries=2,
        provider_backoff_s=0.01,
        weather_wait_s=5.0,
    )
    values.update(extra)
    return Settings(**values)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


# --------------------------------------------------------------------------- parsing and the engine


def test_recorded_metars_parse_into_the_engines_units() -> None:
    eddf = parse_metar(EDDF, source="vatsim")
    assert (eddf.icao, eddf.wind, eddf.qnh_hpa, eddf.visibility_m) == ("EDDF", "250/12", 1018, 9999)
    assert [(c.cover, c.base_ft) for c in eddf.clouds] == [("FEW", 3500), ("SCT", 20000)]
    assert (eddf.temperature_c, eddf.dewpoint_c) == (17, 8)
    kjfk = parse_metar(payload("metar-KJFK.txt"), source="vatsim")  # North American units
    assert kjfk.wind == "310/15G25" and kjfk.wind_range == (280, 340)
    assert kjfk.qnh_hpa == 1020 and kjfk.visibility_m == 9999  # A3012, 10SM
    assert (kjfk.temperature_c, kjfk.dewpoint_c) == (-2, -10)
    assert parse_metar(EDDM, source="vatsim").cavok


@pytest.mark.parametrize("raw", [payload("metar-malformed.txt"), payload("html-error.txt"), "", "EDDF"])
def test_malformed_metars_are_refused(raw: str) -> None:
    with pytest.raises(MetarError):
        parse_metar(raw, source="vatsim")


@pytest.mark.parametrize("seed", range(8))
def test_a_generated_metar_reads_back_as_the_report_it_was_made_from(seed: int) -> None:
    made = generated_report("EDDF", seed)
    parsed = parse_metar(made.raw, source="generated", issued=made.observed_at.date())
    for field in ("wind", "qnh_hpa", "visibility_m", "cavok", "weather", "clouds", "temperature_c", "dewpoint_c", "observed_at"):
        assert getattr(parsed, field) == getattr(made, field), (field, made.raw)
    assert generated_report("EDDF", seed) == made  # deterministic for the scenario


def test_the_runway_in_use_faces_the_wind_and_is_the_same_for_everyone() -> None:
    eddf = default_repository().get("EDDF")
    report = parse_metar(EDDF, source="vatsim")
    assert runway_in_use(eddf, report) in WESTERLY
    easterly = report.model_copy(update={"wind_dir": 70})
    assert runway_in_use(eddf, easterly) in {"07L", "07C", "07R"}
    assert len({runway_in_use(eddf, report) for _ in range(5)}) == 1


def test_atis_is_in_the_standard_order_and_letters_rotate() -> None:
    report = parse_metar("EDDF 151220Z 25012KT 4000 -RA BR BKN008 OVC015CB 12/11 Q1009", source="vatsim")
    atis = build_atis(report, airport_name="Frankfurt", letter="K", runway="25C")
    order = ["information K, time 1220", "Expect ILS approach", "Runway in use 25C", "Wind 250/12",
             "Visibility 4000 metres", "Light rain, mist", "Clouds broken 800 feet, overcast 1500 feet cumulonimbus",
             "Temperature 12, dew point 11", "QNH 1009", "you have information K"]
    positions = [atis.text.index(part) for part in order]
    assert positions == sorted(positions), atis.text
    assert "QNH one zero zero niner" in atis.speech and "information Kilo" in atis.speech
    assert len(PARTS) == 12
    assert [next_letter(x) for x in ("A", "K", "Z", None)] == ["B", "L", "A", "A"]
    assert first_letter(report) == "Y"  # the 25th half hour of the day


# --------------------------------------------------------------------------- providers on loopback


def providers(fake: FakeVatsim, clock: Clock, **extra) -> DataProviders:
    return DataProviders.from_settings(settings_for(fake, **extra), clock=clock)


def test_metar_is_fetched_once_cached_and_the_letter_rotates_on_a_new_observation() -> None:
    with fake_vatsim(metars={"EDDF": EDDF, "EDDM": EDDM}) as fake:
        clock = Clock()
        data = providers(fake, clock)

        async def scenario():
            first = await data.weather.current("EDDF")
            again = await asyncio.gather(*(data.weather.current("eddf") for _ in range(5)))
            assert all(r == first for r in again)
            assert fake.requests["metar/EDDF"] == 1  # cached for metar_ttl_s
            clock.now += 301  # the TTL passed: asked again, same observation, same letter
            assert (await data.weather.current("EDDF")).letter == first.letter
            fake.metars["EDDF"] = EDDF_NEXT
            clock.now += 301  # a new observation: the next letter
            newer = await data.weather.current("EDDF")
            await data.aclose()
            return first, newer

        first, newer = run(scenario())
        assert first.wind == "250/12" and first.qnh_hpa == 1018 and first.source == "vatsim"
        assert newer.wind == "260/14" and newer.qnh_hpa == 1017
        assert newer.letter == next_letter(first.letter)
        assert fake.requests["metar/EDDF"] == 3


def test_concurrent_sessions_share_one_request() -> None:
    with fake_vatsim(metars={"EDDM": EDDM}) as fake:
        data = providers(fake, Clock())

        async def scenario():
            reports = await asyncio.gather(*(data.weather.current("EDDM") for _ in range(8)))
            await data.aclose()
            return reports

        assert len({r.raw for r in run(scenario())}) == 1
        assert fake.requests["metar/EDDM"] == 1


@pytest.mark.parametrize(
    ("served", "reason", "requests"),
    [
        (payload("metar-malformed.txt"), "malformed", 1),  # parsed, refused, not retried
        (payload("html-error.txt"), "no_metar", 1),
        (Fault("empty"), "no_metar", 1),
        (Fault("fail"), "http_503", 3),  # retried twice with backoff
    ],
)
def test_a_bad_provider_answer_means_no_live_weather_and_is_reported(served, reason: str, requests: int) -> None:
    with fake_vatsim(metars={"EDDF": served}) as fake:
        clock = Clock()
        data = providers(fake, clock)

        async def scenario():
            report = await data.weather.current("EDDF")
            remembered = await data.weather.current("EDDF")  # within provider_retry_after_s: no request
            count = fake.requests["metar/EDDF"]
            clock.now += 61
            await data.weather.current("EDDF")  # asked again after it
            await data.aclose()
            return report, remembered, count

        report, remembered, count = run(scenario())
        assert report is None and remembered is None
        assert count == requests and fake.requests["metar/EDDF"] == 2 * requests
        status = data.weather.describe()
        assert status["source"] == "generated" and status["failures"] == 2
        assert status["last_error"].startswith(f"EDDF: {reason}")


def test_retries_with_backoff_get_past_a_failing_provider() -> None:
    with fake_vatsim(metars={"EDDF": Fault("fail_then_ok", body=EDDF, failures=2)}) as fake:
        data = providers(fake, Clock())

        async def scenario():
            report = await data.weather.current("EDDF")
            await data.aclose()
            return report

        assert run(scenario()).wind == "250/12"
        assert fake.requests["metar/EDDF"] == 3


def test_a_slow_provider_times_out_and_a_session_does_not_wait_for_it() -> None:
    with fake_vatsim(metars={"EDDF": Fault("slow", body=EDDF)}, slow_s=1.5) as fake:
        # the client gives up after 0.2 s and does not retry: a timeout
        data = providers(fake, Clock(), provider_timeout_s=0.2, provider_retries=0)

        async def timed_out():
            report = await data.weather.current("EDDF")
            await data.aclose()
            return report

        assert run(timed_out()) is None
        assert data.weather.describe()["last_error"].startswith("EDDF: timeout")

        # the client would wait, the session does not: it goes on with generated weather and the
        # load goes on in the background; the next caller joins it and gets the answer
        patient = providers(fake, Clock(), provider_timeout_s=5.0, provider_retries=0, weather_wait_s=0.1)

        async def background():
            now = await patient.weather.current("EDDF")
            later = await patient.weather.current("EDDF", wait_s=10.0)
            await patient.aclose()
            return now, later

        now, later = run(background())
        assert now is None and later is not None and later.wind == "250/12"


def test_flight_plans_from_the_feed_skip_broken_entries() -> None:
    with fake_vatsim() as fake:
        data = providers(fake, Clock())

        async def scenario():
            every = await data.flight_plans()
            dlh = await data.flight_plans("dlh4a")
            await data.aclose()
            return every, dlh

        every, dlh = run(scenario())
        assert {p.callsign for p in every} == {"DLH4AB", "DLH4A", "EZY12KL"}  # no plan, broken plan: skipped
        assert [p.callsign for p in dlh] == ["DLH4A", "DLH4AB"]  # the exact match first
        assert dlh[1].route.startswith("MARUN Y163") and dlh[1].altitude == "24000" and dlh[1].aircraft == "A320"
        assert next(p for p in every if p.callsign == "EZY12KL").prefiled
        assert fake.requests["feed"] == 1


@pytest.mark.parametrize("served", [payload("vatsim-data-malformed.json"), '{"pilots": 3}', Fault("fail")])
def test_a_malformed_or_failing_feed_is_a_provider_error(served) -> None:
    with fake_vatsim(feed=served) as fake:
        data = providers(fake, Clock(), provider_retries=0)

        async def scenario():
            with pytest.raises(ProviderError) as caught:
                await data.flight_plans("DLH4AB")
            await data.aclose()
            return caught.value.reason

        assert run(scenario()) in {"malformed", "http_503"}


# --------------------------------------------------------------------------- sessions


def test_a_session_follows_its_airports_weather_and_an_old_letter_gets_the_current_one() -> None:
    with fake_vatsim(metars={"EDDF": EDDF, "EDDM": EDDM}) as fake:
        clock = Clock()
        settings = settings_for(fake)
        service = RadioService(settings, repository=MemorySessionRepository(),
                               providers=DataProviders.from_settings(settings, clock=clock))
        scenario = {"airport": "EDDF", "destination": "EDDM", "callsign": "DLH359"}

        async def start():
            started = await service.start(flow="clearance", scenario=scenario, seed=11)
            await service.providers.aclose()  # its HTTP client belongs to this event loop
            return started

        session, _, _ = run(start())
        v = session.variables
        assert v["weather_source"] == "vatsim" and v["wind"] == "250/12" and v["qnh"] == 1018
        assert v["runway"] in WESTERLY and v["metar"] == EDDF.strip()
        assert v["arrival_qnh"] == 1019 and v["arrival_runway"] in {"26L", "26R"}
        heard = v["atis_letter"]
        atis = service.atis(session.session_id, v["atis_freq"])
        assert atis is not None and atis.letter == heard and f"Runway in use {v['runway']}" in atis.text

        fake.metars["EDDF"] = EDDF_NEXT  # the weather changes: a new ATIS
        clock.now += 301

        async def refresh():
            await service.providers.weather.current("EDDF")
            await service.providers.aclose()

        run(refresh())
        current = next_letter(heard)
        decision = service.transmit(session.session_id, f"Frankfurt Delivery, Lufthansa 359, information {heard}, request IFR clearance to Munich")
        texts = [m.text for m in decision.messages]
        assert decision.readback is not None and decision.readback.wrong[0]["field"] == "atis_letter"
        assert texts[0] == f"Lufthansa 359, Frankfurt Delivery, information {current} is current, QNH 1017."
        assert "cleared to Munich" in texts[1]
        assert any(step.step == "weather" for step in decision.trace.steps)
        assert service.get(session.session_id).variables["atis_letter"] == current


def test_sessions_over_http_with_the_provider_failing_or_unreachable_get_generated_weather(caplog: pytest.LogCaptureFixture) -> None:
    with fake_vatsim(metars={"EDDF": Fault("fail")}, feed=Fault("fail")) as fake:
        settings = settings_for(fake, provider_retries=0)
        with run_server(create_app(settings)) as base:
            created = httpx.post(f"{base}/api/radio/sessions", json={"flow": "clearance", "seed": 7, "scenario": {"airport": "EDDF"}})
            assert created.status_code == 201
            v = created.json()["session"]["variables"]
            assert v["weather_source"] == "generated" and v["metar"].startswith("EDDF ")
            health = httpx.get(f"{base}/health").json()["weather"]
            assert health["provider"] == "vatsim" and health["source"] == "generated"
            assert health["failures"] == 2 and "METAR of EDDF unavailable (http_503" in caplog.text
            plans = httpx.get(f"{base}/api/vatsim/flightplans", params={"callsign": "DLH4AB"})
            assert plans.status_code == 503 and plans.json()["error"]["code"] == "provider_unavailable"
    nothing = Settings(speech_preload=False, store="memory", data_provider="vatsim",
                       vatsim_metar_url="http://127.0.0.1:9/{icao}", provider_retries=0)  # discard port: refused
    with run_server(create_app(nothing)) as base:
        created = httpx.post(f"{base}/api/radio/sessions", json={"flow": "clearance"})
        assert created.status_code == 201 and created.json()["session"]["variables"]["weather_source"] == "generated"
        assert httpx.get(f"{base}/health").json()["weather"]["last_error"].split(": ")[1] == "unreachable"


def test_offline_by_default_generated_weather_and_no_flight_plans(live_server: str) -> None:
    health = httpx.get(f"{live_server}/health").json()["weather"]
    assert health["provider"] == "offline" and health["source"] == "generated" and health["fetches"] == 0
    created = httpx.post(f"{live_server}/api/radio/sessions", json={"flow": "clearance", "seed": 7})
    v = created.json()["session"]["variables"]
    assert v["weather_source"] == "generated"
    metar = parse_metar(v["metar"], source="generated")  # the generated METAR agrees with the scenario
    assert metar.wind == v["wind"] and metar.qnh_hpa == v["qnh"]
    atis = httpx.get(f"{live_server}/api/airports/EDDF/atis").json()
    assert atis["source"] == "generated" and atis["text"].startswith(f"This is Frankfurt information {atis['letter']}")
    assert atis["frequencies"] == ["118.030", "118.730"]
    metar = httpx.get(f"{live_server}/api/vatsim/metar", params={"icao": "eddf"}).json()
    assert metar["source"] == "generated" and metar["raw"].startswith("EDDF ")
    plans = httpx.get(f"{live_server}/api/vatsim/flightplans", params={"callsign": "DLH4AB"}).json()
    assert plans == {"source": "offline", "callsign": "DLH4AB", "flightplans": []}
    unknown = httpx.post(f"{live_server}/api/radio/sessions", json={"flight_plan": "DLH4AB"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_flight_plan"
    for url, code in ((f"{live_server}/api/vatsim/metar", 422), (f"{live_server}/api/vatsim/metar?icao=ZZZZ", 404),
                      (f"{live_server}/api/airports/ZZZZ/atis", 404), (f"{live_server}/api/vatsim/flightplans?callsign=a%20b", 422)):
        assert httpx.get(url).status_code == code, url
    given = httpx.post(f"{live_server}/api/radio/sessions", json={"flow": "clearance", "scenario": {"metar": "EDDF 151220Z 07008KT 9999 FEW030 10/05 Q1025"}})
    gv = given.json()["session"]["variables"]
    assert gv["weather_source"] == "given" and gv["runway"].startswith("07") and gv["qnh"] == 1025
    # like any scenario value, a METAR that does not parse is kept as given; the weather is generated
    odd = httpx.post(f"{live_server}/api/radio/sessions", json={"flow": "clearance", "scenario": {"metar": "no weather here"}}).json()
    assert odd["session"]["variables"]["metar"] == "no weather here"
    assert odd["session"]["variables"]["weather_source"] == "generated"
    assert any(s["step"] == "weather" and "scenario.metar is no usable METAR" in s["detail"] for s in odd["trace"]["steps"])


def test_a_session_starts_from_a_flight_plan_by_callsign_or_as_given() -> None:
    with fake_vatsim(metars={"EDDF": EDDF, "EDDM": EDDM}) as fake:
        with run_server(create_app(settings_for(fake))) as base:
            listed = httpx.get(f"{base}/api/vatsim/flightplans", params={"callsign": "DLH4AB"}).json()
            assert listed["source"] == "vatsim" and listed["flightplans"][0]["callsign"] == "DLH4AB"
            by_callsign = httpx.post(f"{base}/api/radio/sessions", json={"flow": "clearance", "flight_plan": "dlh4ab"})
            assert by_callsign.status_code == 201, by_callsign.text
            v = by_callsign.json()["session"]["variables"]
            assert (v["callsign"], v["airport"], v["destination"], v["cruise_level"]) == ("DLH4AB", "EDDF", "EDDM", "FL240")
            assert v["filed_route"] == "MARUN Y163 NATOR N850 ERNAS T128 BETOS" and v["aircraft_type"] == "A320"
            assert v["weather_source"] == "vatsim" and v["runway"] in WESTERLY
            plan = dict(listed["flightplans"][0], callsign=None, altitude="FL310")
            as_given = httpx.post(f"{base}/api/radio/sessions", json={"flow": "clearance", "flight_plan": plan, "scenario": {"callsign": "BER12"}})
            gv = as_given.json()["session"]["variables"]
            assert (gv["callsign"], gv["destination"], gv["cruise_level"]) == ("BER12", "EDDM", "FL310")
            refused = httpx.post(f"{base}/api/radio/sessions", json={"flight_plan": {"departure": "eddf"}})
            assert refused.status_code == 422
            assert fake.requests["feed"] == 1  # the look-up found the feed the listing cached


def test_unknown_flight_plan_from_the_service() -> None:
    service = RadioService(Settings(), repository=MemorySessionRepository())
    with pytest.raises(UnknownFlightPlan):
        run(service.start(flight_plan="DLH4AB"))
