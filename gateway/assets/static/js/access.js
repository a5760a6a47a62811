// Access to a gateway that requires authentication (docs/operations.md "Security"). Open the radio page as
// http://host:8765/#key=API_KEY once: the key is kept in this browser (localStorage), taken out of
// the address bar, and sent as `Authorization: Bearer` on API calls and as `?token=` on the radio
// socket (browsers cannot set headers on a WebSocket). Without a key nothing is added: the default
// local gateway needs none.

const STORE = "livefreq.key";

/** The API key given in the page's `#key=` fragment (remembered), or the one remembered before. */
export function accessKey(loc = window.location, storage = window.localStorage) {
  const match = /(?:^|[#&])key=([^&]+)/.exec(loc.hash);
  if (match) {
    const key = decodeURIComponent(match[1]);
    storage.setItem(STORE, key);
    history.replaceState(null, "", loc.pathname + loc.search);
    return key;
  }
  return storage.getItem(STORE);
}

/** `fetch` with the key, when there is one. */
export function apiFetch(path, options = {}) {
  const key = accessKey();
  const headers = { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(options.headers || {}) };
  return fetch(path, { ...options, headers });
}

/** A WebSocket URL with the key as `?token=`, when there is one. */
export function withToken(url) {
  const key = accessKey();
  return key ? `${url}?token=${encodeURIComponent(key)}` : url;
}
