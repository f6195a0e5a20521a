/**
 * Getting the read model ready to serve while the server already listens:
 *
 * 1. a read model far behind its log — empty, from an older version, or
 *    more than `parallelFrom` events behind — is replayed the way
 *    `vm-api rebuild` does it (on several threads, into a new snapshot),
 *    not folded one event at a time into a journal;
 * 2. the snapshot and its journal are loaded, in slices between requests;
 * 3. the projector follows the log from there.
 *
 * Ready once loaded and no more than `parallelFrom` events behind (a model
 * a little behind serves, as it always has: the lag shows in /healthz).
 * Until then `progress()` says where it is — phase, work done of the total,
 * percentage, an estimate of the time left — and a line is logged every
 * few seconds.
 */
import type { Logger } from 'pino';
import { comparePositions, type Position, startOfLog } from '../eventstore/port.js';
import type { Runtime } from '../runtime.js';
import { replayInParallel } from './parallel-replay.js';

export type WarmUpPhase = 'starting' | 'replaying' | 'loading' | 'catching_up' | 'ready' | 'failed';

export interface WarmUpProgress {
  readonly phase: WarmUpPhase;
  /** Events replayed or applied, or records loaded, in this phase. */
  readonly done: number;
  /** What the phase has to do in all (0 when not known yet). */
  readonly total: number;
  readonly percent: number;
  /** Seconds left in this phase, at its rate so far (null until there is a rate). */
  readonly etaSeconds: number | null;
}

export interface WarmUpOptions {
  /** More events than this behind the log (or an empty model over a longer log): replay on threads. */
  readonly parallelFrom: number;
  readonly threads: number;
  /** Events the replay reads between two releases of the log's pages (RELEASE_EVERY unless given). */
  readonly releaseEvery?: number;
  /** How often progress is logged while not ready. */
  readonly logEveryMs: number;
}

/** What the HTTP layer asks of it. */
export interface Readiness {
  ready(): boolean;
  progress(): WarmUpProgress;
}

export class WarmUp implements Readiness {
  private phase: WarmUpPhase = 'starting';
  private done = 0;
  private total = 0;
  private phaseStarted = performance.now();
  private isReady = false;

  constructor(
    private readonly runtime: Runtime,
    private readonly options: WarmUpOptions,
    private readonly log?: Logger,
  ) {}

  ready(): boolean {
    return this.isReady;
  }

  progress(): WarmUpProgress {
    const elapsed = (performance.now() - this.phaseStarted) / 1000;
    const percent = this.total > 0 ? Math.min(100, (100 * this.done) / this.total) : 0;
    const rate = elapsed > 0 ? this.done / elapsed : 0;
    const etaSeconds = this.total > 0 && rate > 0 ? Math.max(0, Math.round((this.total - this.done) / rate)) : null;
    return { phase: this.phase, done: this.done, total: this.total, percent: Math.round(percent * 10) / 10, etaSeconds };
  }

  /** Make the read model ready (see above), then keep it following the log. Rejects when that fails. */
  async run(): Promise<void> {
    const { store, disk, projector } = this.runtime;
    const started = performance.now();
    const timer = setInterval(() => this.logProgress(), this.options.logEveryMs).unref();
    try {
      const head = await store.head();
      const version = disk.version();
      if (version !== undefined && !disk.isCurrent()) {
        this.log?.warn({ version }, 'read model made by another version of the projections: dropped; it is rebuilt from the log');
      }
      const from = disk.isCurrent() ? disk.checkpoint() : startOfLog;
      const behind = behindBy(head, from);
      if (store.kind === 'embedded' && behind > this.options.parallelFrom) {
        this.enter('replaying', Number(behind));
        this.log?.info({ behind: behind.toString(), threads: this.options.threads }, 'read model far behind the log: replaying it on threads into a new snapshot');
        await disk.clear();
        // (It lets go of the log's pages it read through this process's mapping of the log.)
        await replayInParallel(store, disk, this.options.threads, (read) => (this.done = read), this.options.releaseEvery);
      }
      const sizes = disk.sizes();
      this.enter('loading', sizes.snapshot + sizes.journal);
      await projector.load((loaded) => (this.done = loaded));
      // Events behind, on the embedded log (EventStoreDB's positions count bytes: there, ready once caught up).
      const embedded = store.kind === 'embedded';
      this.enter('catching_up', embedded ? Number(behindBy(await store.head(), projector.status().position)) : 0);
      const applied = projector.status().eventsApplied;
      const progress = setInterval(() => (this.done = projector.status().eventsApplied - applied), 200).unref();
      const caughtUp = projector.follow().finally(() => clearInterval(progress));
      // A loaded model a little behind serves now, and catches up while serving; an empty one catches up first.
      const loaded = comparePositions(projector.status().position, startOfLog) > 0;
      if (!loaded || !embedded || this.total > this.options.parallelFrom) await caughtUp;
      const left = embedded ? Number(behindBy(await store.head(), projector.status().position)) : 0;
      this.enter('ready', 0);
      this.isReady = true;
      const { position, eventsApplied } = projector.status();
      this.log?.info(
        { ms: Math.round(performance.now() - started), position: position.commit.toString(), events_applied: eventsApplied, behind: left },
        'read model ready',
      );
    } catch (error) {
      this.enter('failed', 0);
      throw error;
    } finally {
      clearInterval(timer);
    }
  }

  private enter(phase: WarmUpPhase, total: number): void {
    this.phase = phase;
    this.total = total;
    this.done = 0;
    this.phaseStarted = performance.now();
  }

  private logProgress(): void {
    if (this.isReady) return;
    const { phase, done, total, percent, etaSeconds } = this.progress();
    this.log?.info({ phase, done, total, percent, eta_seconds: etaSeconds }, `read model ${phase.replace('_', ' ')}: ${percent} %`);
  }
}

function behindBy(head: Position, position: Position): bigint {
  if (comparePositions(head, position) <= 0) return 0n;
  return head.commit - position.commit;
}
