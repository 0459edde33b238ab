/**
 * Check results kept in the agent's store (src/checks/check-persistence.ts): written when a status changes
 * (not at every run, as Nomad writes), read back by the next agent, forgotten on disk when a check or its
 * allocation is; a damaged entry is named and left out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkPersistence, loadCheckResults } from '../../src/checks/check-persistence.ts';
import { CheckStore } from '../../src/checks/check-store.ts';
import type { CheckQueryResult } from '../../src/checks/result.ts';
import { AgentStore } from '../../src/state/agent-store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const result = (id: string, Status: CheckQueryResult['Status'], Timestamp = 1): CheckQueryResult => ({ ID: id, Mode: 'healthiness', Status, Output: Status, Timestamp, Group: 'web.app[0]', Task: 'server', Service: 'web', Check: `check-${id}` });

function open(dir: string, writes: string[][]) {
  return AgentStore.open(dir, { faults: { beforeCommit: (tables) => void writes.push([...tables]) } });
}

describe('check results in the agent store', () => {
  it('are written when their status changes and read back by the next agent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-checkstore-'));
    dirs.push(dir);
    const writes: string[][] = [];
    const reports: string[] = [];
    let db = open(dir, writes);
    const persistence = checkPersistence(db, (m) => reports.push(m));
    const checks = new CheckStore(persistence);
    checks.set('a1', result('c1', 'pending'));
    checks.set('a1', result('c1', 'success', 2));
    checks.set('a1', result('c1', 'success', 3));
    checks.set('a1', result('c1', 'success', 4));
    checks.set('a1', result('c2', 'failure'));
    checks.set('a2', result('c3', 'success'));
    await persistence.flush();
    // pending, success, c2, c3: repeating a status writes nothing.
    expect(writes.filter((t) => t.includes('checks'))).toHaveLength(4);
    await db.close();

    db = open(dir, writes);
    const kept = loadCheckResults(db, (m) => reports.push(m));
    expect(kept.get('a1')?.map((r) => [r.ID, r.Status, r.Timestamp])).toEqual([['c1', 'success', 2], ['c2', 'failure', 1]]);
    expect(kept.get('a2')?.map((r) => r.ID)).toEqual(['c3']);

    // Restored, a check's stub leaves the kept result be.
    const next = new CheckStore(checkPersistence(db, (m) => reports.push(m)));
    for (const [alloc, results] of kept) next.restore(alloc, results);
    next.set('a1', result('c1', 'pending', 9));
    expect(next.list('a1')['c1']).toMatchObject({ Status: 'success', Timestamp: 2 });
    expect(reports).toEqual([]);
    await db.close();
  });

  it('are forgotten on disk when a check is removed or its allocation purged', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-checkstore-'));
    dirs.push(dir);
    const db = AgentStore.open(dir);
    const persistence = checkPersistence(db, () => undefined);
    const checks = new CheckStore(persistence);
    checks.set('a1', result('c1', 'success'));
    checks.set('a1', result('c2', 'success'));
    checks.set('a2', result('c3', 'success'));
    checks.remove('a1', ['c2']);
    checks.purge('a2');
    await persistence.flush();
    const kept = loadCheckResults(db, () => undefined);
    expect([...kept.keys()]).toEqual(['a1']);
    expect(kept.get('a1')!.map((r) => r.ID)).toEqual(['c1']);
    await db.close();
  });

  it('names a damaged entry and leaves it out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-checkstore-'));
    dirs.push(dir);
    const db = AgentStore.open(dir);
    await db.commit((tx) => {
      tx.put('checks', 'a1/c1', result('c1', 'success'));
      tx.put('checks', 'a1/c2', { nonsense: true });
      tx.put('checks', 'no-slash', result('no-slash', 'success'));
    });
    const reports: string[] = [];
    const kept = loadCheckResults(db, (m) => reports.push(m));
    expect(kept.get('a1')!.map((r) => r.ID)).toEqual(['c1']);
    expect(reports).toEqual([`${db.path}: checks/a1/c2: not a check result; left out`, `${db.path}: checks/no-slash: not a check result; left out`]);
    await db.close();
  });

  it('report a failed write instead of throwing it at the check', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-checkstore-'));
    dirs.push(dir);
    const db = AgentStore.open(dir, { faults: { beforeCommit: () => { throw new Error('ENOSPC: no space left on device'); } } });
    const reports: string[] = [];
    const persistence = checkPersistence(db, (m) => reports.push(m));
    new CheckStore(persistence).set('a1', result('c1', 'success'));
    await persistence.flush();
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/^cannot save the result of check c1 of allocation a1: .*ENOSPC/);
    await db.close();
  });
});
