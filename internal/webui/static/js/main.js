// The page's entry point: redeems the code of a login link for a session
// token (kept in this tab's sessionStorage), follows the approval events,
// and shows one view at a time by the URL's hash (#/, #/live, #/audit,
// #/call/SESSION/ID, #/overview, #/policy).

import { whoami, login, signedIn, keepRenewing, Stream, APIError, serverNow } from "./api.js";
import { h, replace, debounce } from "./dom.js";
import * as approvals from "./approvals.js";
import * as events from "./events.js";
import { overviewView, showOverview } from "./overview.js";
import { policyView, showPolicy } from "./policy.js";

const app = document.getElementById("app");
const conn = document.getElementById("conn");

const views = {
  approvals: { el: approvals.approvalsView() },
  live: { el: events.liveView(), show: events.showLive, hide: events.hideLive },
  audit: { el: events.auditView(), show: events.showAudit },
  call: { el: events.callView() },
  overview: { el: overviewView(), show: showOverview },
  policy: { el: policyView(), show: showPolicy },
};
let active = "";
const refreshOverview = debounce(() => { if (active === "overview") showOverview(); }, 2000);

function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, qs] = hash.split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(qs || "");
  let name = parts[0] || "approvals";
  if (!(name in views)) name = "approvals";
  if (active && active !== name && views[active].hide) views[active].hide();
  for (const [k, v] of Object.entries(views)) v.el.hidden = k !== name;
  for (const a of document.querySelectorAll(".tabs a")) {
    const on = a.dataset.view === name || (name === "call" && a.dataset.view === "audit");
    a.classList.toggle("active", on);
    if (on) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  active = name;
  document.body.dataset.view = name;
  if (name === "call") events.showCall(parts[1] || "", parts[2] || "");
  else if (views[name].show) views[name].show(params);
  banner();
}

function setConn(state, detail) {
  conn.dataset.state = state;
  conn.textContent = { live: "live", connecting: "reconnecting…", down: "offline" }[state] || state;
  if (state === "down" && (detail === 401 || detail === 403)) signIn();
}

function banner() {
  const n = approvals.pendingCount();
  const count = document.getElementById("pending-count");
  count.hidden = n === 0;
  count.textContent = String(n);
  document.title = n > 0 ? "(" + n + ") waiting · toolgate" : "toolgate";
  const b = document.getElementById("waiting-banner");
  b.hidden = n === 0 || active === "approvals";
  document.getElementById("waiting-text").textContent = n === 1 ? "1 request is waiting" : n + " requests are waiting";
}

function signIn(me, problem) {
  document.body.dataset.signedOut = "true";
  replace(app, h("section", { class: "signin panel" },
    h("h1", null, "Sign in to toolgate"),
    problem ? h("p", { class: "problem" }, problem) : null,
    me && me.role === "agent"
      ? h("p", null, "This browser holds an agent's credentials. Only an approver may answer requests.")
      : h("p", null, "Open the one-time login link that ", h("code", null, "toolgate serve"), " printed when it started, or print a fresh one with ", h("code", null, "toolgate login-link"), "."),
    h("p", { class: "muted" }, "A link works once and for ten minutes. The page then stays signed in in this tab, for up to 12 hours.")));
}

async function start() {
  // The login link sends the browser to /#login=CODE: the code goes to
  // the server from this page's script alone, and leaves the address bar
  // and the history at once.
  const m = /^#login=([^&]*)/.exec(location.hash);
  if (m) {
    history.replaceState(null, "", location.pathname + location.search);
    try {
      await login(decodeURIComponent(m[1]));
    } catch (err) {
      signIn(null, "This login link did not work: " + err.message);
      return;
    }
  }
  if (!signedIn()) {
    signIn();
    return;
  }
  let me;
  try {
    me = await whoami();
  } catch (err) {
    if (err instanceof APIError && (err.status === 401 || err.status === 403)) {
      signIn();
    } else {
      replace(app, h("section", { class: "signin panel" }, h("h1", null, "toolgate is not reachable"),
        h("p", null, err.message), h("button", { type: "button", class: "btn", onclick: () => location.reload() }, "Try again")));
    }
    return;
  }
  if (!me || me.role !== "approver") {
    signIn(me);
    return;
  }
  replace(app, ...Object.values(views).map((v) => v.el));
  approvals.onPendingCount(banner);
  window.addEventListener("hashchange", route);
  route();

  const since = new Date(serverNow() - 5000).toISOString();
  new Stream("/v1/events", { type: ["permission.requested", "permission.resolved"], since },
    ["permission.requested", "permission.resolved"],
    (ev) => {
      if (ev.type !== "permission.requested" && ev.type !== "permission.resolved") return;
      approvals.handleEvent(ev);
      if (active === "overview") refreshOverview();
    },
    (state, detail) => {
      setConn(state, detail);
      // After a reconnect, answers given meanwhile may have been missed.
      if (state === "live" && detail) approvals.reload().catch(() => {});
    });
  await approvals.reload().catch((err) => setConn("down", err.status));
  setInterval(approvals.tick, 250);
  keepRenewing(() => signIn(null, "The session has ended."));

  document.addEventListener("keydown", (e) => {
    if (active === "approvals" && approvals.keydown(e)) e.preventDefault();
  });
  document.body.dataset.ready = "true";
}

start();
