// The overview: decisions over time by outcome, the reasons and rules that
// asked or denied most, and activity per session and agent, from
// GET /v1/stats.

import { api, serverNow } from "./api.js";
import { h, s, replace, reasonText, fmtHour } from "./dom.js";

// How the calls ended, stacked: together they are all the calls. "Asked"
// is a part of them, drawn as a bar of its own beside the stack.
const STACKED = [
  { key: "allow", label: "allowed" },
  { key: "deny", label: "denied" },
  { key: "pending", label: "pending" },
];

// BUCKETS are the periods the server counts by, shortest first, with
// their names for bucket=.
const BUCKETS = [[60e3, "1m"], [5 * 60e3, "5m"], [10 * 60e3, "10m"], [15 * 60e3, "15m"], [30 * 60e3, "30m"], [3600e3, "1h"]];

const root = h("section", { class: "view", id: "view-overview", "aria-labelledby": "overview-title" });
const range = h("select", { id: "overview-range", "aria-label": "Time range", onchange: () => showOverview() },
  h("option", { value: "24" }, "last 24 hours"),
  h("option", { value: "72" }, "last 3 days"),
  h("option", { value: "168" }, "last 7 days"));
const body = h("div", { id: "overview-body" });
const note = h("p", { class: "muted small", id: "overview-note" });
root.append(
  h("div", { class: "view-head" }, h("h1", { id: "overview-title" }, "Overview"), range),
  body, note);

export function overviewView() {
  return root;
}

export async function showOverview() {
  const hours = Number(range.value);
  const since = new Date(serverNow() - hours * 3600e3);
  if (!body.firstChild) replace(body, h("p", { class: "muted" }, "Counting…"));
  let st;
  try {
    st = await api("/v1/stats", { params: { since: since.toISOString() } });
    // The chart shows from the first call of the range to now, in
    // periods short enough to tell them apart.
    let from = since.getTime();
    let bucketMs = hours > 48 ? 6 * 3600e3 : 3600e3;
    let rows = st.hourly || [];
    let rowMs = 3600e3;
    // At most three narrowings: each starts at the first period with a
    // call, a period before it, and counts in the shortest periods that
    // keep the chart within 48 columns.
    for (let i = 0; i < 3; i++) {
      const first = rows.find((r) => r.calls > 0);
      if (!first) break;
      from = Math.max(from, new Date(first.hour).getTime() - rowMs);
      const fit = BUCKETS.find(([ms]) => (serverNow() - from) / ms <= 48);
      if (!fit || fit[0] >= rowMs) {
        if (rowMs < 3600e3 || (fit && fit[0] === 3600e3)) bucketMs = rowMs;
        break;
      }
      const fine = await api("/v1/stats", { params: { since: new Date(from).toISOString(), bucket: fit[1] } });
      rows = fine.hourly || [];
      rowMs = fit[0];
      bucketMs = rowMs;
      st = { ...st, hourly: rows };
    }
    render(st, from, bucketMs);
  } catch (err) {
    replace(body, h("p", { class: "card-error" }, "Could not read the statistics: " + err.message));
    return;
  }
  note.textContent = st.truncated ? "The range holds more events than one request counts: the oldest are counted." : "";
}

// buckets sums the counts into buckets of bucketMs.
function buckets(hourly, bucketMs) {
  const m = new Map();
  for (const row of hourly || []) {
    const t = new Date(row.hour).getTime();
    if (isNaN(t)) continue;
    const start = Math.floor(t / bucketMs) * bucketMs;
    const c = m.get(start) || { calls: 0, allow: 0, deny: 0, pending: 0, ask: 0 };
    for (const k of Object.keys(c)) c[k] += row[k] || 0;
    m.set(start, c);
  }
  return m;
}

function render(st, since, bucketMs) {
  const t = st.totals || {};
  const pct = (n) => (t.calls ? Math.round((100 * (n || 0)) / t.calls) + "% of the calls" : "");
  replace(body,
    h("div", { class: "tiles", id: "overview-tiles" },
      tile("calls", t.calls, "", "came in this range"),
      tile("allowed", t.allow, "dec-allow", pct(t.allow)),
      tile("denied", t.deny, "dec-deny", pct(t.deny)),
      tile("pending", t.pending, "dec-pending", pct(t.pending))),
    h("p", { class: "tiles-sum muted small", id: "overview-sum" },
      "allowed + denied + pending = calls · of them ",
      h("strong", { class: "asked-n" }, String(t.ask ?? 0)), " asked a person (", pct(t.ask) || "none", ")"),
    h("div", { class: "panel" },
      h("h2", null, "Calls over time ", h("span", { class: "muted small" }, "· by when they came, in periods of " + periodName(bucketMs))),
      chart(buckets(st.hourly, bucketMs), since, bucketMs)),
    h("div", { class: "grid-2" },
      h("div", { class: "panel" }, h("h2", null, "Why it asked or denied"),
        bars(st.top_reasons, (r) => reasonText(r.name), "Nothing asked or denied.")),
      h("div", { class: "panel" }, h("h2", null, "Rules that asked or denied"),
        bars(st.top_rules, (r) => h("code", null, r.name), "No rule asked or denied."))),
    h("div", { class: "grid-2" },
      h("div", { class: "panel" }, h("h2", null, "Calls per session"),
        bars(st.sessions, (r) => h("a", { class: "mono", href: "#/audit?session=" + encodeURIComponent(r.name) + "&type=" }, r.name), "No calls.")),
      h("div", { class: "panel" }, h("h2", null, "Calls per agent"),
        bars(st.agents, (r) => r.name, "No agent named itself."))));
}

