/**
 * The operator's commands as the benchmark runs them: `vm-api <command>` in a
 * process of its own over a DATA_DIR, with its wall time and its peak
 * resident memory (VmHWM, which the kernel keeps for the whole process:
 * every thread, the heap, native buffers and the mapped LMDB pages it
 * touched), read from /proc while it runs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const here = new URL('.', import.meta.url).pathname;
export const CLI = join(here, '..', 'src', 'cli', 'main.js');

/** The node flags the `vm-api` bin runs with (its first line, `#!/usr/bin/env -S node <flags>`): the benchmark runs it as installed. */
export const BIN_NODE_FLAGS: readonly string[] = (() => {
  const firstLine = readFileSync(CLI, 'utf8').split('\n', 1)[0]!;
  const flags = /^#!\/usr\/bin\/env -S node (.*)$/.exec(firstLine)?.[1] ?? '';
  return flags.split(/\s+/).filter(Boolean);
})();

/** The memory fields of /proc/<pid>/status (kB there) in bytes; undefined once the process is gone. */
function procStatusFields(pid: number): Record<string, number> | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const fields: Record<string, number> = {};
  for (const [, name, kb] of text.matchAll(/^(\w+):\s+(\d+) kB$/gm)) fields[name!] = Number(kb) * 1024;
  return fields;
}

/** A memory field of /proc/<pid>/status in bytes (NaN once the process is gone). */
export function procStatus(pid: number, field: string): number {
  return procStatusFields(pid)?.[field] ?? NaN;
}

/** A sample without labels in a server's `/metrics` (Prometheus text), NaN when it has none. */
export function metricValue(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

/**
 * The URL a `vm-api serve` whose log goes to `logFile` listens on (its "listening" line), read every `everyMs`;
 * rejects once `exited()` says it ended first.
 */
export async function listeningUrl(logFile: string, exited: () => boolean, everyMs = 50): Promise<string> {
  for (;;) {
    const m = /"url":"(http:\/\/[^"]+)"/.exec(readFileSync(logFile, 'utf8'));
    if (m) return m[1]!;
    if (exited()) throw new Error(`serve exited before it listened: see ${logFile}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export interface Command {
  readonly child: ChildProcess;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  /** The highest VmHWM read so far (every 100 ms, and once more on demand). */
  peak(): number;
  /**
   * The highest anonymous (heap, native buffers) and file-backed (mapped LMDB pages: the page cache's, which the
   * kernel takes back under pressure) resident memory sampled, each on its own (their peaks need not coincide).
   */
  peaks(): { anon: number; file: number };
  /** Milliseconds since it was started. */
  elapsedMs(): number;
}

/**
 * `vm-api <args>` with `env` added; stdout to `stdoutFile` when given (a server's log, read as a shipper would),
 * else collected into `onStdout`; stderr lines to `onStderr`.
 */
export function vmApi(
  args: string[],
  env: Record<string, string>,
  options: { stdoutFile?: string; onStdout?: (text: string) => void; onStderr?: (line: string) => void; nodeArgs?: string[] } = {},
): Command {
  const started = performance.now();
  const out = options.stdoutFile === undefined ? 'pipe' : openSync(options.stdoutFile, 'w');
  const child = spawn(process.execPath, [...BIN_NODE_FLAGS, ...(options.nodeArgs ?? []), CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', out, 'pipe'] });
  if (typeof out === 'number') closeSync(out);
  child.stdout?.on('data', (chunk: Buffer) => options.onStdout?.(chunk.toString()));
  let partial = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split(/[\r\n]/);
    partial = lines.pop()!;
    for (const line of lines) if (line.trim() !== '') options.onStderr?.(line);
  });
  let peak = 0;
  const peaks = { anon: 0, file: 0 };
  const sample = () => {
    const status = procStatusFields(child.pid!);
    if (status === undefined) return;
    peak = Math.max(peak, status.VmHWM ?? 0);
    peaks.anon = Math.max(peaks.anon, status.RssAnon ?? 0);
    peaks.file = Math.max(peaks.file, status.RssFile ?? 0);
  };
  const sampler = setInterval(sample, 100);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      clearInterval(sampler);
      resolve(code);
    }),
  );
  return {
    child,
    exited,
    peak: () => {
      sample();
      return peak;
    },
    peaks: () => {
      sample();
      return { ...peaks };
    },
    elapsedMs: () => performance.now() - started,
  };
}
