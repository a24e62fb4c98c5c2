// The event views: the live stream of a session, the audit search, and the
// timeline of one tool call.

import { api, allEvents, Stream, EVENT_TYPES, serverNow } from "./api.js";
import { h, replace, reasonText, riskClass, decisionClass, fmtTime, fmtDateTime, kv, debounce } from "./dom.js";
import { seen, recent, onSeen, noteEvent } from "./state.js";
import { changeView } from "./change.js";

// calls maps a tool call id to the tool and input of the event that
// carries the call — its model.tool_call_requested when a person was asked
// (and in logs written before), else its one permission.resolved, which
// carries the call ("input") — so that later events of the call, which
// carry only its id, can say what it was.
const calls = new Map();

// AGENT_TYPES are the events an agent posts about itself (eventlog's
// PostedByAgent): what the agent sent is their payload's "content", never a
// decision, so they get no decision chip, no call link and no place in a
// tool call's timeline, whatever that content says.
const AGENT_TYPES = new Set(["session.started", "turn.started", "user.message", "turn.completed"]);

// gateFields is the payload of an event the gate wrote, and nothing for an
// event an agent posted: where decisions, actors, rules and call ids are read.
export function gateFields(ev) {
  return AGENT_TYPES.has(ev.type) ? {} : ev.payload || {};
}

// agentContent is what the agent sent in an event it posted.
function agentContent(ev) {
  const p = ev.payload || {};
  return p.content && typeof p.content === "object" ? p.content : p;
}

// carriesCall is the log's rule for the event that records a call as the
// agent asked for it, as gate.CarriesCall states it: a
// model.tool_call_requested, or a permission.resolved whose input is a JSON
// object (a call decided without a person).
function carriesCall(ev, p) {
  return ev.type === "model.tool_call_requested" ||
    (ev.type === "permission.resolved" && p.input !== null && typeof p.input === "object" && !Array.isArray(p.input));
}

function noteCall(ev) {
  const p = ev.payload || {};
  const carries = carriesCall(ev, p);
  if (!carries || !p.toolCallId || calls.has(p.toolCallId) && ev.type === "permission.resolved") return;
  calls.set(p.toolCallId, { tool: p.tool, input: p.input, agent: p.agent });
  if (calls.size > 20000) calls.delete(calls.keys().next().value);
}

// subject is what an event's call does: "Bash: npm test".
function subject(ev) {
  const p = gateFields(ev);
  const c = calls.get(p.toolCallId) || {};
  const tool = p.tool || c.tool;
  const arg = argOf(p.input || p.args || c.input);
  return tool ? tool + (arg ? ": " + arg : "") : "";
}

// describe is a one-line account of an event: its tool call's subject and
// what happened, as text.
function describe(ev) {
  const p = gateFields(ev);
  const what = subject(ev) || p.toolCallId || "";
  const settings = (o) => Object.entries(o || {}).map(([k, v]) => k + " " + (v ?? "from the policy files")).join(", ");
  switch (ev.type) {
    case "model.tool_call_requested":
    case "tool.started":
      return what;
    case "permission.requested":
      return what + " — " + reasonText(p.reason);
    case "permission.answered":
      return what + " — " + (p.answer || "") + " given on another server" + (p.message ? " · “" + p.message + "”" : "");
    case "permission.resolved":
      return what + " — " + reasonText(p.reason) + " · " + byWhom(p) +
        (p.rule ? " · " + p.rule : "") + (p.decision === "deny" && p.message ? " · “" + p.message + "”" : "");
    case "tool.completed":
    case "tool.failed":
      return what + (p.exitCode !== undefined ? " · exit " + p.exitCode : "") + (p.error ? " · " + p.error : "");
    case "policy.changed":
      if (p.change === "rule_added") return "rule added: " + (p.decision || "") + " " + (p.rule || "") + (p.file ? " in " + p.file + (p.line ? ":" + p.line : "") : "");
      if (p.after) {
        const keys = Array.isArray(p.changed) ? p.changed : Object.keys(p.after);
        return "session set: " + settings(Object.fromEntries(keys.map((k) => [k, p.after[k]])));
      }
      return compact(p);
    case "lease.granted":
      return (p.kind === "session_approval" ? "allowed for the session: " : "lease: ") + (subject({ payload: p }) || p.id || "");
    case "lease.revoked":
      return "ended: " + (p.id || compact(p));
    case "approval.forbidden":
      return "refused: the agent token tried to " + (p.action || "act as the approver") + (p.toolCallId ? " " + p.toolCallId : "");
    case "injection.suspected":
      return "output that looks like prompt injection" + (p.class ? " (" + (INJECTION_CLASSES[p.class] || p.class) + ")" : "") +
        (what ? ": " + what : "") + (typeof p.excerpt === "string" && p.excerpt ? " · “" + oneLine(p.excerpt) + "”" : "");
    case "hook.ran":
      return (p.event || "hook") + " hook " + (p.hook || "") + ": " + (p.outcome || "") +
        (typeof p.reason === "string" && p.reason ? " · " + oneLine(p.reason) : "") +
        (typeof p.effect === "string" && p.effect ? " (" + oneLine(p.effect) + ")" : "");
    case "user.message": {
      const c = agentContent(ev);
      return typeof (c.text || c.message) === "string" ? c.text || c.message : compact(c);
    }
    case "turn.started":
    case "turn.completed":
      return "turn " + (ev.turn || "") + (ev.type === "turn.started" ? " started" : " completed");
    case "session.started":
      return "session started" + (typeof agentContent(ev).agent === "string" ? " by " + agentContent(ev).agent : "");
    default:
      return compact(p);
  }
}

