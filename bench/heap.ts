/**
 * npm run build && node --expose-gc --max-old-space-size=8192 dist/bench/heap.js <DATA_DIR> [--census]
 *
 * What the server's JavaScript heap holds once it has loaded a DATA_DIR,
 * and what a full collection of it costs: the heap's size, the memory
 * outside it (typed arrays), and the time of five full collections in a
 * row (the pauses a live import's collections cost requests: see the
 * README's "Known problems"). With --census it also writes a heap snapshot
 * (to a temporary file, deleted after; about 1.2 GB and a minute at a
 * million shifts) and counts its objects by type and name, the most
 * numerous and the largest first. A diagnosis, not a target's figure.
 */
import { openSync, readSync, closeSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { finishBackgroundWork } from '../src/readmodel/background.js';
import { openRuntime } from '../src/runtime.js';

interface Group {
  readonly type: string;
  /** The name's index in the snapshot's strings (undefined for strings: each is its own name). */
  readonly name: number | undefined;
  count: number;
  bytes: number;
}

/**
 * Objects of a heap snapshot by type and name (constructor, or what V8
 * calls the object), read as a stream: the file is larger than the longest
 * string V8 makes, so it cannot be parsed as one JSON text.
 */
function census(file: string): Census {
  const reader = new TextStream(file);
  const head = reader.upTo('"nodes":', true);
  const meta = (JSON.parse(`${head.slice(head.indexOf('{')).trim().replace(/,$/, '')}}`) as { snapshot: { meta: SnapshotMeta } }).snapshot.meta;
  const fields = meta.node_fields.length;
  const typeNames = meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = [meta.node_fields.indexOf('type'), meta.node_fields.indexOf('name'), meta.node_fields.indexOf('self_size')];
  reader.upTo('[');
  const groups = new Map<string, Group>();
  const node: number[] = [];
  reader.integersUntil(']', (value) => {
    node.push(value);
    if (node.length < fields) return;
    const type = typeNames[node[typeAt]!]!;
    const name = type.endsWith('string') ? undefined : node[nameAt]!;
    const key = `${type}|${name ?? ''}`;
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = { type, name, count: 0, bytes: 0 }));
    group.count++;
    group.bytes += node[sizeAt]!;
    node.length = 0;
  });
  const all = [...groups.values()];
  const mostNumerous = [...all].sort((a, b) => b.count - a.count).slice(0, TOP);
  const largest = [...all].sort((a, b) => b.bytes - a.bytes).slice(0, TOP);
  // Only the names shown are read: the strings hold every id and text of the heap.
  const wanted = new Set([...mostNumerous, ...largest].flatMap((g) => (g.name === undefined ? [] : [g.name])));
  reader.upTo('"strings":');
  reader.upTo('[');
  const names = reader.stringsAt(wanted);
  reader.close();
  const total = all.reduce((sum, g) => ({ count: sum.count + g.count, bytes: sum.bytes + g.bytes }), { count: 0, bytes: 0 });
  return { total, mostNumerous, largest, names };
}

interface Census {
  readonly total: { readonly count: number; readonly bytes: number };
  readonly mostNumerous: readonly Group[];
  readonly largest: readonly Group[];
  /** The names of the groups shown, by their index in the snapshot's strings. */
  readonly names: ReadonlyMap<number, string>;
}

const TOP = 12;

function printCensus({ total, mostNumerous, largest, names }: Census): void {
  console.log(`heap snapshot: ${total.count.toLocaleString('en-US')} objects, ${mb(total.bytes)} (their own sizes)`);
  const line = (g: Group) =>
    `  ${g.count.toLocaleString('en-US').padStart(11)} ${mb(g.bytes).padStart(8)}  ${g.type}${g.name === undefined ? '' : ` ${(names.get(g.name) ?? '').slice(0, 60)}`}`;
  console.log('the most numerous:');
  for (const g of mostNumerous) console.log(line(g));
  console.log('the largest:');
  for (const g of largest) console.log(line(g));
}

interface SnapshotMeta {
  readonly node_fields: string[];
  readonly node_types: [string[], ...unknown[]];
}

/** A file read forward as Latin-1 text, 16 MB at a time. */
class TextStream {
  private readonly fd: number;
  private readonly chunk = Buffer.allocUnsafe(1 << 24);
  private text = '';
  private at = 0;

