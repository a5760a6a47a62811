// ATC audio out: binary frames of the current `atc.message` become AudioBuffers scheduled back to
// back on one timeline, so a message plays gaplessly and messages never overlap (the server sends
// them in order). `atc.message.end` with `interrupted` stops that message at once; a message that
// ends normally is reported through `onPlayed` when its last buffer has finished playing.

import { pcm16ToFloat32 } from "./pcm.js";

const LEAD_S = 0.06; // scheduling headroom so the first buffer never starts in the past
const KEEP_FOR_REPLAY = 30; // recent messages whose audio can be replayed locally

export class AtcPlayer {
  constructor(context, { onPlayed = () => {}, onChange = () => {} } = {}) {
    this.context = context;
    this.onPlayed = onPlayed;
    this.onChange = onChange;
    this.output = context.createGain();
    this.output.connect(context.destination);
    this.nextTime = 0;
    this.current = null; // the message whose audio frames are arriving
    this.messages = new Map(); // message_id -> record
  }

  /** An `atc.message` arrived: its audio frames follow until `atc.message.end`. */
  begin(message) {
    const sampleRate = (message.audio && message.audio.sample_rate) || 16000;
    const record = { id: message.message_id, sampleRate, sources: new Set(), chunks: [], ended: false, interrupted: false, played: false, frames: 0, endTime: 0 };
    this.current = record;
    this.messages.set(record.id, record);
    while (this.messages.size > KEEP_FOR_REPLAY) this.messages.delete(this.messages.keys().next().value);
    this.onChange();
  }

  /** One binary frame of the current message. Returns false when no message is open. */
  push(buffer) {
    const record = this.current;
    if (!record || record.ended || buffer.byteLength < 2) return false;
    const samples = pcm16ToFloat32(buffer);
    record.chunks.push(samples);
    record.frames += 1;
    this.schedule(record, samples);
    return true;
  }

  schedule(record, samples) {
    const ctx = this.context;
    const audio = ctx.createBuffer(1, samples.length, record.sampleRate);
    audio.copyToChannel(samples, 0);
    const source = ctx.createBufferSource();
    source.buffer = audio;
    source.connect(this.output);
    const at = Math.max(ctx.currentTime + LEAD_S, this.nextTime);
    source.start(at);
    this.nextTime = at + audio.duration;
    record.endTime = this.nextTime;
    record.sources.add(source);
    source.onended = () => {
      record.sources.delete(source);
      this.settle(record);
      this.onChange();
    };
    this.onChange();
  }

  /** `atc.message.end`: either let the scheduled audio finish, or cut it off (`interrupted`). */
  end(messageId, interrupted = false) {
    const record = this.messages.get(messageId);
    if (!record) return;
    record.ended = true;
    if (this.current === record) this.current = null;
    if (interrupted) {
      record.interrupted = true;
      for (const source of record.sources) {
        source.onended = null;
        try {
          source.stop();
        } catch (_) {
          /* never started */
        }
      }
      record.sources.clear();
      // Later audio starts where what is still queued (earlier messages) ends, or now.
      let next = this.context.currentTime;
      for (const other of this.messages.values()) if (other.sources.size) next = Math.max(next, other.endTime);
      this.nextTime = next;
    }
    this.settle(record);
    this.onChange();
  }

  settle(record) {
    if (record.ended && !record.interrupted && !record.played && record.sources.size === 0) {
      record.played = true;
      this.onPlayed(record.id);
      this.onChange();
    }
  }

  /** True while any message's audio is audible (the RX light). */
  get receiving() {
    for (const record of this.messages.values()) if (record.sources.size) return this.context.currentTime < this.nextTime;
    return false;
  }

  isPlaying(messageId) {
    const record = this.messages.get(messageId);
    return !!record && record.sources.size > 0;
  }

  canReplay(messageId) {
    const record = this.messages.get(messageId);
    return !!record && record.ended && record.chunks.length > 0 && record.sources.size === 0;
  }

  /** Plays a finished message again, locally (no acknowledgement is sent for a replay). */
  replay(messageId) {
    const record = this.messages.get(messageId);
    if (!record || !this.canReplay(messageId)) return;
    // Shares the record's (empty) source set so isPlaying()/receiving see the replay; `played`
    // is already true, so finishing it reports nothing.
    const replay = { id: record.id, sampleRate: record.sampleRate, sources: record.sources, ended: true, interrupted: false, played: true };
    for (const chunk of record.chunks) this.schedule(replay, chunk);
  }

  /** Drops everything scheduled (a lost connection: a resumed session starts clean). */
  reset() {
    for (const record of this.messages.values()) {
      for (const source of record.sources) {
        source.onended = null;
        try { source.stop(); } catch (_) { /* not started */ }
      }
      record.sources.clear();
      if (!record.ended) { record.ended = true; record.interrupted = true; }
    }
    this.current = null;
    this.nextTime = this.context.currentTime;
    this.onChange();
  }
}
