// The radio over WebRTC: the same events as RadioConnection (connection.js), so the page does not
// care which one it has (Settings → Connection). The microphone and the controller's voice travel
// as Opus tracks, protocol v1's JSON on a data channel; signalling is `POST /v1/webrtc/offer`
// (docs/protocol-v1.md, "WebRTC"). Candidates are trickled to `/v1/webrtc/{peer_id}/candidates`
// as the browser finds them, so connecting does not wait for ICE gathering.
//
// What a WebRTC client owes the gateway: a ping on the data channel every few seconds (a silent
// peer is closed after 15 s), the reassembly of `fragment` messages, and a close when it leaves.
// The controller's track is continuous (silence between messages), so it simply plays; its
// `atc.message.end` arrives once the message's audio has left the gateway.

import { apiFetch } from "./access.js";
import { Reconnecting } from "./connection.js";

const PING_EVERY_MS = 5000;
const RELEASE_TAIL_MS = 200; // the mic stays on this long after ptt.up: the last words are in flight
const MAX_CANDIDATES = 16; // per request (gateway/webrtc/signaling.py)

/** Joins `fragment` messages (gateway/webrtc/fragments.py); whole messages pass through. */
export class Reassembler {
  constructor() {
    this.reset();
  }
  reset() {
    this.id = null;
    this.pieces = [];
    this.count = 0;
  }
  /** A text message in, the whole JSON text out (null while a fragmented one is incomplete). */
  feed(text) {
    if (!text.startsWith('{"type":"fragment"')) return text;
    const part = JSON.parse(text);
    if (part.index === 0) {
      this.id = part.id;
      this.pieces = [];
      this.count = part.count;
    }
    if (part.id !== this.id || part.index !== this.pieces.length || part.count !== this.count) {
      this.reset();
      throw new Error(`fragment ${part.id}/${part.index} out of order`);
    }
    this.pieces.push(part.data);
    if (this.pieces.length < this.count) return null;
    const whole = this.pieces.join("");
    this.reset();
    return whole;
  }
}

/**
 * Events (all `CustomEvent`): `status` {state: "connecting"|"open"|"waiting"|"closed", attempt,
 * retryInS}, `message` {the parsed JSON}, `track` {MediaStream of the controller's voice}.
 */
export class WebRtcConnection extends Reconnecting {
  constructor() {
    super();
    this.kind = "webrtc";
    this.pc = null;
    this.channel = null;
    this.peerId = null;
    this.micTrack = null; // the page's microphone (a clone: its own enabled flag)
    this.transmitting = false;
    this.pingTimer = null;
    this.releaseTimer = null;
    this.fragments = 0;
  }

  get isOpen() {
    return !!this.channel && this.channel.readyState === "open";
  }

  /** The microphone track to send (from getUserMedia); may come before or after `open()`. */
  setMicrophone(track) {
    this.micTrack = track ? track.clone() : null;
    this.applyTransmitting();
    const sender = this.pc && this.pc.getSenders().find((s) => !s.track || s.track.kind === "audio");
    if (sender) sender.replaceTrack(this.micTrack);
  }

  /** Push-to-talk on the track: sound leaves only while keyed (or always, in vox mode). */
  setTransmitting(on) {
    clearTimeout(this.releaseTimer);
    if (on) {
      this.transmitting = true;
      this.applyTransmitting();
    } else {
      this.releaseTimer = setTimeout(() => {
        this.transmitting = false;
        this.applyTransmitting();
      }, RELEASE_TAIL_MS);
    }
  }

  applyTransmitting() {
    if (this.micTrack) this.micTrack.enabled = this.transmitting;
  }

  open() {
    this.wanted = true;
    if (this.pc || this.retryTimer) return;
    this.connect();
  }

