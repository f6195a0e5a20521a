#!/usr/bin/env node
/**
 * npm test: type-check and build, then run the tap suite and end with one plain line
 * `N passed, N failed` (tap's own closing lines are not a plain count).
 * Extra arguments go to tap (e.g. `npm test -- test/http.test.ts`).
 */
import { spawn, spawnSync } from 'node:child_process';

// One compiler pass type-checks everything and builds dist/ (the CLI tests run the built vm-api).
const typecheck = spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
if (typecheck.status !== 0) {
  console.log('type check failed');
  console.log('0 passed, 1 failed');
  process.exit(1);
}

const tap = spawn('npx', ['tap', '--reporter=tap', ...process.argv.slice(2)], { stdio: ['ignore', 'pipe', 'inherit'] });
let pass = 0;
let fail = 0;
let skip = 0;
let tail = '';
tap.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  const text = tail + chunk.toString();
  const lines = text.split('\n');
  tail = lines.pop() ?? '';
  for (const line of lines) count(line);
});
function count(line) {
  // tap's final summary: "# { total: 12, pass: 11, fail: 1 }" (keys absent when zero)
  const m = /^# \{ total: (\d+)(.*)\}$/.exec(line.trim());
  if (!m) return;
  pass = Number(/pass: (\d+)/.exec(m[2])?.[1] ?? 0);
  fail = Number(/fail: (\d+)/.exec(m[2])?.[1] ?? 0);
  skip = Number(/skip: (\d+)/.exec(m[2])?.[1] ?? 0) + Number(/todo: (\d+)/.exec(m[2])?.[1] ?? 0);
}
tap.on('close', (code) => {
  if (tail) count(tail);
  if (code !== 0 && fail === 0) fail = 1;
  console.log(`${pass} passed, ${fail} failed${skip ? `, ${skip} skipped` : ''}`);
  process.exit(code ?? 1);
});
