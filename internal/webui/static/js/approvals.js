// The approvals view: the pending requests as a compact queue, grouped by
// session and agent, one line each; a line opens into the card with what
// the call would change and the answers, given with buttons or keys. A
// session's questions can all be denied at once. The last few decisions
// are underneath.

import { api, APIError, serverNow } from "./api.js";
import { h, replace, reasonText, riskClass, decisionClass, fmtTime, fmtDuration, toast } from "./dom.js";
import { note } from "./state.js";
import { changeView } from "./change.js";

const KEYS = { a: "allow_once", s: "allow_session", p: "allow_project", u: "allow_user", d: "deny" };

const ANSWERS = {
  allow_once: { label: "Allow once", done: "Allowed once" },
  allow_session: { label: "Allow for session", done: "Allowed for this session" },
  allow_project: { label: "Always allow in project", done: "Always allowed in this project" },
  allow_user: { label: "Always allow for me", done: "Always allowed for you" },
  deny: { label: "Deny", done: "Denied" },
};

const pending = new Map(); // approval id → { a, card, refs, open, auto }
const recent = []; // the last resolved decisions, newest first
const requested = new Map(); // toolCallId → tool, of the questions seen asked
const answeredHere = new Set(); // the ids this page answered
let current = ""; // the id of the selected card
let onCount = () => {};

const root = h("section", { class: "view", id: "view-approvals", "aria-labelledby": "approvals-title" });
const list = h("div", { class: "queue", id: "cards" });
const groups = new Map(); // session → { el, cards, head, confirm }
// answered says, for a few seconds, what this page's last answer did.
const answered = h("p", { class: "answered-note", id: "answered-note", role: "status", hidden: true });
let answeredTimer = 0;
const empty = h("div", { class: "empty-state", id: "no-pending" },
  h("div", { class: "empty-mark", "aria-hidden": "true" }, "✓"),
  h("p", { class: "empty-title" }, "Nothing is waiting for you"),
  h("p", { class: "muted" }, "When an agent asks to run something the policy does not decide, it appears here at once."));
const recentBox = h("ol", { class: "recent", id: "recent" });
const help = h("p", { class: "keyhint", id: "keyhint" },
  "Keys: ", key("j"), " ", key("k"), " move · ", key("o"), " open · ", key("a"), " allow once · ", key("s"), " session · ",
  key("p"), " project · ", key("u"), " always for me · ", key("d"), " deny · ", key("m"), " message · ",
  key("Esc"), " leave a field");

root.append(
  h("div", { class: "view-head" },
    h("h1", { id: "approvals-title" }, "Waiting for you"),
    help),
  answered, empty, list,
  h("h2", { class: "section-title" }, "Recent decisions"),
  recentBox);

function key(k) {
  return h("kbd", null, k);
}

export function approvalsView() {
  return root;
}

// onPendingCount registers fn to hear how many approvals are pending.
export function onPendingCount(fn) {
  onCount = fn;
}

// reload fetches the pending approvals and makes the cards match them.
export async function reload() {
  const res = await api("/v1/approvals", { params: { state: "pending" } });
  const items = (res && res.approvals) || [];
  const ids = new Set(items.map((a) => a.id));
  for (const id of [...pending.keys()]) if (!ids.has(id)) drop(id);
  for (const a of items) add(a);
  changed();
}

// handleEvent takes a permission.requested or permission.resolved event.
export function handleEvent(ev) {
  const p = ev.payload || {};
  const id = p.toolCallId;
  if (!id) return;
  if (ev.type === "permission.requested") {
    requested.set(id, p.tool || "");
    if (!pending.has(id)) fetchOne(id, 0);
  } else if (ev.type === "permission.resolved") {
    if (pending.has(id) || requested.has(id) || p.actor === "user") {
      const entry = pending.get(id);
      pushRecent({
        id, session: ev.session, time: ev.time, decision: p.decision, reason: p.reason,
        actor: p.actor, via: p.via, message: p.message, rule: p.rule,
        summary: entry ? entry.a.request.summary : p.tool || "",
      });
    }
    requested.delete(id);
    if (pending.has(id)) resolvedElsewhere(id, p);
  }
}

