#!/usr/bin/env node
/**
 * npm test: type-check and build, then run the tap suite and end with one plain line
 * `N passed, N failed` (tap's own closing lines are not a plain count).
 * Extra arguments go to tap (e.g. `npm test -- test/http.test.ts`).
 *
 * With no arguments, the soak (test/soak.test.ts) runs after the rest, alone: it measures the server's latency and
 * memory from one window to the next, and a neighbouring test file that takes both cores in one window and not in
 * another is not the server's doing (in CI, its p99 or RSS check failed once that way).
 */
import { spawn, spawnSync } from 'node:child_process';

// One compiler pass type-checks everything and builds dist/ (the CLI tests run the built vm-api).
const typecheck = spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
if (typecheck.status !== 0) {
  console.log('type check failed');
  console.log('0 passed, 1 failed');
  process.exit(1);
}

const SOAK = 'test/soak.test.ts';
const runs = process.argv.length > 2 ? [process.argv.slice(2)] : [[`--exclude=${SOAK}`], [SOAK]];
let pass = 0;
let fail = 0;
let skip = 0;
let failedRun = false;
for (const args of runs) {
  const result = await tap(args);
  pass += result.pass;
  fail += result.fail;
  skip += result.skip;
  failedRun ||= result.code !== 0;
}
if (failedRun && fail === 0) fail = 1;
console.log(`${pass} passed, ${fail} failed${skip ? `, ${skip} skipped` : ''}`);
process.exit(failedRun ? 1 : 0);

/** One tap run, its output passed through; its counts from tap's final summary. */
function tap(args) {
  return new Promise((resolve) => {
    const child = spawn('npx', ['tap', '--reporter=tap', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    const counts = { pass: 0, fail: 0, skip: 0 };
    let tail = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      const lines = (tail + chunk.toString()).split('\n');
      tail = lines.pop() ?? '';
      for (const line of lines) count(line);
    });
    function count(line) {
      // tap's final summary: "# { total: 12, pass: 11, fail: 1 }" (keys absent when zero)
      const m = /^# \{ total: (\d+)(.*)\}$/.exec(line.trim());
      if (!m) return;
      counts.pass = Number(/pass: (\d+)/.exec(m[2])?.[1] ?? 0);
      counts.fail = Number(/fail: (\d+)/.exec(m[2])?.[1] ?? 0);
      counts.skip = Number(/skip: (\d+)/.exec(m[2])?.[1] ?? 0) + Number(/todo: (\d+)/.exec(m[2])?.[1] ?? 0);
    }
    child.on('close', (code) => {
      if (tail) count(tail);
      resolve({ ...counts, code: code ?? 1, fail: code !== 0 && counts.fail === 0 ? 1 : counts.fail });
    });
  });
}
