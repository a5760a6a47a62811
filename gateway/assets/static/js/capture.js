// Microphone capture: getUserMedia (mono) into an AudioWorklet that turns Float32 blocks into
// 20 ms PCM16 frames at the AudioContext's own rate. The worklet always produces frames; the page
// decides which ones leave (PTT held, or always in vox mode), so the level meter works while idle.

import { float32ToPcm16, frameSamples } from "./pcm.js";

const PROCESSOR = "livefreq-pcm-framer";

// The worklet runs in its own global scope; it gets the conversion function's source text so the
// main thread and the audio thread share one implementation.
const WORKLET_SOURCE = `
const float32ToPcm16 = ${float32ToPcm16.toString()};
class PcmFramer extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.size = options.processorOptions.frameSamples;
    this.frame = new Int16Array(this.size);
    this.fill = 0;
  }
  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (!channel) return true;
    const pcm = float32ToPcm16(channel);
    let offset = 0;
    while (offset < pcm.length) {
      const n = Math.min(this.size - this.fill, pcm.length - offset);
      this.frame.set(pcm.subarray(offset, offset + n), this.fill);
      this.fill += n;
      offset += n;
      if (this.fill === this.size) {
        this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
        this.frame = new Int16Array(this.size);
        this.fill = 0;
      }
    }
    return true;
  }
}
registerProcessor("${PROCESSOR}", PcmFramer);
`;

/** Why the microphone is unavailable, in words a trainee can act on. */
export function micErrorMessage(error) {
  const name = error && error.name;
  if (name === "NotAllowedError" || name === "SecurityError")
    return "Microphone permission was denied. Allow the microphone for this page (the icon in the address bar) and reload — or type your transmissions below.";
  if (name === "NotFoundError" || name === "OverconstrainedError")
    return "No microphone was found. Plug one in and reload — or type your transmissions below.";
  if (name === "NotReadableError")
    return "The microphone is busy in another application. Close it there and reload — or type your transmissions below.";
  if (name === "insecure")
    return "The browser only allows the microphone on https:// or http://localhost pages. Open the page that way — or type your transmissions below.";
  return `The microphone could not be opened (${(error && error.message) || error}). You can still type your transmissions below.`;
}

export class MicCapture {
  /** `onFrame(ArrayBuffer pcm16, Int16Array samples)` receives every 20 ms frame. */
  constructor(context, onFrame) {
    this.context = context;
    this.onFrame = onFrame;
    this.stream = null;
    this.node = null;
    this.frameSamples = frameSamples(context.sampleRate);
  }

  get sampleRate() {
    return this.context.sampleRate;
  }

  /** Opens the microphone; throws an Error whose `name` says why it failed (see micErrorMessage). */
  async start() {
    if (this.node) return;
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      const err = new Error("getUserMedia is unavailable");
      err.name = "insecure";
      throw err;
    }
    this.stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
      video: false,
    });
    const url = URL.createObjectURL(new Blob([WORKLET_SOURCE], { type: "text/javascript" }));
    try {
      await this.context.audioWorklet.addModule(url);
    } finally {
      URL.revokeObjectURL(url);
    }
    const source = this.context.createMediaStreamSource(this.stream);
    this.node = new AudioWorkletNode(this.context, PROCESSOR, {
      numberOfInputs: 1,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      channelCount: 1,
      channelCountMode: "explicit",
      processorOptions: { frameSamples: this.frameSamples },
    });
    this.node.port.onmessage = (event) => this.onFrame(event.data, new Int16Array(event.data));
    source.connect(this.node);
    // The node writes nothing to its output; connecting it keeps the graph pulling it.
    this.node.connect(this.context.destination);
    this.source = source;
  }

  stop() {
    if (this.node) this.node.disconnect();
    if (this.source) this.source.disconnect();
    if (this.stream) this.stream.getTracks().forEach((t) => t.stop());
    this.node = this.source = this.stream = null;
  }
}
