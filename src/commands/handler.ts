/**
 * The command side of the sites API: load the registry stream, fold it,
 * decide (sites.ts, pure), append the decided events with the stream's
 * revision as the expected one, retry on a concurrency conflict, and
 * answer only once the read model has passed the appended position, so a
 * GET right after the POST sees the change.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { domainEvent, siteRegistryStream } from '../events/catalog.js';
import { type EventStore, type ExpectedRevision, WrongExpectedRevisionError } from '../eventstore/port.js';
import type { Projector } from '../readmodel/projector.js';
import { decide, emptyRegistry, evolve, type SitesCommand } from './sites.js';

/** Conflicting appends are retried this many times (with jitter) before giving up with 503. */
const MAX_ATTEMPTS = 50;

export type CommandResult =
  | { readonly status: number; readonly body: unknown }
  | { readonly status: number; readonly detail: string };

export class SitesCommandHandler {
  constructor(
    private readonly store: EventStore,
    private readonly projector: Projector,
  ) {}

  /** Decide and append `command`, built afresh for each attempt (it may read the read model). */
  async execute(institutionId: string, command: () => SitesCommand): Promise<CommandResult> {
    const stream = siteRegistryStream(institutionId);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const recorded = await this.store.readStream(stream);
      const state = emptyRegistry();
      for (const e of recorded) {
        const event = domainEvent(e);
        if (event) evolve(state, event);
      }
      const last = recorded.at(-1);
      const decision = decide(state, command());
      switch (decision.outcome) {
        case 'rejected':
          return { status: decision.status, detail: decision.detail };
        case 'replayed':
          if (last) await this.projector.waitFor(last.position);
          return { status: decision.status, body: decision.response };
        case 'accepted': {
          if (decision.events.length === 0) return { status: decision.status, body: decision.response };
          const expected: ExpectedRevision = last === undefined ? 'no_stream' : last.revision;
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