async function fetchOne(id, attempt) {
  try {
    const a = await api("/v1/approvals/" + encodeURIComponent(id));
    if (a && a.state === "pending") {
      add(a);
      changed();
    }
  } catch (err) {
    if (err instanceof APIError && err.status === 404 && attempt < 5) {
      setTimeout(() => fetchOne(id, attempt + 1), 200 * (attempt + 1));
    }
  }
}

function changed() {
  empty.hidden = pending.size > 0;
  if (!pending.has(current)) {
    const first = list.querySelector(".card:not(.answered)") || list.querySelector(".card");
    current = "";
    if (first) select(first.dataset.approvalId, "auto");
  }
  for (const e of pending.values()) e.card.classList.toggle("current", e.a.id === current);
  for (const g of [...groups.values()]) updateGroup(g);
  orderGroups();
  onCount(pending.size);
}

// open shows or hides the card of e beyond its line. auto marks a card
// opened because it became the current one, closed again when it stops
// being it.
function open(e, on, auto) {
  e.open = on;
  e.auto = on && auto;
  e.card.classList.toggle("open", on);
  e.refs.body.hidden = !on;
  e.refs.toggle.setAttribute("aria-expanded", String(on));
}

// groupOf returns the queue group of a session, made when missing, in
// the order of the most urgent question.
function groupOf(session) {
  let g = groups.get(session);
  if (g) return g;
  g = { session };
  g.count = h("span", { class: "group-count muted" });
  g.agents = h("span", { class: "group-agents" });
  g.denyAll = h("button", {
    type: "button", class: "btn btn-small btn-deny deny-all", "data-session": session,
    onclick: () => askDenyAll(g),
  }, "Deny all from this session");
  g.msg = h("input", {
    type: "text", class: "deny-all-msg", autocomplete: "off", placeholder: "Why not? (optional, told to the model)",
    "aria-label": "Message to the model for every denied question",
    onkeydown: (e) => { if (e.key === "Enter") { e.preventDefault(); denyAll(g); } if (e.key === "Escape") cancelDenyAll(g); },
  });
  g.confirmText = h("strong", null);
  g.confirmBtn = h("button", { type: "button", class: "btn btn-small btn-deny deny-all-confirm", onclick: () => denyAll(g) }, "Deny all");
  g.confirm = h("div", { class: "deny-all-box", role: "group", "aria-label": "Deny all from session " + session, hidden: true },
    h("p", null, g.confirmText, " The model is told each one was denied. This cannot be undone."),
    g.msg,
    h("div", { class: "btn-row" }, g.confirmBtn,
      h("button", { type: "button", class: "btn btn-small", onclick: () => cancelDenyAll(g) }, "Cancel")));
  g.cards = h("div", { class: "cards" });
  g.el = h("section", { class: "queue-group", "data-session": session, "aria-label": "Session " + session },
    h("header", { class: "group-head" },
      h("span", { class: "group-label muted" }, "session"),
      h("a", { class: "mono group-session", href: "#/live?session=" + encodeURIComponent(session), title: "Follow this session" }, session),
      g.agents, g.count, g.denyAll),
    g.confirm, g.cards);
  groups.set(session, g);
  list.append(g.el);
  return g;
}

// updateGroup shows a group's count and agents, drops it when empty and
// keeps the groups in the order of their most urgent question.
function updateGroup(g) {
  const es = [...pending.values()].filter((e) => e.a.session === g.session && !e.card.classList.contains("answered"));
  const all = [...pending.values()].filter((e) => e.a.session === g.session);
  if (all.length === 0) {
    g.el.remove();
    groups.delete(g.session);
    return;
  }
  g.count.textContent = es.length === 1 ? "1 waiting" : es.length + " waiting";
  const agents = [...new Set(all.map((e) => e.a.agent || ""))];
  replace(g.agents, agents.filter(Boolean).map((x) => h("span", { class: "chip agent-chip", title: "agent" }, "agent " + x)));
  // With one question, its own Deny does the same.
  g.denyAll.hidden = es.length < 2 || !g.confirm.hidden;
  g.denyAll.disabled = es.length === 0;
  g.denyAll.textContent = "Deny all " + es.length + " from this session";
  g.first = Math.min(...all.map((e) => e.refs.deadline));
}

