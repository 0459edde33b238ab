/**
 * FINDING for the store's owner (src/state is being rewritten; this file fails until it is fixed there):
 * the StateStore contract says every method is async, so a refusal must arrive as a rejected promise.
 * FileStateStore.save throws synchronously for an id that cannot be a directory (statePath → checkId runs
 * before the promise exists; load and remove are async functions and reject), so a caller writing
 * `store.save(id, r).catch(report)` crashes instead of reporting.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStateStore } from '../../src/state/file-store.ts';
import type { AllocRecord, StateStore } from '../../src/state/store.ts';

const record = (id: string): AllocRecord => ({ spec: { id, job: 'j', group: 'g', type: 'batch', tasks: [{ name: 't', driver: 'mock', config: {} }] }, state: { clientStatus: 'pending', taskStates: {} }, updatedAt: 1 });

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** How a call ended: it threw before returning, or its promise rejected or resolved. */
async function outcome(call: () => Promise<unknown>): Promise<'threw' | 'rejected' | 'resolved'> {
  let promise: Promise<unknown>;
  try {
    promise = call();
  } catch {
    return 'threw';
  }
  return promise.then(() => 'resolved' as const, () => 'rejected' as const);
}

describe('FileStateStore refuses a bad id through the promise, as every StateStore method is async', () => {
  const store = (): StateStore => {
    const d = mkdtempSync(join(tmpdir(), 'allocrun-async-'));
    dirs.push(d);
    return new FileStateStore(d);
  };
  it.each([
    ['save', (s: StateStore) => s.save('..', record('..'))],
    ['load', (s: StateStore) => s.load('..')],
    ['remove', (s: StateStore) => s.remove('..')],
  ])('%s', async (_method, call) => {
    expect(await outcome(() => call(store()))).toBe('rejected');
  });
});
