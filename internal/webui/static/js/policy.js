// The policy view: the effective policy for a project on top, with the
// default table by risk and where each setting and rule came from; then a
// session's mode and axes with a switch, each showing the value it has
// now, and the session's approvals and leases.

import { api } from "./api.js";
import { h, replace, decisionClass, riskClass, toast, labelCells } from "./dom.js";
import { seen, recent, onSeen } from "./state.js";

// FROM_FILES labels the choice that leaves a setting to the policy files,
// until the files' value is known.
const FROM_FILES = "as the policy files say";

const MODES = ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions", "strict"];
const APPROVALS = ["on-request", "always", "never"];
const SANDBOXES = ["read-only", "workspace-write", "danger-full-access"];

const root = h("section", { class: "view", id: "view-policy", "aria-labelledby": "policy-title" });

// ---- Session settings ----

const sess = {
  id: h("input", {
    type: "search", id: "policy-session", list: "policy-sessions", autocomplete: "off", placeholder: "session id",
    required: true, onchange: () => loadSession(),
  }),
  mode: select("mode", MODES),
  approval: select("approval", APPROVALS),
  sandbox: select("sandbox", SANDBOXES),
  network: h("select", { name: "network", id: "session-network" },
    h("option", { value: "" }, FROM_FILES), h("option", { value: "true" }, "on"), h("option", { value: "false" }, "off")),
  status: h("p", { class: "muted", role: "status", id: "session-policy-status" }),
  loaded: "", // the session whose settings the form shows
  current: {}, // and those settings
};
const sessionsList = h("datalist", { id: "policy-sessions" });
onSeen(() => replace(sessionsList, recent(seen.sessions).slice(0, 50).map((x) => h("option", { value: x }))));
sess.form = h("form", {
  class: "session-form", id: "session-policy-form",
  onsubmit: (e) => { e.preventDefault(); saveSession(); },
},
h("div", { class: "filters" },
  h("label", { class: "field" }, h("span", null, "Session"), sess.id),
  h("div", { class: "filter-actions" }, h("button", { type: "button", class: "btn", onclick: () => loadSession() }, "Load"))),
h("div", { class: "filters settings-fields" },
  h("label", { class: "field" }, h("span", null, "Mode"), sess.mode),
  h("label", { class: "field" }, h("span", null, "Approval"), sess.approval),
  h("label", { class: "field" }, h("span", null, "Sandbox"), sess.sandbox),
  h("label", { class: "field" }, h("span", null, "Network"), sess.network)),
h("div", { class: "filter-actions" },
  h("button", { type: "submit", class: "btn btn-primary", id: "session-policy-save" }, "Switch"),
  h("button", { type: "button", class: "btn", onclick: () => resetSession() }, "Back to the policy files")),
sess.status, sessionsList);

// ---- Session approvals and leases ----

const grants = {
  body: h("div", { id: "grants-body" }, h("p", { class: "muted" }, "Load a session to see its grants.")),
  path: h("input", { type: "text", id: "lease-path", class: "mono", placeholder: "~/notes/todo.txt, /abs/path, or relative to the session's directory", required: true, autocomplete: "off" }),
  capability: h("select", { id: "lease-capability" }, h("option", { value: "read" }, "read"), h("option", { value: "write" }, "write")),
  ttl: h("input", { type: "text", id: "lease-ttl", value: "15m", size: 6, autocomplete: "off", title: "a duration such as 30m or 2h, at most 24h" }),
  agent: h("input", { type: "text", id: "lease-agent", placeholder: "none", title: "the agent name the session's calls carry; none matches calls without one", autocomplete: "off" }),
  status: h("p", { class: "muted", role: "status", id: "lease-status" }),
};
grants.form = h("form", {
  class: "filters", id: "lease-form",
  onsubmit: (e) => { e.preventDefault(); grantLease(); },
},
h("label", { class: "field wide" }, h("span", null, "Path"), grants.path),
h("label", { class: "field" }, h("span", null, "Capability"), grants.capability),
h("label", { class: "field" }, h("span", null, "For"), grants.ttl),
h("label", { class: "field" }, h("span", null, "Agent"), grants.agent),
h("div", { class: "filter-actions" }, h("button", { type: "submit", class: "btn btn-primary", id: "lease-grant" }, "Grant lease")));

async function loadGrants(id) {
  try {
    renderGrants(id, (await api("/v1/sessions/" + encodeURIComponent(id) + "/grants")).grants || []);
  } catch (err) {
    replace(grants.body, h("p", { class: "card-error" }, "Could not read the session's grants: " + err.message));
  }
}

