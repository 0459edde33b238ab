/**
 * The agent store's smaller promises (src/state/agent-store.ts, scan-data-dir.ts): its errors carry their
 * code, name and cause; `create: false` never makes a store; a read-only open neither writes nor changes
 * the file's mode; a closed store refuses commits; the fault seam sees the tables a commit writes; a
 * quarantined runner record says where it went; `allocrun status` reads the store and the files of one
 * data dir as one list.
 */
import { chmodSync, existsSync, mkdtempSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentStore, STORE_FILE, type Table } from '../../src/state/agent-store.ts';
import { FileStateStore } from '../../src/state/file-store.ts';
import { scanDataDir } from '../../src/state/scan-data-dir.ts';
import { StateStoreError, type AllocRecord } from '../../src/state/store.ts';

const dirs: string[] = [];
const opened: AgentStore[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'allocrun-store-rules-'));
  dirs.push(d);
  return d;
}
function openStore(dir: string, opts?: Parameters<typeof AgentStore.open>[1]): AgentStore {
  const s = AgentStore.open(dir, opts);
  opened.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const record = (id: string, createdAt: number): AllocRecord => ({
  spec: { id, job: 'j', group: 'g', type: 'batch', tasks: [{ name: 't', driver: 'mock', config: {} }] },
  state: { clientStatus: 'running', taskStates: {} },
  createdAt,
  updatedAt: createdAt,
});

describe('opening', () => {
  it('with create: false, a data dir without a store is refused by name and no store is made', () => {
    const dir = freshDir();
    const path = join(dir, STORE_FILE);
    expect(() => AgentStore.open(dir, { create: false })).toThrow(expect.objectContaining({ name: 'StoreDamagedError', code: 'ErrStoreDamaged', path, message: `${path}: no agent store here` }));
    expect(existsSync(path)).toBe(false);
  });

  it('a new store is new until its first commit', async () => {
    const s = openStore(freshDir());
    expect(s.isNew).toBe(true);
    await s.commit((tx) => tx.put('jobs', 'j', { id: 'j' }));
    expect(s.isNew).toBe(false);
  });

  it('read-only, it refuses commits and leaves the mode of the file as it found it', async () => {
    const dir = freshDir();
    const w = AgentStore.open(dir);
    await w.commit((tx) => tx.put('jobs', 'j', { id: 'j' }));
    await w.close();
    chmodSync(join(dir, STORE_FILE), 0o640);
    const r = openStore(dir, { readOnly: true });
    expect(r.get('jobs', 'j')).toEqual({ id: 'j' });
    await expect(r.commit((tx) => tx.put('jobs', 'k', { id: 'k' }))).rejects.toThrow(/cannot commit to/);
    expect(statSync(join(dir, STORE_FILE)).mode & 0o777).toBe(0o640);
  });
});

describe('reading', () => {
  it('raw gives the stored text, and undefined for a key that is not there', async () => {
    const s = openStore(freshDir());
    await s.commit((tx) => tx.put('jobs', 'j', { id: 'j' }));
    expect([s.raw('jobs', 'j'), s.raw('jobs', 'missing')]).toEqual(['{"id":"j"}', undefined]);
  });

  it('a value that is not JSON is a StoreDamagedError whose cause is the parse error', async () => {
    const s = openStore(freshDir());
    await (s as unknown as { tables: Record<string, { put(k: string, v: Buffer): Promise<boolean> }> }).tables.jobs!.put('bad', Buffer.from('{"id":'));
    let err: unknown;
    try {
      s.get('jobs', 'bad');
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ name: 'StoreDamagedError', cause: expect.any(SyntaxError) });
  });

  it('an index that is not a number reads as 0', async () => {
    const s = openStore(freshDir());
    await s.commit((tx) => tx.put('meta', 'index', 'seven'));
    expect(s.savedIndex).toBe(0);
  });
});

