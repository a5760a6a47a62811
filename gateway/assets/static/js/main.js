// The radio page's controller: wires the start form, the radio connection (WebSocket or WebRTC,
// Settings → Connection), microphone capture, ATC playback and the views together. Everything a test or a curious trainee may want to
// inspect is on `window.livefreq` (stats counters, the current session, the player).

import { apiFetch } from "./access.js";
import { AssistantPanel } from "./assistant.js";
import { RadioConnection } from "./connection.js";
import { WebRtcConnection } from "./webrtc.js";
import { MicCapture, micErrorMessage } from "./capture.js";
import { AtcPlayer } from "./playback.js";
import { BurstDetector, PROTOCOL_RATES, levelDbfs } from "./pcm.js";
import { MessageLog, clock, h, renderReadback, renderTrace, setStationTitles, stationTitle } from "./view.js";
import { clearSession, loadForm, loadSession, loadSettings, saveForm, saveSession, saveSettings } from "./settings.js";

const OUTPUT_RATE = 24000;
const FREQ_RE = /^\d{3}\.\d{1,3}$/;
const $ = (id) => document.getElementById(id);

const stats = {
  messages: 0, // atc.message received
  played: 0, // audio.played sent (message audio finished playing)
  audioFrames: 0, // binary frames received
  transcripts: 0, // transcript events (partial and final)
  finals: 0, // final transcripts
  decisions: 0,
  readbacks: 0, // decisions that carried a readback verdict
  framesSent: 0, // microphone frames sent
  micFrames: 0, // microphone frames captured
  micLevelDb: -100,
  micBursts: 0, // bursts of sound heard by the mic (loud, then quiet)
  errors: [], // error codes received
  reconnects: 0,
};

const state = {
  settings: loadSettings(),
  flows: {}, // slug -> runtime flow view (name, entry_mode, ...)
  mainFlow: null,
  session: null, // the session.started payload, kept current by `state` events
  mode: "ptt", // the running session's mode (settings apply to the next session)
  lastState: null,
  activeFreq: null,
  standbyFreq: "",
  serverFreq: null,
  freqStations: new Map(), // "121.805" -> "ground"
  resuming: false,
  pendingStart: null,
  pttHeld: false,
  micReady: false,
  micError: null,
  lastDecision: null,
  healthReady: null,
  transport: null, // the running session's connection: "ws" or "webrtc"
  rtcReceiving: false, // WebRTC: a controller message is on the track
};

let conn = null;
let audioContext = null;
let player = null;
let mic = null;
const bursts = new BurstDetector();
const log = new MessageLog($("log"), {
  replay: (id) => player && player.replay(id),
  isPlaying: (id) => !!player && player.isPlaying(id),
  canReplay: (id) => !!player && player.canReplay(id),
});

const assistant = new AssistantPanel({
  form: $("assistant-form"), input: $("assistant-input"), log: $("assistant-log"), map: $("assistant-map"),
  mapNote: $("assistant-map-note"), suggestions: $("assistant-suggestions"),
});

window.livefreq = { stats, state, assistant, get player() { return player; }, get connection() { return conn; }, get audioContext() { return audioContext; } };

// ------------------------------------------------------------------ banners

function banner(id, text, { kind = "warn", actions = [], dismiss = false } = {}) {
  const host = $("banners");
  let node = host.querySelector(`[data-banner="${id}"]`);
  if (!text) {
    if (node) node.remove();
    return;
  }
  const body = h(
    `div.banner.${kind}`,
    { dataset: { banner: id }, role: kind === "error" ? "alert" : "status" },
    h("span.banner-text", {}, text),
    actions.map(([label, fn]) => h("button.ghost", { type: "button", onclick: fn }, label)),
    dismiss && h("button.close", { type: "button", "aria-label": "Dismiss", onclick: () => banner(id, null) }, "×"),
  );
  if (node) node.replaceWith(body);
  else host.append(body);
}

