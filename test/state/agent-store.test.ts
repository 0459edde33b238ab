/** The agent's store: what a commit promises (all or nothing, durable, private), and what a damaged file gets. */
import { mkdtempSync, readFileSync, statSync, writeFileSync, truncateSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentStore, StoreCommitError, StoreDamagedError, STORE_FILE } from '../../src/state/agent-store.ts';
import { scanDataDir } from '../../src/state/scan-data-dir.ts';
import type { AllocRecord } from '../../src/state/store.ts';

const dirs: string[] = [];
const open: AgentStore[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'allocrun-store-'));
  dirs.push(d);
  return d;
}
function openStore(dir: string, opts?: Parameters<typeof AgentStore.open>[1]): AgentStore {
  const s = AgentStore.open(dir, opts);
  open.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const record = (id: string): AllocRecord => ({
  spec: { id, job: 'j', group: 'g', type: 'batch', tasks: [{ name: 't', driver: 'mock', config: { run_for: '1s' } }] },
  state: { clientStatus: 'pending', taskStates: {} },
  updatedAt: 1_700_000_000_000,
});

describe('the agent store', () => {
  it('keeps what a commit wrote across a reopen, with the highest index any commit recorded', async () => {
    const dir = freshDir();
    const a = openStore(dir);
    await a.commit((tx) => {
      tx.put('jobs', 'web', { id: 'web' });
      tx.index(7);
    });
    await a.commit((tx) => tx.index(5));
    await a.close();
    const b = openStore(dir);
    expect([b.get('jobs', 'web'), b.savedIndex, b.isNew]).toEqual([{ id: 'web' }, 7, false]);
  });

  it('writes nothing of a transaction whose callback throws, and says which store refused', async () => {
    const s = openStore(freshDir());
    const failed = s.commit((tx) => {
      tx.put('jobs', 'half', { id: 'half' });
      tx.put('allocs', 'a1', { id: 'a1' });
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    });
    await expect(failed).rejects.toThrow(StoreCommitError);
    await expect(failed).rejects.toThrow(/cannot commit to .*state\.mdb: ENOSPC: no space left on device/);
    expect([s.get('jobs', 'half'), s.get('allocs', 'a1')]).toEqual([undefined, undefined]);
  });

  it('fails every commit at the fault seam and keeps serving reads', async () => {
    let full = false;
    const s = openStore(freshDir(), {
      faults: {
        beforeCommit: () => {
          if (full) throw new Error('ENOSPC: no space left on device');
        },
      },
    });
    await s.commit((tx) => tx.put('jobs', 'before', { id: 'before' }));
    full = true;
    await expect(s.commit((tx) => tx.put('jobs', 'during', { id: 'during' }))).rejects.toThrow(/ENOSPC/);
    expect(s.get('jobs', 'before')).toEqual({ id: 'before' });
    full = false;
    await s.commit((tx) => tx.put('jobs', 'after', { id: 'after' }));
    expect(s.entries('jobs').values.map((v) => v.key)).toEqual(['after', 'before']);
  });

  it('is readable and writable by the agent\'s user only', async () => {
    const dir = freshDir();
    const s = openStore(dir);
    await s.commit((tx) => tx.put('meta', 'x', 1));
    expect(statSync(join(dir, STORE_FILE)).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, `${STORE_FILE}-lock`)).mode & 0o777).toBe(0o600);
  });

  it('names a store file that is not LMDB and leaves it as it was', () => {
    const dir = freshDir();
    const garbage = Buffer.alloc(8192, 0x41);
    writeFileSync(join(dir, STORE_FILE), garbage);
    expect(() => AgentStore.open(dir)).toThrow(StoreDamagedError);
    expect(() => AgentStore.open(dir)).toThrow(new RegExp(`${STORE_FILE} is damaged: it is not an LMDB store`));
    expect(readFileSync(join(dir, STORE_FILE)).equals(garbage)).toBe(true);
  });

  it.each([
    ['mid-page', 100, /is not a whole number of 4096-byte pages: it was cut short/],
    ['by whole pages', 4096 * 2, /its newest transaction uses \d+: it was cut short/],
  ])('names a store file cut short (%s) instead of mapping it', async (_how, cut, message) => {
    const dir = freshDir();
    const s = AgentStore.open(dir);
    for (let i = 0; i < 50; i++) await s.commit((tx) => tx.put('jobs', `x${i}`, { id: 'x', pad: 'p'.repeat(2000) }));
    await s.close();
    const size = statSync(join(dir, STORE_FILE)).size;
    truncateSync(join(dir, STORE_FILE), size - cut);
    expect(() => AgentStore.open(dir)).toThrow(message);
    expect(statSync(join(dir, STORE_FILE)).size).toBe(size - cut);
  });

  it('names an empty or tiny store file', () => {
    const dir = freshDir();
    writeFileSync(join(dir, STORE_FILE), '');
    expect(() => AgentStore.open(dir)).toThrow(/is damaged: its size \(0 bytes\) is too small/);
  });

  it('refuses a store written with a newer layout rather than guess at it', async () => {
    const dir = freshDir();
    const s = AgentStore.open(dir);
    await s.commit((tx) => tx.put('meta', 'schema', 99));
    await s.close();
    expect(() => AgentStore.open(dir)).toThrow(/written by a newer allocrun \(store layout 99/);
  });

  it('names a value that is not JSON by its table and key, and reads the others', async () => {
    const s = openStore(freshDir());
    await s.commit((tx) => {
      tx.put('jobs', 'good', { id: 'good' });
      tx.put('jobs', 'bad', { id: 'bad' });
    });
    // Damage one value in place, as a bad disk or a foreign writer would.
    await (s as unknown as { tables: Record<string, { put(k: string, v: Buffer): Promise<boolean> }> }).tables.jobs!.put('bad', Buffer.from('{"id":'));
    const { values, damaged } = s.entries('jobs');
    expect(values).toEqual([{ key: 'good', value: { id: 'good' } }]);
    expect(damaged).toEqual([{ table: 'jobs', key: 'bad', why: expect.stringMatching(/^not valid JSON/) }]);
    expect(() => s.get('jobs', 'bad')).toThrow(/jobs\/bad is not valid JSON/);
  });
});

