/**
 * The command side of the sites API: fold the registry stream, decide
 * (sites.ts, pure), append the decided events with the stream's revision
 * as the expected one, retry on a concurrency conflict, and answer only
 * once the read model has passed the appended position, so a GET right
 * after the POST sees the change.
 *
 * Each institution's folded registry is kept between commands, with the
 * revision it reflects: a command reads and folds only the events appended
 * since (by this process or any other replica), so its cost does not grow
 * with the registry's history. Idempotency-Keys are kept in it for
 * IDEMPOTENCY_RETENTION_MS after their request.
 *
 * The first fold of a registry reads its whole history: a page of events at
 * a time, letting other work run between pages (a registry of 100,000 past
 * requests read in one go held every request of the server for 2-3 s),
 * and once the server is ready, every institution's is folded ahead of its
 * first command (`foldAll`).
 */
import { setImmediate as yieldToOthers, setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { domainEvent, siteRegistryStream } from '../events/catalog.js';
import { type EventStore, type ExpectedRevision, type Position, WrongExpectedRevisionError } from '../eventstore/port.js';
import type { Projector } from '../readmodel/projector.js';
import { decide, emptyRegistry, evolve, forgetRequestsBefore, type RegistryState, type SitesCommand } from './sites.js';

/** How long an Idempotency-Key is remembered after its request: a retry with it within that time answers the first response. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 3_600_000;

/** A registry as folded up to a revision of its stream (-1: none yet), and the position of that revision's event. */
interface Folded {
  readonly state: RegistryState;
  revision: number;
  position: Position | undefined;
}

/** Events of a registry read and folded between two turns of other work (a few ms). */
export const REGISTRY_PAGE = 500;

/** Conflicting appends are retried this many times (with jitter) before giving up with 503. */
const MAX_ATTEMPTS = 50;

export type CommandResult =
  /** `replayed`: the answer of an earlier request with the same Idempotency-Key and body. */
  | { readonly status: number; readonly body: unknown; readonly replayed?: true }
  | { readonly status: number; readonly detail: string };

export class SitesCommandHandler {
  private readonly registries = new Map<string, Folded>();

  constructor(
    private readonly store: EventStore,
    private readonly projector: Projector,
    private readonly clock: () => number = Date.now,
    /** Events read and folded at a time (tests lower it). */
    private readonly pageSize = REGISTRY_PAGE,
  ) {}

  /** The institution's registry, with the events appended to its stream since it was last folded folded in. */
  private async registry(institutionId: string, stop?: AbortSignal): Promise<Folded> {
    let folded = this.registries.get(institutionId);
    if (!folded) {
      folded = { state: emptyRegistry(), revision: -1, position: undefined };
      this.registries.set(institutionId, folded);
    }
    await this.catchUp(siteRegistryStream(institutionId), folded, stop);
    forgetRequestsBefore(folded.state, (this.clock() - IDEMPOTENCY_RETENTION_MS) * 1000);
    return folded;
  }

  /** Fold the events appended to `stream` since `folded`'s revision, a page at a time (until `stop`, if given). */
  private async catchUp(stream: string, folded: Folded, stop: AbortSignal | undefined): Promise<void> {
    for (let page = 0; ; page++) {
      if (page > 0) await yieldToOthers();
      if (stop?.aborted) return;
      const recorded = await this.store.readStream(stream, folded.revision + 1, this.pageSize);
      // Another command of this institution may have folded some of them while this read was under way.
      for (const e of recorded) {
        if (e.revision <= folded.revision) continue;
        const event = domainEvent(e);
        if (event) evolve(folded.state, event);
        folded.revision = e.revision;
        folded.position = e.position;
      }
      if (recorded.length < this.pageSize) return;
    }
  }

  /**
   * Fold the registries of these institutions ahead of their first command, one after the other (each a page at a
   * time); stops at `stop`. A failed read is left to the first command to meet again.
   */
  async foldAll(institutionIds: Iterable<string>, stop: AbortSignal): Promise<void> {
    for (const id of institutionIds) {
      if (stop.aborted) return;
      await this.registry(id, stop).catch(() => undefined);
    }
  }

  /** Decide and append `command`, built afresh for each attempt (it may read the read model). */
  async execute(institutionId: string, command: () => SitesCommand): Promise<CommandResult> {
    const stream = siteRegistryStream(institutionId);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const { state, revision, position } = await this.registry(institutionId);
      const decision = decide(state, command());
      switch (decision.outcome) {
        case 'rejected':
          return { status: decision.status, detail: decision.detail };
        case 'replayed':
          if (position) await this.projector.waitFor(position);
          return { status: decision.status, body: decision.response, replayed: true };
        case 'accepted': {
          if (decision.events.length === 0) return { status: decision.status, body: decision.response };
          const expected: ExpectedRevision = revision < 0 ? 'no_stream' : revision;
          try {
            const { position } = await this.store.append(
              stream,
              decision.events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data })),
              expected,
            );
            await this.projector.waitFor(position);
            return { status: decision.status, body: decision.response };
          } catch (error) {
            if (!(error instanceof WrongExpectedRevisionError)) throw error;
            // Someone appended first: decide again against the new state.
            await sleep(Math.random() * Math.min(2 ** attempt, 50));
          }
        }
      }
    }
    return { status: 503, detail: 'The sites registry is busy; retry the request.' };
  }
}