// orderGroups puts the group with the most urgent question on top.
function orderGroups() {
  const gs = [...groups.values()].sort((x, y) => x.first - y.first);
  gs.forEach((g, i) => {
    if (list.children[i] !== g.el) list.insertBefore(g.el, list.children[i] || null);
  });
}

function add(a) {
  if (pending.has(a.id) || !a.request) return;
  const r = a.request;
  note(a.session || r.session, r.cwd, a.created);
  const entry = { a, refs: {}, open: false };
  entry.card = card(a, entry.refs);
  pending.set(a.id, entry);
  const g = groupOf(a.session);
  // By agent, then the deadline closest to now on top.
  const agent = entry.a.agent || "";
  const later = (o) => (o.a.agent || "") > agent || ((o.a.agent || "") === agent && o.refs.deadline > entry.refs.deadline);
  const after = [...g.cards.children].find((c) => {
    const o = pending.get(c.dataset.approvalId);
    return o && later(o);
  });
  g.cards.insertBefore(entry.card, after || null);
  open(entry, false);
  tick();
}

function drop(id) {
  const e = pending.get(id);
  if (!e) return;
  pending.delete(id);
  e.card.remove();
}

function resolvedElsewhere(id, p) {
  const e = pending.get(id);
  if (e && e.busy) return; // this page's answer; its response finishes the card
  if (!e || e.card.classList.contains("answered")) {
    setTimeout(() => { drop(id); changed(); }, 900);
    return;
  }
  const who = p.actor === "user" ? "answered elsewhere" : reasonText(p.reason);
  finish(e, p.decision === "allow" ? "Allowed — " + who : "Denied — " + who, p.decision);
}

// finish shows how the card's question ended, then removes the card.
function finish(e, text, decision) {
  e.card.classList.add("answered");
  if (decision) e.card.classList.add(decision === "allow" ? "was-allowed" : "was-denied");
  replace(e.refs.status, text);
  e.refs.status.hidden = false;
  for (const b of e.card.querySelectorAll("button, input")) b.disabled = true;
  setTimeout(() => {
    const next = e.card.nextElementSibling || e.card.previousElementSibling;
    const hadFocus = e.card.contains(document.activeElement);
    drop(e.a.id);
    if (current === e.a.id && next && pending.has(next.dataset.approvalId)) select(next.dataset.approvalId, "auto");
    changed();
    if (hadFocus && next) next.focus();
  }, 900);
}

function pushRecent(item) {
  if (recent.some((x) => x.id === item.id)) return;
  recent.unshift(item);
  recent.length = Math.min(recent.length, 12);
  renderRecent();
}

function renderRecent() {
  replace(recentBox, recent.length === 0 ? h("li", { class: "muted" }, "None since this page was opened.") : null,
    recent.map((x) => h("li", { class: "recent-item" },
      h("span", { class: ["chip", decisionClass(x.decision)] }, x.decision || "?"),
      h("span", { class: "recent-main" },
        h("a", { class: "recent-summary mono", title: x.summary, href: "#/call/" + encodeURIComponent(x.session) + "/" + encodeURIComponent(x.id) }, x.summary || x.id),
        h("span", { class: "recent-by muted" },
          x.actor !== "user" ? reasonText(x.reason) : answeredHere.has(x.id) ? "by you" : x.via === "page" ? "by a person on a page" : x.via ? "by a person · " + x.via : "by a person",
          x.decision === "deny" && x.actor === "user" && x.message ? " · the model was told “" + x.message + "”" : "")),
      h("time", { class: "muted recent-time", datetime: x.time }, fmtTime(x.time)))));
}
renderRecent();