describe('the runner records in the agent store', () => {
  it('saves, loads, lists and removes records as the StateStore contract says', async () => {
    const s = openStore(freshDir());
    const runners = s.runners();
    await runners.save('a', record('a'));
    await runners.save('b', { ...record('b'), createdAt: 1 });
    expect((await runners.load('a'))?.spec.id).toBe('a');
    expect(await runners.load('zz')).toBeUndefined();
    expect((await runners.list()).map((r) => r.spec.id)).toEqual(['b', 'a']);
    await runners.remove('a');
    expect((await runners.list()).map((r) => r.spec.id)).toEqual(['b']);
  });

  it('records the API index with every runner save', async () => {
    const s = openStore(freshDir());
    let index = 40;
    s.indexOf = () => index;
    await s.runners().save('a', record('a'));
    index = 41;
    await s.runners().save('a', record('a'));
    expect(s.savedIndex).toBe(41);
  });

  it('moves a damaged record aside under a key of its own, names it, and returns the healthy ones', async () => {
    const s = openStore(freshDir());
    const runners = s.runners();
    await runners.save('ok', record('ok'));
    await s.commit((tx) => tx.put('runners', 'broken', { spec: null, state: {} }));
    const scan = await runners.scan!({ quarantine: true });
    expect(scan.records.map((r) => r.spec.id)).toEqual(['ok']);
    expect(scan.problems).toHaveLength(1);
    expect(scan.problems[0]!.message).toMatch(/state\.mdb: runners\/broken is not a valid allocation record: .*moved aside to quarantine\/broken@/);
    const aside = s.entries('quarantine').values;
    expect(aside).toHaveLength(1);
    expect(aside[0]!.value).toMatchObject({ table: 'runners', key: 'broken', raw: '{"spec":null,"state":{}}' });
    // Reported once: the next scan finds nothing wrong.
    expect((await runners.scan!({ quarantine: true })).problems).toEqual([]);
  });

  it('is what status reads from a data dir an agent wrote, while the agent still has it open', async () => {
    const dir = freshDir();
    const s = openStore(dir);
    await s.runners().save('a', record('a'));
    const scan = await scanDataDir(dir);
    expect(scan.records.map((r) => r.spec.id)).toEqual(['a']);
  });

  it("shows an allocation's desired status as the store's allocations table holds it, not as its runner was started", async () => {
    const dir = freshDir();
    const s = openStore(dir);
    await s.runners().save('a', record('a'));
    await s.runners().save('b', record('b'));
    await s.commit((tx) => tx.put('allocs', 'a', { id: 'a', desired: 'stop' }));
    const scan = await scanDataDir(dir);
    expect(scan.records.map((r) => [r.spec.id, r.spec.desiredStatus])).toEqual([['a', 'stop'], ['b', undefined]]);
  });

  it('copies itself whole while open (a snapshot), and the copy opens as a store', async () => {
    const dir = freshDir();
    const s = openStore(dir);
    await s.commit((tx) => {
      tx.put('jobs', 'web', { id: 'web' });
      tx.index(12);
    });
    const other = freshDir();
    await s.backup(join(other, STORE_FILE));
    expect(statSync(join(other, STORE_FILE)).mode & 0o777).toBe(0o600);
    const copy = openStore(other);
    expect([copy.get('jobs', 'web'), copy.savedIndex]).toEqual([{ id: 'web' }, 12]);
  });
});
