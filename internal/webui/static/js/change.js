// What a question's call would change, shown as a code review shows it: an
// edit, a multi-edit or a patch as a unified diff against the file as it
// was when the question was asked (the approval's files, which the server
// read at the paths the call's receipt binds, secrets redacted), a write
// as a preview of its content, an MCP call's arguments as a list of keys
// and values. Every line is inserted as text, through dom.js, so that
// invisible characters show as escapes.

import { h } from "./dom.js";

const CONTEXT = 3; // unchanged lines shown around a change
const MAX_ROWS = 400; // diff rows shown before "n more lines"
const PREVIEW_LINES = 30; // lines of a write's content shown

const EDIT_TOOLS = new Set(["edit", "multiedit", "replace", "str_replace_based_edit_tool"]);
const WRITE_TOOLS = new Set(["write", "write_file", "fs.write"]);
const PATCH_TOOLS = new Set(["apply_patch", "patch", "patch.apply"]);

// changeView returns the view of what approval a would change, or null
// when its tool changes no file and is no MCP call.
export function changeView(a) {
  const r = a.request || {};
  const tool = String(r.tool || "").toLowerCase();
  const input = r.input && typeof r.input === "object" ? r.input : {};
  try {
    if (EDIT_TOOLS.has(tool) && (typeof input.old_string === "string" || Array.isArray(input.edits))) return editView(a, input);
    if (WRITE_TOOLS.has(tool)) return writeView(a, input);
    if (PATCH_TOOLS.has(tool)) return patchView(a, input);
    if (tool.startsWith("mcp__")) return h("div", { class: "change mcp-args" }, h("p", { class: "change-title" }, "Arguments"), argList(input, 0));
  } catch (err) {
    return h("p", { class: "card-error" }, "The change cannot be shown: " + err.message);
  }
  return null;
}

// ---- Text and diffs ----

// splitLines splits text into lines; a final newline ends the last line
// rather than starting an empty one.
export function splitLines(text) {
  if (text === "") return [];
  const ls = text.split("\n");
  if (ls[ls.length - 1] === "") ls.pop();
  return ls;
}

// diffLines returns the operations that turn the lines a into b: {op: " ",
// "-" or "+", text, o: line in a, n: line in b} (numbers from 1; o is 0 for
// an added line, n for a removed one).
export function diffLines(a, b) {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const mid = [];
  if (am.length * bm.length > 4e6) {
    // Too large to align: all removed, then all added.
    for (const t of am) mid.push(["-", t]);
    for (const t of bm) mid.push(["+", t]);
  } else {
    // Longest common subsequence, by a table of suffix lengths.
    const n = am.length, m = bm.length;
    const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        L[i][j] = am[i] === bm[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
      }
    }
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) { mid.push([" ", am[i]]); i++; j++; }
      else if (i < n && (j === m || L[i + 1][j] >= L[i][j + 1])) { mid.push(["-", am[i]]); i++; }
      else { mid.push(["+", bm[j]]); j++; }
    }
  }
  const ops = [];
  let o = 0, nn = 0;
  const push = (op, text) => {
    if (op !== "+") o++;
    if (op !== "-") nn++;
    ops.push({ op, text, o: op === "+" ? 0 : o, n: op === "-" ? 0 : nn });
  };
  for (let k = 0; k < pre; k++) push(" ", a[k]);
  for (const [op, t] of mid) push(op, t);
  for (let k = a.length - suf; k < a.length; k++) push(" ", a[k]);
  return ops;
}

// hunks groups ops into the changes, each with up to CONTEXT unchanged
// lines around it; changes closer than that share a hunk.
export function hunks(ops) {
  const changed = [];
  ops.forEach((o, i) => { if (o.op !== " ") changed.push(i); });
  if (changed.length === 0) return [];
  const out = [];
  let start = Math.max(0, changed[0] - CONTEXT);
  let end = Math.min(ops.length, changed[0] + CONTEXT + 1);
  for (const i of changed.slice(1)) {
    if (i - CONTEXT <= end) {
      end = Math.min(ops.length, i + CONTEXT + 1);
    } else {
      out.push(ops.slice(start, end));
      start = i - CONTEXT;
      end = Math.min(ops.length, i + CONTEXT + 1);
    }
  }
  out.push(ops.slice(start, end));
  return out;
}

function hunkHeader(lines) {
  const olds = lines.filter((l) => l.op !== "+");
  const news = lines.filter((l) => l.op !== "-");
  const os = olds.length ? olds[0].o : Math.max(0, (lines.find((l) => l.o) || { o: 1 }).o - 1);
  const ns = news.length ? news[0].n : 0;
  return "@@ -" + os + "," + olds.length + " +" + ns + "," + news.length + " @@";
}

