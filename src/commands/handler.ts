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
 */
import { setTimeout as sleep } from 'node:timers/promises';
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
  ) {}

  /** The institution's registry, with the events appended to its stream since it was last folded folded in. */
  private async registry(institutionId: string): Promise<Folded> {
    let folded = this.registries.get(institutionId);
    if (!folded) {
      folded = { state: emptyRegistry(), revision: -1, position: undefined };
      this.registries.set(institutionId, folded);
    }
    const recorded = await this.store.readStream(siteRegistryStream(institutionId), folded.revision + 1);
    // Another command of this institution may have folded some of them while this read was under way.
    for (const e of recorded) {
      if (e.revision <= folded.revision) continue;
      const event = domainEvent(e);
      if (event) evolve(folded.state, event);
      folded.revision = e.revision;
      folded.position = e.position;
    }
    forgetRequestsBefore(folded.state, (this.clock() - IDEMPOTENCY_RETENTION_MS) * 1000);
    return folded;
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
