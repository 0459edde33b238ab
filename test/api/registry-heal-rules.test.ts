/**
 * What the registry does when an agent starts on a data dir (src/api/job-registry.ts: load, adopt, heal),
 * rule by rule where the first measured run found them loose, with agents served in process one after the
 * other on one data dir (mock tasks): a start with nothing to make good writes nothing; a stop committed
 * without its allocations' is completed in the words of a job update; only a damaged runner record's own
 * quarantine entry holds an allocation back; a failed allocation ends its job; an adopted allocation's
 * instance needs digits only.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recordPublishedBatches } from './published-batches.ts';
import type { JobEntry, StoredAlloc } from '../../src/api/job-registry.ts';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, runJob, serve, type Served, SUITE_TIMEOUT } from './in-process-agent.ts';

type Json = Record<string, any>;

afterEach(async () => {
  vi.restoreAllMocks();
  await cleanUp();
});

/** Every batch published from now on. */
describe('an agent starting on a data dir', { timeout: SUITE_TIMEOUT }, () => {
  it('with nothing to make good writes nothing: no empty batch, no new evaluation', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    await runJob(first, mockJob('settled'));
    await first.stop();
    const batches = recordPublishedBatches();
    const second = await serve(dir);
    expect(batches.filter((b) => b.Events.length === 0)).toEqual([]);
    expect(batches.flatMap((b) => b.Events).filter((e) => e.Topic === 'Evaluation' || e.Topic === 'Allocation')).toEqual([]);
    expect(((await call(second.socket, 'GET', '/v1/evaluations')).json<Json[]>())).toHaveLength(1);
  });

  it('completes a job\'s stop committed without its allocations\': stopped in the words of a job update, as a plan result', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    const alloc = await runJob(first, mockJob('halfstopped'));
    await first.stop();
    const batches = recordPublishedBatches();
    const second = await serve(dir, async (store) => {
      const job = store.get('jobs', 'halfstopped') as JobEntry;
      await store.commit((tx) => tx.put('jobs', 'halfstopped', { ...job, stop: true }));
    });
    const read = (await call(second.socket, 'GET', `/v1/allocation/${alloc.ID}`)).json<Json>();
    expect(read).toMatchObject({ DesiredStatus: 'stop', DesiredDescription: 'alloc not needed due to job update' });
    expect(batches.flatMap((b) => b.Events).filter((e) => e.Topic === 'Allocation' && e.Key === alloc.ID).map((e) => e.Type)).toContain('PlanResult');
  });

  it('places nothing for a static port the host holds, leaving the job\'s blocked evaluation open', async () => {
    const held = createServer();
    await new Promise<void>((r) => held.listen(0, '0.0.0.0', r));
    const port = (held.address() as { port: number }).port;
    try {
      const dir = freshDir();
      const first = await serve(dir);
      const body = mockJob('ported');
      (body.Job.TaskGroups[0] as Json)['Networks'] = [{ Mode: 'host', ReservedPorts: [{ Label: 'http', Value: port }] }];
      const reg = (await call(first.socket, 'PUT', '/v1/jobs', body)).json<Json>();
      expect(reg['EvalID']).not.toBe('');
      await first.stop();
      const second = await serve(dir);
      // The start's reconcile probes the host too: it places nothing, and the job's blocked evaluation stays open.
      await second.api.registry.serialize('ported', () => undefined);
      expect((await call(second.socket, 'GET', '/v1/job/ported/allocations')).json()).toEqual([]);
      const evals = (await call(second.socket, 'GET', '/v1/job/ported/evaluations')).json<Json[]>();
      expect(evals.filter((e) => e['Status'] === 'blocked')).toHaveLength(1);
    } finally {
      await new Promise((r) => held.close(r));
    }
  });

  it('starts an allocation committed stopped but with no runner record, as the dead agent may have run it, and stops it', async () => {
    // The stop committed, the runner record gone: the dead agent may still have spawned its tasks.
    const { alloc, second } = await restartedStoppedWithoutRunner('unrecorded-stop', false);
    const [ended] = await waitForAllocs(second.socket, '/v1/job/unrecorded-stop/allocations', (l) => l[0]?.ClientStatus === 'complete');
    expect(ended).toMatchObject({ ID: alloc.ID, DesiredStatus: 'stop' });
    expect(second.agent.get(alloc.ID)).toBeDefined();
  });

  it('says which allocation its damaged runner record holds back, where the record was set aside, and what to do', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    const alloc = await runJob(first, mockJob('set-aside'));
    await first.stop();
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (lines.push(String(chunk)), true));
    const second = await serve(dir, async (store) => {
      await store.commit((tx) => {
        tx.remove('runners', alloc.ID);
        tx.put('quarantine', `${alloc.ID}@x`, { table: 'runners', key: alloc.ID });
      });
    });
    expect(lines.filter((l) => l.includes(alloc.ID))).toEqual([
      `allocrun agent: allocation ${alloc.ID} (job "set-aside") was not started again: its runner record was damaged and set aside (quarantine/${alloc.ID}@x); stop any of its tasks still running, then 'allocrun alloc stop ${alloc.ID}'\n`,
    ]);
    expect((await call(second.socket, 'GET', `/v1/allocation/${alloc.ID}`)).json<Json>()['ClientStatus']).toBe('failed');
  });

  it('neither starts nor tells an allocation committed stopped whose damaged runner record was set aside', async () => {
    const { alloc, second } = await restartedStoppedWithoutRunner('set-aside-stopped', true);
    expect((await call(second.socket, 'GET', `/v1/allocation/${alloc.ID}`)).json<Json>()).toMatchObject({ DesiredStatus: 'stop' });
    expect(second.agent.get(alloc.ID)).toBeUndefined();
  });

  it.each([
    ['of another table', { table: 'allocs', key: 'ID' }],
    ['without a key', { table: 'runners' }],
    ['with a key that is not text', { table: 'runners', key: 7 }],
    ['that is not an object', null],
  ] as [string, Json | null][])('does not hold an allocation back for a quarantine entry %s', async (_what, entry) => {
    const dir = freshDir();
    const first = await serve(dir);
    const alloc = await runJob(first, mockJob('held'));
    await first.stop();
    const second = await serve(dir, async (store) => {
      // The allocation committed but never started, as a crash before its runner would leave it.
      await store.commit((tx) => {
        tx.remove('runners', alloc.ID);
        const value = entry && { ...entry, ...(entry['key'] === 'ID' && { key: alloc.ID }) };
        tx.put('quarantine', `${alloc.ID}@x`, value);
      });
    });
    const [again] = await waitForAllocs(second.socket, '/v1/job/held/allocations', (l) => l[0]?.ClientStatus === 'running');
    expect(again!.ID).toBe(alloc.ID);
  });
});

