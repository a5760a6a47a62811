"""The browser radio client (`static/`) in real headless Chromium against a real gateway.

Chromium is Debian's (`scripts/install-system-deps.sh` installs it; `make test` runs that as root),
driven by Playwright with `executable_path`, so nothing is downloaded. Its fake microphone plays a
WAV synthesized here with the project's piper voice: silence, the pilot's initial call, silence.

Chromium loops that file for as long as the microphone is open, starting when the page opens it.
So the test never guesses where the phrase is: the page counts bursts of sound on its mic
(`window.livefreq.stats.micBursts`: loud, then quiet for 600 ms) and exposes its level and frame
count. The test keys the mic (SPACE down) while the file is still in its leading silence (no
burst yet, silent, well under the lead time since the mic opened), or else in the silence after
the next burst ends; it releases when the burst it keyed before has ended. Either way exactly one
whole phrase goes out in one hold.

Skipped only when chromium is absent and we are not root (root installs it: `make test`).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from engine.phraseology import speak_text
from gateway.app import create_app
from gateway.audio.pcm import silence, write_wav
from gateway.audio.resample import resample
from gateway.settings import REPO_ROOT, Settings
from gateway.speech.stack import SpeechStack
from gateway.speech.tts.factory import make_tts
from tests.conftest import run_server

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

if CHROMIUM is None and not IS_ROOT:
    _why = "chromium is not installed and we are not root to install it (sudo apt-get install -y chromium)"
    print(f"test_browser: skipped: {_why}")
    pytest.skip(_why, allow_module_level=True)

from playwright.sync_api import Browser, Page, sync_playwright  # noqa: E402  (after the skip check)

FLOW = "clearance"
SEED = 7
SCENARIO = {"airport": "EDDF", "callsign": "DLH359"}
WAV_RATE = 48000
LEAD_S = 1.5  # silence before the phrase: time to key the mic when the file starts
TAIL_S = 1.0  # silence after it: with the lead, a 2.5 s gap between repetitions
TIMEOUT_MS = 30_000
SCREENSHOT = REPO_ROOT / "reports" / "browser-radio.png"

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    speech = SpeechStack(Settings())
    asyncio.run(speech.load())  # loaded before the page opens: no "speech loading" wait in the test
    with run_server(create_app(Settings(speech_preload=False), speech=speech)) as base:
        yield base


@pytest.fixture(scope="module")
def initial_call(server: str) -> str:
    """The pilot's first call in the seeded scenario (the same one the page will start)."""
    created = httpx.post(f"{server}/api/radio/sessions", json={"flow": FLOW, "seed": SEED, "scenario": SCENARIO}, timeout=30).json()
    httpx.delete(f"{server}/api/radio/sessions/{created['session']['id']}", timeout=30)
    return created["expected_pilot"][0]


