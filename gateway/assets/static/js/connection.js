// The WebSocket to `/v1/radio`: JSON text frames both ways, PCM16 binary frames both ways.
// It reconnects by itself with a growing delay after the socket drops; the page re-attaches its
// session (`session.resume`) in its `open` handler, so a reload or a network blip loses nothing.

import { withToken } from "./access.js";

const BACKOFF_S = [0.5, 1, 2, 4, 8, 15];
const PING_EVERY_MS = 20000;

/** ws:// or wss:// URL of the radio endpoint on the page's own host (with the API key, if any). */
export function radioUrl(loc = window.location) {
  const scheme = loc.protocol === "https:" ? "wss:" : "ws:";
  return withToken(`${scheme}//${loc.host}/v1/radio`);
}

/**
 * What every radio connection does when it drops: try again after a growing, jittered delay
 * until `close()`, telling the page by `status` events. Subclasses implement `connect()`.
 */
export class Reconnecting extends EventTarget {
  constructor() {
    super();
    this.attempt = 0;
    this.wanted = false;
    this.retryTimer = null;
  }

  /** The connection dropped: `status` waiting, and `connect()` again after the backoff. */
  retryLater(detail = {}) {
    const delay = BACKOFF_S[Math.min(this.attempt, BACKOFF_S.length - 1)];
    this.attempt += 1;
    this.emit("status", { state: "waiting", attempt: this.attempt, retryInS: delay, ...detail });
    this.retryTimer = setTimeout(() => this.connect(), delay * 1000 * (0.85 + Math.random() * 0.3));
  }

  /** Reconnect now instead of waiting for the backoff timer. */
  retryNow() {
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.connect();
    }
  }

  emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
}

/**
 * Events (all `CustomEvent`): `status` {state: "connecting"|"open"|"waiting"|"closed", attempt,
 * retryInS}, `message` {the parsed JSON}, `audio` {ArrayBuffer}.
 */
export class RadioConnection extends Reconnecting {
  constructor(url = radioUrl()) {
    super();
    this.kind = "ws";
    this.url = url;
    this.socket = null;
    this.pingTimer = null;
  }

  get isOpen() {
    return !!this.socket && this.socket.readyState === WebSocket.OPEN;
  }

  /** Connects, and keeps reconnecting until `close()`. */
  open() {
    this.wanted = true;
    if (this.socket || this.retryTimer) return;
    this.connect();
  }

  connect() {
    this.retryTimer = null;
    this.emit("status", { state: "connecting", attempt: this.attempt });
    const socket = new WebSocket(this.url);
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    socket.onopen = () => {
      this.attempt = 0;
      this.pingTimer = setInterval(() => this.send({ type: "ping" }), PING_EVERY_MS);
      this.emit("status", { state: "open", attempt: 0 });
    };
    socket.onmessage = (event) => {
      if (typeof event.data === "string") {
        let message;
        try {
          message = JSON.parse(event.data);
        } catch (_) {
          return; // the server only sends JSON text; ignore anything else
        }
        this.emit("message", message);
      } else {
        this.emit("audio", event.data);
      }
    };
    socket.onclose = (event) => {
      clearInterval(this.pingTimer);
      if (this.socket === socket) this.socket = null;
      if (!this.wanted) {
        this.emit("status", { state: "closed", code: event.code });
        return;
      }
      this.retryLater({ code: event.code });
    };
  }

  /** Sends a JSON message; false when the socket is not open (the message is dropped). */
  send(message) {
    if (!this.isOpen) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  sendAudio(buffer) {
    if (!this.isOpen) return false;
    this.socket.send(buffer);
    return true;
  }

  /** Closes for good (no reconnect). */
  close() {
    this.wanted = false;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.socket) this.socket.close(1000, "client closed");
  }
}