// renderGrants shows a session's approvals and leases, each with a
// button that revokes it.
function renderGrants(id, list) {
  if (list.length === 0) {
    replace(grants.body, h("p", { class: "muted", id: "grants-empty" }, "Session " + id + " holds no session approval or lease."));
    return;
  }
  const when = (t) => (t ? new Date(t).toLocaleString() : "—");
  replace(grants.body, h("div", { class: "table-wrap" }, labelCells(h("table", { class: "table grants-table stack-phone", id: "grants-table" },
    h("thead", null, h("tr", null, ["kind", "what", "agent", "granted", "ends", ""].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", null, list.map((g) => h("tr", { "data-grant": g.id },
      h("td", null, h("span", { class: "chip" }, g.kind === "lease" ? "lease · " + g.capability : "session approval")),
      h("td", { class: "mono" }, g.kind === "lease" ? g.path : g.summary || g.tool,
        g.from ? h("span", { class: "muted" }, " · from " + g.from) : null),
      h("td", null, g.agent || "—"),
      h("td", { class: "muted" }, when(g.granted)),
      h("td", { class: "muted" }, g.kind === "lease" ? when(g.expires) : "when a file it read changes"),
      h("td", null, h("button", {
        type: "button", class: "btn btn-deny btn-small", "aria-label": "Revoke " + g.id, onclick: () => revokeGrant(id, g.id),
      }, "Revoke")))))))));
}

async function revokeGrant(session, grant) {
  try {
    await api("/v1/sessions/" + encodeURIComponent(session) + "/grants/" + encodeURIComponent(grant), { method: "DELETE" });
    toast("Revoked " + grant);
  } catch (err) {
    toast("Could not revoke " + grant + ": " + err.message);
  }
  loadGrants(session);
}

async function grantLease() {
  const id = sess.id.value.trim();
  if (!id) {
    grants.status.textContent = "Name a session.";
    return;
  }
  const body = { path: grants.path.value.trim(), capability: grants.capability.value, ttl: grants.ttl.value.trim() };
  if (grants.agent.value.trim()) body.agent = grants.agent.value.trim();
  grants.status.textContent = "Granting…";
  try {
    const ls = await api("/v1/sessions/" + encodeURIComponent(id) + "/leases", { method: "POST", body });
    grants.status.textContent = "Lease " + ls.id + " on " + ls.path + ".";
    grants.path.value = "";
  } catch (err) {
    grants.status.textContent = "Could not grant the lease: " + err.message;
  }
  loadGrants(id);
}

function select(name, values) {
  return h("select", { name, id: "session-" + name },
    h("option", { value: "" }, FROM_FILES), values.map((v) => h("option", { value: v }, v)));
}

// showFileValues names, in each switch's "policy files" choice, the value
// the files give, so that the form shows what holds now.
function showFileValues(settings) {
  const show = (v) => (typeof v === "boolean" ? (v ? "on" : "off") : v || "default");
  for (const k of ["mode", "approval", "sandbox", "network"]) {
    const opt = sess[k].querySelector('option[value=""]');
    const v = settings ? settings[k] : undefined;
    opt.textContent = v === undefined || v === null ? FROM_FILES : show(v) + " (from the policy files)";
  }
}

// ---- Effective policy ----

const eff = {
  cwd: h("input", { type: "search", id: "policy-cwd", list: "policy-cwds", autocomplete: "off", placeholder: "/path/to/project", class: "mono" }),
  body: h("div", { id: "policy-body" }),
};
const cwdList = h("datalist", { id: "policy-cwds" });
onSeen(() => {
  replace(cwdList, recent(seen.cwds).slice(0, 30).map((x) => h("option", { value: x })));
  if (!eff.cwd.value && seen.cwds.size > 0) eff.cwd.value = recent(seen.cwds)[0];
});

root.append(
  h("div", { class: "view-head" }, h("h1", { id: "policy-title" }, "Policy")),
  h("div", { class: "panel", id: "effective-policy" },
    h("h2", null, "Effective policy"),
    h("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); loadPolicy(); } },
      h("label", { class: "field wide" }, h("span", null, "Project directory"), eff.cwd), cwdList,
      h("div", { class: "filter-actions" }, h("button", { type: "submit", class: "btn btn-primary" }, "Show"))),
    eff.body),
  h("div", { class: "panel" },
    h("h2", null, "Session mode and axes"),
    h("p", { class: "muted small" }, "A switch applies to the session's next call. Settings fixed by the managed policy or a command-line flag cannot be switched."),
    sess.form),
  h("div", { class: "panel" },
    h("h2", null, "Session approvals and leases"),
    h("p", { class: "muted small" }, "What the session may do again without asking. A lease lets the session's agent read or write one path for a while; it never unlocks credentials, protected paths or destructive calls."),
    grants.body, grants.form, grants.status));