@pytest.fixture(scope="module")
def mic_wav(initial_call: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The initial call in the piper voice (ICAO spoken form), 48 kHz mono PCM16, padded with silence."""
    tts = make_tts("piper")
    speech = asyncio.run(tts.synthesize(speak_text(initial_call)))
    pcm = resample(speech, tts.sample_rate, WAV_RATE)
    path = tmp_path_factory.mktemp("mic") / "initial-call.wav"
    write_wav(path, silence(LEAD_S, WAV_RATE) + pcm + silence(TAIL_S, WAV_RATE), WAV_RATE)
    return path


@pytest.fixture(scope="module")
def browser(mic_wav: Path) -> Iterator[Browser]:
    if CHROMIUM is None:
        pytest.fail("chromium is not installed: run `make test` (or bash scripts/install-system-deps.sh) as root")
    with sync_playwright() as pw:
        args = [*CHROMIUM_ARGS, f"--use-file-for-fake-audio-capture={mic_wav}"]
        instance = pw.chromium.launch(executable_path=CHROMIUM, args=args, headless=True)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture()
def page(browser: Browser, server: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.set_default_timeout(TIMEOUT_MS)
    tab.goto(server)
    yield tab
    context.close()
    assert not errors, f"errors in the page: {errors}"


def stat(page: Page, name: str) -> int:
    return int(page.evaluate(f"window.livefreq.stats.{name}"))


def wait_stat(page: Page, name: str, at_least: int, timeout: int = TIMEOUT_MS) -> None:
    page.wait_for_function(f"window.livefreq.stats.{name} >= {at_least}", timeout=timeout)


def transmit_one_phrase(page: Page) -> None:
    """Key the mic (SPACE) while the fake microphone's file is in silence and release it when the
    phrase after it has ended: exactly one whole phrase goes out (see the module docstring)."""
    page.wait_for_function("window.livefreq.stats.micFrames > 0")
    in_lead = page.evaluate(
        f"(s => s.micBursts === 0 && s.micLevelDb <= -90 && s.micFrames * 20 < {LEAD_S * 1000 - 700})(window.livefreq.stats)"
    )
    bursts = stat(page, "micBursts")
    if not in_lead:  # the phrase already began: key in the gap after this repetition
        wait_stat(page, "micBursts", bursts + 1)
        bursts += 1
    page.keyboard.down("Space")
    page.wait_for_selector("#ptt.held")
    wait_stat(page, "micBursts", bursts + 1)
    page.keyboard.up("Space")
    assert stat(page, "framesSent") > 100  # seconds of 20 ms frames went out while keyed


def hear_the_clearance(page: Page) -> None:
    """The final transcript of the initial call, then the controller's clearance in the log, its
    audio played to the end."""
    wait_stat(page, "finals", 1)
    heard = page.locator(".entry.pilot:not(.partial) .text").first.text_content() or ""
    assert re.search(r"clearance|cleared|ifr|request", heard, re.I), heard
    page.wait_for_selector(".entry.atc .text >> text=/cleared to/i")
    wait_stat(page, "played", 1)


def start_clearance(page: Page) -> None:
    """The start form: the clearance flow, seeded, our callsign, push-to-talk."""
    page.wait_for_selector("#flow option[value=clearance]", state="attached")
    page.select_option("#flow", FLOW)
    page.fill("#airport", SCENARIO["airport"])
    page.fill("#callsign", SCENARIO["callsign"])
    page.fill("#seed", str(SEED))
    page.click('label:has(input[name="mode"][value="ptt"])')
    page.click("#start-button")
    page.wait_for_function("window.livefreq.state.session && window.livefreq.state.micReady")


def test_client_modules_in_the_browser(page: Page) -> None:
    """The pieces on their own: PCM16 conversion, framing, burst counting, the readback verdict,
    and the player (gapless messages, an interrupted message is cut and never reported played)."""
    page.click("h1")  # a user gesture, so the AudioContext below may play
    result = page.evaluate(
        """async () => {
          const pcm = await import('/js/pcm.js');
          const view = await import('/js/view.js');
          const { AtcPlayer } = await import('/js/playback.js');
          const out = {};
          out.pcm16 = Array.from(pcm.float32ToPcm16(new Float32Array([0, 0.5, -0.5, 1, -1, 2, -2])));
          out.back = Array.from(pcm.pcm16ToFloat32(new Int16Array([0, 16384, -32768]).buffer));
          out.frames = [48000, 44100, 16000].map((r) => pcm.frameSamples(r));
          out.silence = pcm.levelDbfs(new Int16Array(960));
          const bursts = new pcm.BurstDetector({ thresholdDb: -45, hangMs: 100 });
          for (const level of [-100, -20, -20, -90, -20, -90, -90, -90, -90, -90, -20]) bursts.push(level, 20);
          out.bursts = bursts.bursts;

          const verdict = view.renderReadback({ ok: false,
            fields: { squawk: 'wrong', sid: 'missing', destination: 'ok' },
            missing: ['sid'], wrong: [{ field: 'squawk', expected: '3553', heard: '4321' }] });
          out.verdict = { ok: verdict.dataset.ok, head: verdict.querySelector('.verdict-head').textContent,
            fields: Array.from(verdict.querySelectorAll('li')).map((li) => [li.dataset.field, li.dataset.status, li.textContent]) };

          const ctx = new AudioContext();
          await ctx.resume();
          const played = [];
          let done;
          const finished = new Promise((resolve) => { done = resolve; });
          const player = new AtcPlayer(ctx, { onPlayed: (id) => { played.push(id); if (id === 'm3') done(); } });
          const tone = (ms) => {
            const n = 24 * ms, s = new Int16Array(n);
            for (let i = 0; i < n; i++) s[i] = Math.round(8000 * Math.sin(i / 6));
            return s.buffer;
          };
          player.begin({ message_id: 'm1', audio: { sample_rate: 24000 } });
          for (let i = 0; i < 5; i++) player.push(tone(20));
          player.end('m1', false);
          player.begin({ message_id: 'm2', audio: { sample_rate: 24000 } });
          for (let i = 0; i < 50; i++) player.push(tone(20));
          out.m2Playing = player.isPlaying('m2');
          player.end('m2', true);
          out.m2AfterCut = player.isPlaying('m2');
          out.noMessage = player.push(tone(20));
          player.begin({ message_id: 'm3', audio: { sample_rate: 24000 } });
          player.push(tone(20));
          player.end('m3', false);
          await finished;
          out.played = played;
          out.replayable = player.canReplay('m1');
          await ctx.close();
          return out;
        }"""
    )
    assert result["pcm16"] == [0, 16384, -16384, 32767, -32768, 32767, -32768]
    assert result["back"] == [0, 0.5, -1]
    assert result["frames"] == [960, 882, 320]
    assert result["silence"] == -100
    assert result["bursts"] == 1  # a dip shorter than the hang time ends nothing; the last burst is still open
    assert result["verdict"]["ok"] == "false"
    assert "1 wrong" in result["verdict"]["head"] and "1 missing" in result["verdict"]["head"]
    fields = {name: (status, text) for name, status, text in result["verdict"]["fields"]}
    assert fields["squawk"][0] == "wrong" and "expected 3553" in fields["squawk"][1] and "heard 4321" in fields["squawk"][1]
    assert fields["sid"][0] == "missing" and fields["destination"][0] == "ok"
    assert result["m2Playing"] is True and result["m2AfterCut"] is False
    assert result["noMessage"] is False  # audio outside a message is dropped
    assert result["played"] == ["m1", "m3"]  # the interrupted message is never reported played
    assert result["replayable"] is True


def test_fly_the_clearance_by_voice(page: Page, initial_call: str) -> None:
    start_clearance(page)
    assert page.evaluate("window.livefreq.state.transport") == "ws"
    delivery = page.evaluate("window.livefreq.state.session.scenario.delivery_freq")
    assert page.text_content("#freq-active") == delivery
    assert page.text_content("#station-active") == "Frankfurt Delivery"
    # the station names are the engine's (session.started station_titles), not a copy in the page
    assert page.evaluate("import('./js/view.js').then((m) => m.stationTitle('center'))") == "Radar"
    assert page.text_content("#hint-text") == initial_call

    # one transmission through the fake microphone, keyed with SPACE while the file is in silence
    transmit_one_phrase(page)

    # the final transcript, then the controller's reply in the log, played through Web Audio
    hear_the_clearance(page)
    assert stat(page, "audioFrames") > 0

    # the readback, typed, with one wrong value: the verdict marks it, expected vs heard
    readback = page.text_content("#hint-text") or ""
    squawk = page.evaluate("window.livefreq.state.session.scenario.squawk")
    wrong_code = "4321" if squawk != "4321" else "4322"
    assert squawk in readback
    page.fill("#text-input", readback.replace(squawk, wrong_code))
    page.press("#text-input", "Enter")
    wrong = page.locator('.entry.pilot .verdict li[data-field="squawk"][data-status="wrong"]')
    wrong.wait_for()
    assert squawk in (wrong.text_content() or "") and wrong_code in (wrong.text_content() or "")
    assert page.locator('.entry.pilot .verdict li[data-status="ok"]').count() >= 3
    assert page.locator("#last-readback .verdict.bad").count() == 1
    page.wait_for_selector(".entry.atc .text >> text=/negative/i")  # the controller corrects it
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))

    # a dropped connection reconnects by itself and resumes the same session
    session_id = page.evaluate("window.livefreq.state.session.session_id")
    state_before = page.text_content("#st-state")
    page.evaluate("window.livefreq.connection.socket.close()")
    page.wait_for_selector(".entry.system >> text=Session resumed")
    assert page.evaluate("window.livefreq.state.session.session_id") == session_id
    assert page.text_content("#st-state") == state_before
    assert stat(page, "reconnects") == 1
    assert not stat(page, "errors.length")


def test_fly_the_clearance_over_webrtc(page: Page, initial_call: str) -> None:
    """Connection: WebRTC (start form and settings): the same flight with the microphone as an
    Opus track, the controller's voice on the answer's track and protocol v1 on a data channel."""
    page.click('#start-form label:has(input[name="transport"][value="webrtc"])')
    assert page.evaluate("JSON.parse(localStorage.getItem('livefreq.settings')).transport") == "webrtc"
    start_clearance(page)
    assert page.is_checked('input[name="set-transport"][value="webrtc"]')  # the settings panel says so too
    assert page.evaluate("window.livefreq.state.transport") == "webrtc"
    assert page.evaluate("window.livefreq.connection.kind") == "webrtc"
    assert page.text_content("#hint-text") == initial_call

    transmit_one_phrase(page)
    hear_the_clearance(page)  # played: atc.message.end, once the message's audio left the gateway
    inbound = page.evaluate("window.livefreq.connection.inboundAudio()")
    assert inbound["packets"] > 100 and inbound["energy"] > 0, inbound  # the controller's voice arrived
    assert stat(page, "audioFrames") == 0  # no PCM frames: the audio came on the track

    # a dropped connection reconnects by itself (a new offer) and resumes the same session
    session_id = page.evaluate("window.livefreq.state.session.session_id")
    page.evaluate("window.livefreq.connection.pc.close(); window.livefreq.connection.lost(window.livefreq.connection.pc)")
    page.wait_for_selector(".entry.system >> text=Session resumed")
    assert page.evaluate("window.livefreq.state.session.session_id") == session_id
    assert not stat(page, "errors.length")


def test_tune_the_atis_then_call_with_a_stale_letter(page: Page, initial_call: str) -> None:
    """The ATIS is a live frequency on the radio panel: dial it on standby and swap, the broadcast
    plays and is logged as the airport's Information; swap back and it stops. A first call that
    reports another letter gets the controller's correction with the current one."""
    start_clearance(page)
    v = page.evaluate("window.livefreq.state.session.scenario")
    letter = v["atis_letter"]
    page.fill("#freq-standby", v["atis_freq"])
    assert page.text_content("#station-standby") == "Frankfurt Information"
    page.click("#swap")
    assert page.text_content("#freq-active") == v["atis_freq"]
    broadcast = page.locator(f".entry.atc .text >> text=/This is Frankfurt information {letter}\\b/i").first
    broadcast.wait_for()
    assert "QNH" in (broadcast.text_content() or "")
    page.wait_for_function("window.livefreq.stats.audioFrames > 0")  # spoken, not only logged
    page.click("#swap")  # back on delivery: the broadcast is cut off
    assert page.text_content("#freq-active") == v["delivery_freq"]
    page.wait_for_selector(".entry.atc.interrupted")

    stale = "Q" if letter != "Q" else "R"
    assert f"information {letter}," in initial_call
    page.fill("#text-input", initial_call.replace(f"information {letter},", f"information {stale},"))
    page.press("#text-input", "Enter")
    page.wait_for_selector(f".entry.atc .text >> text=/information {letter} is current/i")
    assert not stat(page, "errors.length")


def test_the_radio_page_with_an_api_key(browser: Browser) -> None:
    """With authentication on, the page opened as `/#key=...` sends the key (Bearer on its API
    calls, `?token=` on the radio socket), takes it out of the address bar, and flies."""
    key = "browser-key-0123456789abcdef"
    settings = Settings(speech_preload=False, stt_engine="sphinx", tts_engine="espeak", api_keys=[key],
                        auth_secret="b" * 32)
    with run_server(create_app(settings)) as base:
        context = browser.new_context()
        try:
            tab = context.new_page()
            tab.set_default_timeout(TIMEOUT_MS)
            tab.goto(f"{base}/#key={key}")
            tab.wait_for_selector("#flow option[value=clearance]", state="attached")  # runtime read with the key
            assert "key=" not in tab.url
            tab.select_option("#flow", FLOW)
            tab.click("#start-button")
            tab.wait_for_function("window.livefreq.state.session")  # the socket was let in with ?token=
            tab.fill("#text-input", tab.text_content("#hint-text") or "request IFR clearance")
            tab.press("#text-input", "Enter")
            tab.wait_for_selector(".entry.atc .text >> text=/cleared to/i")

            # the same call without the key is refused
            assert tab.evaluate("fetch('/api/voices').then((r) => r.status)") == 401
            assert tab.evaluate("import('/js/access.js').then((m) => m.apiFetch('/api/voices')).then((r) => r.status)") == 200
        finally:
            context.close()


def test_briefing_assistant_panel(browser: Browser) -> None:
    """The briefing assistant in the radio page (the module's one Chromium: a second sync
    Playwright in the same thread is refused): a question streams its answer in, the thinking
    folds, the route is drawn on the offline map (SVG), a suggested query asks the follow-up, and
    an airport's runways are drawn from their thresholds."""
    settings = Settings(speech_preload=False, stt_engine="sphinx", tts_engine="espeak")
    with run_server(create_app(settings)) as base:
        context = browser.new_context(viewport={"width": 1360, "height": 900})
        errors: list[str] = []
        try:
            tab = context.new_page()
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.set_default_timeout(TIMEOUT_MS)
            tab.goto(base)
            tab.click("#start-briefing")  # no session needed: the overlay closes, the panel is there
            assert tab.is_hidden("#start")
            tab.fill("#assistant-input", "Find airports between EGTF and LFMD")
            tab.press("#assistant-input", "Enter")
            tab.wait_for_function("window.livefreq.assistant.stats.answers >= 1")
            stats = tab.evaluate("window.livefreq.assistant.stats")
            assert stats["chunks"] > 5 and stats["errors"] == 0, stats  # streamed in pieces
            answer = tab.locator(".a-entry.assistant .a-answer").last.text_content() or ""
            assert "EGTF" in answer and "LFMD" in answer and "nm" in answer, answer
            svg = tab.locator("#assistant-map")
            assert svg.get_attribute("data-kind") == "route_with_markers"
            assert svg.get_attribute("data-route") == "EGTF-LFMD"
            markers = int(svg.get_attribute("data-markers") or 0)
            assert markers >= 5
            assert tab.locator("#assistant-map .marker").count() == markers
            assert tab.locator("#assistant-map line.route").count() == 1
            assert tab.locator("#assistant-map .endpoint").count() == 2
            # the route line joins the two endpoint markers, inside the map
            line = tab.evaluate("""() => { const l = document.querySelector('#assistant-map line.route');
                return ['x1','y1','x2','y2'].map((k) => Number(l.getAttribute(k))); }""")
            assert all(0 <= v <= 640 for v in line) and line[0] < line[2]  # west (EGTF) to east (LFMD)
            # thinking: folded, with the planner's reasoning
            thinking = tab.locator(".a-entry.assistant .a-thinking").last
            assert thinking.get_attribute("open") is None
            thinking.locator("summary").click()
            assert "find_airports_near_route" in (thinking.locator(".a-thinking-text").text_content() or "")

            # a suggested query (a follow-up of the same conversation) gives a new answer
            suggestion = tab.locator("#assistant-suggestions .suggestion", has_text="tower frequency")
            suggestion.click()
            tab.wait_for_function("window.livefreq.assistant.stats.answers >= 2")
            second = tab.locator(".a-entry.assistant .a-answer").last.text_content() or ""
            assert "LFMD" in second and second != answer, second
            assert svg.get_attribute("data-kind") == "marker_with_details"
            assert int(svg.get_attribute("data-runways") or 0) == 2  # Cannes: 17/35 and 04/22
            assert tab.locator('#assistant-map .runway[data-runway="17/35"]').count() == 1
            assert tab.locator("#assistant-map .runway text", has_text="04").count() == 1

            tab.fill("#assistant-input", "airports near Lyon")
            tab.press("#assistant-input", "Enter")
            tab.wait_for_function("window.livefreq.assistant.stats.answers >= 3")
            assert svg.get_attribute("data-kind") == "point_with_markers"
            assert tab.locator("#assistant-map .centre").count() == 1
            tab.screenshot(path=str(REPO_ROOT / "reports" / "browser-assistant.png"))
        finally:
            context.close()
    assert not errors, f"errors in the page: {errors}"