  constructor(file: string) {
    this.fd = openSync(file, 'r');
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Read on; false at the end of the file. */
  private more(): boolean {
    const n = readSync(this.fd, this.chunk, 0, this.chunk.length, null);
    if (n === 0) return false;
    this.text = this.text.slice(this.at) + this.chunk.toString('latin1', 0, n);
    this.at = 0;
    return true;
  }

  /** Read past the next `marker`; with `keep`, the text before it (from where reading stood) is returned. */
  upTo(marker: string, keep = false): string {
    let before = '';
    for (;;) {
      const found = this.text.indexOf(marker, this.at);
      if (found !== -1) {
        if (keep) before += this.text.slice(this.at, found);
        this.at = found + marker.length;
        return before;
      }
      // Keep what could be the start of the marker.
      const kept = Math.max(this.at, this.text.length - marker.length);
      if (keep) before += this.text.slice(this.at, kept);
      this.at = kept;
      if (!this.more()) throw new Error(`heap snapshot: no ${marker}`);
    }
  }

  /** Each unsigned integer of a flat array up to `end`, in order. */
  integersUntil(end: string, each: (value: number) => void): void {
    const stop = end.charCodeAt(0);
    let value = 0;
    let inNumber = false;
    for (;;) {
      const text = this.text;
      for (let i = this.at; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c >= 48 && c <= 57) {
          value = value * 10 + (c - 48);
          inNumber = true;
          continue;
        }
        if (inNumber) each(value);
        value = 0;
        inNumber = false;
        if (c === stop) {
          this.at = i + 1;
          return;
        }
      }
      this.at = text.length;
      if (!this.more()) throw new Error('heap snapshot: an array does not end');
    }
  }

  /** The strings of a JSON array of strings at these indexes (read up to the last of them). */
  stringsAt(wanted: ReadonlySet<number>): Map<number, string> {
    const out = new Map<number, string>();
    const last = Math.max(-1, ...wanted);
    for (let index = 0; index <= last; index++) {
      let open = this.text.indexOf('"', this.at);
      while (open === -1) {
        this.at = this.text.length;
        if (!this.more()) return out;
        open = this.text.indexOf('"', this.at);
      }
      let close = open + 1;
      for (;;) {
        if (close >= this.text.length) {
          const offset = open - this.at;
          if (!this.more()) return out;
          open = this.at + offset;
          close = open + 1;
          continue;
        }
        const c = this.text.charCodeAt(close);
        if (c === 0x5c) close += 2;
        else if (c === 0x22) break;
        else close++;
      }
      if (wanted.has(index)) out.set(index, JSON.parse(Buffer.from(this.text.slice(open, close + 1), 'latin1').toString('utf8')) as string);
      this.at = close + 1;
    }
    return out;
  }
}

const { values, positionals } = parseArgs({ options: { census: { type: 'boolean', default: false } }, allowPositionals: true });
const dataDir = positionals[0];
const gc = globalThis.gc;
if (!dataDir || !gc) throw new Error('usage: node --expose-gc dist/bench/heap.js <DATA_DIR> [--census]');

const MB = 2 ** 20;
const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;

const runtime = openRuntime({ DATA_DIR: dataDir, EVENTSTORE_URL: undefined });
await runtime.projector.start();
finishBackgroundWork(runtime.model);
gc();
const memory = process.memoryUsage();
console.log(`heap of a server loaded from ${dataDir}: ${mb(memory.heapUsed)} in the heap, ${mb(memory.arrayBuffers)} of typed arrays outside it, resident ${mb(memory.rss)}`);
for (const space of v8.getHeapSpaceStatistics()) if (space.space_used_size >= MB) console.log(`  ${space.space_name}: ${mb(space.space_used_size)}`);
const pauses: number[] = [];
for (let i = 0; i < 5; i++) {
  const started = performance.now();
  gc();
  pauses.push(performance.now() - started);
}
console.log(`full collections, five in a row: ${pauses.map((ms) => ms.toFixed(0)).join(', ')} ms`);

if (values.census) {
  const dir = mkdtempSync(join(tmpdir(), 'vm-heap-'));
  try {
    const file = join(dir, 'heap.heapsnapshot');
    const started = performance.now();
    v8.writeHeapSnapshot(file);
    console.log(`heap snapshot written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    printCensus(census(file));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
await runtime.close();