function toast(text, kind = "error", ms = 9000) {
  const id = `toast-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;
  banner(id, text, { kind, dismiss: true });
  setTimeout(() => banner(id, null), ms);
}

// ------------------------------------------------------------------ audio

/** The one AudioContext (capture and playback), at a rate protocol v1 accepts. */
function ensureAudio() {
  if (!audioContext) {
    let ctx = new AudioContext({ latencyHint: "interactive" });
    if (!PROTOCOL_RATES.includes(ctx.sampleRate)) {
      ctx.close();
      ctx = new AudioContext({ latencyHint: "interactive", sampleRate: 48000 });
    }
    audioContext = ctx;
    player = new AtcPlayer(ctx, { onPlayed: audioPlayed, onChange: () => log.refreshAudio() });
    ctx.onstatechange = audioStateChanged;
  }
  if (audioContext.state === "suspended") audioContext.resume().catch(() => {});
  audioStateChanged();
  return audioContext;
}

function audioStateChanged() {
  if (!audioContext || audioContext.state !== "suspended" || !state.session) {
    banner("audio", null);
    return;
  }
  banner("audio", "The browser paused the radio's audio. Click anywhere or press a key to turn it back on.", {
    kind: "info",
    actions: [["Turn audio on", () => audioContext.resume()]],
  });
}

function audioPlayed(messageId) {
  stats.played += 1;
  if (conn) conn.send({ type: "audio.played", message_id: messageId });
}

async function startMic() {
  if (mic || state.micError) return state.micReady;
  const ctx = ensureAudio();
  const capture = new MicCapture(ctx, onMicFrame);
  try {
    await capture.start();
    mic = capture;
    state.micReady = true;
    banner("mic", null);
    if (conn && conn.setMicrophone) conn.setMicrophone(micTrack());
  } catch (error) {
    state.micError = error;
    state.micReady = false;
    banner("mic", micErrorMessage(error), { kind: "error", dismiss: true });
  }
  renderRadio();
  return state.micReady;
}

function onMicFrame(buffer, samples) {
  stats.micFrames += 1;
  const level = levelDbfs(samples);
  stats.micLevelDb = level;
  bursts.push(level, 20);
  stats.micBursts = bursts.bursts;
  const transmitting = state.mode === "vox" || state.pttHeld;
  if (transmitting && state.session && !state.resuming && conn && conn.sendAudio(buffer)) stats.framesSent += 1;
}

// ------------------------------------------------------------------ connection

/** The microphone's track (WebRTC sends it as is; the capture worklet still meters it). */
function micTrack() {
  return (mic && mic.stream && mic.stream.getAudioTracks()[0]) || null;
}

function connect() {
  if (conn) conn.close();
  const webrtc = state.settings.transport === "webrtc";
  const current = webrtc ? new WebRtcConnection() : new RadioConnection();
  state.transport = webrtc ? "webrtc" : "ws";
  conn = current;
  if (webrtc) {
    current.setMicrophone(micTrack());
    current.setTransmitting(state.mode === "vox");
    current.addEventListener("track", (e) => {
      if (current !== conn) return;
      const out = $("rtc-audio");
      out.srcObject = e.detail;
      out.play().catch(() => {}); // started within the Start click; a reload needs a click (the audio banner)
    });
  }
  // A replaced connection may still deliver a frame or two while it closes: ignore them.
  current.addEventListener("status", (e) => current === conn && connectionStatus(e.detail));
  current.addEventListener("message", (e) => current === conn && onMessage(e.detail));
  current.addEventListener("audio", (e) => {
    if (current !== conn) return;
    stats.audioFrames += 1;
    if (player) player.push(e.detail);
  });
  current.open();
}

let wasOpen = false;

function connectionStatus(status) {
  const pill = $("net");
  if (status.state === "open") {
    pill.textContent = "on air";
    pill.className = "pill ok";
    banner("net", null);
    if (wasOpen) stats.reconnects += 1;
    wasOpen = true;
    const stored = loadSession();
    if (state.pendingStart) {
      conn.send(state.pendingStart);
      state.pendingStart = null;
    } else if (stored) {
      state.resuming = true;
      const ctx = ensureAudio();
      conn.send({
        type: "session.resume",
        session_id: stored.session_id,
        resume_token: stored.resume_token,
        mode: state.mode,
        radio_level: Number(state.sessionLevel || state.startedLevel || state.settings.radioLevel),
        ...(stored.voice ? { voice: stored.voice } : {}),
        input_audio: { format: "pcm_s16le", sample_rate: ctx.sampleRate, channels: 1 },
        output_audio: { format: "pcm_s16le", sample_rate: OUTPUT_RATE, channels: 1 },
      });
    }
  } else if (status.state === "connecting") {
    pill.textContent = status.attempt ? "reconnecting…" : "connecting…";
    pill.className = "pill warn";
  } else if (status.state === "waiting") {
    releasePtt(false);
    if (player) player.reset();
    log.dropLive();
    pill.textContent = "offline";
    pill.className = "pill bad";
    const what = state.session ? "Connection to the gateway lost" : "Cannot reach the gateway";
    banner("net", `${what} — reconnecting in ${Math.round(status.retryInS)} s (attempt ${status.attempt}). Your session resumes where it left off.`, {
      kind: "error",
      actions: [["Retry now", () => conn.retryNow()]],
    });
  } else {
    pill.textContent = "offline";
    pill.className = "pill bad";
  }
  renderRadio();
}

function onMessage(msg) {
  switch (msg.type) {
    case "session.started":
      return sessionStarted(msg);
    case "state":
      return stateChanged(msg);
    case "transcript":
      stats.transcripts += 1;
      if (msg.final) stats.finals += 1;
      log.transcript(msg.transmission_id, msg.text, msg.final);
      return;
    case "decision":
      return decided(msg);
    case "atc.message":
      stats.messages += 1;
      ensureAudio();
      player.begin(msg); // over WebRTC the audio plays from the track; the player keeps the record
      state.rtcReceiving = state.transport === "webrtc";
      if (msg.frequency && msg.station && !state.freqStations.has(msg.frequency)) state.freqStations.set(msg.frequency, msg.station);
      log.atcMessage(msg, stationLabel(msg.station, msg.frequency));
      return;
    case "atc.message.end":
      state.rtcReceiving = false;
      if (player) player.end(msg.message_id, !!msg.interrupted);
      log.atcEnded(msg.message_id, !!msg.interrupted);
      return;
    case "vad":
      state.vadSpeaking = !!msg.speaking;
      if (msg.speaking) log.keyed();
      renderRadio();
      return;
    case "error":
      return serverError(msg);
    default:
      return; // pong and future message types
  }
}

function sessionStarted(msg) {
  const resumed = msg.resumed ?? (state.resuming || (!!state.session && state.session.session_id === msg.session_id));
  state.resuming = false;
  state.session = { ...msg };
  const stored = loadSession();
  state.mode = msg.mode || state.startedMode || (stored && stored.mode) || state.settings.mode;
  state.sessionLevel = msg.radio_level || state.startedLevel || (stored && stored.radio_level) || state.settings.radioLevel;
  saveSession({ session_id: msg.session_id, resume_token: msg.resume_token, mode: state.mode, radio_level: state.sessionLevel, voice: msg.voice });
  state.freqStations = stationFrequencies(msg.scenario || {});
  setStationTitles(msg.station_titles);
  if (!resumed || !state.activeFreq) {
    state.activeFreq = msg.frequency || null;
    state.standbyFreq = "";
  }
  state.serverFreq = msg.frequency || null;
  stateChanged({ flow: msg.flow, state: msg.state, phase: msg.phase, frequency: msg.frequency, expected_pilot: msg.expected_pilot || [] });
  hideStart();
  if (state.calling) state.calling.remove();
  state.calling = null;
  const s = msg.scenario || {};
  $("session-label").textContent = [s.callsign, s.airport && s.destination ? `${s.airport} → ${s.destination}` : s.airport].filter(Boolean).join(" · ");
  if (resumed) {
    log.system(`Session resumed — ${flowName(msg.flow)}.`);
    if (log.empty) loadHistory(msg.session_id);
  }
  else log.system(`${flowName(msg.flow)} · ${s.airport_name || s.airport || ""} · ${s.callsign || ""}${s.callsign_spoken ? ` (“${s.callsign_spoken}”)` : ""}. You are on ${stationLabel(msg.station, msg.frequency) || "the frequency"} ${msg.frequency || ""} — make your call.`);
  audioStateChanged();
  applySettings();
  renderRadio();
}

/** After a reload the log is empty: fill it with what was said so far in this session. */
async function loadHistory(sessionId) {
  try {
    const response = await apiFetch(`/api/radio/sessions/${encodeURIComponent(sessionId)}/transcript`);
    if (!response.ok) return;
    const data = await response.json();
    const last = log.history(data.entries || [], stationLabel);
    if (last) showLastReadback(last.readback, last.at);
  } catch (_) {
    /* the log just starts empty */
  }
}

function showLastReadback(readback, at = new Date()) {
  $("last-readback").replaceChildren(h("div.panel-head", {}, h("h2", {}, "Last readback"), h("time", {}, clock(at))), renderReadback(readback));
  $("last-readback").hidden = false;
}

function stateChanged(msg) {
  if (msg.completed && !(state.lastState && state.lastState.completed)) {
    log.system("Scenario complete — well flown. Start a new session for the next one.", "done");
  }
  state.lastState = { ...state.lastState, ...msg };
  if (state.session) Object.assign(state.session, { state: msg.state, flow: msg.flow, phase: msg.phase });
  if (msg.frequency) {
    state.serverFreq = msg.frequency;
    if (!state.activeFreq) state.activeFreq = msg.frequency;
    else if (msg.frequency !== state.activeFreq && msg.frequency !== normalizeFreq(state.standbyFreq)) {
      state.standbyFreq = msg.frequency; // a handoff: preset the standby, the pilot swaps
      log.system(`Handoff: ${stationLabel(null, msg.frequency) || "the next station"} ${msg.frequency} is on standby — press ⇄ to change frequency.`);
    }
  }
  renderState();
  renderRadio();
}

function decided(msg) {
  stats.decisions += 1;
  state.lastDecision = msg;
  if (msg.readback) {
    stats.readbacks += 1;
    log.readback(msg.transmission_id, msg.readback);
    showLastReadback(msg.readback);
  }
  $("trace-body").replaceChildren(renderTrace(msg));
}

function serverError(msg) {
  stats.errors.push(msg.code);
  if (state.resuming) {
    state.resuming = false;
    state.session = null;
    clearSession();
    showStart(`The previous session could not be resumed (${msg.message || msg.code}). Start a new one.`);
    return;
  }
  const text = `Gateway: ${msg.message || "error"} (${msg.code || "error"})`;
  if (msg.fatal) banner("fatal", `The gateway ended this connection: ${text}`, { kind: "error", dismiss: true });
  else toast(text);
}

// ------------------------------------------------------------------ frequencies

function stationFrequencies(scenario) {
  const map = new Map();
  for (const [key, value] of Object.entries(scenario)) {
    const m = /^(.*)_freq$/.exec(key);
    if (m && value && !map.has(String(value))) map.set(String(value), m[1]);
  }
  return map;
}

function stationLabel(station, frequency) {
  const s = (state.session && state.session.scenario) || {};
  const byFreq = frequency ? state.freqStations.get(frequency) : null; // e.g. "dest_tower"
  const key = byFreq && (!station || byFreq.endsWith(station)) ? byFreq : station || byFreq;
  if (!key) return frequency ? "Unassigned" : "";
  const place = String(key).startsWith("dest_") ? s.destination_name || s.destination : s.airport_name || s.airport;
  return [place, stationTitle(key)].filter(Boolean).join(" ");
}

function normalizeFreq(text) {
  const t = String(text || "").trim().replace(",", ".");
  if (!FREQ_RE.test(t)) return null;
  return Number(t).toFixed(3);
}

function swapFrequencies() {
  const standby = normalizeFreq($("freq-standby").value);
  if (!standby) {
    $("freq-standby").classList.add("invalid");
    return;
  }
  const previous = state.activeFreq || "";
  state.activeFreq = standby;
  state.standbyFreq = previous;
  if (conn && state.session) conn.send({ type: "tune", frequency: standby });
  renderRadio();
}

// ------------------------------------------------------------------ push to talk

function pressPtt() {
  if (state.pttHeld || !state.session || state.mode !== "ptt") return;
  if (!state.micReady) {
    toast(state.micError ? micErrorMessage(state.micError) : "The microphone is not ready yet.", "warn", 5000);
    return;
  }
  if (!conn || !conn.isOpen) return;
  if (audioContext && audioContext.state === "suspended") audioContext.resume();
  state.pttHeld = true;
  if (conn.setTransmitting) conn.setTransmitting(true);
  conn.send({ type: "ptt.down" });
  log.keyed();
  renderRadio();
}

function releasePtt(send = true) {
  if (!state.pttHeld) return;
  state.pttHeld = false;
  if (send && conn) conn.send({ type: "ptt.up" });
  if (conn && conn.setTransmitting && state.mode !== "vox") conn.setTransmitting(false);
  log.unkeyed();
  renderRadio();
}

function isTyping(target) {
  return target && (target.closest("input, textarea, select, [contenteditable]") !== null);
}

function bindPtt() {
  const button = $("ptt");
  button.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    button.setPointerCapture(e.pointerId);
    pressPtt();
  });
  for (const type of ["pointerup", "pointercancel", "lostpointercapture"]) button.addEventListener(type, () => releasePtt());
  button.addEventListener("contextmenu", (e) => e.preventDefault());
  button.addEventListener("keydown", (e) => {
    if (e.code === "Enter") e.preventDefault();
  });
  window.addEventListener("keydown", (e) => {
    if (e.code !== "Space" || isTyping(e.target) || !state.session || !$("start").hidden) return;
    e.preventDefault();
    if (!e.repeat) pressPtt();
  });
  window.addEventListener("keyup", (e) => {
    if (e.code !== "Space" || !state.pttHeld) return;
    e.preventDefault();
    releasePtt();
  });
  window.addEventListener("blur", () => releasePtt());
  document.addEventListener("visibilitychange", () => document.hidden && releasePtt());
}

// ------------------------------------------------------------------ rendering

function flowName(slug) {
  return (state.flows[slug] && state.flows[slug].name) || slug || "";
}

function renderRadio() {
  const active = state.activeFreq;
  $("freq-active").textContent = active || "---.---";
  $("station-active").textContent = active ? stationLabel(null, active) : "";
  const standbyInput = $("freq-standby");
  if (document.activeElement !== standbyInput) standbyInput.value = state.standbyFreq || "";
  standbyInput.classList.remove("invalid");
  const stby = normalizeFreq(standbyInput.value);
  $("station-standby").textContent = stby ? stationLabel(null, stby) : "";
  const contact = !!(state.serverFreq && active && state.serverFreq !== active && stby === state.serverFreq);
  $("swap").classList.toggle("attention", contact);
  $("radio").classList.toggle("handoff", contact);
  $("swap").disabled = !state.session;

  const ptt = $("ptt");
  const vox = state.mode === "vox";
  ptt.disabled = !state.session || vox || !conn || !conn.isOpen;
  ptt.classList.toggle("held", state.pttHeld);
  ptt.classList.toggle("no-mic", !!state.micError);
  ptt.querySelector(".ptt-main").textContent = vox ? "VOX" : state.pttHeld ? "TRANSMITTING" : "PUSH TO TALK";
  ptt.querySelector(".ptt-sub").textContent = vox
    ? "voice activated — just talk"
    : state.micError
      ? "no microphone — type below"
      : "hold the button — or hold SPACE";
  $("meter").classList.toggle("off", !state.micReady);
  $("mic-state").textContent = state.micError ? "none" : state.micReady ? (vox ? "vox" : state.pttHeld ? "live" : "ready") : "off";
}

function renderState() {
  const st = state.lastState || {};
  $("st-flow").textContent = flowName(st.flow) || "—";
  $("st-phase").textContent = st.phase || "—";
  $("st-state").textContent = st.state || "—";
  const expected = st.expected_pilot || [];
  const hint = $("hint");
  hint.hidden = !state.settings.showHints || !state.session;
  $("hint-text").textContent = expected.length ? expected[0] : "Listen — the controller will call you.";
  hint.classList.toggle("listen", !expected.length);
  $("hint-alt").replaceChildren(...expected.slice(1).map((t) => h("li", {}, t)));
}

function applySettings() {
  const s = state.settings;
  for (const input of document.querySelectorAll('input[name="mode"], input[name="set-mode"]')) input.checked = input.value === s.mode;
  for (const input of document.querySelectorAll('input[name="transport"], input[name="set-transport"]')) input.checked = input.value === s.transport;
  for (const id of ["radio-level", "set-radio-level"]) $(id).value = s.radioLevel;
  for (const id of ["radio-level-out", "set-radio-level-out"]) $(id).textContent = levelName(s.radioLevel);
  $("set-hints").checked = s.showHints;
  $("set-trace").checked = s.showTrace;
  $("trace").hidden = !s.showTrace;
  const pending =
    !!state.session && (s.mode !== state.mode || Number(s.radioLevel) !== Number(state.sessionLevel) || s.transport !== state.transport);
  $("settings-note").hidden = !pending;
  renderState();
}

function levelName(level) {
  return ["", "1 · barely readable", "2 · readable now and then", "3 · readable with difficulty", "4 · readable", "5 · perfectly readable"][Number(level)] || String(level);
}

function updateSettings(patch) {
  state.settings = { ...state.settings, ...patch };
  saveSettings(state.settings);
  applySettings();
}

let meterPeak = 0;
function animate() {
  const level = state.micReady ? stats.micLevelDb : -100;
  const pct = Math.max(0, Math.min(100, ((level + 60) / 60) * 100));
  meterPeak = Math.max(pct, meterPeak - 1.2);
  $("meter-fill").style.width = `${pct}%`;
  $("meter-peak").style.left = `${meterPeak}%`;
  const tx = state.pttHeld || (state.mode === "vox" && state.vadSpeaking);
  const rx = (!!player && player.receiving) || state.rtcReceiving;
  $("led-tx").classList.toggle("on", tx);
  $("led-rx").classList.toggle("on", rx);
  $("radio").classList.toggle("tx", tx);
  $("radio").classList.toggle("rx", rx);
  requestAnimationFrame(animate);
}

// ------------------------------------------------------------------ start form

function showStart(message = "") {
  $("start").hidden = false;
  $("start-message").textContent = message;
  $("start-message").hidden = !message;
  $("start-close").hidden = !state.session;
}

function hideStart() {
  $("start").hidden = true;
}

/** The controller voices the gateway offers (GET /api/voices); the remembered one is preselected. */
async function loadVoices() {
  const select = $("voice");
  try {
    const response = await apiFetch("/api/voices");
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const data = await response.json();
    select.replaceChildren(...data.voices.map((v) => h("option", { value: v.id }, v.label)));
    const remembered = state.settings.voice;
    select.value = data.voices.some((v) => v.id === remembered) ? remembered : data.default;
  } catch (error) {
    select.replaceChildren(h("option", { value: "" }, "default"));
  }
}

async function loadFlows() {
  const select = $("flow");
  try {
    const response = await apiFetch("/api/decision-flows/runtime");
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const data = await response.json();
    state.flows = data.flows || {};
    state.mainFlow = data.main_flow;
  } catch (error) {
    select.replaceChildren(h("option", { value: "" }, "(server default flow)"));
    $("flow-desc").textContent = `Could not load the flow list (${error.message}); the server's default flow will be used.`;
    return;
  }
  const flows = Object.values(state.flows);
  const main = flows.filter((f) => f.entry_mode === "main").sort((a, b) => (a.slug === state.mainFlow ? -1 : b.slug === state.mainFlow ? 1 : a.name.localeCompare(b.name)));
  const other = flows.filter((f) => f.entry_mode !== "main").sort((a, b) => a.name.localeCompare(b.name));
  const option = (f) => h("option", { value: f.slug }, f.name);
  select.replaceChildren(
    h("optgroup", { label: "Scenarios" }, main.map(option)),
    other.length ? h("optgroup", { label: "Drills" }, other.map(option)) : null,
  );
  const remembered = loadForm().flow;
  select.value = state.flows[remembered] ? remembered : state.mainFlow || (main[0] && main[0].slug) || "";
  describeFlow();
  renderState();
}