// card builds the card of one approval. Every string from the request is
// set as text.
function card(a, refs) {
  const r = a.request;
  const risk = r.risk || "unknown";
  const destructive = Boolean(r.destructive);
  const el = h("article", {
    class: ["card", riskClass(risk), destructive && "destructive"], tabindex: "0",
    "data-approval-id": a.id, "data-risk": risk, "aria-label": "Approval request: " + (r.summary || r.tool),
    onfocusin: () => select(a.id, "keep"),
  });

  refs.left = h("span", { class: "countdown-text" }, "");
  refs.bar = h("span", { class: "countdown-bar" });
  const bodyId = "card-body-" + a.id.replace(/[^\w-]/g, "_");
  refs.toggle = h("button", {
    type: "button", class: "card-toggle", "aria-expanded": "false", "aria-controls": bodyId,
    title: "Show or hide the details and answers",
    onclick: () => {
      const e = pending.get(a.id);
      if (!e) return;
      select(a.id, "keep");
      open(e, !e.open, false);
    },
  },
  h("span", { class: ["risk-badge", riskClass(risk)] }, risk),
  h("span", { class: "tool" }, r.tool || "?"),
  h("span", { class: "line-summary mono" }, summaryText(r) === r.tool ? "" : oneLine(summaryText(r))),
  h("span", { class: "chevron", "aria-hidden": "true" }));
  const head = h("header", { class: "card-head card-line" },
    refs.toggle,
    h("span", { class: "countdown", title: "Denied automatically at " + fmtTime(a.deadline) },
      h("span", { class: "countdown-track" }, refs.bar), refs.left));

  // The session is the group's; the agent is said again, as a group may
  // hold several.
  const meta = h("p", { class: "card-meta muted" },
    a.agent ? ["agent ", h("span", { class: "mono" }, a.agent), " · "] : null,
    r.turn || a.turn ? ["turn ", h("span", { class: "mono" }, r.turn || a.turn), " · "] : null,
    "asked ", h("time", { datetime: a.created }, fmtTime(a.created)));

  // What the call changes, when the page can show it, says more than the
  // summary, which then only names the file or the tool.
  const change = changeView(a);
  const summary = change ? null : h("p", { class: "summary mono" }, summaryText(r));

  const why = h("p", { class: "why" },
    h("span", { class: "why-label" }, "Why"),
    h("strong", null, reasonText(r.reason)),
    r.rule ? h("code", { class: "rule" }, r.rule) : null,
    r.message ? [h("span", { class: "muted" }, " — "), h("span", { class: "message" }, r.message)] : null);

  const units = (r.units || []).length > 0 ? h("ul", { class: "units" }, r.units.map(unit)) : null;

  const details = h("details", { class: "args" },
    h("summary", null, "Arguments as sent", r.cwd ? [" · in ", h("span", { class: "mono" }, r.cwd)] : null),
    h("pre", { class: "mono" }, JSON.stringify(r.input || {}, null, 2)));

  refs.error = h("p", { class: "card-error", role: "alert", hidden: true });
  refs.status = h("p", { class: "card-status", role: "status", hidden: true });
  refs.body = h("div", { class: "card-body", id: bodyId },
    meta, summary, change, why, units, details, actions(a, refs), refs.error);

  el.append(head, refs.body, refs.status);
  refs.deadline = new Date(a.deadline).getTime();
  refs.created = new Date(a.created).getTime();
  return el;
}

// oneLine is text on one line, for a card's line in the queue.
function oneLine(text) {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > 200 ? t.slice(0, 200) + "…" : t;
}

// summaryText is the request's summary without the "Tool: " the card's
// head already shows.
function summaryText(r) {
  const s = r.summary || r.tool || "";
  return r.tool && s.startsWith(r.tool + ": ") ? s.slice(r.tool.length + 2) : s;
}

