// The HTTP API of docs/api.md, as the page uses it: JSON requests that
// carry the browser session's token in a header, and event streams that
// resume where they left off.
//
// The session token is kept in this origin's sessionStorage (it survives a
// reload of this tab, not the tab) and sent as X-Toolgate-Session; it is
// never a cookie, since cookies reach every server on the same host,
// whatever its port. Requests send no cookies at all.

const SESSION_KEY = "toolgate.session";
const SESSION_HEADER = "X-Toolgate-Session";
// How often the open page renews its token; the server lets a token lapse
// an hour after it was issued.
const RENEW_EVERY = 5 * 60 * 1000;

let session = readSession();
let skew = 0; // server clock minus local clock, in ms

function readSession() {
  try {
    return sessionStorage.getItem(SESSION_KEY) || "";
  } catch {
    return "";
  }
}

function keepSession(token) {
  session = token || "";
  try {
    if (session) sessionStorage.setItem(SESSION_KEY, session);
    else sessionStorage.removeItem(SESSION_KEY);
  } catch {
    // Storage is off: the token lives as long as the page.
  }
}

// signedIn reports whether the page holds a session token.
export function signedIn() {
  return session !== "";
}

function authHeaders(headers) {
  if (session) headers[SESSION_HEADER] = session;
  return headers;
}

export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// serverNow is the current time on the server's clock, in ms.
export function serverNow() {
  return Date.now() + skew;
}

function noteDate(res) {
  const d = Date.parse(res.headers.get("Date") || "");
  if (!isNaN(d)) skew = d - Date.now();
}

// query builds a query string; arrays repeat the key, empty values are left out.
function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    for (const x of Array.isArray(v) ? v : [v]) {
      if (x !== undefined && x !== null && x !== "") q.append(k, String(x));
    }
  }
  const s = q.toString();
  return s ? "?" + s : "";
}

// api sends one request with the session token and returns the decoded
// JSON body (or text for a non-JSON answer). A status other than 2xx
// throws an APIError with the server's "error" text; a 401 also forgets
// the token, which no longer works.
export async function api(path, { method = "GET", body, params } = {}) {
  const headers = authHeaders({ Accept: "application/json" });
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(path + query(params), {
      method, headers, credentials: "omit", cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new APIError(0, "the server cannot be reached");
  }
  noteDate(res);
  const type = res.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await res.json().catch(() => null) : await res.text();
  if (!res.ok) {
    if (res.status === 401 && path !== "/v1/login") keepSession("");
    const msg = (data && data.error) || (typeof data === "string" && data.trim()) || res.statusText;
    throw new APIError(res.status, msg || "HTTP " + res.status);
  }
  return data;
}

// login redeems the code of a login link for a session token.
export async function login(code) {
  const s = await api("/v1/login", { method: "POST", body: { code } });
  keepSession(s && s.token);
}

// renew trades the session token for a fresh one, as long as the session
// has not reached its limit.
export async function renew() {
  const s = await api("/v1/web-session", { method: "POST" });
  keepSession(s && s.token);
}

// keepRenewing renews the token every few minutes while the page is open,
// and at once when it is shown again after a while (a laptop waking up).
// onLost is called when the session has ended.
export function keepRenewing(onLost) {
  let last = Date.now();
  const go = () => {
    last = Date.now();
    renew().catch((err) => {
      if (err instanceof APIError && err.status === 401) onLost();
    });
  };
  setInterval(go, RENEW_EVERY);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && Date.now() - last > RENEW_EVERY) go();
  });
}

// whoami reads the role.
export async function whoami() {
  return api("/v1/whoami");
}

export const EVENT_TYPES = [
  "session.started", "turn.started", "user.message", "model.tool_call_requested",
  "permission.requested", "permission.answered", "permission.resolved", "tool.started", "tool.completed",
  "tool.failed", "turn.completed", "policy.changed", "lease.granted", "lease.revoked",
  "injection.suspected", "approval.forbidden",
];

// Stream follows GET /v1/events (or another events path) as Server-Sent
// Events, read with fetch so that the request carries the session token
// (an EventSource cannot send a header). onEvent gets each parsed event
// once, even across reconnects; onState gets "live", "connecting" or
// "down" (with the HTTP status when the server refused the stream). A
// stream the server ends (as it does when the token it was opened with
// lapses) is opened again with the current token, after the last event.
export class Stream {
  constructor(path, params, types, onEvent, onState) {
    Object.assign(this, { path, params, types, onEvent, onState });
    this.seen = new Set();
    this.lastId = "";
    this.delay = 1000;
    this.closed = false;
    this.open();
  }

  async open() {
    if (this.closed) return;
    const params = { ...this.params };
    if (this.lastId) params.after = this.lastId;
    const ctrl = new AbortController();
    this.ctrl = ctrl;
    this.onState("connecting");
    let res;
    try {
      res = await fetch(this.path + query(params), {
        headers: authHeaders({ Accept: "text/event-stream" }),
        credentials: "omit", cache: "no-store", signal: ctrl.signal,
      });
    } catch {
      this.retry();
      return;
    }
    if (!res.ok || !res.body) {
      if (res.status === 401) keepSession("");
      this.onState("down", res.status);
      if (res.status !== 401) this.retry();
      return;
    }
    this.delay = 1000;
    this.onState("live", this.opened);
    this.opened = true;
    try {
      await this.read(res.body);
    } catch {
      // The connection broke; open it again below.
    }
    if (this.closed) return;
    this.onState("connecting");
    this.retry(250);
  }

  // read parses the stream: events are separated by blank lines, and
  // lines starting with ":" are comments.
  async read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value; // the server ends its lines with \n alone
      let end;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        this.dispatch(block);
      }
    }
  }

  dispatch(block) {
    let id = "", type = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line === "" || line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? "" : line.slice(i + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "id") id = value;
      else if (field === "event") type = value;
      else if (field === "data") data.push(value);
    }
    if (data.length === 0) return;
    if (type !== "message" && !this.types.includes(type)) return;
    let ev;
    try {
      ev = JSON.parse(data.join("\n"));
    } catch {
      return;
    }
    const key = String(ev.id ?? id ?? "");
    if (key) {
      if (this.seen.has(key)) return;
      this.seen.add(key);
      if (this.seen.size > 5000) this.seen = new Set([...this.seen].slice(-2500));
      this.lastId = key;
    }
    this.onEvent(ev);
  }

  retry(delay) {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay ?? this.delay);
    if (delay === undefined) this.delay = Math.min(this.delay * 2, 30000);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.ctrl) this.ctrl.abort();
  }
}

// allEvents reads every event matching params, following `after` through
// pages of `pageSize`, up to max events.
export async function allEvents(params, max = 20000, pageSize = 1000) {
  const out = [];
  let after = params.after;
  for (;;) {
    const page = await api("/v1/events", { params: { ...params, after, limit: pageSize } });
    const evs = (page && page.events) || [];
    out.push(...evs);
    // A page the server cut short by size says "more".
    if ((evs.length < pageSize && !(page && page.more)) || out.length >= max) return out;
    after = evs[evs.length - 1].id;
  }
}