// VIAS names the channels a person's answer comes through
// (permission.resolved's via).
const VIAS = {
  page: "on the approval page", api: "through the API", link: "through a notification's link",
  terminal: "in the terminal", command: "by the approval command", webhook: "through the approval webhook",
  "mcp-elicitation": "in the MCP client (elicitation)", remote: "on another server",
};

// byWhom says who decided a permission.resolved event, and for a person
// through which channel.
export function byWhom(p) {
  switch (p.actor) {
    case "user":
      return "a person answered " + (VIAS[p.via] || (p.via ? "via " + p.via : "(the channel is not recorded)"));
    case "hook":
      return "answered by a hook";
    case "classifier":
      return "decided by the classifier";
    case "system":
      return "decided by toolgate";
    default:
      return "decided by the policy";
  }
}

function argOf(input) {
  if (!input || typeof input !== "object") return "";
  for (const k of ["command", "cmd", "file_path", "path", "absolute_path", "notebook_path", "url", "pattern", "query"]) {
    const v = input[k];
    if (typeof v === "string" && v) return oneLine(v);
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) return oneLine(v.join(" "));
  }
  return "";
}

function oneLine(s) {
  s = s.replace(/\s+/g, " ").trim();
  return s.length > 160 ? s.slice(0, 160) + "…" : s;
}

function compact(p) {
  const s = JSON.stringify(p || {});
  return s === "{}" ? "" : s.length > 160 ? s.slice(0, 160) + "…" : s;
}

const TYPE_LABELS = {
  "model.tool_call_requested": "call", "permission.requested": "asked", "permission.answered": "answered", "permission.resolved": "decided",
  "tool.started": "started", "tool.completed": "completed", "tool.failed": "failed",
  "policy.changed": "policy", "lease.granted": "lease", "lease.revoked": "lease ended",
  "user.message": "message", "turn.started": "turn", "turn.completed": "turn end",
  "session.started": "session", "injection.suspected": "injection?", "approval.forbidden": "forbidden",
  "hook.ran": "hook",
};

// INJECTION_CLASSES says in words what each class of injection.suspected
// event found.
const INJECTION_CLASSES = {
  "ignore-instructions": "tells the model to ignore its instructions",
  "role-header": "forged role header or closing tag",
  "secret-exfiltration": "asks to reveal or send secrets",
  "hidden-text": "hidden characters",
  "data-url": "image or link that carries data out",
  "bidi-override": "text reordered by bidirectional controls",
};

// injectionChip flags a call whose output looks like prompt injection;
// classes are the injection.suspected events' classes.
function injectionChip(classes) {
  const words = [...new Set(classes)].map((c) => INJECTION_CLASSES[c] || c).join("; ");
  return h("span", { class: ["chip", "injection-chip"], title: words || "injection.suspected" }, "possible prompt injection");
}

function typeChip(type) {
  return h("span", { class: ["chip", "type-chip", "type-" + (type || "").replace(/\W/g, "-")], title: type }, TYPE_LABELS[type] || type);
}

function callLink(ev) {
  const id = gateFields(ev).toolCallId;
  return id ? "#/call/" + encodeURIComponent(ev.session) + "/" + encodeURIComponent(id) : "";
}

function sessionList(id) {
  const dl = h("datalist", { id });
  const fill = () => replace(dl, recent(seen.sessions).slice(0, 50).map((s) => h("option", { value: s })));
  fill();
  onSeen(fill);
  return dl;
}

