#!/usr/bin/env node
// Judges one run of the MCP conformance suite against an expected-failures
// file, so that run.sh fails on any new failure AND on any expected failure
// that no longer happens (the file must stay honest).
//
//   node conformance-check.mjs --results DIR --expected FILE --label TEXT [--suite-log FILE]
//
// DIR is the suite's --output-dir: one folder per scenario,
// server-<scenario>-<timestamp>/checks.json, each an array of checks
// {id, status: SUCCESS|FAILURE|WARNING|SKIPPED|INFO, errorMessage}.
//
// FILE has one entry per line, "#" starts a comment:
//   <scenario>             <reason>   every failing check of the scenario is expected
//   <scenario>:<check-id>  <reason>   only that check may fail
// A reason is mandatory. A scenario listed wholesale must fail (at least one
// check); a listed check must be present and fail. Anything else that fails
// is unexpected.
//
// Prints every unexpected failure and stale entry, then one summary line
//   conformance LABEL: N passed, M failed (K expected)
// counting scenarios: a scenario fails when any of its checks fails, and
// counts as expected when all of its failing checks are listed. With
// --suite-log (the suite's stdout, for a --requirements run) the line goes on
// with "; required by REVISION: X of Y passed", leaving out the scenarios the
// suite runs without scoring (extensions, pending, added after release).
// Exit status 0 when nothing is unexpected or stale, 1 otherwise.

import fs from 'node:fs';
import path from 'node:path';

function args() {
  const out = {};
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i += 2) {
    if (!a[i].startsWith('--') || a[i + 1] === undefined) usage();
    out[a[i].slice(2)] = a[i + 1];
  }
  if (!out.results || !out.expected || !out.label) usage();
  for (const k of Object.keys(out)) {
    if (!['results', 'expected', 'label', 'suite-log'].includes(k)) usage();
  }
  return out;
}

function usage() {
  console.error('usage: node conformance-check.mjs --results DIR --expected FILE --label TEXT [--suite-log FILE]');
  process.exit(2);
}

function readExpected(file) {
  const whole = new Map();
  const perCheck = new Map();
  const problems = [];
  fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
    const text = line.replace(/#.*$/, '').trim();
    if (!text) return;
    const m = /^(\S+)\s+(\S.*)$/.exec(text);
    if (!m) {
      problems.push(`${file}:${i + 1}: "${text}" has no reason`);
      return;
    }
    const [, entry, reason] = m;
    const target = entry.includes(':') ? perCheck : whole;
    if (target.has(entry)) problems.push(`${file}:${i + 1}: duplicate entry ${entry}`);
    target.set(entry, reason);
  });
  for (const key of perCheck.keys()) {
    if (whole.has(key.split(':')[0])) problems.push(`${file}: ${key} is listed both per check and wholesale`);
  }
  return { whole, perCheck, problems };
}

// readResults returns Map<scenario, Map<checkId, {failed, message}>>.
function readResults(dir) {
  const scenarios = new Map();
  const stamp = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;
  for (const name of fs.readdirSync(dir).sort()) {
    const m = stamp.exec(name);
    const file = path.join(dir, name, 'checks.json');
    if (!m || !fs.existsSync(file)) continue;
    const checks = scenarios.get(m[1]) ?? new Map();
    for (const c of JSON.parse(fs.readFileSync(file, 'utf8'))) {
      const prev = checks.get(c.id);
      const failed = c.status === 'FAILURE';
      if (!prev || (failed && !prev.failed)) {
        checks.set(c.id, { failed, message: c.errorMessage ?? '' });
      }
    }
    scenarios.set(m[1], checks);
  }
  return scenarios;
}

// readNotScored parses the suite's "Not scored for REVISION: ..." block:
// lines "  ✗ name (reason)". Returns {revision, names} or null.
function readNotScored(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const at = lines.findIndex((l) => l.startsWith('Not scored for '));
  if (at < 0) return null;
  const revision = /^Not scored for ([^:]+):/.exec(lines[at])?.[1] ?? '?';
  const names = new Set();
  for (const l of lines.slice(at + 1)) {
    const m = /^\s+\S+ (\S+) \(([\w-]+)\)\s*$/.exec(l);
    if (!m) break;
    names.add(m[1]);
  }
  return { revision, names };
}

const opts = args();
const { whole, perCheck, problems } = readExpected(opts.expected);
const results = readResults(opts.results);
const errors = [...problems];
if (results.size === 0) errors.push(`no scenario results under ${opts.results}`);

let passed = 0;
let failed = 0;
let expected = 0;
const notScored = opts['suite-log'] ? readNotScored(opts['suite-log']) : null;
let required = 0;
let requiredPassed = 0;
for (const [scenario, checks] of results) {
  const failing = [...checks].filter(([, c]) => c.failed);
  if (notScored && !notScored.names.has(scenario)) {
    required++;
    if (failing.length === 0) requiredPassed++;
  }
  if (failing.length === 0) {
    passed++;
    continue;
  }
  failed++;
  let allExpected = true;
  for (const [id, c] of failing) {
    if (whole.has(scenario) || perCheck.has(`${scenario}:${id}`)) continue;
    allExpected = false;
    errors.push(`UNEXPECTED FAILURE ${scenario}:${id}: ${c.message.replace(/\s+/g, ' ').slice(0, 500)}`);
  }
  if (allExpected) expected++;
}

for (const scenario of whole.keys()) {
  const checks = results.get(scenario);
  if (!checks) errors.push(`STALE ENTRY ${scenario}: scenario did not run`);
  else if (![...checks.values()].some((c) => c.failed)) {
    errors.push(`UNEXPECTED PASS ${scenario}: listed as an expected failure but passed; remove it from ${path.basename(opts.expected)}`);
  }
}
for (const key of perCheck.keys()) {
  const i = key.indexOf(':');
  const c = results.get(key.slice(0, i))?.get(key.slice(i + 1));
  if (!c) errors.push(`STALE ENTRY ${key}: check did not run`);
  else if (!c.failed) errors.push(`UNEXPECTED PASS ${key}: listed as an expected failure but passed; remove it from ${path.basename(opts.expected)}`);
}

for (const e of errors) console.log(`  ${e}`);
const scored = notScored ? `; required by ${notScored.revision}: ${requiredPassed} of ${required} passed` : '';
console.log(`conformance ${opts.label}: ${passed} passed, ${failed} failed (${expected} expected)${scored}`);
process.exit(errors.length === 0 ? 0 : 1);
