// The HTTP API of docs/api.md, as the page uses it: JSON requests that
// carry the CSRF token on every change, and event streams that resume
// where they left off.

let csrf = "";
let skew = 0; // server clock minus local clock, in ms

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

// api sends one request and returns the decoded JSON body (or text for a
// non-JSON answer). Non-GET requests carry X-Toolgate-CSRF. A status other
// than 2xx throws an APIError with the server's "error" text.
export async function api(path, { method = "GET", body, params } = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET" && method !== "HEAD") headers["X-Toolgate-CSRF"] = csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(path + query(params), {
      method, headers, credentials: "same-origin", cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new APIError(0, "the server cannot be reached");
  }
  noteDate(res);
  const type = res.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await res.json().catch(() => null) : await res.text();
  if (!res.ok) {
    const msg = (data && data.error) || (typeof data === "string" && data.trim()) || res.statusText;
    throw new APIError(res.status, msg || "HTTP " + res.status);
  }
  return data;
}

// whoami reads the role and keeps the CSRF token for later requests.
export async function whoami() {
  const me = await api("/v1/whoami");
  csrf = (me && me.csrf) || "";
  return me;
}

export const EVENT_TYPES = [
  "session.started", "turn.started", "user.message", "model.tool_call_requested",
  "permission.requested", "permission.answered", "permission.resolved", "tool.started", "tool.completed",
  "tool.failed", "turn.completed", "policy.changed", "lease.granted", "lease.revoked",
  "injection.suspected", "approval.forbidden",
];

// Stream follows GET /v1/events (or another events path) as Server-Sent
// Events. onEvent gets each parsed event once, even across reconnects;
// onState gets "live", "connecting" or "down" (with the HTTP status when
// the server refused the stream).
export class Stream {
  constructor(path, params, types, onEvent, onState) {
    Object.assign(this, { path, params, types, onEvent, onState });
    this.seen = new Set();
    this.lastId = "";
    this.delay = 1000;
    this.closed = false;
    this.open();
  }

  open() {
    if (this.closed) return;
    const params = { ...this.params };
    if (this.lastId) params.after = this.lastId;
    const es = new EventSource(this.path + query(params));
    this.es = es;
    this.onState("connecting");
    es.onopen = () => {
      this.delay = 1000;
      this.onState("live", this.opened);
      this.opened = true;
    };
    const handle = (msg) => {
      let ev;
      try {
        ev = JSON.parse(msg.data);
      } catch {
        return;
      }
      const id = String(ev.id ?? msg.lastEventId ?? "");
      if (id) {
        if (this.seen.has(id)) return;
        this.seen.add(id);
        if (this.seen.size > 5000) this.seen = new Set([...this.seen].slice(-2500));
        this.lastId = id;
      }
      this.onEvent(ev);
    };
    for (const t of this.types) es.addEventListener(t, handle);
    es.onmessage = handle;
    es.onerror = () => {
      if (this.closed) return;
      if (es.readyState === EventSource.CLOSED) {
        // The browser gave up (a non-200 answer): find out why, then retry.
        this.onState("down");
        fetch(this.path + query({ ...this.params, limit: 1 }), { credentials: "same-origin" })
          .then((r) => { if (!r.ok) this.onState("down", r.status); })
          .catch(() => {});
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.open(), this.delay);
        this.delay = Math.min(this.delay * 2, 30000);
      } else {
        this.onState("connecting");
      }
    };
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.es) this.es.close();
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
    if (evs.length < pageSize || out.length >= max) return out;
    after = evs[evs.length - 1].id;
  }
}