// ---- Live ----

const live = {
  root: h("section", { class: "view", id: "view-live", "aria-labelledby": "live-title" }),
  rows: h("ol", { class: "stream", id: "live-rows" }),
  session: h("input", { type: "search", id: "live-session", list: "live-sessions", placeholder: "all sessions", autocomplete: "off" }),
  paused: false,
  buffer: [],
};
live.pause = h("button", { type: "button", class: "btn btn-small", onclick: () => togglePause() }, "Pause");
live.status = h("span", { class: "muted", role: "status" });
live.root.append(
  h("div", { class: "view-head" }, h("h1", { id: "live-title" }, "Live events")),
  h("div", { class: "toolbar" },
    h("label", null, "Session ", live.session), sessionList("live-sessions"),
    live.pause,
    h("button", { type: "button", class: "btn btn-small", onclick: () => replace(live.rows) }, "Clear"),
    live.status),
  live.rows);
live.session.addEventListener("input", debounce(() => { if (live.stream) startLive(); }, 400));

export function liveView() {
  return live.root;
}

function togglePause() {
  live.paused = !live.paused;
  live.pause.textContent = live.paused ? "Resume" : "Pause";
  if (!live.paused) {
    for (const ev of live.buffer) liveRow(ev);
    live.buffer = [];
  }
}

function startLive() {
  hideLive();
  replace(live.rows);
  const session = live.session.value.trim();
  const since = new Date(serverNow() - 30 * 60000).toISOString();
  live.stream = new Stream("/v1/events", { session, since }, EVENT_TYPES, (ev) => {
    noteEvent(ev);
    noteCall(ev);
    if (!live.paused) liveRow(ev);
    else if (live.buffer.push(ev) > 500) live.buffer.shift();
  }, (state, detail) => {
    if (state === "live") live.status.textContent = "following " + (session || "all sessions") + " · from 30 min ago";
    else if (state === "down" && detail === 400) live.status.textContent = "the server refused this session id";
    else live.status.textContent = state === "down" ? "offline" : "connecting…";
  });
}

export function showLive(params) {
  if (params.has("session")) live.session.value = params.get("session");
  startLive();
}

// hideLive stops following events while the view is hidden.
export function hideLive() {
  if (live.stream) live.stream.close();
  live.stream = null;
}

function liveRow(ev) {
  const p = gateFields(ev);
  const link = callLink(ev);
  const row = h("li", { class: ["stream-row", p.decision && decisionClass(p.decision)] },
    h("time", { class: "muted mono stream-time", datetime: ev.time }, fmtTime(ev.time)),
    h("span", { class: "mono stream-session", title: ev.session }, ev.session),
    typeChip(ev.type),
    h("span", { class: "stream-text" },
      p.decision ? [h("span", { class: ["chip", decisionClass(p.decision)] }, p.decision), " "] : null,
      ev.type === "injection.suspected" ? [injectionChip([p.class]), " "] : null,
      link ? h("a", { href: link }, describe(ev)) : describe(ev)));
  live.rows.prepend(row);
  while (live.rows.children.length > 500) live.rows.lastElementChild.remove();
}

// ---- Audit ----