describe('committing', () => {
  it('a closed store refuses a commit by name; closing twice is harmless', async () => {
    const s = AgentStore.open(freshDir());
    await s.close();
    await s.close();
    await expect(s.commit((tx) => tx.put('jobs', 'j', { id: 'j' }))).rejects.toMatchObject({ name: 'StoreCommitError', code: 'ErrStoreCommit', message: `${s.path}: the store is closed` });
  });

  it("a throw in the transaction's callback is the commit error's cause", async () => {
    const s = openStore(freshDir());
    const boom = new Error('boom');
    await expect(s.commit(() => { throw boom; })).rejects.toMatchObject({ cause: boom });
  });

  it('the fault seam is told the tables the commit writes, and its throw is the cause, by its message', async () => {
    const seen: (readonly Table[])[] = [];
    const fault = new Error('ENOSPC: no space left on device');
    let fail = false;
    const s = openStore(freshDir(), { faults: { beforeCommit: (tables) => { seen.push(tables); if (fail) throw fault; } } });
    await s.commit((tx) => {
      tx.put('jobs', 'j', { id: 'j' });
      tx.remove('allocs', 'a');
    });
    fail = true;
    const err = await s.commit((tx) => tx.put('evals', 'e', {})).catch((e: unknown) => e);
    expect(seen).toEqual([['jobs', 'allocs'], ['evals']]);
    expect(err).toMatchObject({ name: 'StoreCommitError', cause: fault });
    expect((err as Error).message.startsWith(`cannot commit to ${s.path}: ENOSPC: no space left on device`)).toBe(true);
  });
});

describe('runner records', () => {
  it('a quarantined record says where it went, with the problem as its cause', async () => {
    const s = openStore(freshDir());
    await s.commit((tx) => tx.put('runners', 'broken', { spec: null }));
    const problem = new StateStoreError('broken record', 'here');
    const moved = await s.runners().quarantine!('broken', problem);
    const aside = s.entries('quarantine').values[0]!.key;
    expect(aside).toMatch(/^broken@\d{4}-\d\d-\d\dT/);
    expect(moved).toMatchObject({ name: 'StateStoreError', message: `broken record; moved aside to quarantine/${aside}`, path: 'here', movedTo: `quarantine/${aside}`, cause: problem });
  });

  it('a record that cannot be moved aside says so, and stays', async () => {
    const s = AgentStore.open(freshDir());
    await s.commit((tx) => tx.put('runners', 'broken', { spec: null }));
    const runners = s.runners();
    await s.close();
    const problem = new StateStoreError('broken record', 'here');
    const moved = await runners.quarantine!('broken', problem);
    expect(moved.message).toMatch(/^broken record; moving it aside failed: /);
    expect(moved).toMatchObject({ path: 'here', cause: problem, movedTo: undefined });
  });

  it('a scan reports both a value that is not JSON and a record that is not valid', async () => {
    const s = openStore(freshDir());
    await s.commit((tx) => tx.put('runners', 'invalid', { spec: null }));
    await (s as unknown as { tables: Record<string, { put(k: string, v: Buffer): Promise<boolean> }> }).tables.runners!.put('garbled', Buffer.from('{'));
    const { problems } = await s.runners().scan!();
    expect(problems.map((p) => p.path)).toEqual([`${s.path}: runners/garbled`, `${s.path}: runners/invalid`]);
    expect(problems[0]!.message).toMatch(/runners\/garbled is not valid JSON/);
    expect(problems[1]!.message).toMatch(/runners\/invalid is not a valid allocation record: /);
  });
});

describe('scanDataDir', () => {
  it("lists the store's records, then the files' records the store does not have, and both kinds of problem", async () => {
    const dir = freshDir();
    const store = AgentStore.open(dir);
    await store.runners().save('a', record('a', 1));
    await store.runners().save('b', record('b', 2));
    await store.commit((tx) => tx.put('runners', 'bad-in-store', { spec: null }));
    await store.close();
    const files = new FileStateStore(dir);
    await files.save('b', { ...record('b', 2), state: { clientStatus: 'complete', taskStates: {} } });
    await files.save('c', record('c', 3));
    await files.save('bad-in-files', record('bad-in-files', 4));
    const { writeFileSync } = await import('node:fs');
    writeFileSync(files.statePath('bad-in-files'), '{');
    chmodSync(join(dir, STORE_FILE), 0o640);

    const scan = await scanDataDir(dir);
    expect(scan.records.map((r) => [r.spec.id, r.state.clientStatus])).toEqual([['a', 'running'], ['b', 'running'], ['c', 'running']]);
    expect(scan.problems.map((p) => p.path)).toEqual([`${join(dir, STORE_FILE)}: runners/bad-in-store`, files.statePath('bad-in-files')]);
    // Read-only: the store file keeps the mode it had.
    expect(statSync(join(dir, STORE_FILE)).mode & 0o777).toBe(0o640);
  });
});