export function policyView() {
  return root;
}

export function showPolicy(params) {
  if (params.get("session")) sess.id.value = params.get("session");
  else if (!sess.id.value && seen.sessions.size > 0) sess.id.value = recent(seen.sessions)[0];
  if (params.get("cwd")) eff.cwd.value = params.get("cwd");
  if (sess.id.value) loadSession();
  loadPolicy();
}

async function loadSession() {
  const id = sess.id.value.trim();
  if (!id) {
    sess.status.textContent = "Name a session.";
    return;
  }
  sess.status.textContent = "Loading…";
  try {
    const v = await api("/v1/sessions/" + encodeURIComponent(id) + "/policy");
    fillSession(id, v);
    sess.status.textContent = "Session " + id + ".";
    // What the policy files give where the session works.
    const cwd = (v && v.bound_workspace && v.bound_workspace !== "/") ? v.bound_workspace : eff.cwd.value.trim();
    if (cwd) api("/v1/policy", { params: { cwd } }).then((p) => showFileValues(p && p.settings)).catch(() => showFileValues(null));
    grants.status.textContent = "";
    loadGrants(id);
  } catch (err) {
    sess.status.textContent = "Could not read the session's settings: " + err.message;
  }
}

function fillSession(id, v) {
  v = v || {};
  sess.loaded = id;
  sess.current = v;
  for (const k of ["mode", "approval", "sandbox"]) sess[k].value = typeof v[k] === "string" ? v[k] : "";
  sess.network.value = typeof v.network === "boolean" ? String(v.network) : "";
}

async function saveSession(body) {
  const id = sess.id.value.trim();
  if (!id) {
    sess.status.textContent = "Name a session.";
    return;
  }
  if (!body) {
    // What the form shows; only what differs from the loaded settings
    // when they are this session's.
    const want = {
      mode: sess.mode.value || null, approval: sess.approval.value || null, sandbox: sess.sandbox.value || null,
      network: sess.network.value === "" ? null : sess.network.value === "true",
    };
    body = {};
    for (const [k, v] of Object.entries(want)) {
      if (sess.loaded !== id || v !== (sess.current[k] ?? null)) body[k] = v;
    }
  }
  if (Object.keys(body).length === 0) {
    sess.status.textContent = "Nothing changed.";
    return;
  }
  sess.status.textContent = "Saving…";
  try {
    const res = await api("/v1/sessions/" + encodeURIComponent(id) + "/policy", { method: "PUT", body });
    fillSession(id, res);
    sess.status.textContent = "Switched session " + id + ".";
    toast("Session " + id + " switched");
  } catch (err) {
    sess.status.textContent = (err.status === 409 ? "Locked: " : "Could not switch: ") + err.message;
  }
}

function resetSession() {
  saveSession({ mode: null, approval: null, sandbox: null, network: null });
}

async function loadPolicy() {
  const cwd = eff.cwd.value.trim();
  replace(eff.body, h("p", { class: "muted" }, "Loading…"));
  try {
    renderPolicy(await api("/v1/policy", { params: { cwd } }));
  } catch (err) {
    replace(eff.body, h("p", { class: "card-error" }, "Could not read the policy: " + err.message));
  }
}

// renderPolicy shows the answer of GET /v1/policy: the settings with the
// layer or file:line that set each, what decides when no rule does (the
// default table by risk, as the mode and approval setting change it), the
// pooled rules in evaluation order with their origin, the rules a managed
// lock set aside, and notes.
function renderPolicy(p) {
  const rules = p.rules || [];
  const from = p.from || {};
  // The command-line layer is there whether or not a flag was given; it
  // is shown only when it holds a rule or sets something.
  const cliUsed = rules.some((r) => r.layer === "cli") || Object.values(from).some((v) => /^cli\b/.test(v));
  const files = (p.files || []).filter((f) => f.layer !== "cli" || cliUsed);
  replace(eff.body,
    h("p", { class: "policy-root" }, h("span", { class: "muted" }, "Project root "), h("code", null, p.root || "none found"),
      files.length > 0 ? [h("span", { class: "muted" }, " · layers "),
        files.map((f) => [h("span", { class: "chip", title: f.path || "" }, f.layer), " "])] : null),
    settingsTable(p.settings || {}, from),
    h("h3", null, "When no rule decides ", h("span", { class: "muted" }, "· the default table by risk")),
    defaultTable(p.settings || {}),
    h("h3", null, "Rules ", h("span", { class: "muted" }, "· " + rules.length + ", evaluated deny → ask → allow")),
    rules.length === 0 ? h("p", { class: "muted" }, "No rules: the default table decides by risk.") : rulesTable(rules),
    (p.ignored || []).length > 0 ? [h("h3", null, "Set aside by the managed policy"), rulesTable(p.ignored)] : null,
    (p.notes || []).length > 0 ? [h("h3", null, "Notes"), h("ul", { class: "notes" }, p.notes.map((n) => h("li", null, n)))] : null);
}