function unit(u) {
  const paths = [["reads", u.reads], ["writes", u.writes], ["deletes", u.deletes], ["hosts", u.hosts]]
    .filter(([, v]) => v && v.length > 0);
  return h("li", { class: ["unit", riskClass(u.risk)] },
    h("div", { class: "unit-head" },
      h("code", { class: "unit-label" }, u.label || ""),
      h("span", { class: ["chip", riskClass(u.risk)] }, u.risk || "?"),
      h("span", { class: ["chip", decisionClass(u.decision)] }, u.decision || "?"),
      u.reason && reasonText(u.reason) !== u.risk ? h("span", { class: "muted unit-reason" }, reasonText(u.reason)) : null),
    paths.length > 0 ? h("dl", { class: "effects" }, paths.map(([k, v]) => [
      h("dt", { class: "effect-" + k }, k),
      h("dd", null, v.map((p) => h("code", { class: "path" }, p))),
    ])) : null);
}

function actions(a, refs) {
  const r = a.request;
  const box = h("div", { class: "actions" });
  refs.buttons = {};
  const button = (answer, cls) => {
    const b = h("button", {
      type: "button", class: ["btn", cls], "data-answer": answer,
      onclick: () => answerCard(a.id, answer),
    }, ANSWERS[answer].label, " ", h("kbd", { "aria-hidden": "true" }, keyOf(answer)));
    refs.buttons[answer] = b;
    return b;
  };
  refs.denyMsg = h("input", {
    type: "text", class: "deny-msg", placeholder: "Why not? (optional, told to the model)",
    "aria-label": "Message to the model when denying", autocomplete: "off",
    onkeydown: (e) => { if (e.key === "Enter") { e.preventDefault(); answerCard(a.id, "deny"); } },
  });
  const denyRow = h("div", { class: "deny-row" }, refs.denyMsg, button("deny", "btn-deny"));

  if (r.destructive) {
    // What the server expects, exactly as it says: it names what is lost
    // (".git and 3 more"), never a one-letter target; the page does not
    // derive a word of its own from the request.
    const target = a.confirmWord || "yes";
    const typed = () => refs.confirm.value.trim();
    refs.confirm = h("input", {
      type: "text", class: "confirm-input mono", autocomplete: "off", spellcheck: "false",
      "aria-label": "Type " + target + " to confirm",
      oninput: () => { refs.buttons.allow_once.disabled = typed() !== target; },
      onkeydown: (e) => {
        if (e.key === "Enter" && typed() === target) { e.preventDefault(); answerCard(a.id, "allow_once"); }
      },
    });
    const allow = button("allow_once", "btn-allow");
    allow.disabled = true;
    box.append(
      h("div", { class: "confirm-box" },
        h("p", { class: "confirm-warning" }, h("strong", null, "This cannot be undone."),
          " It will not be remembered; it asks again next time."),
        h("label", { class: "confirm-label" },
          h("span", null, "Type ", h("code", { class: "confirm-target" }, target), " to confirm, then allow it once"),
          refs.confirm)),
      h("div", { class: "btn-row" }, allow),
      denyRow);
    return box;
  }

  refs.rule = h("input", {
    type: "text", class: "rule-input mono", value: r.suggestedRule || "", autocomplete: "off", spellcheck: "false",
    placeholder: "no single rule describes this call — write one to keep",
    "aria-label": "Rule to keep in the project or user policy",
    oninput: () => updateRemember(refs),
  });
  box.append(
    h("div", { class: "btn-row" }, button("allow_once", "btn-allow"), button("allow_session", "btn-remember")),
    h("div", { class: "remember" },
      h("label", { class: "rule-label" }, h("span", null, "Keep as rule"), refs.rule),
      h("div", { class: "btn-row" }, button("allow_project", "btn-remember"), button("allow_user", "btn-remember"))),
    denyRow);
  updateRemember(refs);
  return box;
}

// updateRemember enables the answers that write a rule only when there is
// one to write.
function updateRemember(refs) {
  const none = refs.rule.value.trim() === "";
  for (const k of ["allow_project", "allow_user"]) refs.buttons[k].disabled = none;
}

function keyOf(answer) {
  return Object.keys(KEYS).find((k) => KEYS[k] === answer);
}

