// What the page remembers: settings and the last start form in localStorage (they outlive the
// tab), the session's id and resume token in sessionStorage (a reload in the same tab resumes,
// another tab starts its own session).

const SETTINGS_KEY = "livefreq.settings";
const FORM_KEY = "livefreq.form";
const SESSION_KEY = "livefreq.session";

// transport: "ws" (WebSocket, PCM frames) or "webrtc" (Opus tracks and a data channel)
export const DEFAULT_SETTINGS = Object.freeze({ mode: "ptt", radioLevel: 4, voice: "", showHints: true, showTrace: false, transport: "ws" });

function read(storage, key, fallback) {
  try {
    const raw = storage.getItem(key);
    return raw ? { ...fallback, ...JSON.parse(raw) } : { ...fallback };
  } catch (_) {
    return { ...fallback }; // storage disabled or corrupt: defaults
  }
}

function write(storage, key, value) {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, JSON.stringify(value));
  } catch (_) {
    /* storage disabled: the page still works, it just forgets */
  }
}

export const loadSettings = () => read(localStorage, SETTINGS_KEY, DEFAULT_SETTINGS);
export const saveSettings = (settings) => write(localStorage, SETTINGS_KEY, settings);
export const loadForm = () => read(localStorage, FORM_KEY, { flow: "", airport: "", callsign: "", seed: "" });
export const saveForm = (form) => write(localStorage, FORM_KEY, form);

/** `{session_id, resume_token}` of the session this tab is flying, or null. */
export function loadSession() {
  const value = read(sessionStorage, SESSION_KEY, {});
  return value.session_id && value.resume_token ? value : null;
}
export const saveSession = (session) => write(sessionStorage, SESSION_KEY, session);
export const clearSession = () => write(sessionStorage, SESSION_KEY, null);
