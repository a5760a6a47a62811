// PCM16 helpers shared by the capture worklet and the playback scheduler.
// Pure functions (no DOM, no Web Audio) so the browser test can check them directly, and so the
// worklet can be built from their source text: one implementation on both threads.

/** Protocol v1 accepts these input/output rates (docs/protocol-v1.md). */
export const PROTOCOL_RATES = [8000, 16000, 24000, 32000, 44100, 48000];

/** Samples in one `ms` frame at `rate` (20 ms at 48 kHz = 960). */
export function frameSamples(rate, ms = 20) {
  return Math.round((rate * ms) / 1000);
}

/** Float32 [-1, 1] samples to little-endian PCM16, clipping out-of-range values. */
export function float32ToPcm16(input) {
  const out = new Int16Array(input.length);
  for (let i = 0; i < input.length; i++) {
    const s = input[i] > 1 ? 1 : input[i] < -1 ? -1 : input[i];
    out[i] = s < 0 ? Math.round(s * 32768) : Math.round(s * 32767);
  }
  return out;
}

/** PCM16 bytes (an ArrayBuffer, little-endian) to Float32 samples for an AudioBuffer. */
export function pcm16ToFloat32(buffer) {
  const view = new DataView(buffer);
  const n = buffer.byteLength >> 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true) / 32768;
  return out;
}

/** Level of PCM16 samples in dBFS (-100 for digital silence). */
export function levelDbfs(samples) {
  if (!samples.length) return -100;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i] * samples[i];
  const rms = Math.sqrt(sum / samples.length) / 32768;
  return rms > 0 ? Math.max(-100, 20 * Math.log10(rms)) : -100;
}

/**
 * Counts bursts of sound (loud, then quiet for `hangMs`) in a stream of per-frame levels.
 * The meter shows "signal" with it, and tests use `bursts` to know when a whole phrase went by.
 */
export class BurstDetector {
  constructor({ thresholdDb = -45, hangMs = 600 } = {}) {
    this.thresholdDb = thresholdDb;
    this.hangMs = hangMs;
    this.active = false;
    this.quietMs = 0;
    this.bursts = 0;
  }

  /** Feed one frame's level; returns true while a burst is in progress. */
  push(levelDb, frameMs) {
    if (levelDb >= this.thresholdDb) {
      this.active = true;
      this.quietMs = 0;
    } else if (this.active) {
      this.quietMs += frameMs;
      if (this.quietMs >= this.hangMs) {
        this.active = false;
        this.bursts += 1;
      }
    }
    return this.active;
  }
}