// announce says for a few seconds, above the queue, what this page's
// answer did.
function announce(text, decision) {
  replace(answered, h("strong", null, text), " — undo not possible.");
  answered.className = "answered-note " + (decision === "allow" ? "was-allowed" : "was-denied");
  answered.hidden = false;
  clearTimeout(answeredTimer);
  answeredTimer = setTimeout(() => { answered.hidden = true; }, 8000);
}

// answerCard sends answer to the question id, with the card's message,
// rule and confirmation; opts.message replaces the message, opts.quiet
// leaves the announcement to the caller. It reports what came of it:
// "allow", "deny", "gone" (answered already) or "error".
async function answerCard(id, answer, opts = {}) {
  const e = pending.get(id);
  if (!e || e.card.classList.contains("answered") || e.busy) return "gone";
  const { refs, a } = e;
  const btn = refs.buttons[answer];
  if (!btn || btn.disabled) {
    if (!e.open) open(e, true, false);
    if (answer === "allow_once" && refs.confirm) refs.confirm.focus();
    else if (refs.rule && (answer === "allow_project" || answer === "allow_user")) refs.rule.focus();
    return "error";
  }
  const body = { answer };
  if (answer === "deny") {
    const msg = opts.message !== undefined ? opts.message : refs.denyMsg.value.trim();
    if (msg) body.message = msg;
  } else if (answer === "allow_project" || answer === "allow_user") {
    body.rule = refs.rule.value.trim();
  }
  if (a.request.destructive && answer === "allow_once") body.confirm = refs.confirm.value.trim();
  e.busy = true;
  e.card.classList.add("busy");
  // The decision's event may arrive before the answer's response.
  answeredHere.add(id);
  refs.error.hidden = true;
  try {
    const res = await api("/v1/approvals/" + encodeURIComponent(id), { method: "POST", body });
    const d = (res && res.decision) || {};
    let text = ANSWERS[answer].done;
    if (answer === "deny" && body.message) text += " — “" + body.message + "”";
    else if (answer !== "deny" && d.decision === "deny") text = "Not allowed — " + (reasonText(d.reason) || "denied") + (d.message ? ": " + d.message : "");
    else if (answer !== "allow_once" && d.message) text = d.message;
    const decision = d.decision || (answer === "deny" ? "deny" : "allow");
    finish(e, text, decision);
    if (!opts.quiet) {
      // Said in the page's words, whatever the gate's message says.
      const said = decision === "deny" && answer !== "deny" ? "Not allowed" : ANSWERS[answer].done;
      announce(said + ": " + (a.request.summary || a.request.tool || id), decision);
    }
    return decision;
  } catch (err) {
    answeredHere.delete(id);
    if (err instanceof APIError && (err.status === 409 || err.status === 404)) {
      finish(e, "Already answered", "");
      if (!opts.quiet) toast("That request was already answered.");
      return "gone";
    }
    replace(refs.error, err.message || String(err));
    refs.error.hidden = false;
    if (!e.open) open(e, true, false);
    return "error";
  } finally {
    e.busy = false;
    e.card.classList.remove("busy");
  }
}

// ---- Deny all from a session ----

// waitingIn lists the questions of a session not answered yet.
function waitingIn(session) {
  return [...pending.values()].filter((e) => e.a.session === session && !e.card.classList.contains("answered") && !e.busy);
}

// askDenyAll asks once whether to deny every question of g's session.
function askDenyAll(g) {
  const n = waitingIn(g.session).length;
  if (n === 0) return;
  g.confirmText.textContent = "Deny " + (n === 1 ? "the question" : "all " + n + " questions") + " from session " + g.session + "?";
  g.confirmBtn.textContent = n === 1 ? "Deny it" : "Deny all " + n;
  g.confirm.hidden = false;
  g.denyAll.hidden = true;
  g.confirmBtn.focus();
}

function cancelDenyAll(g) {
  g.confirm.hidden = true;
  g.msg.value = "";
  updateGroup(g);
}