  async connect() {
    this.retryTimer = null;
    this.emit("status", { state: "connecting", attempt: this.attempt });
    const pc = new RTCPeerConnection({ iceServers: this.iceServers || [] });
    this.pc = pc;
    this.peerId = null;
    const reassembler = new Reassembler();
    const channel = pc.createDataChannel("livefreq");
    this.channel = channel;
    pc.addTransceiver(this.micTrack || "audio", { direction: "sendrecv" });
    pc.ontrack = (event) => {
      if (this.pc !== pc) return;
      this.emit("track", event.streams[0] || new MediaStream([event.track]));
    };
    const pending = [];
    let gathered = false;
    pc.onicecandidate = (event) => {
      if (event.candidate) pending.push(event.candidate.toJSON());
      else gathered = true;
      if (this.peerId && this.pc === pc) this.trickle(pending.splice(0), gathered);
    };
    channel.onopen = () => {
      if (this.pc !== pc) return;
      this.attempt = 0;
      this.pingTimer = setInterval(() => this.send({ type: "ping" }), PING_EVERY_MS);
      this.emit("status", { state: "open", attempt: 0 });
    };
    channel.onmessage = (event) => {
      if (this.pc !== pc || typeof event.data !== "string") return;
      let text;
      try {
        if (event.data.startsWith('{"type":"fragment"')) this.fragments += 1;
        text = reassembler.feed(event.data);
      } catch (_) {
        return;
      }
      if (text !== null) this.emit("message", JSON.parse(text));
    };
    channel.onclose = () => this.lost(pc);
    pc.onconnectionstatechange = () => {
      if (pc.connectionState === "failed" || pc.connectionState === "closed") this.lost(pc);
    };
    try {
      await pc.setLocalDescription(await pc.createOffer());
      const response = await apiFetch("/v1/webrtc/offer", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ type: "offer", sdp: pc.localDescription.sdp }),
      });
      if (!response.ok) throw new Error(`offer refused: HTTP ${response.status}`);
      const answer = await response.json();
      if (this.pc !== pc) return;
      this.peerId = answer.peer_id;
      await pc.setRemoteDescription({ type: "answer", sdp: answer.sdp });
      this.trickle(pending.splice(0), gathered);
    } catch (error) {
      this.lost(pc);
    }
  }

  /** Sends the browser's candidates as they are found (`done`: gathering has ended), at most
   * MAX_CANDIDATES a request. */
  trickle(candidates, done) {
    if (!candidates.length && !done) return;
    const batch = candidates.splice(0, MAX_CANDIDATES);
    apiFetch(`/v1/webrtc/${encodeURIComponent(this.peerId)}/candidates`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ candidates: batch, done: done && !candidates.length }),
    })
      .then(() => candidates.length && this.trickle(candidates, done))
      .catch(() => {});
  }

  /** The connection `pc` dropped: reconnect after a growing delay (the page resumes its session). */
  lost(pc) {
    if (this.pc !== pc) return;
    clearInterval(this.pingTimer);
    this.pc = null;
    this.channel = null;
    pc.close();
    if (!this.wanted) {
      this.emit("status", { state: "closed" });
      return;
    }
    this.retryLater();
  }

  send(message) {
    if (!this.isOpen) return false;
    this.channel.send(JSON.stringify(message));
    return true;
  }

  /** The microphone's frames travel on the track, not here: true while they are going out. */
  sendAudio(_buffer) {
    return this.isOpen && !!this.micTrack && this.micTrack.enabled;
  }

  /** Audio the browser received and played from the controller's track (RTCStats), for tests. */
  async inboundAudio() {
    if (!this.pc) return null;
    const stats = await this.pc.getStats();
    for (const report of stats.values()) {
      if (report.type === "inbound-rtp" && report.kind === "audio") {
        return { packets: report.packetsReceived || 0, energy: report.totalAudioEnergy || 0, seconds: report.totalSamplesDuration || 0 };
      }
    }
    return null;
  }

  /** Closes for good (no reconnect) and lets the gateway go at once. */
  close() {
    this.wanted = false;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.peerId) apiFetch(`/v1/webrtc/${encodeURIComponent(this.peerId)}`, { method: "DELETE", keepalive: true }).catch(() => {});
    if (this.pc) this.lost(this.pc);
    if (this.micTrack) this.micTrack.stop();
  }
}