// diffTable renders hunks as a table: old and new line numbers, the
// sign, the text. Without numbers (numbered false) the lines are
// numbered within the change only.
function diffTable(hks, numbered) {
  const body = h("tbody");
  let rows = 0, hidden = 0;
  for (const lines of hks) {
    if (rows >= MAX_ROWS) { hidden += lines.length; continue; }
    body.append(h("tr", { class: "diff-hunk" }, h("td", { colspan: "4" }, numbered ? hunkHeader(lines) : "⋯")));
    for (const l of lines) {
      if (rows >= MAX_ROWS) { hidden++; continue; }
      rows++;
      const cls = l.op === "+" ? "diff-add" : l.op === "-" ? "diff-del" : "diff-ctx";
      body.append(h("tr", { class: cls },
        h("td", { class: "ln", "aria-hidden": l.o ? null : "true" }, l.o ? String(l.o) : ""),
        h("td", { class: "ln", "aria-hidden": l.n ? null : "true" }, l.n ? String(l.n) : ""),
        h("td", { class: "sign", "aria-label": l.op === "+" ? "added" : l.op === "-" ? "removed" : null }, l.op === " " ? "" : l.op === "-" ? "−" : "+"),
        h("td", { class: "code" }, l.text === "" ? " " : l.text)));
    }
  }
  const table = h("table", { class: "diff" },
    h("colgroup", null, h("col", { class: "c-ln" }), h("col", { class: "c-ln" }), h("col", { class: "c-sign" }), h("col")), body);
  const counts = stat(hks);
  return h("div", { class: "diff-wrap" }, table,
    hidden > 0 ? h("p", { class: "muted small diff-more" }, hidden + " more lines not shown") : null,
    counts);
}

function stat(hks) {
  let add = 0, del = 0;
  for (const lines of hks) for (const l of lines) { if (l.op === "+") add++; else if (l.op === "-") del++; }
  return h("p", { class: "diff-stat small" }, h("span", { class: "diff-stat-add" }, "+" + add), " ", h("span", { class: "diff-stat-del" }, "−" + del));
}

// ---- Files ----

function pathOf(input) {
  for (const k of ["file_path", "path", "absolute_path", "notebook_path"]) if (typeof input[k] === "string" && input[k]) return input[k];
  return "";
}

