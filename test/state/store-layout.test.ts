/**
 * The agent store's layout is what a later allocrun reads: its tables are LMDB named databases under
 * fixed names (meta, jobs, allocs, evals, runners, quarantine, acl, vars, checks, periodic), so a store written by this version
 * opens with the same tables in the next.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentStore, STORE_FILE, type Table } from '../../src/state/agent-store.ts';

const TABLES: Table[] = ['meta', 'jobs', 'allocs', 'evals', 'runners', 'quarantine', 'acl', 'vars', 'checks', 'periodic'];
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the store layout', () => {
  it('keeps each table as an LMDB database of its own name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-layout-'));
    dirs.push(dir);
    const store = AgentStore.open(dir);
    await store.commit((tx) => {
      for (const t of TABLES) tx.put(t, `key-of-${t}`, { in: t });
    });
    await store.close();
    const root = open({ path: join(dir, STORE_FILE), noSubdir: true, readOnly: true, encoding: 'binary', maxDbs: TABLES.length + 2 });
    try {
      expect([...root.getKeys()].sort()).toEqual([...TABLES].sort());
      for (const t of TABLES) {
        const db = root.openDB<Buffer, string>({ name: t, encoding: 'binary' });
        expect(JSON.parse(db.get(`key-of-${t}`)!.toString('utf8')), t).toEqual({ in: t });
      }
    } finally {
      await root.close();
    }
  });
});