function describeFlow() {
  const flow = state.flows[$("flow").value];
  $("flow-desc").textContent = flow ? flow.description || "" : "";
}

let airportLookup = 0;
async function lookupAirport() {
  const icao = $("airport").value.trim().toUpperCase();
  const out = $("airport-name");
  out.className = "field-note";
  if (!icao) {
    out.textContent = "Empty: the flow's default airport.";
    return;
  }
  if (!/^[A-Z0-9]{3,4}$/.test(icao)) {
    out.textContent = "An ICAO code has four letters, e.g. EDDF.";
    out.classList.add("bad");
    return;
  }
  const ticket = ++airportLookup;
  try {
    const response = await apiFetch(`/api/airports/${encodeURIComponent(icao)}`);
    if (ticket !== airportLookup) return;
    if (!response.ok) {
      out.textContent = `${icao} is not in the airport database.`;
      out.classList.add("bad");
      return;
    }
    const airport = await response.json();
    out.textContent = [airport.name, airport.city, airport.country].filter(Boolean).join(" · ");
    out.classList.add("ok");
  } catch (_) {
    out.textContent = "";
  }
}

function startSession(event) {
  event.preventDefault();
  const form = {
    flow: $("flow").value,
    airport: $("airport").value.trim().toUpperCase(),
    callsign: $("callsign").value.trim().toUpperCase().replace(/\s+/g, ""),
    seed: $("seed").value.trim(),
  };
  saveForm(form);
  const mode = document.querySelector('input[name="mode"]:checked').value;
  const radioLevel = Number($("radio-level").value);
  const voice = $("voice").value;
  updateSettings({ mode, radioLevel, voice });
  const ctx = ensureAudio(); // inside the click: the browser lets audio start
  const scenario = {};
  if (form.airport) scenario.airport = form.airport;
  if (form.callsign) scenario.callsign = form.callsign;
  const message = {
    type: "session.start",
    mode,
    radio_level: radioLevel,
    input_audio: { format: "pcm_s16le", sample_rate: ctx.sampleRate, channels: 1 },
    output_audio: { format: "pcm_s16le", sample_rate: OUTPUT_RATE, channels: 1 },
  };
  if (form.flow) message.flow = form.flow;
  if (voice) message.voice = voice;
  if (Object.keys(scenario).length) message.scenario = scenario;
  if (form.seed !== "" && Number.isInteger(Number(form.seed))) message.seed = Number(form.seed);
  state.startedMode = mode;
  state.startedLevel = radioLevel;
  state.mode = mode;
  state.session = null;
  state.activeFreq = null;
  state.standbyFreq = "";
  state.serverFreq = null;
  state.lastState = null;
  clearSession();
  log.clear();
  if (player) player.reset();
  $("last-readback").hidden = true;
  $("trace-body").textContent = "No decision yet.";
  state.calling = log.system("Calling the gateway…");
  state.micError = null; // a new session tries the microphone again
  const micStarting = startMic();
  // A fresh connection per session: the old session (if any) is left to expire on the server.
  state.pendingStart = message;
  wasOpen = false;
  // WebRTC offers the microphone's track, and a browser shows its real addresses (not mDNS
  // names) only once the microphone is allowed: wait for it (it fails at once when denied).
  if (state.settings.transport === "webrtc") micStarting.finally(connect);
  else connect();
  hideStart();
  renderState();
  renderRadio();
}

