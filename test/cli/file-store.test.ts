import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStateStore, StateStoreError, type AllocRecord } from '../../src/state/file-store.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'allocrun-store-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function record(id: string, clientStatus: AllocRecord['state']['clientStatus'], at: number): AllocRecord {
  return {
    spec: { id, job: 'j', group: 'g', type: 'batch', tasks: [{ name: 't', driver: 'mock', config: {} }] },
    state: { clientStatus, taskStates: {} },
    createdAt: at,
    updatedAt: at,
  };
}

describe('file state store', () => {
  it('saves a record to <dataDir>/allocs/<id>/state.json and loads it back', async () => {
    const store = new FileStateStore(dir);
    await store.save('a1', record('a1', 'running', 1));
    expect(await store.load('a1')).toEqual(record('a1', 'running', 1));
    expect(await readdir(join(dir, 'allocs', 'a1'))).toEqual(['state.json']);
  });

  it('keeps the newest of overlapping saves and leaves no temp files, only the spare the next save fills', async () => {
    const store = new FileStateStore(dir);
    await Promise.all([store.save('a1', record('a1', 'pending', 1)), store.save('a1', record('a1', 'running', 2)), store.save('a1', record('a1', 'complete', 3))]);
    expect((await store.load('a1'))?.state.clientStatus).toBe('complete');
    expect((await readdir(join(dir, 'allocs', 'a1'))).sort()).toEqual(['state.json', 'state.json.spare']);
  });

  it('lists records oldest first and skips alloc dirs without a state file', async () => {
    const store = new FileStateStore(dir);
    await store.save('b', record('b', 'complete', 20));
    await store.save('a', record('a', 'failed', 10));
    await rm(join(dir, 'allocs', 'stray'), { recursive: true, force: true });
    expect((await store.list()).map((r) => r.spec.id)).toEqual(['a', 'b']);
  });

  it('saves again after the allocation dir was removed behind its back', async () => {
    const store = new FileStateStore(dir);
    await store.save('a1', record('a1', 'pending', 1));
    await rm(join(dir, 'allocs', 'a1'), { recursive: true });
    await store.save('a1', record('a1', 'running', 2));
    expect((await store.load('a1'))?.state.clientStatus).toBe('running');
    expect(await readdir(join(dir, 'allocs', 'a1'))).toEqual(['state.json']);
  });

  it('loads nothing for an unknown id and lists nothing in an empty dir', async () => {
    const store = new FileStateStore(dir);
    expect(await store.load('nope')).toBeUndefined();
    expect(await store.list()).toEqual([]);
  });

  it('removes a record, its spare and the alloc dir it was all of', async () => {
    const store = new FileStateStore(dir);
    await store.save('a1', record('a1', 'running', 1));
    await store.save('a1', record('a1', 'complete', 2));
    await store.remove('a1');
    expect(await store.load('a1')).toBeUndefined();
    expect(await readdir(join(dir, 'allocs'))).toEqual([]);
  });

  it('refuses an id that would escape the allocs dir', () => {
    const store = new FileStateStore(dir);
    expect(() => store.statePath('../etc')).toThrow(StateStoreError);
  });
});
