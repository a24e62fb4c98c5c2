// policy-bench.mjs times Gemini CLI's policy engine (PolicyEngine.check)
// on the five calls of cases.go, with the rules of gemini-rules.toml in
// the user tier and Gemini CLI's own default policies, loaded by its TOML
// loader. For each call it prints
//
//	case NAME CPU_NS DECISION
//
// where CPU_NS is the process's user and system CPU time per decision
// (process.cpuUsage) over ITER decisions after as many to warm up.
//
//	node policy-bench.mjs [ITER [CASE]]
//
// With CASE, only that call is timed: compare.sh runs one process per
// call, since Gemini CLI's shell parser breaks down after some tens of
// thousands of parses in one process (see decide below).
//
// GEMINI_CLI_DIR names the installed @google/gemini-cli package (default
// /opt/toolgate-agents/node_modules/@google/gemini-cli). It runs in a
// temporary project directory laid out as cases.go lays it out, since
// the engine takes the working directory as the workspace.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const cliDir = process.env.GEMINI_CLI_DIR ?? '/opt/toolgate-agents/node_modules/@google/gemini-cli';
const iter = Number(process.argv[2] ?? 10000);
const only = process.argv[3];
if (!Number.isInteger(iter) || iter <= 0) {
  console.error(`policy-bench: ITER ${process.argv[2]}: want a positive whole number`);
  process.exit(2);
}

// The bundle splits the CLI into chunks with hashed names; the policy
// engine is in the chunk that gemini.js imports and that defines it.
function policyChunk() {
  const bundle = path.join(cliDir, 'bundle');
  const entry = fs.readFileSync(path.join(bundle, 'gemini.js'), 'utf8');
  for (const m of entry.matchAll(/from "\.\/(chunk-[A-Z0-9]+\.js)"|import "\.\/(chunk-[A-Z0-9]+\.js)"/g)) {
    const file = path.join(bundle, m[1] ?? m[2]);
    if (fs.readFileSync(file, 'utf8').includes('var PolicyEngine = class')) {
      return file;
    }
  }
  throw new Error(`no chunk imported by ${path.join(bundle, 'gemini.js')} defines PolicyEngine`);
}

// The engine logs every decision with console.debug; the CLI routes that
// to its debug console, which drops it unless debugging. Here it is
// dropped at once, the cheapest that can be done with it: the messages
// are still formatted, as in the CLI.
console.debug = () => {};
const core = await import(policyChunk());
const { PolicyEngine, loadPoliciesFromToml, ApprovalMode, DEFAULT_POLICY_TIER, USER_POLICY_TIER } = core;
const version = JSON.parse(fs.readFileSync(path.join(cliDir, 'package.json'), 'utf8')).version;

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'gemini-policy-')));
const project = path.join(tmp, 'project');
const userPolicies = path.join(tmp, 'policies');
for (const d of ['project/src', 'project/.git', 'policies']) {
  fs.mkdirSync(path.join(tmp, d), { recursive: true });
}
for (const [f, body] of Object.entries({ 'project/src/main.go': 'package main\n', 'project/src/util.go': 'package main\n', 'project/.env': 'KEY=secret\n', 'project/go.mod': 'module example.com/p\n' })) {
  fs.writeFileSync(path.join(tmp, f), body);
}
fs.copyFileSync(path.join(here, 'gemini-rules.toml'), path.join(userPolicies, 'rules.toml'));
process.chdir(project);

const defaults = path.join(cliDir, 'bundle', 'policies');
const { rules, checkers, errors } = await loadPoliciesFromToml([defaults, userPolicies], (p) => (path.resolve(p) === userPolicies ? USER_POLICY_TIER : DEFAULT_POLICY_TIER));
if (errors.length > 0) {
  console.error('policy-bench: loading policies:', JSON.stringify(errors, null, 1));
  process.exit(1);
}
const engine = new PolicyEngine({ rules, checkers, approvalMode: ApprovalMode.DEFAULT });

const cases = [
  ['read', { name: 'read_file', args: { file_path: path.join(project, 'src/main.go') } }],
  ['write', { name: 'write_file', args: { file_path: path.join(project, 'src/util.go'), content: 'package main\n\nfunc helper() {}\n' } }],
  ['git-status', { name: 'run_shell_command', args: { command: 'git status' } }],
  ['chained', { name: 'run_shell_command', args: { command: 'git status && npm run test -- --watch | tee test.log' } }],
  ['wrapped', { name: 'run_shell_command', args: { command: "bash -c 'git status'" } }],
];

console.log(`# Gemini CLI ${version}: ${rules.length} rules, ${checkers.length} checkers, ${iter} decisions per case`);
const envDenied = await engine.check({ name: 'read_file', args: { file_path: path.join(project, '.env') } });
if (envDenied.decision !== 'deny') {
  console.error(`policy-bench: read of .env: got ${envDenied.decision}, want deny: the rules did not load as meant`);
  process.exit(1);
}
// Every decision is checked against the first: Gemini CLI's shell parser
// (tree-sitter, in WebAssembly) aborts after some tens of thousands of
// parses in one process, printing Aborted(), and from then on the engine
// falls back to its default decision quickly, which would be timed as a
// fast decision.
let calls = 0;
async function decide(name, call, want) {
  const { decision } = await engine.check(call);
  calls++;
  if (decision !== want) {
    console.error(`policy-bench: ${name}: decision ${decision} after ${calls} calls in this process, was ${want}: Gemini CLI's engine broke down; time fewer decisions`);
    process.exit(1);
  }
}
if (only !== undefined && !cases.some(([name]) => name === only)) {
  console.error(`policy-bench: no case ${only}; the cases are ${cases.map(([name]) => name).join(', ')}`);
  process.exit(2);
}
for (const [name, call] of cases) {
  if (only !== undefined && name !== only) {
    continue;
  }
  const { decision } = await engine.check(call);
  for (let i = 0; i < iter; i++) {
    await decide(name, call, decision);
  }
  globalThis.gc?.();
  const start = process.cpuUsage();
  for (let i = 0; i < iter; i++) {
    await decide(name, call, decision);
  }
  const used = process.cpuUsage(start);
  const ns = Math.round(((used.user + used.system) * 1000) / iter);
  console.log(`case ${name} ${ns} ${decision}`);
}
fs.rmSync(tmp, { recursive: true, force: true });
