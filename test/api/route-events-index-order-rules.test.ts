/**
 * The event stream in index order (src/api/event-broker.ts' hold, src/api/ordered-commit.ts; the hold's own
 * table is api-events-hold-rules), rule by rule: every writer that takes its index before an asynchronous
 * commit, through one served agent in process (mock tasks), with the interleaving forced by a seam
 * on the store's commit: once the writer's commit is durable, and before it goes on, another job is registered
 * at a later index. A stream reader must see the writer's batch first, and no index go back. Then the node's
 * registration, announced with the address the API bound.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventBatch, StreamEvent } from '../../src/api/event-broker.ts';
import { StoreCommitError } from '../../src/state/agent-store.ts';
import { call, stream, waitForAllocs } from './agent-process.ts';
import { cleanUp, mockJob, runJob, type Served, serve, SUITE_TIMEOUT, serveWithRoom, until } from './in-process-agent.ts';

type Json = Record<string, any>;

describe('each writer that commits before it publishes', { timeout: SUITE_TIMEOUT }, () => {
  let s: Served;
  beforeAll(async () => {
    s = await serveWithRoom();
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await cleanUp();
  });

  let between = 0;
  /** The writes of one commit, as the seam reads them. */
  type Op = { table: string; key: string; removed: boolean };
  /**
   * Arms the seam: the first commit whose writes `match` is committed, then, before the writer goes on, a job is
   * registered at a later index, and the writer waits until that registration's commit is durable (not for its
   * answer: its apply, and so its answer, waits for the writer's, at the lower index). `answered` is its answer.
   */
  function interleaveAfter(match: (ops: Op[]) => boolean): { job: string; done: () => boolean; answered: () => Promise<{ status: number; text: string }> } {
    const job = `between-${++between}`;
    const commit = s.store.commit.bind(s.store);
    let armed = true;
    let answered: Promise<{ status: number; text: string }> | undefined;
    let durable!: () => void;
    const betweenDurable = new Promise<void>((r) => (durable = r));
    const seam = vi.spyOn(s.store, 'commit').mockImplementation(async (write) => {
      const ops: Op[] = [];
      write({ put: (table, key) => void ops.push({ table, key, removed: false }), remove: (table, key) => void ops.push({ table, key, removed: true }), index: () => undefined });
      await commit(write);
      if (ops.some((o) => o.table === 'jobs' && o.key === job)) {
        seam.mockRestore();
        durable();
        return;
      }
      if (!armed || !match(ops)) return;
      armed = false;
      answered = call(s.socket, 'PUT', '/v1/jobs', mockJob(job));
      await betweenDurable;
    });
    return { job, done: () => !armed, answered: () => answered! };
  }

  const batchesIn = (text: string): EventBatch[] => text.split('\n').filter((l) => l.startsWith('{"Index"')).map((l) => JSON.parse(l) as EventBatch);

  /**
   * Runs `write` with the seam armed for `match`, and reads the stream until the interleaved job's registration:
   * the writer's event (found by `mine`) comes first, at a smaller index, and no index goes back.
   */
  async function inOrder(match: (ops: Op[]) => boolean, write: () => Promise<{ status: number; text: string }>, mine: (e: StreamEvent) => boolean): Promise<void> {
    const st = await stream(s.socket, '/v1/event/stream');
    try {
      const seam = interleaveAfter(match);
      const res = await write();
      expect(res.status, res.text).toBeLessThan(300);
      expect(seam.done()).toBe(true);
      const between = await seam.answered();
      expect(between.status, between.text).toBe(200);
      const registered = (e: StreamEvent) => e.Topic === 'Job' && e.Type === 'JobRegistered' && e.Key === seam.job;
      const text = await st.until((t) => batchesIn(t).some((b) => b.Events.some(registered)) && batchesIn(t).some((b) => b.Events.some(mine)));
      const batches = batchesIn(text);
      const indexes = batches.map((b) => b.Index);
      expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
      const at = (test: (e: StreamEvent) => boolean) => batches.findIndex((b) => b.Events.some(test));
      expect(at(mine)).toBeLessThan(at(registered));
      expect(batches[at(mine)]!.Index).toBeLessThan(batches[at(registered)]!.Index);
    } finally {
      st.close();
    }
  }

  const putsJob = (id: string) => (ops: Op[]) => ops.some((o) => o.table === 'jobs' && o.key === id);

  it('a variable\'s write', async () => {
    await inOrder((ops) => ops.some((o) => o.table === 'vars' && !o.removed), () => call(s.socket, 'PUT', '/v1/var/order/one', { Items: { a: '1' } }), (e) => e.Topic === 'Variables' && e.Type === 'VariableUpserted' && e.Key === 'order/one');
  });

  it('a variable\'s delete', async () => {
    expect((await call(s.socket, 'PUT', '/v1/var/order/two', { Items: { a: '1' } })).status).toBe(200);
    await inOrder((ops) => ops.some((o) => o.table === 'vars' && o.removed), () => call(s.socket, 'DELETE', '/v1/var/order/two'), (e) => e.Topic === 'Variables' && e.Type === 'VariableDeleted' && e.Key === 'order/two');
  });

  it('a job\'s registration', async () => {
    await inOrder(putsJob('reg'), () => call(s.socket, 'PUT', '/v1/jobs', mockJob('reg')), (e) => e.Topic === 'Job' && e.Type === 'JobRegistered' && e.Key === 'reg');
  });

  it('a job\'s stop', async () => {
    await runJob(s, mockJob('stopped'));
    await inOrder(putsJob('stopped'), () => call(s.socket, 'DELETE', '/v1/job/stopped'), (e) => e.Topic === 'Job' && e.Type === 'JobDeregistered' && e.Key === 'stopped');
  });

  it('a job\'s purge', async () => {
    await runJob(s, mockJob('purged'));
    await inOrder(putsJob('purged'), () => call(s.socket, 'DELETE', '/v1/job/purged?purge=true'), (e) => e.Topic === 'Job' && e.Type === 'JobDeregistered' && e.Key === 'purged');
  });

  it('a job\'s evaluation', async () => {
    await runJob(s, mockJob('evaluated'));
    let evalId = '';
    await inOrder((ops) => ops.some((o) => o.table === 'evals') && !ops.some((o) => o.table === 'jobs'), async () => {
      const res = await call(s.socket, 'PUT', '/v1/job/evaluated/evaluate', {});
      evalId = res.json<Json>()['EvalID'];
      return res;
    }, (e) => e.Topic === 'Evaluation' && e.Key === evalId);
  });

  it('an allocation\'s stop', async () => {
    const alloc = await runJob(s, mockJob('allocstop'));
    await inOrder((ops) => ops.some((o) => o.table === 'allocs' && o.key === alloc.ID) && !ops.some((o) => o.table === 'jobs'), () => call(s.socket, 'PUT', `/v1/allocation/${alloc.ID}/stop`), (e) => e.Topic === 'Allocation' && e.Type === 'AllocationUpdateDesiredStatus' && e.Key === alloc.ID);
  });

  it('a write whose commit fails holds nothing back: the next write\'s batch is delivered', async () => {
    const st = await stream(s.socket, '/v1/event/stream');
    try {
      const commit = s.store.commit.bind(s.store);
      const seam = vi.spyOn(s.store, 'commit').mockImplementation(async (write) => {
        let vars = false;
        write({ put: (table) => void (vars ||= table === 'vars'), remove: () => undefined, index: () => undefined });
        if (vars) throw new StoreCommitError(`${s.store.path}: the disk is full (the test's seam)`, s.store.path);
        return commit(write);
      });
      const refused = await call(s.socket, 'PUT', '/v1/var/order/refused', { Items: { a: '1' } });
      seam.mockRestore();
      expect(refused.status).toBe(500);
      expect((await call(s.socket, 'PUT', '/v1/jobs', mockJob('after-refused'))).status).toBe(200);
      const text = await st.until((t) => t.includes('"JobRegistered"') && t.includes('"after-refused"'));
      expect(text).not.toContain('order/refused');
    } finally {
      st.close();
    }
  });

  it('a deployment\'s fail', async () => {
    const body = mockJob('failing');
    Object.assign(body.Job.TaskGroups[0]!, { Update: { MinHealthyTime: 200e9, HealthyDeadline: 300e9 } });
    expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    await waitForAllocs(s.socket, '/v1/job/failing/allocations', (l) => l.length === 1);
    const d = await until(async () => (await call(s.socket, 'GET', '/v1/job/failing/deployment')).json<Json | null>(), (v) => v !== null, 'the deployment');
    await inOrder((ops) => ops.some((o) => o.table === 'meta' && o.key === 'deployments.failed'), () => call(s.socket, 'PUT', `/v1/deployment/fail/${d!['ID']}`), (e) => e.Topic === 'Deployment' && e.Key === d!['ID'] && (e.Payload['Deployment'] as Json)['Status'] === 'failed');
  });
});