// denyAll denies each question of g's session, one answer each through
// the approvals API as a single one would be, and says how it went.
async function denyAll(g) {
  const es = waitingIn(g.session);
  const message = g.msg.value.trim();
  g.confirmBtn.disabled = true;
  let denied = 0, gone = 0, failed = 0;
  for (const e of es) {
    const r = await answerCard(e.a.id, "deny", { message, quiet: true });
    if (r === "deny") denied++;
    else if (r === "gone") gone++;
    else failed++;
  }
  g.confirmBtn.disabled = false;
  cancelDenyAll(g);
  let text = "Denied " + denied + (denied === 1 ? " question" : " questions") + " from session " + g.session;
  if (gone) text += " (" + gone + " already answered)";
  announce(text, "deny");
  if (failed) toast(failed + (failed === 1 ? " question" : " questions") + " could not be denied: see the cards.");
}

// select makes the card of id the current one. With how "auto" it is
// opened, and the current card opened only because it was current is
// closed; "keep" leaves both as they are (a click or focus inside a card
// must not move what is under the pointer).
function select(id, how) {
  if (!pending.has(id) || current === id) return;
  const prev = pending.get(current);
  current = id;
  const e = pending.get(id);
  if (how === "auto") {
    if (prev && prev.auto) open(prev, false);
    if (!e.open) open(e, true, true);
  }
  for (const o of pending.values()) o.card.classList.toggle("current", o.a.id === id);
}

function move(delta) {
  const cards = [...list.querySelectorAll(".card:not(.answered)")];
  if (cards.length === 0) return;
  let i = Math.max(0, cards.findIndex((c) => c.dataset.approvalId === current));
  // The first key press from outside the cards goes to the current card.
  if (document.activeElement && document.activeElement.closest(".card")) {
    i = Math.max(0, Math.min(cards.length - 1, i + delta));
  }
  select(cards[i].dataset.approvalId, "auto");
  cards[i].focus();
  cards[i].scrollIntoView({ block: "nearest", behavior: "smooth" });
}

// keydown handles the view's keys; main.js calls it while the view shows.
// j and k move between cards from anywhere; the answers act only on the
// card that has the focus, so a stray key elsewhere answers nothing.
export function keydown(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return false;
  const t = e.target instanceof Element ? e.target : null;
  const inCard = t && t.closest(".card");
  if (t && t.matches("input, textarea, select")) {
    if (e.key !== "Escape") return false;
    if (inCard) inCard.focus();
    else t.blur();
    return true;
  }
  const onCard = t && t.classList.contains("card");
  if (e.key === "j" || (e.key === "ArrowDown" && onCard)) {
    move(1);
    return true;
  }
  if (e.key === "k" || (e.key === "ArrowUp" && onCard)) {
    move(-1);
    return true;
  }
  const entry = inCard && pending.get(inCard.dataset.approvalId);
  if (!entry) return false;
  if (e.key === "o") {
    open(entry, !entry.open, false);
    return true;
  }
  if (!entry.open && (KEYS[e.key] || e.key === "m")) {
    // Nothing is answered unseen: the first key opens the card.
    open(entry, true, false);
    return true;
  }
  if (e.key === "m") {
    entry.refs.denyMsg.focus();
    return true;
  }
  const answer = KEYS[e.key];
  if (!answer || !entry.refs.buttons[answer]) return false;
  answerCard(entry.a.id, answer);
  return true;
}

// tick updates every countdown; main.js calls it a few times a second.
export function tick() {
  const now = serverNow();
  for (const { card, refs } of pending.values()) {
    if (card.classList.contains("answered")) continue;
    const left = refs.deadline - now;
    const total = Math.max(1, refs.deadline - refs.created);
    refs.bar.style.setProperty("width", Math.max(0, Math.min(100, (left / total) * 100)).toFixed(1) + "%");
    card.classList.toggle("urgent", left < 10000);
    if (isNaN(left)) refs.left.textContent = "";
    else if (left <= 0) refs.left.textContent = "time is up";
    else refs.left.textContent = fmtDuration(left) + " left";
  }
}

export function pendingCount() {
  return pending.size;
}