// fileFor finds the approval's file for path: the one with that real
// path, or ending in it, or the only one.
function fileFor(a, path) {
  const files = a.files || [];
  const clean = String(path || "").replace(/^\.\//, "");
  return files.find((f) => f.path === path) ||
    (clean && files.find((f) => f.path.endsWith("/" + clean))) ||
    (files.length === 1 && !path ? files[0] : null) ||
    (files.length === 1 && files[0].path.split("/").pop() === clean.split("/").pop() ? files[0] : null);
}

// before is the text of f as it was when asked, or null when it is not
// known.
function before(f) {
  if (!f) return null;
  if (f.version === "absent") return "";
  if (typeof f.content === "string" && f.version) return f.content;
  return null;
}

function head(title, path, f) {
  return h("p", { class: "change-title" },
    title, " ", h("code", { class: "change-path" }, path || "?"),
    f && f.version === "absent" ? h("span", { class: "chip" }, "new file") : null);
}

function asked(f) {
  if (!f) return "The file as it was is not available (asked on another server): lines are numbered within the change.";
  if (f.note) return "The file " + f.note + ".";
  return "";
}

function count(text, sub) {
  let n = 0, i = 0;
  while ((i = text.indexOf(sub, i)) !== -1) { n++; i += sub.length; }
  return n;
}

// ---- Edits ----

function editView(a, input) {
  const path = pathOf(input);
  const f = fileFor(a, path);
  const edits = Array.isArray(input.edits) ? input.edits : [input];
  const box = h("div", { class: "change change-edit" }, head(edits.length > 1 ? "Edits " + edits.length + " places in" : "Edits", path, f));
  const orig = before(f);
  const problems = [];
  if (orig !== null) {
    let text = orig;
    for (const e of edits) {
      const old = typeof e.old_string === "string" ? e.old_string : "";
      const neu = typeof e.new_string === "string" ? e.new_string : "";
      if (old === "") {
        if (text === "") text = neu;
        else problems.push("an edit has no text to replace");
        continue;
      }
      const n = count(text, old);
      if (n === 0) {
        problems.push("the text to replace is not in the file as it was when asked: the edit would fail");
        continue;
      }
      if (n > 1 && !e.replace_all) problems.push("the text to replace occurs " + n + " times: the edit would fail or change the first");
      text = e.replace_all ? text.split(old).join(neu) : text.replace(old, () => neu);
    }
    const hks = hunks(diffLines(splitLines(orig), splitLines(text)));
    for (const p of problems) box.append(h("p", { class: "change-problem" }, p));
    if (hks.length > 0) box.append(diffTable(hks, true));
    else if (problems.length === 0) box.append(h("p", { class: "muted" }, "The edit changes nothing."));
    if (problems.length === 0) return box;
  } else {
    const why = asked(f);
    if (why) box.append(h("p", { class: "muted small" }, why));
  }
  if (orig === null || problems.length > 0) {
    // The edits as given, each its own change.
    const hks = edits.map((e) => hunks(diffLines(splitLines(String(e.old_string ?? "")), splitLines(String(e.new_string ?? ""))))).flat();
    if (hks.length > 0) box.append(diffTable(hks, false));
  }
  return box;
}

// ---- Writes ----

function writeView(a, input) {
  const path = pathOf(input);
  const f = fileFor(a, path);
  const content = typeof input.content === "string" ? input.content : "";
  const ls = splitLines(content);
  const shown = ls.slice(0, PREVIEW_LINES);
  const box = h("div", { class: "change change-write" },
    head("Writes", path, f),
    h("table", { class: "diff preview" }, h("colgroup", null, h("col", { class: "c-ln" }), h("col")), h("tbody", null, shown.map((t, i) => h("tr", { class: "diff-ctx" },
      h("td", { class: "ln" }, String(i + 1)), h("td", { class: "code" }, t === "" ? " " : t))))),
    ls.length > shown.length ? h("p", { class: "muted small preview-more" }, (ls.length - shown.length) + " more lines") : null,
    ls.length === 0 ? h("p", { class: "muted" }, "An empty file.") : null);
  const orig = before(f);
  if (orig) {
    const old = splitLines(orig);
    const hks = hunks(diffLines(old, ls));
    box.append(h("details", { class: "replaces" },
      h("summary", null, "Replaces the file as it was (" + old.length + " lines): show the difference"),
      hks.length ? diffTable(hks, true) : h("p", { class: "muted" }, "The same content.")));
  } else if (f && f.note) {
    box.append(h("p", { class: "muted small" }, "Replaces a file that " + f.note.replace(/:.*/, "") + "."));
  }
  return box;
}

// ---- Patches ----

// parsePatch reads a patch, in the apply_patch form (*** Update File: p,
// @@ separators) or as a unified diff (--- a/p, +++ b/p, @@ -a,b +c,d
// @@), into its files, each with its hunks of {op, text} lines.
export function parsePatch(text) {
  const files = [];
  let file = null, hunk = null;
  const newFile = (path, kind) => {
    file = { path, kind, hunks: [] };
    hunk = null;
    files.push(file);
  };
  const all = text.split("\n");
  for (let li = 0; li < all.length; li++) {
    const line = all[li];
    let m;
    if ((m = /^\*\*\* (Update|Add|Delete) File: (.*)$/.exec(line))) { newFile(m[2].trim(), m[1].toLowerCase()); continue; }
    if (/^\*\*\* (Begin|End) Patch/.test(line) || /^\*\*\* End of File/.test(line)) continue;
    if ((m = /^\*\*\* Move to: (.*)$/.exec(line)) && file) { file.moveTo = m[1].trim(); continue; }
    if (/^diff --git /.test(line) || /^index /.test(line)) continue;
    if (/^--- /.test(line) && /^\+\+\+ /.test(all[li + 1] || "")) {
      // A unified diff's file header: --- old, +++ new.
      const name = (x) => x.slice(4).replace(/\t.*$/, "").trim();
      const oldp = name(line), newp = name(all[++li]);
      const strip = (x) => x.replace(/^[ab]\//, "");
      if (newp === "/dev/null") newFile(strip(oldp), "delete");
      else newFile(strip(newp), oldp === "/dev/null" ? "add" : "update");
      continue;
    }
    if ((m = /^@@(?: -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@)?/.exec(line)) && line.startsWith("@@")) {
      if (!file) newFile("", "update");
      hunk = { oldStart: m[1] ? Number(m[1]) : 0, newStart: m[3] ? Number(m[3]) : 0, oldLen: m[2] !== undefined ? Number(m[2]) : (m[1] ? 1 : -1), lines: [] };
      file.hunks.push(hunk);
      continue;
    }
    if (!file) continue;
    if (!hunk) {
      hunk = { oldStart: 0, newStart: 0, oldLen: -1, lines: [] };
      file.hunks.push(hunk);
    }
    const c = line[0];
    if (c === "+" || c === "-" || c === " ") hunk.lines.push({ op: c, text: line.slice(1) });
    else if (line === "") hunk.lines.push({ op: " ", text: "", blank: true });
    else if (line.startsWith("\\")) continue;
  }
  for (const f of files) for (const hk of f.hunks) {
    // A blank line at the end of a hunk is the patch's own last newline.
    while (hk.lines.length && hk.lines[hk.lines.length - 1].blank) hk.lines.pop();
  }
  return files;
}

// applyHunks applies hunks to the lines of a file, each found after the
// one before; null when one is not found.
function applyHunks(lines, hks) {
  const out = [];
  let at = 0;
  for (const hk of hks) {
    const old = hk.lines.filter((l) => l.op !== "+").map((l) => l.text);
    const neu = hk.lines.filter((l) => l.op !== "-").map((l) => l.text);
    let i = -1;
    const hint = hk.oldStart > 0 ? hk.oldStart - 1 : at;
    const fits = (k) => k >= at && k + old.length <= lines.length && old.every((t, j) => lines[k + j] === t);
    if (fits(hint)) i = hint;
    else for (let k = at; k + old.length <= lines.length; k++) if (fits(k)) { i = k; break; }
    if (i < 0) return null;
    out.push(...lines.slice(at, i), ...neu);
    at = i + old.length;
  }
  out.push(...lines.slice(at));
  return out;
}

function patchView(a, input) {
  const text = ["patch", "input", "diff"].map((k) => input[k]).find((v) => typeof v === "string") || "";
  const files = parsePatch(text);
  const box = h("div", { class: "change change-patch" });
  if (files.length === 0) {
    box.append(h("p", { class: "muted" }, "The patch names no file."));
    return box;
  }
  for (const pf of files) {
    const f = fileFor(a, pf.path);
    const title = pf.kind === "add" ? "Adds" : pf.kind === "delete" ? "Deletes" : "Patches";
    box.append(head(title, pf.path + (pf.moveTo ? " → " + pf.moveTo : ""), f));
    const orig = before(f);
    let after = null;
    if (pf.kind === "add") after = pf.hunks.flatMap((hk) => hk.lines.filter((l) => l.op !== "-").map((l) => l.text));
    else if (pf.kind === "delete") after = [];
    else if (orig !== null) after = applyHunks(splitLines(orig), pf.hunks);
    if (after !== null && (orig !== null || pf.kind === "add")) {
      const hks = hunks(diffLines(splitLines(orig || ""), after));
      box.append(hks.length ? diffTable(hks, true) : h("p", { class: "muted" }, "The patch changes nothing in this file."));
      continue;
    }
    if (orig !== null) box.append(h("p", { class: "change-problem" }, "The patch does not apply to the file as it was when asked: it would fail."));
    else if (asked(f)) box.append(h("p", { class: "muted small" }, asked(f)));
    // The hunks as written, numbered from their headers when they have them.
    const hks = pf.hunks.map((hk) => {
      let o = hk.oldStart, n = hk.newStart;
      return hk.lines.map((l) => ({
        op: l.op, text: l.text,
        o: l.op === "+" || !hk.oldStart ? 0 : o++,
        n: l.op === "-" || !hk.newStart ? 0 : n++,
      }));
    });
    box.append(diffTable(hks, pf.hunks.some((hk) => hk.oldStart > 0)));
  }
  return box;
}

// ---- MCP arguments ----

// argList shows a call's arguments as keys and values: strings as text
// (several lines kept), numbers and booleans as code, lists and objects
// nested, a little at a time.
export function argList(obj, depth) {
  const entries = Object.entries(obj || {});
  if (entries.length === 0) return h("p", { class: "muted" }, "No arguments.");
  return h("dl", { class: "arglist" }, entries.map(([k, v]) => [h("dt", null, k), h("dd", null, argValue(v, depth))]));
}

function argValue(v, depth) {
  if (v === null || v === undefined) return h("code", { class: "muted" }, "null");
  if (typeof v === "string") {
    if (v.includes("\n") || v.length > 120) {
      const ls = v.split("\n");
      const clipped = ls.slice(0, 20).join("\n");
      return [h("pre", { class: "arg-text" }, clipped), ls.length > 20 ? h("span", { class: "muted small" }, (ls.length - 20) + " more lines") : null];
    }
    return h("span", { class: "arg-string" }, v === "" ? "(empty)" : v);
  }
  if (typeof v !== "object") return h("code", null, String(v));
  if (depth >= 3) return h("pre", { class: "arg-text" }, JSON.stringify(v, null, 2));
  if (Array.isArray(v)) {
    if (v.length === 0) return h("span", { class: "muted" }, "(empty list)");
    if (v.every((x) => typeof x !== "object" || x === null)) return h("ul", { class: "arg-items" }, v.map((x) => h("li", null, argValue(x, depth + 1))));
    return h("ol", { class: "arg-items" }, v.map((x) => h("li", null, argValue(x, depth + 1))));
  }
  return argList(v, depth + 1);
}
