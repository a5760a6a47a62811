// The briefing assistant panel (docs/assistant.md): posts the conversation to
// POST /api/aviation-agent/chat/stream and renders the server-sent events as they come: the
// answer (streamed `message` chunks), a collapsible "thinking", clickable suggested queries and an
// offline map of the ui_payload's visualization (an SVG, equirectangular projection scaled by
// cos(latitude): no tile server, no network).
//
// State for tests and the curious: `window.livefreq.assistant` (answers, chunks, last payload);
// the map exposes `data-kind`, `data-markers`, `data-runways` and `data-route` on #assistant-map.

import { apiFetch } from "./access.js";
import { h } from "./view.js";

const SVG = "http://www.w3.org/2000/svg";
const MAP_W = 640;
const MAP_H = 400;
const PAD = 34;

// ------------------------------------------------------------------ server-sent events

/** Parse an SSE byte stream into {event, data} objects (data JSON-decoded). */
export async function* readEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      let parsed = data.join("\n");
      try { parsed = JSON.parse(parsed); } catch { /* plain text data */ }
      yield { event, data: parsed };
    }
    if (done) return;
  }
}

// ------------------------------------------------------------------ a little markdown

function inline(text) {
  const out = [];
  const re = /(\*\*[^*]+\*\*|\*[^*]+\*|`[^`]+`)/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const tok = m[0];
    if (tok.startsWith("**")) out.push(h("strong", {}, tok.slice(2, -2)));
    else if (tok.startsWith("`")) out.push(h("code", {}, tok.slice(1, -1)));
    else out.push(h("em", {}, tok.slice(1, -1)));
    last = m.index + tok.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** The formatter's markdown (bold, italic, code, "- " lists, paragraphs) as DOM nodes, no HTML. */
export function renderMarkdown(text) {
  const box = h("div.md");
  let list = null;
  for (const line of text.split("\n")) {
    if (/^\s*[-*] /.test(line)) {
      if (!list) box.append((list = h("ul")));
      list.append(h("li", {}, inline(line.replace(/^\s*[-*] /, ""))));
      continue;
    }
    list = null;
    if (line.trim()) box.append(h("p", {}, inline(line)));
  }
  return box;
}

// ------------------------------------------------------------------ the offline map

function svg(tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  return node;
}

/** Points of a visualization: {markers, route, point, runways, center}. */
export function mapGeometry(viz) {
  const g = { kind: viz ? viz.type : null, markers: [], route: null, point: null, runways: [], center: null };
  if (!viz) return g;
  if (Array.isArray(viz.markers)) g.markers = viz.markers.filter((m) => Number.isFinite(m.lat) && Number.isFinite(m.lon));
  if (viz.type === "route_with_markers" && viz.route) g.route = [viz.route.from, viz.route.to];
  if (viz.type === "point_with_markers" && viz.point) g.point = viz.point;
  if (viz.type === "marker_with_details" && viz.marker) {
    g.center = viz.marker;
    const runways = (viz.marker.details && viz.marker.details.runways) || [];
    g.runways = runways.filter((r) => (r.end_positions || []).length === 2);
  }
  return g;
}

/** A projection fitted to the points: equirectangular with x scaled by cos(mid latitude). */
export function fitProjection(points, width = MAP_W, height = MAP_H, pad = PAD, minSpanDeg = 0.05) {
  const lats = points.map((p) => p.lat);
  const lons = points.map((p) => p.lon);
  let [s, n, w, e] = [Math.min(...lats), Math.max(...lats), Math.min(...lons), Math.max(...lons)];
  if (!points.length) [s, n, w, e] = [35, 60, -10, 20];
  const k = Math.cos((((s + n) / 2) * Math.PI) / 180);
  let spanX = Math.max((e - w) * k, minSpanDeg);
  let spanY = Math.max(n - s, minSpanDeg);
  const scale = Math.min((width - 2 * pad) / spanX, (height - 2 * pad) / spanY);
  const cx = (w + e) / 2;
  const cy = (s + n) / 2;
  const project = (lat, lon) => [width / 2 + (lon - cx) * k * scale, height / 2 - (lat - cy) * scale];
  spanX = (width / scale) / k;
  spanY = height / scale;
  return { project, scale, bounds: { west: cx - spanX / 2, east: cx + spanX / 2, south: cy - spanY / 2, north: cy + spanY / 2 } };
}

function graticule(root, proj) {
  const { west, east, south, north } = proj.bounds;
  const span = Math.max(east - west, north - south);
  const step = [0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10].find((s) => span / s <= 8) || 20;
  const group = svg("g", { class: "graticule" });
  for (let lon = Math.ceil(west / step) * step; lon <= east; lon += step) {
    const [x1, y1] = proj.project(north, lon);
    const [x2, y2] = proj.project(south, lon);
    group.append(svg("line", { x1, y1, x2, y2 }));
  }
  for (let lat = Math.ceil(south / step) * step; lat <= north; lat += step) {
    const [x1, y1] = proj.project(lat, west);
    const [x2, y2] = proj.project(lat, east);
    group.append(svg("line", { x1, y1, x2, y2 }));
  }
  root.append(group);
}

function airportMarker(group, proj, m, cls = "marker", label = true) {
  const [x, y] = proj.project(m.lat, m.lon);
  const node = svg("g", { class: cls, "data-icao": m.icao || "" });
  node.append(svg("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: cls === "marker" ? 3.5 : 6 }));
  node.append(svg("title", {}, `${m.icao || ""} ${m.name || ""}`.trim()));
  if (label && m.icao) node.append(svg("text", { x: (x + 7).toFixed(1), y: (y - 6).toFixed(1) }, m.icao));
  group.append(node);
}

/** Draw a ui_payload visualization into the <svg> `root`; returns what was drawn. */
export function drawMap(root, viz) {
  root.replaceChildren();
  root.setAttribute("viewBox", `0 0 ${MAP_W} ${MAP_H}`);
  const g = mapGeometry(viz);
  const points = [...g.markers];
  if (g.route) points.push(...g.route);
  if (g.point) points.push(g.point);
  if (g.center) points.push(g.center);
  for (const r of g.runways) points.push(...r.end_positions);
  const proj = fitProjection(points, MAP_W, MAP_H, PAD, g.kind === "marker_with_details" ? 0.01 : 0.3);
  root.append(svg("rect", { class: "sea", x: 0, y: 0, width: MAP_W, height: MAP_H }));
  graticule(root, proj);
  const layer = svg("g", { class: "features" });
  root.append(layer);
  if (g.route) {
    const [a, b] = g.route.map((p) => proj.project(p.lat, p.lon));
    layer.append(svg("line", { class: "route", x1: a[0], y1: a[1], x2: b[0], y2: b[1] }));
  }
  if (g.point) {
    const [x, y] = proj.project(g.point.lat, g.point.lon);
    const c = svg("g", { class: "centre" });
    c.append(svg("path", { d: `M${x - 8} ${y}H${x + 8}M${x} ${y - 8}V${y + 8}` }));
    c.append(svg("text", { x: x + 10, y: y + 16 }, g.point.name || ""));
    layer.append(c);
  }
  for (const r of g.runways) {
    const [a, b] = r.end_positions.map((p) => proj.project(p.lat, p.lon));
    const width = Math.max(3, Math.min(14, ((r.width_ft || 100) / 3.28084 / 111320) * proj.scale));
    const rw = svg("g", { class: `runway${r.end_positions[0].estimated ? " estimated" : ""}`, "data-runway": (r.ends || []).join("/") });
    rw.append(svg("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1], "stroke-width": width.toFixed(1) }));
    r.end_positions.forEach((end, i) => {
      const [x, y] = i === 0 ? a : b;
      const [ox, oy] = i === 0 ? [a[0] - b[0], a[1] - b[1]] : [b[0] - a[0], b[1] - a[1]];
      const len = Math.hypot(ox, oy) || 1;
      rw.append(svg("text", { x: (x + (ox / len) * 14).toFixed(1), y: (y + (oy / len) * 14 + 4).toFixed(1), "text-anchor": "middle" }, end.ident));
    });
    layer.append(rw);
  }
  const many = g.markers.length > 25;
  for (const m of g.markers) airportMarker(layer, proj, m, "marker", !many);
  if (g.route) g.route.forEach((p, i) => airportMarker(layer, proj, p, i === 0 ? "endpoint departure" : "endpoint destination"));
  if (g.center) airportMarker(layer, proj, g.center, "endpoint airport");
  root.dataset.kind = g.kind || "";
  root.dataset.markers = String(g.markers.length + (g.center ? 1 : 0));
  root.dataset.runways = String(g.runways.length);
  root.dataset.route = g.route ? g.route.map((p) => p.icao || p.name).join("-") : "";
  return { kind: g.kind, markers: g.markers.length, runways: g.runways.length };
}

// ------------------------------------------------------------------ the panel

export class AssistantPanel {
  constructor({ form, input, log, map, mapNote, suggestions, sessionId = null }) {
    Object.assign(this, { form, input, log, map, mapNote, suggestions });
    this.history = []; // [{role, content}]
    this.sessionId = sessionId;
    this.busy = false;
    this.stats = { asked: 0, answers: 0, chunks: 0, errors: 0, lastKind: null, tokens: null };
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const text = input.value.trim();
      if (text && !this.busy) {
        input.value = "";
        this.ask(text);
      }
    });
    drawMap(map, null);
  }

  setSuggestions(list) {
    this.suggestions.replaceChildren(
      ...(list || []).map((s) => h("button.suggestion", { type: "button", onclick: () => !this.busy && this.ask(s.text) }, s.text)),
    );
  }

  async ask(text) {
    this.busy = true;
    this.form.classList.add("busy");
    this.stats.asked += 1;
    this.history.push({ role: "user", content: text });
    this.log.append(h("li.a-entry.user", {}, h("p", {}, text)));
    const answer = h("div.a-answer", { "aria-live": "polite" });
    const thinkingText = h("pre.a-thinking-text");
    const thinking = h("details.a-thinking", {}, h("summary", {}, h("span.cap", {}, "Thinking")), thinkingText);
    const tools = h("p.a-tools.muted.small");
    const entry = h("li.a-entry.assistant.streaming", {}, thinking, tools, answer);
    this.log.append(entry);
    this.log.scrollTop = this.log.scrollHeight;
    let text_ = "";
    let payload = null;
    try {
      const response = await apiFetch("/api/aviation-agent/chat/stream", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ messages: this.history, ...(this.sessionId ? { session_id: this.sessionId } : {}) }),
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      for await (const ev of readEvents(response)) {
        const d = ev.data || {};
        if (ev.event === "message") {
          text_ += d.content || "";
          this.stats.chunks += 1;
          answer.replaceChildren(renderMarkdown(text_));
          this.log.scrollTop = this.log.scrollHeight;
        } else if (ev.event === "thinking") {
          thinkingText.textContent += (thinkingText.textContent ? "\n\n" : "") + (d.content || "");
        } else if (ev.event === "thinking_done") {
          if (d.thinking) thinkingText.textContent = d.thinking;
        } else if (ev.event === "tool_call_start") {
          tools.textContent = `tool: ${d.name}`;
        } else if (ev.event === "tool_call_end") {
          tools.textContent = `tool: ${d.name}${d.error ? " (failed)" : ""}`;
        } else if (ev.event === "ui_payload") {
          payload = d;
        } else if (ev.event === "error") {
          this.stats.errors += 1;
          entry.classList.add("error");
        } else if (ev.event === "done") {
          this.sessionId = d.session_id || this.sessionId;
          this.stats.tokens = d.tokens || null;
        }
      }
    } catch (err) {
      this.stats.errors += 1;
      entry.classList.add("error");
      text_ = text_ || `The assistant is not reachable (${err.message}).`;
      answer.replaceChildren(renderMarkdown(text_));
    }
    this.history.push({ role: "assistant", content: text_ });
    entry.classList.remove("streaming");
    this.lastPayload = payload;
    const viz = payload && payload.visualization;
    if (viz) {
      const drawn = drawMap(this.map, viz);
      this.stats.lastKind = drawn.kind;
      this.mapNote.textContent = mapNote(payload, drawn);
    }
    this.setSuggestions(payload ? payload.suggested_queries : []);
    this.stats.answers += 1;
    this.busy = false;
    this.form.classList.remove("busy");
  }
}

function mapNote(payload, drawn) {
  if (drawn.kind === "route_with_markers") return `${payload.departure} → ${payload.destination}: ${drawn.markers} airport(s) near the route`;
  if (drawn.kind === "marker_with_details") return `${payload.icao}: ${drawn.runways} runway(s)`;
  if (drawn.kind === "point_with_markers") return `${drawn.markers} airport(s) around the point`;
  return `${drawn.markers} airport(s)`;
}