function periodName(ms) {
  return ms >= 3600e3 ? (ms / 3600e3 === 1 ? "an hour" : ms / 3600e3 + " hours") : ms / 60e3 === 1 ? "a minute" : ms / 60e3 + " minutes";
}

function tile(label, n, cls, sub) {
  return h("div", { class: ["tile", cls], "data-tile": label },
    h("span", { class: "tile-n" }, String(n ?? 0)), h("span", { class: "tile-label" }, label),
    sub ? h("span", { class: "tile-sub muted small" }, sub) : null);
}

// chart draws a column per period from since to now: the calls that came
// then, stacked by how they ended, and beside them a narrow bar of those
// that asked a person.
function chart(byStart, since, bucketMs) {
  const now = serverNow();
  const first = Math.floor(since / bucketMs) * bucketMs;
  const n = Math.max(1, Math.ceil((now - first) / bucketMs));
  let peak = 0;
  for (const c of byStart.values()) peak = Math.max(peak, c.allow + c.deny + c.pending, c.ask);
  // Drawn at the width it is shown at, so that its text stays readable.
  const W = Math.round(Math.min(720, Math.max(300, body.clientWidth - 40 || 720)));
  const H = W < 500 ? 180 : 220, L = 36, B = 24, T = 10;
  const cw = (W - L - 4) / n;
  const top = niceMax(peak);
  const y = (v) => H - B - ((H - B - T) * v) / top;
  const g = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": "Calls over time by how they ended" });
  for (const v of [0, top / 2, top]) {
    g.append(s("line", { x1: L, x2: W, y1: y(v), y2: y(v), class: "grid" }),
      s("text", { x: L - 6, y: y(v) + 4, class: "axis", "text-anchor": "end" }, String(Math.round(v))));
  }
  const withDay = now - first > 20 * 3600e3;
  const labelEvery = Math.ceil(n / Math.max(3, Math.floor(W / 90)));
  // The stack takes the left of a column, the asked bar the right; both
  // at most 28px wide, so that one period is not one wide slab.
  const bw = Math.min(28, cw * 0.5);
  const aw = Math.min(10, cw * 0.2);
  for (let i = 0; i < n; i++) {
    const start = first + i * bucketMs;
    const c = byStart.get(start) || { calls: 0, allow: 0, deny: 0, pending: 0, ask: 0 };
    const x = L + i * cw;
    const bx = x + (cw - bw - aw - 2) / 2;
    let acc = 0;
    for (const se of STACKED) {
      const v = c[se.key];
      if (!v) continue;
      g.append(s("rect", { x: bx, y: y(acc + v), width: Math.max(1, bw), height: Math.max(0.5, y(acc) - y(acc + v)), class: "bar o-" + se.key, rx: 1.5 }));
      acc += v;
    }
    if (c.ask > 0) {
      g.append(s("rect", { x: bx + bw + 2, y: y(c.ask), width: Math.max(1, aw), height: Math.max(0.5, y(0) - y(c.ask)), class: "bar ask-bar", rx: 1 }));
    }
    const tip = fmtHour(start, true) + "\n" + c.calls + " calls: " + c.allow + " allowed · " + c.deny + " denied · " + c.pending + " pending · " + c.ask + " asked a person";
    g.append(s("rect", { x, y: T, width: cw, height: H - B - T, class: "hit" }, s("title", null, tip)));
    if (i % labelEvery === 0) {
      const cx = x + cw / 2;
      const anchor = cx > W - 40 ? "end" : cx < L + 30 ? "start" : "middle";
      g.append(s("text", { x: anchor === "end" ? W : anchor === "start" ? L : cx, y: H - 6, class: "axis", "text-anchor": anchor }, fmtHour(start, withDay)));
    }
  }
  const legend = h("ul", { class: "legend" },
    STACKED.map((se) => h("li", null, h("span", { class: "swatch o-" + se.key }), se.label)),
    h("li", null, h("span", { class: "swatch swatch-ask" }), "asked a person (a part of the calls)"));
  if (peak === 0) return h("div", null, g, h("p", { class: "muted" }, "No calls in this range yet."));
  return h("div", null, g, legend);
}

function niceMax(v) {
  if (v <= 4) return 4;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// bars lists ranked entries ({name, decision, count}) as horizontal bars.
function bars(rows, label, none) {
  if (!rows || rows.length === 0) return h("p", { class: "muted" }, none);
  const max = Math.max(...rows.map((r) => r.count), 1);
  return h("ol", { class: "hbars" }, rows.slice(0, 10).map((r) => {
    const fill = h("span", { class: ["hbar-fill", r.decision && "dec-" + r.decision] });
    fill.style.setProperty("width", ((100 * r.count) / max).toFixed(1) + "%");
    return h("li", { title: r.name },
      h("span", { class: "hbar-label" },
        r.decision ? [h("span", { class: ["chip", "dec-" + r.decision] }, r.decision), " "] : null, label(r)),
      h("span", { class: "hbar-track" }, fill),
      h("span", { class: "hbar-n mono" }, String(r.count)));
  }));
}
