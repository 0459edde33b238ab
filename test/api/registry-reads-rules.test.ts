/**
 * What the registry answers of its allocations and evaluations (src/api/job-registry.ts: allocJson, the stub,
 * getEval, listEvals), rule by rule, through one served agent in process (mock tasks): an allocation carries
 * the job at its own version and the node it runs on; an evaluation is found by a prefix of its ID; the
 * evaluations are listed oldest first.
 */
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, mockJob, runJob, type Served, SUITE_TIMEOUT, serveWithRoom } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
});
afterAll(cleanUp);

const get = async <T = Json>(path: string) => (await call(s.socket, 'GET', path)).json<T>();

describe('an allocation', { timeout: SUITE_TIMEOUT }, () => {
  it('carries the job at its own version, not the newest', async () => {
    const old = await runJob(s, mockJob('layered', undefined, { Meta: { v: '1' } }));
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('layered', undefined, { Meta: { v: '2' } }));
    const [, next] = await waitForAllocs(s.socket, '/v1/job/layered/allocations', (l) => l.length === 2);
    expect((await get(`/v1/allocation/${old.ID}`))['Job']).toMatchObject({ Version: 0, Meta: { v: '1' } });
    expect((await get(`/v1/allocation/${next!.ID}`))['Job']).toMatchObject({ Version: 1, Meta: { v: '2' } });
  });

  it('names the node it runs on, in full and in the lists', async () => {
    const alloc = await runJob(s, mockJob('noded'));
    const node = { NodeID: String(s.store.get('meta', 'nodeId')), NodeName: hostname() };
    expect(await get(`/v1/allocation/${alloc.ID}`)).toMatchObject(node);
    expect((await get<Json[]>('/v1/job/noded/allocations'))[0]).toMatchObject(node);
  });

  it('of a purged job is still read, without its job', async () => {
    const alloc = await runJob(s, mockJob('orphaned'));
    await call(s.socket, 'DELETE', '/v1/job/orphaned?purge=true');
    const read = await get(`/v1/allocation/${alloc.ID}`);
    expect(read).toMatchObject({ ID: alloc.ID, JobID: 'orphaned', DesiredStatus: 'stop' });
    expect(read['Job'] ?? null).toBeNull();
  });
});

describe('evaluations', { timeout: SUITE_TIMEOUT }, () => {
  it('are found by a prefix of their ID, the exact ID first', async () => {
    const reg = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('prefixed'))).json<Json>();
    const id = String(reg['EvalID']);
    expect((await get(`/v1/evaluation/${id.slice(0, 8)}`))['ID']).toBe(id);
    expect((await get(`/v1/evaluation/${id}`))['ID']).toBe(id);
    expect((await call(s.socket, 'GET', `/v1/evaluation/${id.slice(0, 8)}zz`)).status).toBe(404);
  });

  it('are listed oldest first', async () => {
    for (const id of ['ev-c', 'ev-a', 'ev-b']) await call(s.socket, 'PUT', '/v1/jobs', mockJob(id));
    const created = (await get<Json[]>('/v1/evaluations')).map((e) => e['CreateIndex'] as number);
    expect(created).toEqual([...created].sort((a, b) => a - b));
    expect(created.length).toBeGreaterThanOrEqual(3);
  });
});
