// DOM rendering: the message log, readback verdicts and the decision trace. No state lives here
// beyond the elements themselves; main.js decides what to show.

/** `h("div.cls", {attr}, child, ...)`: a tiny element builder (text children are escaped). */
export function h(spec, attrs = {}, ...children) {
  const [tag, ...classes] = spec.split(".");
  const node = document.createElement(tag || "div");
  if (classes.length) node.className = classes.join(" ");
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const FIELD_NAMES = {
  sid: "SID", qnh: "QNH", atis_letter: "ATIS", squawk: "Squawk", initial_altitude_ft: "Initial altitude",
  cleared_altitude_ft: "Altitude", destination: "Destination", runway: "Runway", holding_point: "Holding point",
  taxi_route: "Taxi route", heading: "Heading", turn: "Direction of turn", cruise_level: "Flight level", stand: "Stand",
  wind: "Wind",
};

/** "initial_altitude_ft" -> "Initial altitude", "ground_freq" -> "Ground frequency". */
export function fieldLabel(name) {
  if (FIELD_NAMES[name]) return FIELD_NAMES[name];
  const words = name.replace(/_(ft|kt|deg)$/, "").replace(/_freq$/, "_frequency").split("_");
  const text = words.join(" ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

let stationTitles = {}; // station key -> its name on the radio, from session.started (the engine's table)

/** Keep the engine's station names ("center" -> "Radar") that `session.started` carries. */
export function setStationTitles(titles) {
  stationTitles = titles || {};
}

/** "delivery" -> "Delivery", "dest_tower" -> "Tower", "center" -> "Radar" (the flows' station keys). */
export function stationTitle(station) {
  if (!station) return "";
  const key = String(station).replace(/^dest_/, "");
  return stationTitles[key] || key.charAt(0).toUpperCase() + key.slice(1);
}

export function clock(date = new Date()) {
  return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
}

/** A readback verdict: one chip per required field, ok / missing / wrong (expected vs heard). */
export function renderReadback(readback) {
  const wrong = new Map((readback.wrong || []).map((w) => [w.field, w]));
  const fields = Object.entries(readback.fields || {});
  const nWrong = fields.filter(([, v]) => v === "wrong").length;
  const nMissing = fields.filter(([, v]) => v === "missing").length;
  const head = readback.ok
    ? "Readback correct"
    : `Readback not correct — ${[nWrong && `${nWrong} wrong`, nMissing && `${nMissing} missing`].filter(Boolean).join(", ") || "check the values"}`;
  return h(
    `div.verdict.${readback.ok ? "ok" : "bad"}`,
    { role: "status", dataset: { ok: String(!!readback.ok) } },
    h("div.verdict-head", {}, h("span.verdict-icon", { "aria-hidden": "true" }, readback.ok ? "✓" : "✗"), head),
    h(
      "ul.rb-fields",
      {},
      fields.map(([name, status]) => {
        const w = wrong.get(name);
        return h(
          `li.rb-field.${status}`,
          { dataset: { field: name, status } },
          h("span.rb-name", {}, fieldLabel(name)),
          status === "ok" && h("span.rb-detail", {}, "✓"),
          status === "missing" && h("span.rb-detail", {}, "missing"),
          status === "wrong" &&
            h("span.rb-detail", {}, "expected ", h("b", {}, w ? w.expected : "?"), " · heard ", h("b", {}, w ? w.heard : "?")),
        );
      }),
    ),
  );
}

function selectedTarget(trace) {
  const step = (trace.steps || []).find((s) => s.step === "select");
  const match = step && /selected (\S+)/.exec(step.detail);
  return match ? match[1] : null;
}

/** The last decision's trace: candidates with scores and elimination reasons, readback, router. */
export function renderTrace(decision) {
  const trace = decision.trace || {};
  const chosen = selectedTarget(trace);
  const router = trace.router;
  const rows = (trace.candidates || []).map((c) =>
    h(
      `tr.${c.id === chosen ? "chosen" : c.eliminated ? "eliminated" : "open"}`,
      {},
      h("td.mono", {}, c.id),
      h("td", {}, c.kind),
      h("td", {}, c.label || ""),
      h("td.num", {}, c.score === null || c.score === undefined ? "—" : Number(c.score).toFixed(1)),
      h("td", {}, c.id === chosen ? "selected" : c.eliminated ? c.reason || "eliminated" : "candidate"),
    ),
  );
  return h(
    "div.trace-body",
    {},
    h(
      "p.trace-head",
      {},
      h("span.mono", {}, decision.from_state || "—"),
      " → ",
      h("span.mono", {}, decision.to_state || "—"),
      decision.transmission_id ? "" : h("span.tag", {}, "server clock"),
    ),
    router &&
      h(
        "p.trace-router",
        {},
        h("b", {}, "Router "),
        `${router.name || "?"}: ${router.reason || ""}`,
        router.threshold !== undefined ? ` (threshold ${router.threshold})` : "",
        router.ambiguous ? " — ambiguous" : "",
        router.fallback ? ` — fallback: ${JSON.stringify(router.fallback)}` : "",
      ),
    rows.length
      ? h(
          "table.candidates",
          {},
          h("thead", {}, h("tr", {}, ["Target", "Kind", "Label", "Score", "Result"].map((t) => h("th", {}, t)))),
          h("tbody", {}, rows),
        )
      : h("p.muted", {}, "No candidates (the controller or the clock moved on by itself)."),
    trace.readback && h("div.trace-readback", {}, renderReadback(trace.readback)),
    (trace.auto_advance || []).length > 0 && h("p.trace-auto", {}, h("b", {}, "Auto-advance "), trace.auto_advance.join(" → ")),
    (trace.steps || []).length > 0 &&
      h("ol.steps", {}, trace.steps.map((s) => h("li", {}, h("span.step", {}, s.step), " ", s.detail))),
    (trace.errors || []).length > 0 && h("p.trace-errors", {}, trace.errors.join("; ")),
  );
}

/** The message log: pilot transmissions (live partial, then final) and controller messages. */
export class MessageLog {
  constructor(list, player) {
    this.list = list;
    this.player = player;
    this.pilot = new Map(); // transmission_id -> entry
    this.atc = new Map(); // message_id -> entry
    this.typed = []; // typed entries waiting for the server's transmission id
    this.live = null; // the entry showing the partial transcript of the transmission in progress
  }

  clear() {
    this.list.replaceChildren();
    this.pilot.clear();
    this.atc.clear();
    this.typed = [];
    this.live = null;
  }

  append(node) {
    const stick = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 80;
    this.list.append(node);
    if (stick) node.scrollIntoView({ block: "end", behavior: "smooth" });
    return node;
  }

  system(text, kind = "info") {
    return this.append(h(`li.entry.system.${kind}`, {}, text));
  }

  pilotEntry(text, { partial = false, typed = false, at = new Date() } = {}) {
    return h(
      `li.entry.pilot${partial ? ".partial" : ""}`,
      {},
      h("div.meta", {}, h("span.who", {}, typed ? "You (typed)" : "You"), h("time", {}, clock(at))),
      h("p.text", {}, text),
    );
  }

  /** A typed transmission, shown at once; the server's transcript/decision adopt it. */
  typedText(text) {
    const entry = this.append(this.pilotEntry(text, { typed: true }));
    entry.dataset.typed = text.trim().toLowerCase();
    this.typed.push(entry);
    return entry;
  }

  /**
   * A transcript event. Partials carry no id (they belong to the transmission in progress, the
   * live entry); the final one carries the transmission id that the decision will refer to, and
   * adopts the typed entry with the same text or the live entry.
   */
  transcript(tid, text, final) {
    let entry = tid ? this.pilot.get(tid) : null;
    if (!entry && final && text) {
      const norm = text.trim().toLowerCase();
      const index = this.typed.findIndex((e) => e.dataset.typed === norm);
      if (index >= 0) [entry] = this.typed.splice(index, 1);
    }
    if (!entry) entry = this.live;
    if (!entry) entry = this.append(this.pilotEntry(text, { partial: !final }));
    if (tid) {
      entry.dataset.tid = tid;
      this.pilot.set(tid, entry);
    }
    entry.querySelector(".text").textContent = text || (final ? "(nothing heard — try again)" : "…");
    entry.classList.toggle("partial", !final);
    entry.classList.toggle("empty", final && !text);
    if (final) {
      if (this.live === entry) this.live = null;
    } else {
      this.live = entry;
    }
    return entry;
  }

  /** Shows "transmitting…" while the mic is keyed, before any partial transcript arrives. */
  keyed() {
    if (this.live) return;
    this.live = this.append(this.pilotEntry("…", { partial: true }));
  }

  /** The mic was released: the transcript is on its way. */
  unkeyed() {
    const text = this.live && this.live.querySelector(".text");
    if (text && text.textContent === "…") text.textContent = "recognizing…";
  }

  /** Removes the entry shown while the key was held when the server never claimed it (no speech in the transmission). */
  dropLive() {
    if (this.live && !this.live.dataset.tid) this.live.remove();
    this.live = null;
  }

  readback(tid, readback) {
    const entry = (tid && this.pilot.get(tid)) || null;
    const verdict = renderReadback(readback);
    if (!entry) {
      this.append(h("li.entry.system", {}, verdict));
      return;
    }
    entry.querySelector(".verdict")?.remove();
    entry.append(verdict);
    entry.classList.toggle("rb-ok", !!readback.ok);
    entry.classList.toggle("rb-bad", !readback.ok);
  }

  atcMessage(message, title) {
    const existing = this.atc.get(message.message_id);
    if (existing) return existing; // spoken again after a resume: it is already in the log
    const entry = this.atcEntry(message, title);
    this.atc.set(message.message_id, entry);
    return this.append(entry);
  }

  atcEntry(message, title, at = new Date()) {
    return h(
      "li.entry.atc",
      { dataset: { mid: message.message_id, seq: message.seq } },
      h(
        "div.meta",
        {},
        h("span.who", {}, title),
        message.frequency && h("span.freq", {}, message.frequency),
        h("time", {}, clock(at)),
        h("span.playing", { "aria-label": "playing" }, h("i"), h("i"), h("i")),
        h("button.replay", { type: "button", title: "Replay this message", "aria-label": "Replay", onclick: () => this.player.replay(message.message_id) }, "↻"),
      ),
      h("p.text", {}, message.text),
      message.speech && message.speech !== message.text && h("p.speech", {}, message.speech),
    );
  }

  /** True when the log holds no transmissions yet (a reloaded page). */
  get empty() {
    return !this.list.querySelector(".entry.pilot, .entry.atc");
  }

  /**
   * Earlier transmissions of a resumed session (`GET /api/radio/sessions/{id}/transcript`),
   * placed before anything that arrived live meanwhile; entries already shown are skipped.
   */
  history(entries, titleFor) {
    const anchor = this.list.querySelector(".entry.pilot, .entry.atc") || this.list.firstChild;
    let last = null;
    for (const item of entries) {
      const at = item.at ? new Date(item.at * 1000) : new Date();
      let node = null;
      if (item.role === "atc" && item.message_id && !this.atc.has(item.message_id)) {
        node = this.atcEntry(item, titleFor(item.station, item.frequency), at);
        this.atc.set(item.message_id, node);
      } else if (item.role === "pilot" && !(item.transmission_id && this.pilot.has(item.transmission_id))) {
        node = this.pilotEntry(item.text || "", { at });
        if (item.transmission_id) {
          node.dataset.tid = item.transmission_id;
          this.pilot.set(item.transmission_id, node);
        }
        if (item.readback) {
          node.append(renderReadback(item.readback));
          node.classList.add(item.readback.ok ? "rb-ok" : "rb-bad");
          last = { readback: item.readback, at };
        }
      }
      if (node) this.list.insertBefore(node, anchor);
    }
    this.list.scrollTop = this.list.scrollHeight;
    return last;
  }

  atcEnded(messageId, interrupted) {
    const entry = this.atc.get(messageId);
    if (entry && interrupted) entry.classList.add("interrupted");
  }

  /** Refresh the per-message playing/replayable marks. */
  refreshAudio() {
    for (const [id, entry] of this.atc) {
      entry.classList.toggle("is-playing", this.player.isPlaying(id));
      entry.classList.toggle("can-replay", this.player.canReplay(id));
    }
  }
}