// DEFAULTS is the default table: what each risk gets when no rule decides.
const DEFAULTS = [
  ["read", "allow", ""],
  ["write", "ask", ""],
  ["execute", "ask", ""],
  ["network", "ask", ""],
  ["credential", "deny", "only a rule that names the path or host allows it"],
  ["destructive", "ask", "typed confirmation; never remembered, asks every time"],
];

// defaultTable shows DEFAULTS as the mode and the approval setting
// change them.
function defaultTable(settings) {
  const mode = settings.mode || "default";
  const approval = settings.approval || "on-request";
  const rows = DEFAULTS.map(([risk, dec, note]) => {
    let d = dec, why = note;
    if (mode === "strict" && dec !== "deny") { d = "deny"; why = "strict mode: a call no rule allows is denied"; }
    else if (mode === "bypassPermissions" && dec === "ask" && risk !== "destructive") { d = "allow"; why = "bypass mode (protected paths and code that cannot be judged still ask)"; }
    else if (mode === "acceptEdits" && risk === "write") { d = "allow"; why = "accept-edits mode, inside the workspace"; }
    else if (mode === "dontAsk" && dec === "ask") { d = "deny"; why = "don't-ask mode: what would ask is denied"; }
    else if (mode === "plan" && (risk === "write" || risk === "execute" || risk === "destructive")) { d = "deny"; why = "plan mode: read-only"; }
    else if (approval === "always" && dec === "allow") { d = "ask"; why = "approval = always: every call asks"; }
    else if (approval === "never" && dec === "ask") {
      d = risk === "destructive" ? "deny" : "allow";
      why = risk === "destructive" ? "approval = never: nobody is there to confirm" : "approval = never: runs if the sandbox contains it";
    }
    return h("tr", null,
      h("td", null, h("span", { class: ["risk-badge", riskClass(risk)] }, risk)),
      h("td", null, h("span", { class: ["chip", decisionClass(d)] }, d)),
      h("td", { class: "muted wide-cell" }, why));
  });
  return h("div", { class: "table-wrap" }, labelCells(h("table", { class: "table default-table stack-phone" },
    h("thead", null, h("tr", null, ["risk", "decision", "note"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", null, rows))));
}

function settingsTable(settings, from) {
  const show = (v) => (v === null || v === undefined || (Array.isArray(v) && v.length === 0) ? "—" : Array.isArray(v) ? v.join(", ") : String(v));
  return h("div", { class: "table-wrap" }, labelCells(h("table", { class: "table settings-table stack-phone" },
    h("thead", null, h("tr", null, h("th", { scope: "col" }, "setting"), h("th", { scope: "col" }, "value"), h("th", { scope: "col" }, "set by"))),
    h("tbody", null, Object.entries(settings).map(([k, v]) => h("tr", null,
      h("td", null, k), h("td", { class: "mono wrap-any" }, show(v)),
      h("td", { class: "mono muted wrap-any set-by" }, from[k] || "default")))))));
}

function rulesTable(rules) {
  return h("div", { class: "table-wrap" }, labelCells(h("table", { class: "table rules-table stack-phone" },
    h("thead", null, h("tr", null, ["effect", "rule", "layer", "from"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", null, rules.map((r) => h("tr", null,
      h("td", null, h("span", { class: ["chip", decisionClass(r.effect)] }, r.effect)),
      h("td", { class: "mono wrap-any" }, r.rule),
      h("td", null, r.layer),
      h("td", { class: "mono muted wrap-any wide-cell" }, r.origin || (r.file ? r.file + ":" + r.line : ""), r.reason ? " — " + r.reason : "")))))));
}
