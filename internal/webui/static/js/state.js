// What the views share: the sessions and working directories seen so far,
// so that filters and forms can offer them.

export const seen = {
  sessions: new Map(), // session id → last time seen (ms)
  cwds: new Map(), // cwd → last time seen (ms)
};

const listeners = new Set();

// note records a session and a working directory seen at time.
export function note(session, cwd, time) {
  const t = time ? new Date(time).getTime() || Date.now() : Date.now();
  let changed = false;
  if (session && (seen.sessions.get(session) || 0) < t) {
    changed = changed || !seen.sessions.has(session);
    seen.sessions.set(session, t);
  }
  if (cwd && (seen.cwds.get(cwd) || 0) < t) {
    changed = changed || !seen.cwds.has(cwd);
    seen.cwds.set(cwd, t);
  }
  if (changed) for (const fn of listeners) fn();
}

// noteEvent records the session and working directory of an event.
export function noteEvent(ev) {
  const p = ev.payload || {};
  note(ev.session, p.cwd, ev.time);
}

// recent lists the keys of m, most recently seen first.
export function recent(m) {
  return [...m.entries()].sort((a, b) => b[1] - a[1]).map((e) => e[0]);
}

// onSeen calls fn whenever a new session or working directory is seen.
export function onSeen(fn) {
  listeners.add(fn);
}
