// The approvals view: a card per pending request, answered with buttons or
// keys, and the last few decisions underneath.

import { api, APIError, serverNow } from "./api.js";
import { h, replace, reasonText, riskClass, decisionClass, fmtTime, fmtDuration, toast } from "./dom.js";
import { note } from "./state.js";

const KEYS = { a: "allow_once", s: "allow_session", p: "allow_project", u: "allow_user", d: "deny" };

const ANSWERS = {
  allow_once: { label: "Allow once", done: "Allowed once" },
  allow_session: { label: "Allow for session", done: "Allowed for this session" },
  allow_project: { label: "Always allow in project", done: "Always allowed in this project" },
  allow_user: { label: "Always allow for me", done: "Always allowed for you" },
  deny: { label: "Deny", done: "Denied" },
};

const pending = new Map(); // approval id → { a, card, refs }
const recent = []; // the last resolved decisions, newest first
const requested = new Map(); // toolCallId → tool, of the questions seen asked
const answeredHere = new Set(); // the ids this page answered
let current = ""; // the id of the selected card
let onCount = () => {};

const root = h("section", { class: "view", id: "view-approvals", "aria-labelledby": "approvals-title" });
const list = h("div", { class: "cards", id: "cards" });
const empty = h("div", { class: "empty-state", id: "no-pending" },
  h("div", { class: "empty-mark", "aria-hidden": "true" }, "✓"),
  h("p", { class: "empty-title" }, "Nothing is waiting for you"),
  h("p", { class: "muted" }, "When an agent asks to run something the policy does not decide, it appears here at once."));
const recentBox = h("ol", { class: "recent", id: "recent" });
const help = h("p", { class: "keyhint", id: "keyhint" },
  "Keys: ", key("j"), " ", key("k"), " move · ", key("a"), " allow once · ", key("s"), " session · ",
  key("p"), " project · ", key("u"), " always for me · ", key("d"), " deny · ", key("m"), " message · ",
  key("Esc"), " leave a field");

root.append(
  h("div", { class: "view-head" },
    h("h1", { id: "approvals-title" }, "Waiting for you"),
    help),
  empty, list,
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
        actor: p.actor, message: p.message, rule: p.rule,
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
    const first = list.querySelector(".card");
    current = first ? first.dataset.approvalId : "";
  }
  for (const e of pending.values()) e.card.classList.toggle("current", e.a.id === current);
  onCount(pending.size);
}

function add(a) {
  if (pending.has(a.id) || !a.request) return;
  const r = a.request;
  note(a.session || r.session, r.cwd, a.created);
  const entry = { a, refs: {} };
  entry.card = card(a, entry.refs);
  pending.set(a.id, entry);
  // The deadline closest to now on top.
  const after = [...list.children].find((c) => pending.get(c.dataset.approvalId)?.refs.deadline > entry.refs.deadline);
  list.insertBefore(entry.card, after || null);
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
    if (current === e.a.id && next) current = next.dataset.approvalId;
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
          x.actor !== "user" ? reasonText(x.reason) : answeredHere.has(x.id) ? "by you" : "by a person",
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
    onfocusin: () => select(a.id),
  });

  refs.left = h("span", { class: "countdown-text" }, "");
  refs.bar = h("span", { class: "countdown-bar" });
  const head = h("header", { class: "card-head" },
    h("span", { class: ["risk-badge", riskClass(risk)] }, risk),
    h("span", { class: "tool" }, r.tool || "?"),
    h("span", { class: "card-meta muted" },
      "session ", h("a", { class: "mono", href: "#/live?session=" + encodeURIComponent(a.session), title: "Follow this session" }, a.session),
      r.turn || a.turn ? [" · turn ", h("span", { class: "mono" }, r.turn || a.turn)] : null,
      " · ", h("time", { datetime: a.created }, fmtTime(a.created))),
    h("span", { class: "countdown", title: "Denied automatically at " + fmtTime(a.deadline) },
      h("span", { class: "countdown-track" }, refs.bar), refs.left));

  const summary = h("p", { class: "summary mono" }, summaryText(r));

  const why = h("p", { class: "why" },
    h("span", { class: "why-label" }, "Why"),
    h("strong", null, reasonText(r.reason)),
    r.rule ? h("code", { class: "rule" }, r.rule) : null,
    r.message ? [h("span", { class: "muted" }, " — "), h("span", { class: "message" }, r.message)] : null);

  const units = (r.units || []).length > 0 ? h("ul", { class: "units" }, r.units.map(unit)) : null;

  const details = h("details", { class: "args" },
    h("summary", null, "Arguments", r.cwd ? [" · in ", h("span", { class: "mono" }, r.cwd)] : null),
    h("pre", { class: "mono" }, JSON.stringify(r.input || {}, null, 2)));

  refs.error = h("p", { class: "card-error", role: "alert", hidden: true });
  refs.status = h("p", { class: "card-status", role: "status", hidden: true });

  el.append(head, summary, why, units, details, actions(a, refs), refs.error, refs.status);
  refs.deadline = new Date(a.deadline).getTime();
  refs.created = new Date(a.created).getTime();
  return el;
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
      "aria-label": "Type " + target + " to allow", placeholder: target,
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
          h("span", null, "Type ", h("code", { class: "confirm-target" }, target), " to allow it once"),
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

async function answerCard(id, answer) {
  const e = pending.get(id);
  if (!e || e.card.classList.contains("answered") || e.busy) return;
  const { refs, a } = e;
  const btn = refs.buttons[answer];
  if (!btn || btn.disabled) {
    if (answer === "allow_once" && refs.confirm) refs.confirm.focus();
    else if (refs.rule && (answer === "allow_project" || answer === "allow_user")) refs.rule.focus();
    return;
  }
  const body = { answer };
  if (answer === "deny") {
    const msg = refs.denyMsg.value.trim();
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
    finish(e, text, d.decision || (answer === "deny" ? "deny" : "allow"));
  } catch (err) {
    answeredHere.delete(id);
    if (err instanceof APIError && (err.status === 409 || err.status === 404)) {
      finish(e, "Already answered", "");
      toast("That request was already answered.");
    } else {
      replace(refs.error, err.message || String(err));
      refs.error.hidden = false;
    }
  } finally {
    e.busy = false;
    e.card.classList.remove("busy");
  }
}

function select(id) {
  if (!pending.has(id) || current === id) return;
  current = id;
  for (const e of pending.values()) e.card.classList.toggle("current", e.a.id === id);
}

function move(delta) {
  const cards = [...list.querySelectorAll(".card:not(.answered)")];
  if (cards.length === 0) return;
  let i = Math.max(0, cards.findIndex((c) => c.dataset.approvalId === current));
  // The first key press from outside the cards goes to the current card.
  if (document.activeElement && document.activeElement.closest(".card")) {
    i = Math.max(0, Math.min(cards.length - 1, i + delta));
  }
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
