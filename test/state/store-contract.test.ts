/**
 * The StateStore contract, as rules any implementation must keep (src/state/store.ts): what is saved loads
 * back, the last save issued wins, createdAt orders the list, remove forgets, a fresh store on the same
 * place reads what an earlier one saved, and an allocation id that would name a directory other than its
 * own (`..`, `.`, `a/b`, empty) is refused before anything is written, by a store that keeps records in
 * directories. `describeStoreContract` runs them against one implementation: the file store and the agent
 * store's runner records here; another store is one call more.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentStore } from '../../src/state/agent-store.ts';
import { FileStateStore } from '../../src/state/file-store.ts';
import type { AllocRecord, StateStore } from '../../src/state/store.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';

function record(id: string, clientStatus: AllocRecord['state']['clientStatus'], at: number): AllocRecord {
  return {
    spec: { id, job: 'j', group: 'g', type: 'batch', tasks: [{ name: 't', driver: 'mock', config: {} }] },
    state: { clientStatus, taskStates: {} },
    createdAt: at,
    updatedAt: at,
  };
}

/** Ids that are not one directory name of their own. */
export const UNSAFE_IDS = ['..', '.', 'a/b', '', '../victim', 'a\\b', 'a\0b'];

/** A store under test and how to let go of it (a database file must be closed before it is opened again). */
export interface OpenedStore {
  store: StateStore;
  close?(): Promise<void>;
}

/**
 * Runs the contract's rules against stores made by `make(place)`; the same place means the same storage.
 * `idsAreDirectories`: the store keeps each record in a directory named by its id, so the ids that would
 * name another directory must be refused.
 */
export function describeStoreContract(name: string, make: (place: string) => OpenedStore, opts: { idsAreDirectories?: boolean } = {}): void {
  const places: string[] = [];
  const opened: OpenedStore[] = [];
  const open = (place: string): StateStore => {
    const o = make(place);
    opened.push(o);
    return o.store;
  };
  afterEach(async () => {
    for (const o of opened.splice(0)) await o.close?.();
    for (const p of places.splice(0)) rmSync(p, { recursive: true, force: true });
  });
  /** A place for a store, inside a parent dir that holds nothing else, so writes outside it show. */
  const newPlace = () => {
    const parent = mkdtempSync(join(tmpdir(), 'allocrun-contract-'));
    places.push(parent);
    return { parent, place: join(parent, 'store') };
  };

  describe(`${name}: the StateStore contract`, () => {
    it('loads back what was saved', async () => {
      const store = open(newPlace().place);
      await store.save('a1', record('a1', 'running', 1));
      expect(await store.load('a1')).toEqual(record('a1', 'running', 1));
    });

    it('loads undefined for an id never saved', async () => {
      expect(await open(newPlace().place).load('nope')).toBeUndefined();
    });

    it('keeps the last of several saves issued without waiting', async () => {
      const store = open(newPlace().place);
      await Promise.all((['pending', 'running', 'complete', 'failed'] as const).map((s, i) => store.save('a1', record('a1', s, i + 1))));
      expect((await store.load('a1'))?.state.clientStatus).toBe('failed');
    });

    it('lists every record, oldest created first, whatever the save order', async () => {
      const store = open(newPlace().place);
      await store.save('z', record('z', 'running', 1));
      await store.save('a', record('a', 'running', 3));
      await store.save('m', record('m', 'running', 2));
      expect((await store.list()).map((r) => r.spec.id)).toEqual(['z', 'm', 'a']);
    });

    it('forgets a removed record, and removing an unknown id is no error', async () => {
      const store = open(newPlace().place);
      await store.save('a1', record('a1', 'complete', 1));
      await store.remove('a1');
      expect(await store.load('a1')).toBeUndefined();
      expect(await store.list()).toEqual([]);
      await expect(store.remove('never')).resolves.toBeUndefined();
    });

    it('keeps records apart: saving one id never changes another', async () => {
      const store = open(newPlace().place);
      await store.save('a', record('a', 'running', 1));
      await store.save('b', record('b', 'failed', 2));
      expect((await store.load('a'))?.state.clientStatus).toBe('running');
    });

    it('a store opened again on the same place reads what the first one saved', async () => {
      const { place } = newPlace();
      await open(place).save('a1', record('a1', 'complete', 5));
      await opened.pop()!.close?.();
      expect(await open(place).load('a1')).toEqual(record('a1', 'complete', 5));
    });

    it.runIf(opts.idsAreDirectories).each(UNSAFE_IDS)('refuses the id %j, and writes nothing outside its place', async (id) => {
      const { parent, place } = newPlace();
      const store = open(place);
      // Refused whether the store throws at once or rejects: the rule is about what reaches the disk.
      await expect((async () => store.save(id, record(id, 'running', 1)))()).rejects.toThrow();
      expect(readdirSync(parent).filter((f) => f !== 'store')).toEqual([]);
      expect(existsSync(join(place, 'state.json'))).toBe(false);
      expect(existsSync(join(place, 'allocs', 'state.json'))).toBe(false);
      await expect((async () => store.load(id))()).rejects.toThrow();
    });
  });
}

describeStoreContract('FileStateStore', (place) => ({ store: new FileStateStore(place) }), { idsAreDirectories: true });

describeStoreContract('the agent store\'s runner records', (place) => {
  mkdirSync(place, { recursive: true, mode: 0o700 });
  const agentStore = AgentStore.open(place);
  return { store: agentStore.runners(), close: () => agentStore.close() };
});

describe('the alloc dir', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
  });

  it.each(UNSAFE_IDS)('of an allocation with id %j is refused with a SpecError before anything is made', (id) => {
    const root = mkdtempSync(join(tmpdir(), 'allocrun-allocdir-'));
    roots.push(root);
    const dataDir = join(root, 'data');
    const spec = record(id, 'pending', 1).spec;
    expect(() => createAllocRunner(spec, { dataDir })).toThrow(expect.objectContaining({ code: 'ErrSpec', message: expect.stringMatching(/^id: /) }));
    expect(readdirSync(root)).toEqual([]);
  });
});