describe('the node\'s registration', { timeout: SUITE_TIMEOUT }, () => {
  afterAll(cleanUp);

  it('is announced with the address the API bound, not the port 0 it was asked for', async () => {
    const s = await serve(undefined, undefined, { api: { http: '127.0.0.1:0' } });
    const bound = new URL(s.api.url!);
    const st = await stream(s.socket, '/v1/event/stream?topic=Node&index=1');
    try {
      const text = await st.until((t) => t.includes('"NodeRegistration"'));
      const [node] = text.split('\n').filter((l) => l.startsWith('{"Index"')).flatMap((l) => (JSON.parse(l) as EventBatch).Events);
      expect(bound.port).not.toBe('0');
      // The whole node, as Nomad's NodeStreamEvent carries it, and as the node's own read gives it.
      const announced = node!.Payload['Node'] as Json;
      expect([announced['HTTPAddr'], announced['Attributes']['nomad.advertise.address'], announced['SecretID']]).toEqual([`127.0.0.1:${bound.port}`, `127.0.0.1:${bound.port}`, '']);
      const read = (await call(s.socket, 'GET', `/v1/node/${announced['ID']}`)).json<Json>();
      // (The free disk space it reports, in bytes and in whole MB, is read at each read.)
      const withoutFreeDisk = (n: Json) => ({ ...n, ModifyIndex: 0, Attributes: { ...n['Attributes'], 'unique.storage.bytesfree': '' }, NodeResources: { ...n['NodeResources'], Disk: { DiskMB: 0 } } });
      expect(withoutFreeDisk(announced)).toEqual(withoutFreeDisk(read));
    } finally {
      st.close();
    }
  });
});