const AUDIT_COLUMNS = ["Time", "Session", "Agent", "Event", "Tool / call", "Decision", "Reason", "By", "Rule"];
const audit = { root: h("section", { class: "view", id: "view-audit", "aria-labelledby": "audit-title" }) };
const f = {
  session: h("input", { type: "search", name: "session", list: "audit-sessions", autocomplete: "off", placeholder: "any" }),
  tool: h("input", { type: "search", name: "tool", autocomplete: "off", placeholder: "any, e.g. Bash" }),
  decision: h("select", { name: "decision" }, ["", "allow", "ask", "deny"].map((d) => h("option", { value: d }, d || "any"))),
  reason: h("input", { type: "search", name: "reason", list: "audit-reasons", autocomplete: "off", placeholder: "any" }),
  type: h("select", { name: "type" },
    h("option", { value: "permission.resolved" }, "decisions"),
    h("option", { value: "permission.requested" }, "questions to a person"),
    h("option", { value: "" }, "all events"),
    EVENT_TYPES.filter((t) => !t.startsWith("permission.")).map((t) => h("option", { value: t }, t))),
  since: h("input", { type: "datetime-local", name: "since", step: "1" }),
  until: h("input", { type: "datetime-local", name: "until", step: "1" }),
};
audit.table = h("tbody", { id: "audit-rows" });
audit.status = h("p", { class: "muted", role: "status", id: "audit-status" });
audit.more = h("button", { type: "button", class: "btn", id: "audit-more", hidden: true, onclick: () => showMore() }, "Show older");
audit.form = h("form", { class: "filters", id: "audit-form", onsubmit: (e) => { e.preventDefault(); runAudit(); } },
  field("Session", f.session), field("Tool", f.tool), field("Decision", f.decision), field("Reason", f.reason),
  field("Events", f.type), field("From", f.since), field("To", f.until),
  h("div", { class: "filter-actions" },
    h("button", { type: "submit", class: "btn btn-primary" }, "Search"),
    h("span", { class: "quick" }, ["1h", "24h", "7d"].map((r) =>
      h("button", { type: "button", class: "btn btn-small", onclick: () => quickRange(r) }, "last " + r))),
    h("button", { type: "button", class: "btn btn-small", onclick: () => download() }, "Download JSON")),
  sessionList("audit-sessions"),
  h("datalist", { id: "audit-reasons" }, ["rule_ask", "rule_deny", "destructive_effect", "execute_effect", "write_effect",
    "network_request", "credential_access", "protected_path", "sandbox_rejected", "user_approved", "user_denied",
    "approval_timeout", "approval_cancelled", "no_approver", "prior_approval", "rule_allow", "receipt_invalid"].map((r) => h("option", { value: r }))));
// At phone width the filters fold away under a line that says what they
// are set to, so that the results come first.
audit.filterSummary = h("span", { class: "muted filter-summary" });
audit.filters = h("details", { class: "filter-box", id: "audit-filters", open: !matchMedia("(max-width: 640px)").matches },
  h("summary", null, "Filters ", audit.filterSummary), audit.form);
audit.root.append(
  h("div", { class: "view-head" }, h("h1", { id: "audit-title" }, "Audit")),
  audit.filters,
  audit.status,
  h("div", { class: "table-wrap" },
    h("table", { class: "table audit-table stack-phone" },
      h("thead", null, h("tr", null, AUDIT_COLUMNS.map((c) => h("th", { scope: "col" }, c)))),
      audit.table)),
  audit.more);

function field(label, input) {
  return h("label", { class: "field" }, h("span", null, label), input);
}

function quickRange(r) {
  const ms = { "1h": 3600e3, "24h": 86400e3, "7d": 7 * 86400e3 }[r];
  f.since.value = localInput(new Date(serverNow() - ms));
  f.until.value = "";
  runAudit();
}

function localInput(d) {
  const p = (n) => String(n).padStart(2, "0");
  return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + "T" + p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds());
}

export function auditView() {
  return audit.root;
}

// showAudit fills the filters from the route's query and searches.
export function showAudit(params) {
  // A route with filters sets them all; a bare #/audit keeps the last ones.
  if ([...params.keys()].length > 0) {
    for (const [k, el] of Object.entries(f)) el.value = params.get(k) ?? (k === "type" ? "permission.resolved" : "");
  }
  if (!f.since.value) f.since.value = localInput(new Date(serverNow() - 86400e3));
  runAudit();
}

function filterParams() {
  const iso = (v) => (v ? new Date(v).toISOString() : "");
  return {
    session: f.session.value.trim(), tool: f.tool.value.trim(), decision: f.decision.value,
    type: f.type.value, since: iso(f.since.value), until: iso(f.until.value),
  };
}

// The audit shows the newest events first. The log is read oldest first,
// so a search reads the whole range, up to AUDIT_READ events, and keeps
// the newest of what matched; rows are shown AUDIT_PAGE at a time.
const AUDIT_READ = 25000;
const AUDIT_PAGE = 200;

