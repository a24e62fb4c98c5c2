// Building DOM nodes. Every string becomes a text node or an attribute
// value: nothing here parses markup, so text an agent supplies is shown as
// it is and cannot add elements, attributes or scripts to the page.

const SVG_NS = "http://www.w3.org/2000/svg";

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") {
      el.addEventListener(k.slice(2).toLowerCase(), v);
    } else if (k.startsWith("on")) {
      throw new Error("event attributes take functions: " + k);
    } else if (k === "class") {
      el.setAttribute("class", Array.isArray(v) ? v.filter(Boolean).join(" ") : v);
    } else if (k === "value" && "value" in el) {
      el.value = v;
    } else if (k === "checked" || k === "disabled" || k === "selected" || k === "hidden") {
      el[k] = Boolean(v);
    } else {
      el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(visible(String(c))));
  }
}

// UNSEEN are the characters that are not known to show as themselves, as
// termtext.Escape has it on the terminal: all but letters, marks, numbers,
// punctuation, symbols, the ASCII space, tab and newline. Controls, the
// bidirectional-text controls (which reorder what follows them: a command
// could read backwards from what runs), zero-width and other format
// characters, other spaces and unassigned code points are among them.
const UNSEEN = /[^\p{L}\p{M}\p{N}\p{P}\p{S} \t\n]/gu;

// visible shows each character of UNSEEN in text as an escape, \u202e.
export function visible(text) {
  return text.replace(UNSEEN, (c) => {
    const n = c.codePointAt(0);
    return n > 0xffff ? "\\u{" + n.toString(16) + "}" : "\\u" + n.toString(16).padStart(4, "0");
  });
}

// h creates an HTML element: h("div", {class: "x"}, "text", child, ...).
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s creates an SVG element.
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

// replace empties el and appends children.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const reasons = {
  rule_deny: "deny rule", rule_ask: "ask rule", rule_allow: "allow rule",
  sandbox_rejected: "outside the sandbox", protected_path: "protected path",
  destructive_effect: "destructive", credential_access: "credential access",
  outside_workspace: "outside the workspace", symlink_escape: "symlink escape",
  unknown_command: "unknown command", execute_effect: "runs a program",
  write_effect: "writes files", read_only: "read-only", network_request: "network access",
  private_network: "private network host", untrusted_mcp_server: "untrusted MCP server",
  unknown_tool: "unknown tool", invalid_arguments: "invalid arguments",
  invalid_request: "invalid request", policy_error: "policy error",
  prior_approval: "approved earlier", lease: "lease", policy_always: "approval = always",
  mode_bypass: "bypass mode", mode_accept_edits: "accept-edits mode", plan_mode: "plan mode",
  strict_unmatched: "strict mode, no rule", no_approver: "no approver",
  approval_timeout: "no answer in time", user_denied: "denied by a person",
  user_approved: "approved by a person", hook: "hook", nothing_to_run: "nothing to run",
  approval_cancelled: "caller went away", approver_error: "approver failed",
  receipt_invalid: "the call changed after it was asked about",
  agent_denied: "denied on the agent's side",
};

// reasonText is a reason code in words, or the code itself when unknown.
export function reasonText(code) {
  return reasons[code] || code || "";
}

const RISKS = ["read", "write", "execute", "network", "credential", "destructive"];

// riskClass is the CSS class for a risk level, risk-unknown for others.
export function riskClass(r) {
  return RISKS.includes(r) ? "risk-" + r : "risk-unknown";
}

// decisionClass is the CSS class for allow, ask or deny.
export function decisionClass(d) {
  return ["allow", "ask", "deny"].includes(d) ? "dec-" + d : "dec-unknown";
}

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit", second: "2-digit" });
const dateTimeFmt = new Intl.DateTimeFormat(undefined, {
  month: "short", day: "numeric", hour: "numeric", minute: "2-digit", second: "2-digit",
});
const hourFmt = new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit" });
const dayHourFmt = new Intl.DateTimeFormat(undefined, { month: "numeric", day: "numeric", hour: "numeric" });

// fmtHour labels a chart column; withDay adds the date.
export function fmtHour(ms, withDay) {
  return (withDay ? dayHourFmt : hourFmt).format(new Date(ms));
}

// fmtTime shows a time of day, with the date when it is not today.
export function fmtTime(iso) {
  const d = new Date(iso);
  if (isNaN(d)) return "";
  const today = new Date();
  return d.toDateString() === today.toDateString() ? timeFmt.format(d) : dateTimeFmt.format(d);
}

const fullFmt = new Intl.DateTimeFormat(undefined, {
  year: "numeric", month: "short", day: "numeric", hour: "numeric", minute: "2-digit", second: "2-digit",
});

// fmtDateTime shows a date and a time of day, always with the date.
export function fmtDateTime(iso) {
  const d = new Date(iso);
  return isNaN(d) ? "" : fullFmt.format(d);
}

// fmtDuration shows a duration as "42s", "3m 05s" or "1h 02m".
export function fmtDuration(ms) {
  const sec = Math.max(0, Math.ceil(ms / 1000));
  if (sec < 60) return sec + "s";
  const m = Math.floor(sec / 60);
  if (m < 60) return m + "m " + String(sec % 60).padStart(2, "0") + "s";
  return Math.floor(m / 60) + "h " + String(m % 60).padStart(2, "0") + "m";
}

// toast shows a short message at the bottom of the page.
export function toast(text) {
  const box = document.getElementById("toasts");
  const t = h("div", { class: "toast", role: "status" }, text);
  box.appendChild(t);
  setTimeout(() => t.classList.add("leaving"), 3500);
  setTimeout(() => t.remove(), 4000);
}

// debounce delays fn until ms passed without another call.
export function debounce(fn, ms) {
  let id = 0;
  return (...args) => {
    clearTimeout(id);
    id = setTimeout(() => fn(...args), ms);
  };
}

// kv renders an object's fields as a definition list, values as text.
export function kv(obj) {
  const dl = h("dl", { class: "kv" });
  for (const [k, v] of Object.entries(obj || {})) {
    if (v === null || v === undefined || v === "") continue;
    dl.appendChild(h("dt", null, k));
    const text = typeof v === "object" ? JSON.stringify(v, null, 2) : String(v);
    dl.appendChild(h("dd", null, typeof v === "object" ? h("pre", null, text) : text));
  }
  return dl;
}

// labelCells gives each cell of table's body the text of its column's
// header as data-label, which a table of class stack-phone shows above
// the cell at phone width, where each row is a card; an empty cell is
// marked empty-cell and left out there.
export function labelCells(table) {
  const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent);
  for (const tr of table.querySelectorAll("tbody tr")) {
    [...tr.cells].forEach((td, i) => {
      if (heads[i]) td.setAttribute("data-label", heads[i]);
      if (td.textContent.trim() === "" && !td.querySelector("button")) td.classList.add("empty-cell");
    });
  }
  return table;
}
