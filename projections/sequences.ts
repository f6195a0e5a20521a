/**
 * Sequences with their steps, and user sequences with their progress. A
 * sequence counts its user sequences by status (number_users_*), so a
 * user sequence starting or changing status touches its sequence too.
 */
import { parseEventTimestamp } from '../src/time.js';
import { put, type Change, type Projection, type ReadView } from './projection.js';
import type { UserSequenceStatus } from './records.js';

const micros = (s: string | null | undefined): number | null =>
  s === null || s === undefined ? null : (parseEventTimestamp(s) ?? null);

function recount(view: ReadView, sequenceId: string, at: number, from: UserSequenceStatus | null, to: UserSequenceStatus | null): Change[] {
  const sequence = view.get('sequence', sequenceId);
  if (!sequence || from === to) return [];
  const users = { ...sequence.users };
  if (from) users[from] -= 1;
  if (to) users[to] += 1;
  return [put('sequence', { ...sequence, users, updated_at: at })];
}

export const sequences: Projection = {
  name: 'sequences',
  SequenceCreated: (_view, d, at) => [
    put('sequence', {
      id: d.sequence_id,
      institution_id: d.institution_id,
      title: d.title,
      description: d.description,
      folder: d.folder,
      status: d.status,
      display_status: d.display_status,
      steps: [],
      users: { Active: 0, Paused: 0, Inactive: 0, Finished: 0 },
      created_at: at,
      updated_at: at,
    }),
  ],
  SequenceUpdated: (view, d, at) => {
    const sequence = view.get('sequence', d.sequence_id);
    if (!sequence) return [];
    const { title, description, folder, status, display_status } = d;
    return [
      put('sequence', {
        ...sequence,
        title: title ?? sequence.title,
        description: description ?? sequence.description,
        folder: folder ?? sequence.folder,
        status: status ?? sequence.status,
        display_status: display_status ?? sequence.display_status,
        updated_at: at,
      }),
    ];
  },
  SequenceStepAdded: (view, d, at) => {
    const sequence = view.get('sequence', d.sequence_id);
    if (!sequence) return [];
    const step = { id: d.step_id, step: d.step, type: d.type, type_display: d.type_display, step_details: d.step_details };
    const steps = [...sequence.steps.filter((s) => s.id !== d.step_id), step].sort((a, b) => a.step - b.step || (a.id < b.id ? -1 : 1));
    return [put('sequence', { ...sequence, steps, updated_at: at })];
  },
  SequenceStepRemoved: (view, d, at) => {
    const sequence = view.get('sequence', d.sequence_id);
    if (!sequence) return [];
    return [put('sequence', { ...sequence, steps: sequence.steps.filter((s) => s.id !== d.step_id), updated_at: at })];
  },
  UserSequenceStarted: (view, d, at) => recount(view, d.sequence_id, at, null, d.status ?? 'Active'),
  UserSequenceStatusChanged: (view, d, at) => {
    const userSequence = view.get('usersequence', d.user_sequence_id);
    return userSequence ? recount(view, userSequence.sequence_id, at, userSequence.status, d.status) : [];
  },
};

export const userSequences: Projection = {
  name: 'user sequences',
  UserSequenceStarted: (_view, d, at) => [
    put('usersequence', {
      id: d.user_sequence_id,
      institution_id: d.institution_id,
      sequence_id: d.sequence_id,
      user_id: d.user_id,
      status: d.status ?? 'Active',
      progress: {},
      created_at: at,
      updated_at: at,
    }),
  ],
  UserSequenceStatusChanged: (view, d, at) => {
    const userSequence = view.get('usersequence', d.user_sequence_id);
    return userSequence ? [put('usersequence', { ...userSequence, status: d.status, updated_at: at })] : [];
  },
  UserSequenceStepUpdated: (view, d, at) => {
    const userSequence = view.get('usersequence', d.user_sequence_id);
    if (!userSequence) return [];
    const before = userSequence.progress[d.step_detail_id];
    const progress = {
      ...userSequence.progress,
      [d.step_detail_id]: {
        status: d.status,
        completion_date: d.completion_date === undefined ? (before?.completion_date ?? null) : micros(d.completion_date),
        expiration_date: d.expiration_date === undefined ? (before?.expiration_date ?? null) : micros(d.expiration_date),
      },
    };
    return [put('usersequence', { ...userSequence, progress, updated_at: at })];
  },
};
