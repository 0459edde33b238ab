/**
 * The API's writes against the agent's store, in process: a write is answered only once committed, a
 * commit that fails (a full disk) answers 5xx and changes nothing, and an agent started on a store that a
 * crash left half done reconciles it before it answers anyone. Mock tasks; real store, real HTTP socket.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importFileState } from '../../src/api/import-file-state.ts';
import { AgentStore, StoreDamagedError } from '../../src/state/agent-store.ts';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, freshDir, serve, type Served } from './in-process-agent.ts';

/** Where the tests' own stores opened outside `serve` are closed. */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  await cleanUp();
});

/** An agent and its API on `dataDir`, with a store whose commits fail as a full disk's would while `full.on` is set. */
async function serveFull(dataDir: string, seed?: (store: AgentStore) => Promise<void>): Promise<Served & { full: { on: boolean } }> {
  const full = { on: false };
  const faults = {
    beforeCommit: () => {
      if (full.on) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    },
  };
  return { ...(await serve(dataDir, seed, { faults })), full };
}

const job = (id: string, extra: { count?: number; tag?: string; stop?: boolean } = {}) => ({
  Job: {
    ID: id, Type: 'service', Meta: { tag: extra.tag ?? 'a' },
    TaskGroups: [{ Name: 'g', Count: extra.count ?? 1, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' } }] }],
  },
});

const runningCount = (n: number) => (list: Alloc[]) => list.filter((a) => a.DesiredStatus === 'run' && a.ClientStatus === 'running').length === n;

describe('API writes and the store', { timeout: 60_000 }, () => {
  it('answers a registration only once the job, its evaluation and its allocations are in the store', async () => {
    const s = await serveFull(freshDir());
    const res = await call(s.socket, 'PUT', '/v1/jobs', job('web', { count: 2 }));
    expect(res.status).toBe(200);
    const { EvalID } = res.json<{ EvalID: string }>();
    // Read straight from the store at the moment of the answer: nothing is left for a later tick.
    expect(s.store.get('jobs', 'web')).toMatchObject({ id: 'web', versions: [{ version: 0 }] });
    expect(s.store.get('evals', EvalID)).toMatchObject({ ID: EvalID, JobID: 'web', TriggeredBy: 'job-register', Status: 'complete' });
    const allocs = s.store.entries('allocs').values.map((v) => v.value as { jobId: string; desired: string; spec: { id: string } });
    expect(allocs.map((a) => [a.jobId, a.desired])).toEqual([['web', 'run'], ['web', 'run']]);
    expect((await call(s.socket, 'GET', `/v1/evaluation/${EvalID}`)).json()).toMatchObject({ ID: EvalID, JobID: 'web' });
  });

  it('answers 500 naming the cause when the store cannot commit a registration, and changes nothing', async () => {
    const s = await serveFull(freshDir());
    s.full.on = true;
    const res = await call(s.socket, 'PUT', '/v1/jobs', job('web'));
    expect(res.status).toBe(500);
    expect(res.text).toMatch(/cannot commit to .*state\.mdb: ENOSPC: no space left on device/);
    expect((await call(s.socket, 'GET', '/v1/job/web')).status).toBe(404);
    expect((await call(s.socket, 'GET', '/v1/allocations')).json()).toEqual([]);
    expect(s.agent.list()).toEqual([]);
    // The disk has room again: the same write goes through.
    s.full.on = false;
    expect((await call(s.socket, 'PUT', '/v1/jobs', job('web'))).status).toBe(200);
    await waitForAllocs(s.socket, '/v1/job/web/allocations', runningCount(1));
  });

  it('leaves a running job as it was when its update or its stop cannot be committed', async () => {
    const s = await serveFull(freshDir());
    await call(s.socket, 'PUT', '/v1/jobs', job('web', { tag: 'v1' }));
    const [before] = await waitForAllocs(s.socket, '/v1/job/web/allocations', runningCount(1));
    s.full.on = true;
    expect((await call(s.socket, 'PUT', '/v1/jobs', job('web', { tag: 'v2', count: 2 }))).status).toBe(500);
    expect((await call(s.socket, 'DELETE', '/v1/job/web')).status).toBe(500);
    expect((await call(s.socket, 'POST', `/v1/allocation/${before!.ID}/stop`)).status).toBe(500);
    const now = (await call(s.socket, 'GET', '/v1/job/web')).json();
    expect([now.Version, now.Stop, now.Meta.tag]).toEqual([0, false, 'v1']);
    const allocs = (await call(s.socket, 'GET', '/v1/job/web/allocations')).json<Alloc[]>();
    expect(allocs.map((a) => [a.ID, a.DesiredStatus, a.ClientStatus])).toEqual([[before!.ID, 'run', 'running']]);
    expect(s.agent.get(before!.ID)!.getState().clientStatus).toBe('running');
  });
});

describe('an agent starting on what a crash left', { timeout: 60_000 }, () => {
  /** A job and its allocation records as a registration commits them, with no runner ever started. */
  const committedNotStarted = async (store: AgentStore, opts: { stop?: boolean; count?: number; allocs?: number } = {}) => {
    const spec = (id: string) => ({ id, job: 'web', group: 'g', type: 'service', namespace: 'default', meta: { tag: 'a' }, tasks: [{ name: 't', driver: 'mock', config: { run_for: '1h' } }], modifyIndex: 5 });
    const template = { ...spec('web-g-0') };
    const count = opts.count ?? 1;
    await store.commit((tx) => {
      tx.put('jobs', 'web', {
        id: 'web', namespace: 'default', stop: opts.stop ?? false, createIndex: 5, modifyIndex: 5, jobModifyIndex: 5,
        versions: [{ version: 0, job: { ID: 'web', TaskGroups: [{ Name: 'g', Count: count }] }, allocs: Array.from({ length: count }, (_, i) => ({ ...template, id: `web-g-${i}` })), submitTime: 1, jobModifyIndex: 5 }],
      });
      for (let i = 0; i < (opts.allocs ?? 1); i++) {
        const id = `00000000-0000-4000-8000-00000000000${i}`;
        tx.put('allocs', id, { id, spec: spec(id), jobId: 'web', namespace: 'default', group: 'g', index: i, jobVersion: 0, desired: 'run', desiredDescription: '', createIndex: 5, allocModifyIndex: 5, createTime: 1 });
      }
      tx.index(5);
    });
  };

  it('starts an allocation that was committed but never started', async () => {
    const s = await serveFull(freshDir(), (store) => committedNotStarted(store));
    const [a] = await waitForAllocs(s.socket, '/v1/job/web/allocations', runningCount(1));
    expect(a!.ID).toBe('00000000-0000-4000-8000-000000000000');
    expect(s.agent.get(a!.ID)).toBeDefined();
  });

  it('places the instances a job wants and has no allocation for', async () => {
    const s = await serveFull(freshDir(), (store) => committedNotStarted(store, { count: 3, allocs: 1 }));
    const list = await waitForAllocs(s.socket, '/v1/job/web/allocations', runningCount(3));
    expect(list.map((a) => (a as Alloc & { TaskGroup: string }).TaskGroup)).toEqual(['g', 'g', 'g']);
    // The placements were committed with an evaluation of their own.
    expect(s.store.entries('evals').values.map((v) => (v.value as { TriggeredBy: string }).TriggeredBy)).toEqual(['reconnect']);
    expect(s.store.entries('allocs').values).toHaveLength(3);
  });

  it('stops, and never starts the tasks of, the allocations of a job that was stopped', async () => {
    const s = await serveFull(freshDir(), (store) => committedNotStarted(store, { stop: true }));
    const [a] = await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.every((x) => x.ClientStatus === 'complete'));
    expect(a!.DesiredStatus).toBe('stop');
    expect(Object.values(a!.TaskStates).flatMap((t) => t.Events.map((e) => e.Type))).not.toContain('Started');
    expect((s.store.get('allocs', a!.ID) as { desired: string }).desired).toBe('stop');
  });

  it('does not start afresh an allocation whose runner record was damaged and set aside', async () => {
    const s = await serveFull(freshDir(), async (store) => {
      await committedNotStarted(store);
      await store.commit((tx) => tx.put('quarantine', '00000000-0000-4000-8000-000000000000@2026', { table: 'runners', key: '00000000-0000-4000-8000-000000000000', why: 'damaged', raw: '{' }));
    });
    const [a] = (await call(s.socket, 'GET', '/v1/job/web/allocations')).json<Alloc[]>();
    expect([a!.DesiredStatus, a!.ClientStatus]).toEqual(['run', 'failed']);
    expect(s.agent.list()).toEqual([]);
  });

  it('refuses to start on a damaged jobs table, naming the entry, and writes nothing', async () => {
    const dir = freshDir();
    const store = AgentStore.open(dir);
    await store.commit((tx) => tx.put('jobs', 'web', null));
    await store.close();
    await expect(serveFull(dir)).rejects.toThrow(StoreDamagedError);
    await expect(serveFull(dir)).rejects.toThrow(/state\.mdb is damaged: jobs\/web: expected a job object/);
  });
});

describe('a data dir written by the file-based agent', { timeout: 60_000 }, () => {
  const legacy = (dir: string) => {
    const id = '11111111-1111-4111-8111-111111111111';
    const spec = { id, job: 'old', group: 'g', type: 'service', namespace: 'default', tasks: [{ name: 't', driver: 'mock', config: { run_for: '1h' } }], modifyIndex: 3 };
    writeFileSync(join(dir, 'api-state.json'), JSON.stringify({
      index: 9,
      jobs: [{ id: 'old', namespace: 'default', stop: false, createIndex: 3, modifyIndex: 3, jobModifyIndex: 3, versions: [{ version: 0, job: { ID: 'old' }, allocs: [{ ...spec, id: 'old-g-0' }], submitTime: 1, jobModifyIndex: 3 }] }],
      allocs: [{ id, jobId: 'old', namespace: 'default', group: 'g', index: 0, jobVersion: 0, desired: 'run', desiredDescription: '', createIndex: 3, allocModifyIndex: 3, createTime: 1 }],
    }), { mode: 0o600 });
    mkdirSync(join(dir, 'allocs', id), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'allocs', id, 'state.json'), JSON.stringify({ spec, state: { clientStatus: 'complete', taskStates: {} }, updatedAt: 2, createdAt: 1 }), { mode: 0o600 });
    return id;
  };

  it('is imported once on the first start with the store, and the old files are kept renamed', async () => {
    const dir = freshDir();
    const id = legacy(dir);
    const store = AgentStore.open(dir);
    const report = await importFileState(dir, store);
    expect(report).toEqual({ jobs: 1, allocs: 1, runners: 1, skipped: [] });
    expect([existsSync(join(dir, 'api-state.json')), existsSync(join(dir, 'api-state.json.imported')), existsSync(join(dir, 'allocs', id, 'state.json.imported'))]).toEqual([false, true, true]);
    expect(await importFileState(dir, store)).toBeUndefined();
    expect(store.savedIndex).toBe(9);
    await store.close();
    const s = await serveFull(dir);
    expect((await call(s.socket, 'GET', '/v1/job/old')).json()).toMatchObject({ ID: 'old', Version: 0 });
    expect((await call(s.socket, 'GET', `/v1/allocation/${id}`)).json()).toMatchObject({ ID: id, JobID: 'old', ClientStatus: 'complete' });
  });

  it('stops at a registry file it cannot read, names it, and imports nothing', async () => {
    const dir = freshDir();
    legacy(dir);
    writeFileSync(join(dir, 'api-state.json'), '{"index": 9, "jobs": [null], "allocs": []}');
    const store = AgentStore.open(dir);
    closers.push(() => store.close());
    await expect(importFileState(dir, store)).rejects.toThrow(/api-state\.json cannot be imported: jobs\[0\] is not a job/);
    expect(store.isNew).toBe(true);
    expect(readFileSync(join(dir, 'api-state.json'), 'utf8')).toContain('[null]');
  });
});