async function runAudit() {
  const params = filterParams();
  const reason = f.reason.value.trim();
  const gen = (audit.gen = (audit.gen || 0) + 1);
  audit.rows = [];
  audit.shown = 0;
  replace(audit.table);
  audit.more.hidden = true;
  const q = new URLSearchParams();
  for (const [k, el] of Object.entries(f)) if (el.value || k === "type") q.set(k, el.value);
  history.replaceState(null, "", "#/audit?" + q);
  const set = Object.entries(f).filter(([k, el]) => el.value && k !== "since" && k !== "until")
    .map(([k, el]) => k === "type" ? el.selectedOptions[0]?.textContent || el.value : k + " " + el.value);
  audit.filterSummary.textContent = "· " + (set.length ? set.join(", ") : "all") + (f.since.value ? " · from " + fmtDateTime(new Date(f.since.value).toISOString()) : "");
  audit.status.textContent = "Searching…";
  const page = 500;
  try {
    let got = [];
    let after = "";
    let read = 0;
    let cut = false;
    for (;;) {
      const res = await api("/v1/events", { params: { ...params, after, limit: page } });
      if (gen !== audit.gen) return; // a newer search started meanwhile
      const evs = (res && res.events) || [];
      if (evs.length > 0) after = evs[evs.length - 1].id;
      read += evs.length;
      got.push(...evs.filter((ev) => !reason || gateFields(ev).reason === reason));
      // A page the server cut short by size says "more".
      if (evs.length < page && !(res && res.more)) break;
      if (read >= AUDIT_READ) { cut = true; break; }
    }
    got.reverse();
    await findCalls(got.slice(0, AUDIT_PAGE * 5).reverse(), params.session);
    if (gen !== audit.gen) return;
    audit.rows = got;
    audit.cut = cut;
    for (const ev of got.slice(0, 2000)) noteEvent(ev);
    showMore();
  } catch (err) {
    if (gen === audit.gen) audit.status.textContent = "Could not search: " + err.message;
  }
}

// showMore shows the next AUDIT_PAGE rows, older than those shown.
async function showMore() {
  const next = audit.rows.slice(audit.shown, audit.shown + AUDIT_PAGE);
  if (audit.shown > 0) await findCalls(next.slice().reverse(), filterParams().session);
  for (const ev of next) audit.table.append(auditRow(ev));
  audit.shown += next.length;
  const n = audit.rows.length;
  audit.more.hidden = audit.shown >= n;
  audit.status.textContent = n === 0 ? "No events match." :
    n + " event" + (n === 1 ? "" : "s") + ", newest first" + (audit.shown < n ? " · showing " + audit.shown : "") +
    (audit.cut ? " · the range holds more than " + AUDIT_READ.toLocaleString() + " events: these are the newest of the first ones read; narrow the range" : "");
}

// findCalls reads the events that carry the calls evs belong to (see
// calls), from a little before the first to the last.
async function findCalls(evs, session) {
  const missing = evs.filter((ev) => gateFields(ev).toolCallId && !calls.has(gateFields(ev).toolCallId));
  for (const ev of evs) noteCall(ev);
  if (missing.length === 0) return;
  const first = new Date(missing[0].time).getTime();
  const last = new Date(missing[missing.length - 1].time).getTime();
  try {
    const res = await api("/v1/events", { params: {
      type: "model.tool_call_requested,permission.resolved", session, limit: 10000,
      since: new Date(first - 15 * 60e3).toISOString(), until: new Date(last + 1000).toISOString(),
    } });
    for (const ev of (res && res.events) || []) noteCall(ev);
  } catch {
    // The rows still show the tool and the call id.
  }
}

// auditRow is one event as a row; at phone width the rows are cards, each
// cell labelled with its column (data-label).
function auditRow(ev) {
  const p = gateFields(ev);
  const link = callLink(ev);
  const what = subject(ev) || describe(ev);
  const agent = p.agent || (calls.get(p.toolCallId) || {}).agent || "";
  const cell = (i, attrs, ...children) => h("td", { ...attrs, "data-label": AUDIT_COLUMNS[i] }, ...children);
  return h("tr", { class: p.decision ? decisionClass(p.decision) : null },
    cell(0, { class: "mono nowrap audit-time" }, h("time", { datetime: ev.time, title: ev.time }, fmtDateTime(ev.time))),
    cell(1, { class: "mono wrap-any" }, h("a", { href: "#/live?session=" + encodeURIComponent(ev.session), class: "plain" }, ev.session)),
    cell(2, { class: ["wrap-any", !agent && "empty-cell"] }, agent),
    cell(3, null, typeChip(ev.type), ev.type === "injection.suspected" ? [" ", injectionChip([p.class])] : null),
    cell(4, { class: "subject wrap-any" }, link ? h("a", { href: link, class: "mono" }, what || p.toolCallId) : h("span", { class: "mono" }, what)),
    cell(5, { class: !p.decision && "empty-cell" }, p.decision ? h("span", { class: ["chip", decisionClass(p.decision)] }, p.decision) : null),
    cell(6, { class: ["wrap-any", !p.reason && "empty-cell"], title: p.reason || "" }, reasonText(p.reason)),
    cell(7, { class: ["nowrap", !p.actor && "empty-cell"], title: p.actor ? byWhom(p) : null }, p.actor || "", p.via ? " · " + p.via : ""),
    cell(8, { class: ["mono wrap-any", !p.rule && "empty-cell"] }, p.rule || ""));
}