// ------------------------------------------------------------------ health

async function pollHealth() {
  const pill = $("engines");
  let delay = 2000;
  try {
    const response = await fetch("/health", { cache: "no-store" });
    const health = await response.json();
    state.healthReady = !!health.ready;
    if (health.ready) {
      pill.textContent = "speech ready";
      pill.className = "pill ok";
      banner("engines", null);
      delay = 30000;
    } else {
      pill.textContent = "speech loading…";
      pill.className = "pill warn";
      banner("engines", "The speech engines are still loading (a few seconds after the gateway starts). You can start a session and type; voice follows as soon as they are ready.", { kind: "info" });
    }
  } catch (_) {
    pill.textContent = "gateway unreachable";
    pill.className = "pill bad";
    delay = 5000;
  }
  setTimeout(pollHealth, delay);
}

// ------------------------------------------------------------------ wiring

function bind() {
  bindPtt();
  $("start-form").addEventListener("submit", startSession);
  $("flow").addEventListener("change", describeFlow);
  $("airport").addEventListener("input", () => {
    clearTimeout(bind.airportTimer);
    bind.airportTimer = setTimeout(lookupAirport, 350);
  });
  $("dice").addEventListener("click", () => {
    $("seed").value = String(Math.floor(Math.random() * 100000));
  });
  $("random-seed").addEventListener("click", () => {
    $("seed").value = "";
  });
  $("new-session").addEventListener("click", () => showStart());
  $("start-close").addEventListener("click", hideStart);
  const openAssistant = () => {
    hideStart();
    $("assistant").scrollIntoView({ behavior: "smooth", block: "start" });
    $("assistant-input").focus({ preventScroll: true });
  };
  $("start-briefing").addEventListener("click", openAssistant);
  $("open-assistant").addEventListener("click", openAssistant);
  $("swap").addEventListener("click", swapFrequencies);
  $("freq-standby").addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      swapFrequencies();
    }
  });
  $("freq-standby").addEventListener("input", () => {
    state.standbyFreq = $("freq-standby").value;
    const stby = normalizeFreq(state.standbyFreq);
    $("station-standby").textContent = stby ? stationLabel(null, stby) : "";
  });
  $("text-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $("text-input");
    const text = input.value.trim();
    if (!text) return;
    if (!state.session) return toast("Start a session first.", "warn", 4000);
    if (!conn || !conn.isOpen) return toast("Not connected to the gateway — the message was not sent.", "warn", 5000);
    conn.send({ type: "text", text });
    log.typedText(text);
    input.value = "";
  });
  for (const input of document.querySelectorAll('input[name="set-mode"]')) input.addEventListener("change", () => updateSettings({ mode: input.value }));
  for (const input of document.querySelectorAll('input[name="transport"], input[name="set-transport"]')) input.addEventListener("change", () => updateSettings({ transport: input.value }));
  for (const input of document.querySelectorAll('input[name="mode"]')) input.addEventListener("change", () => updateSettings({ mode: input.value }));
  $("set-radio-level").addEventListener("input", (e) => updateSettings({ radioLevel: Number(e.target.value) }));
  $("radio-level").addEventListener("input", (e) => updateSettings({ radioLevel: Number(e.target.value) }));
  $("set-hints").addEventListener("change", (e) => updateSettings({ showHints: e.target.checked }));
  $("set-trace").addEventListener("change", (e) => updateSettings({ showTrace: e.target.checked }));
  // Audio may only start after a user gesture; the first one after a reload turns it on.
  const unlock = () => audioContext && audioContext.state === "suspended" && audioContext.resume();
  window.addEventListener("pointerdown", unlock);
  window.addEventListener("keydown", unlock);
}

function init() {
  bind();
  applySettings();
  const form = loadForm();
  $("airport").value = form.airport || "";
  $("callsign").value = form.callsign || "";
  $("seed").value = form.seed || "";
  lookupAirport();
  loadFlows();
  loadVoices();
  pollHealth();
  renderRadio();
  requestAnimationFrame(animate);
  if (loadSession()) {
    // A reload: reattach to the session this tab was flying.
    hideStart();
    state.calling = log.system("Reconnecting to your session…");
    const stored = loadSession();
    state.mode = stored.mode || state.settings.mode;
    state.startedMode = stored.mode;
    state.startedLevel = stored.radio_level;
    ensureAudio();
    const micStarting = startMic();
    if (state.settings.transport === "webrtc") micStarting.finally(connect);
    else connect();
  } else {
    showStart();
  }
}

init();
