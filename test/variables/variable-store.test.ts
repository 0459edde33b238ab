/**
 * The agent's variables in its store (src/variables/variable-store.ts): check-and-set as Nomad's state
 * store does it, writes that land whole or not at all (the store's fault seam), what survives closing and
 * reopening the store, the stream of changes a template waits on, and what a task may read.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, take, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentStore, StoreCommitError, STORE_FILE, type StoreFaults } from '../../src/state/agent-store.ts';
import { VariableError } from '../../src/variables/path-rules.ts';
import { VariableStore, VariableStoreError, variablesOf } from '../../src/variables/variable-store.ts';

const dirs: string[] = [];
const opened: AgentStore[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'allocrun-vars-'));
  dirs.push(d);
  return d;
}
function openStore(dir = freshDir(), faults?: StoreFaults): AgentStore {
  const s = AgentStore.open(dir, { faults });
  opened.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A store whose clock reads `ms` (then one more millisecond per read). */
function varsAt(store: AgentStore, ms = 1_700_000_000_000): VariableStore {
  let t = ms;
  return new VariableStore(store, { now: () => t++ });
}

describe('variables in the agent store', () => {
  it('creates a variable with Nomad fields: indexes from the index, times in Unix nanoseconds', async () => {
    const vars = varsAt(openStore());
    const put = await vars.put('default', 'app/config', { user: 'u', pass: 'p' });
    expect(put.ok).toBe(true);
    const got = vars.get('app/config');
    expect(got).toEqual({ Namespace: 'default', Path: 'app/config', CreateIndex: 2, ModifyIndex: 2, CreateTime: 1_700_000_000_000_000_000, ModifyTime: 1_700_000_000_000_000_000, Items: { user: 'u', pass: 'p' } });
    await vars.put('default', 'app/config', { user: 'u2' });
    expect(vars.get('app/config')).toMatchObject({ CreateIndex: 2, ModifyIndex: 3, CreateTime: 1_700_000_000_000_000_000, ModifyTime: 1_700_000_000_001_000_000, Items: { user: 'u2' } });
    expect(vars.tableIndex).toBe(3);
  });

  it('creates with cas 0 only when the variable is absent, and answers the present one otherwise', async () => {
    const vars = varsAt(openStore());
    expect(await vars.put('default', 'a', { k: '1' }, { cas: 0 })).toMatchObject({ ok: true, variable: { ModifyIndex: 2 } });
    const second = await vars.put('default', 'a', { k: '2' }, { cas: 0 });
    expect(second).toEqual({ ok: false, conflict: expect.objectContaining({ Path: 'a', ModifyIndex: 2, Items: { k: '1' } }) });
    expect(vars.get('a')!.Items).toEqual({ k: '1' });
  });

  it('updates with the current ModifyIndex and refuses a stale one, answering the current variable', async () => {
    const vars = varsAt(openStore());
    await vars.put('default', 'a', { k: '1' });
    const updated = await vars.put('default', 'a', { k: '2' }, { cas: 2 });
    expect(updated).toMatchObject({ ok: true, variable: { ModifyIndex: 3, Items: { k: '2' } } });
    const stale = await vars.put('default', 'a', { k: '3' }, { cas: 2 });
    expect(stale).toEqual({ ok: false, conflict: expect.objectContaining({ ModifyIndex: 3, Items: { k: '2' } }) });
    expect(vars.get('a')!.Items).toEqual({ k: '2' });
  });

  it('answers a zero variable when a check-and-set expects one that is not there', async () => {
    const vars = varsAt(openStore());
    expect(await vars.put('default', 'gone', { k: '1' }, { cas: 7 })).toEqual({
      ok: false,
      conflict: { Namespace: 'default', Path: 'gone', CreateIndex: 0, ModifyIndex: 0, CreateTime: 0, ModifyTime: 0, Items: {} },
    });
    expect(await vars.delete('default', 'gone', { cas: 7 })).toMatchObject({ ok: false, conflict: { ModifyIndex: 0 } });
    expect(vars.get('gone')).toBeUndefined();
  });

  it('deletes with the current ModifyIndex only, and deleting what is absent succeeds', async () => {
    const vars = varsAt(openStore());
    await vars.put('default', 'a', { k: '1' });
    expect(await vars.delete('default', 'a', { cas: 1 })).toMatchObject({ ok: false, conflict: { ModifyIndex: 2, Items: { k: '1' } } });
    expect(await vars.delete('default', 'a', { cas: 0 })).toMatchObject({ ok: false, conflict: { ModifyIndex: 2 } });
    expect(vars.get('a')).toBeDefined();
    expect(await vars.delete('default', 'a', { cas: 2 })).toEqual({ ok: true, index: 3, deleted: expect.objectContaining({ Path: 'a', ModifyIndex: 2 }) });
    expect(vars.get('a')).toBeUndefined();
    expect(await vars.delete('default', 'a')).toEqual({ ok: true, index: 3 });
    expect(await vars.delete('default', 'a', { cas: 0 })).toEqual({ ok: true, index: 3 });
  });

  it('applies concurrent check-and-set writes one at a time: exactly one of two racing creates lands', async () => {
    const vars = varsAt(openStore());
    const [a, b] = await Promise.all([vars.put('default', 'race', { by: 'a' }, { cas: 0 }), vars.put('default', 'race', { by: 'b' }, { cas: 0 })]);
    expect([a.ok, b.ok].sort()).toEqual([false, true]);
    expect(vars.get('race')!.Items).toEqual(a.ok ? { by: 'a' } : { by: 'b' });
  });

  it('refuses what Nomad refuses before touching the store', async () => {
    const store = openStore();
    const vars = varsAt(store);
    await expect(async () => vars.put('default', 'nomad/secret', { k: 'v' })).rejects.toThrow(VariableError);
    await expect(async () => vars.put('*', 'a', { k: 'v' })).rejects.toThrow(/wildcard/);
    await expect(async () => vars.put('default', 'a', {})).rejects.toThrow(/empty variables are invalid/);
    expect(store.entries('vars').values).toEqual([]);
  });

  it('changes nothing when the commit fails, and says why', async () => {
    const full = { on: false };
    const store = openStore(freshDir(), { beforeCommit: () => { if (full.on) throw new Error('ENOSPC: no space left on device'); } });
    const vars = varsAt(store);
    await vars.put('default', 'a', { k: '1' });
    const seen: unknown[] = [];
    vars.changes$.subscribe((c) => seen.push(c));
    full.on = true;
    await expect(vars.put('default', 'a', { k: 'secret-2' })).rejects.toThrow(StoreCommitError);
    await expect(vars.put('default', 'b', { k: 'x' })).rejects.toThrow(/ENOSPC/);
    await expect(vars.delete('default', 'a')).rejects.toThrow(/ENOSPC/);
    expect(vars.get('a')!.Items).toEqual({ k: '1' });
    expect(vars.get('b')).toBeUndefined();
    expect(seen).toEqual([]);
    // A later write goes through once the disk has room again: the failed ones did not jam the queue.
    full.on = false;
    expect(await vars.put('default', 'a', { k: '3' }, { cas: 2 })).toMatchObject({ ok: true });
  });

  it('keeps every acknowledged write across closing and reopening the store, in the 0600 store file only', async () => {
    const dir = freshDir();
    const store = AgentStore.open(dir);
    const vars = varsAt(store);
    await vars.put('default', 'nomad/jobs/web', { token: 't' });
    await vars.put('prod', 'db', { pw: 'p' });
    await vars.put('default', 'tmp', { x: '1' });
    await vars.delete('default', 'tmp');
    await store.close();
    expect(statSync(join(dir, STORE_FILE)).mode & 0o777).toBe(0o600);
    const again = new VariableStore(openStore(dir));
    expect(again.get('nomad/jobs/web')!.Items).toEqual({ token: 't' });
    expect(again.get('db', 'prod')!.Items).toEqual({ pw: 'p' });
    expect(again.get('tmp')).toBeUndefined();
    expect(again.tableIndex).toBe(5);
    // Indexes go on from what the store recorded.
    expect(await again.put('default', 'next', { k: 'v' })).toMatchObject({ variable: { CreateIndex: 6 } });
  });

  it('lists metadata by prefix and namespace, ordered by namespace then path, without items', async () => {
    const vars = varsAt(openStore());
    for (const [ns, p] of [['default', 'b/2'], ['default', 'a'], ['prod', 'b/1'], ['default', 'b/1'], ['default', 'c']] as const) await vars.put(ns, p, { k: 'v' });
    expect(vars.list('b/').map((m) => m.Path)).toEqual(['b/1', 'b/2']);
    expect(vars.list('', '*').map((m) => `${m.Namespace}:${m.Path}`)).toEqual(['default:a', 'default:b/1', 'default:b/2', 'default:c', 'prod:b/1']);
    expect(vars.list('', 'prod').map((m) => m.Path)).toEqual(['b/1']);
    expect(Object.keys(vars.list('a')[0]!).sort()).toEqual(['CreateIndex', 'CreateTime', 'ModifyIndex', 'ModifyTime', 'Namespace', 'Path']);
  });

  it('streams each committed change with its index, after it is readable, never its items', async () => {
    const vars = varsAt(openStore());
    const changes = firstValueFrom(vars.changes$.pipe(take(3), toArray()));
    const readable: boolean[] = [];
    vars.changes$.subscribe((c) => readable.push(c.deleted ? vars.get(c.path) === undefined : vars.get(c.path)?.ModifyIndex === c.index));
    await vars.put('default', 'a', { k: '1' });
    await vars.put('default', 'a', { k: '2' });
    await vars.delete('default', 'a');
    expect(await changes).toEqual([
      { namespace: 'default', path: 'a', index: 2, deleted: false },
      { namespace: 'default', path: 'a', index: 3, deleted: false },
      { namespace: 'default', path: 'a', index: 4, deleted: true },
    ]);
    expect(readable).toEqual([true, true, true]);
  });

  it("gives a task its job's implicit paths and nothing else", async () => {
    const vars = varsAt(openStore());
    await vars.put('default', 'nomad/jobs/web', { shared: 'j' });
    await vars.put('default', 'nomad/jobs/web/g/t', { own: 't' });
    await vars.put('default', 'nomad/jobs/web/g/other', { other: 'o' });
    await vars.put('default', 'nomad/jobs/api', { api: 'a' });
    await vars.put('prod', 'nomad/jobs/web', { prod: 'p' });
    const task = vars.forTask({ namespace: 'default', job: 'web', group: 'g', task: 't' });
    expect(task.get('nomad/jobs/web')!.Items).toEqual({ shared: 'j' });
    expect(task.get('nomad/jobs/web/g/t')!.Items).toEqual({ own: 't' });
    expect(task.get('nomad/jobs/web/g/other')).toBeUndefined();
    expect(task.get('nomad/jobs/api')).toBeUndefined();
    expect(task.get('nomad/jobs/web', 'prod')).toBeUndefined();
    expect(task.allowed('nomad/jobs/api')).toBe(false);
    expect(task.list('nomad/jobs').map((m) => m.Path)).toEqual(['nomad/jobs/web', 'nomad/jobs/web/g/t']);
    const seen: string[] = [];
    task.changes$.subscribe((c) => seen.push(c.path));
    await vars.put('default', 'nomad/jobs/api', { api: 'b' });
    await vars.put('default', 'nomad/jobs/web/g/t', { own: 't2' });
    expect(seen).toEqual(['nomad/jobs/web/g/t']);
  });

  it('names a damaged entry by its key, and can still delete it', async () => {
    const store = openStore();
    await store.commit((tx) => tx.put('vars', 'default/bad', { not: 'a variable' }));
    const vars = varsAt(store);
    expect(() => vars.get('bad')).toThrow(VariableStoreError);
    expect(() => vars.list('')).toThrow(/vars\/default\/bad is damaged/);
    expect(await vars.delete('default', 'bad')).toMatchObject({ ok: true });
    expect(vars.list('')).toEqual([]);
  });

  it('is one instance per store, so the API and the hooks see the same changes', () => {
    const store = openStore();
    expect(variablesOf(store)).toBe(variablesOf(store));
    expect(variablesOf(openStore())).not.toBe(variablesOf(store));
  });
});