describe('an agent just started', { timeout: SUITE_TIMEOUT }, () => {
  it('processes a blocked evaluation again once a stop frees its room: it is not shutting down', async () => {
    const s = await serve();
    s.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 100 };
    const sized = (id: string) => {
      const body = mockJob(id);
      (body.Job.TaskGroups[0]!.Tasks[0] as Json)['Resources'] = { MemoryMB: 80 };
      return body;
    };
    await runJob(s, sized('roomy'));
    expect((await call(s.socket, 'PUT', '/v1/jobs', sized('waiting'))).status).toBe(200);
    expect((await call(s.socket, 'GET', '/v1/job/waiting/allocations')).json()).toEqual([]);
    await call(s.socket, 'DELETE', '/v1/job/roomy');
    await waitForAllocs(s.socket, '/v1/job/waiting/allocations', (l) => l.length === 1);
  });
});

describe('a job', { timeout: SUITE_TIMEOUT }, () => {
  it('whose only allocation failed is dead', async () => {
    const s = await serve();
    const body = mockJob('broken', { t: { run_for: '10ms', exit_code: 1 } }, { Type: 'batch' });
    (body.Job.TaskGroups[0] as Json)['RestartPolicy'] = { Attempts: 0, Mode: 'fail' };
    (body.Job.TaskGroups[0] as Json)['ReschedulePolicy'] = { Attempts: 0, Unlimited: false };
    expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    await waitForAllocs(s.socket, '/v1/job/broken/allocations', (l) => l[0]?.ClientStatus === 'failed');
    expect((await call(s.socket, 'GET', '/v1/job/broken')).json<Json>()['Status']).toBe('dead');
  });
});

describe('an adopted allocation', { timeout: SUITE_TIMEOUT }, () => {
  it.each([['emb-g-a1'], ['emb-g-1.5'], ['emb-g- 1']])('named %s is instance 0: the instance is digits only', async (id) => {
    const s = await serve();
    s.api.registry.adopt([{ spec: { id, job: 'emb', group: 'g', type: 'service', tasks: [] } as never, state: { clientStatus: 'complete', taskStates: {} }, updatedAt: 1 }]);
    expect(s.api.registry.findAlloc(id)!.index).toBe(0);
  });
});

/**
 * Runs job `id`'s allocation, stops the agent, and serves a new one on the same dir whose store holds the
 * allocation committed stopped with no runner record (with `quarantined`, one set aside as damaged).
 */
async function restartedStoppedWithoutRunner(id: string, quarantined: boolean): Promise<{ alloc: Alloc; second: Served }> {
  const dir = freshDir();
  const first = await serve(dir);
  const alloc = await runJob(first, mockJob(id));
  await first.stop();
  const second = await serve(dir, async (store) => {
    const stored = store.get('allocs', alloc.ID) as StoredAlloc;
    await store.commit((tx) => {
      tx.remove('runners', alloc.ID);
      tx.put('allocs', alloc.ID, { ...stored, desired: 'stop', spec: { ...stored.spec, desiredStatus: 'stop' } });
      if (quarantined) tx.put('quarantine', `${alloc.ID}@x`, { table: 'runners', key: alloc.ID });
    });
  });
  return { alloc, second };
}