function download() {
  const blob = new Blob([JSON.stringify(audit.rows || [], null, 2)], { type: "application/json" });
  const a = h("a", { href: URL.createObjectURL(blob), download: "toolgate-audit.json" });
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

// ---- Timeline of one call ----

const tl = { root: h("section", { class: "view", id: "view-call", "aria-labelledby": "call-title" }) };
tl.title = h("h1", { id: "call-title" }, "Tool call");
tl.body = h("div", { id: "call-body" });
tl.root.append(h("div", { class: "view-head" }, tl.title, h("a", { href: "#/audit", class: "muted" }, "← audit")), tl.body);

export function callView() {
  return tl.root;
}

export async function showCall(session, id) {
  replace(tl.title, "Tool call ", h("span", { class: "mono" }, id));
  replace(tl.body, h("p", { class: "muted" }, "Loading…"));
  try {
    const [evs, appr] = await Promise.all([
      allEvents({ session }),
      api("/v1/approvals/" + encodeURIComponent(id)).catch(() => null),
    ]);
    const mine = evs.filter((ev) => gateFields(ev).toolCallId === id);
    for (const ev of mine) noteCall(ev);
    const injected = mine.filter((ev) => ev.type === "injection.suspected").map((ev) => gateFields(ev).class);
    replace(tl.body,
      h("p", { class: "muted" }, "Session ", h("span", { class: "mono" }, session), " · ", mine.length, " events",
        injected.length ? [" ", injectionChip(injected)] : null),
      appr && appr.request ? approvalSummary(appr) : null,
      mine.length === 0 ? h("p", { class: "empty" }, "No events carry this tool call id.") : null,
      h("ol", { class: "timeline" }, mine.map((ev, i) => timelineItem(ev, mine[0], i))));
  } catch (err) {
    replace(tl.body, h("p", { class: "card-error" }, "Could not load the call: " + err.message));
  }
}

function approvalSummary(a) {
  const r = a.request;
  const d = a.decision || {};
  return h("div", { class: ["panel", riskClass(r.risk)] },
    h("p", { class: "summary mono" }, r.summary || r.tool),
    h("p", null,
      h("span", { class: ["risk-badge", riskClass(r.risk)] }, r.risk || "?"), " ",
      a.state === "pending" ? h("span", { class: "chip dec-ask" }, "pending") :
        h("span", { class: ["chip", decisionClass(d.decision)] }, d.decision || a.state),
      " ", h("span", { class: "muted" }, reasonText(d.reason), d.answer && d.answer !== "deny" ? " · " + d.answer.replace("_", " ") : ""),
      d.message && d.decision === "deny" ? h("span", null, " — “" + d.message + "”") : null),
    changeView(a),
    r.units && r.units.length ? h("ul", { class: "units compact" }, r.units.map((u) => h("li", null,
      h("code", null, u.label), " ", h("span", { class: ["chip", riskClass(u.risk)] }, u.risk), " ",
      h("span", { class: ["chip", decisionClass(u.decision)] }, u.decision)))) : null);
}

function timelineItem(ev, first, i) {
  const p = gateFields(ev);
  const dt = new Date(ev.time) - new Date(first.time);
  return h("li", { class: ["tl-item", p.decision && decisionClass(p.decision)] },
    h("div", { class: "tl-head" },
      typeChip(ev.type),
      p.decision ? h("span", { class: ["chip", decisionClass(p.decision)] }, p.decision) : null,
      p.riskAtDecision ? h("span", { class: ["chip", riskClass(p.riskAtDecision)] }, p.riskAtDecision) : null,
      ev.type === "permission.resolved" ? h("span", { class: "chip actor-chip", title: "who decided" },
        p.actor === "user" ? "person" + (p.via ? " · " + p.via : "") : p.actor || "policy") : null,
      h("time", { class: "muted mono", datetime: ev.time }, fmtDateTime(ev.time)),
      i > 0 ? h("span", { class: "muted mono" }, "+" + (dt >= 1000 ? (dt / 1000).toFixed(1) + " s" : dt + " ms")) : null,
      h("span", { class: "muted mono" }, "#" + ev.seq)),
    h("p", { class: "tl-text" }, describe(ev)),
    h("details", null, h("summary", null, "payload"), kv(ev.payload || {})));
}

