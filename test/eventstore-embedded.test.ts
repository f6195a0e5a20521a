/**
 * The embedded LMDB log against the event store contract. "Another
 * process" is a real child process opening the same LMDB environment.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { eventStoreContract } from './eventstore-contract.js';
import { ROOT, tempDir } from './helpers.js';

const run = promisify(execFile);
const EMBEDDED = join(ROOT, 'dist', 'src', 'eventstore', 'embedded.js');
const CHILD = `
const [path, stream, events] = process.argv.slice(1);
const { EmbeddedEventStore } = await import(${JSON.stringify(EMBEDDED)});
const store = EmbeddedEventStore.open(path);
await store.append(stream, JSON.parse(events));
await store.close();
`;

let temp: ReturnType<typeof tempDir> | undefined;
const path = () => join(temp!.dir, 'log');

eventStoreContract(
  t,
  'embedded',
  {
    async open() {
      temp = tempDir('vm-store-');
      return EmbeddedEventStore.open(path());
    },
    async cleanup() {
      temp?.remove();
      temp = undefined;
    },
    async appendElsewhere(stream, events) {
      await run(process.execPath, ['--input-type=module', '-e', CHILD, path(), stream, JSON.stringify(events)]);
    },
  },
  { atomicAppendMany: true },
);
