/**
 * The service registration routes (src/api/routes/services.ts), rule by rule, through one served agent in
 * process whose catalog the test writes as the services hooks would: which namespace each read takes (the
 * query's first, `default` when none, `*` for all), a delete by name and ID, a job's and an allocation's
 * registrations, each 404 in Nomad's words, and the Service topic's events.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventBatch } from '../../src/api/event-broker.ts';
import { recordPublishedBatches } from './published-batches.ts';
import type { ServiceRegistrationInput } from '../../src/services/service-registration.ts';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
const batches: EventBatch[] = [];
beforeAll(async () => {
  s = await serve();
  recordPublishedBatches(batches);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await cleanUp();
});

const reg = (ID: string, over: Partial<ServiceRegistrationInput> = {}): ServiceRegistrationInput => ({
  ID, ServiceName: 'web', Namespace: 'default', NodeID: 'n', Datacenter: 'dc1', JobID: 'j', AllocID: 'a1', Tags: [], Address: '127.0.0.1', Port: 80, ...over,
});
const get = async (path: string) => {
  const res = await call(s.socket, 'GET', path);
  return { status: res.status, text: res.text, body: res.status === 200 ? res.json<any>() : undefined, index: Number(res.headers['x-nomad-index']) };
};
const ids = (list: Json[]) => list.map((r) => r['ID']);

describe('the service reads', { timeout: SUITE_TIMEOUT }, () => {
  beforeAll(() => {
    s.services.sync('a1', 'g', [reg('r-web-1', { Tags: ['b', 'a'] }), reg('r-api-1', { ServiceName: 'api' })]);
    s.services.sync('a2', 'g', [reg('r-web-2', { AllocID: 'a2', Tags: ['c'] })]);
    s.services.sync('a3', 'g', [reg('r-web-t', { AllocID: 'a3', Namespace: 'team', JobID: 'tj' })]);
  });

  it.each([
    ['', ['default']],
    ['?namespace=', ['default']],
    ['?namespace=team', ['team']],
    ['?namespace=*', ['default', 'team']],
  ])('lists service names of the namespace %s asks for', async (query, spaces) => {
    const { body, index } = await get(`/v1/services${query}`);
    expect((body as Json[]).map((n) => n['Namespace'])).toEqual(spaces);
    expect(index).toBe(s.services.index);
  });

  it('refuses a namespace given twice with 400 naming it', async () => {
    const res = await get('/v1/services?namespace=team&namespace=default');
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/^namespace: /);
  });

  it('lists each name once with every tag its registrations carry', async () => {
    const { body } = await get('/v1/services');
    expect(body).toEqual([{ Namespace: 'default', Services: [{ ServiceName: 'api', Tags: [] }, { ServiceName: 'web', Tags: ['a', 'b', 'c'] }] }]);
  });

  it.each([
    ['/v1/service/web', ['r-web-1', 'r-web-2']],
    ['/v1/service/web?namespace=team', ['r-web-t']],
    ['/v1/service/web?namespace=*', ['r-web-1', 'r-web-2', 'r-web-t']],
    ['/v1/service/nothing', []],
  ])('%s answers the registrations of that name and namespace', async (path, expected) => {
    const { status, body, index } = await get(path);
    expect(status).toBe(200);
    expect(ids(body)).toEqual(expected);
    expect(index).toBe(s.services.index);
  });

  it('answers an allocation\'s registrations, 404 "alloc not found" for an unknown one', async () => {
    const alloc = await runJob(s, mockJob('svc'));
    s.services.sync(alloc.ID, 'g', [reg('r-own', { AllocID: alloc.ID, JobID: 'svc' })]);
    const own = await get(`/v1/allocation/${alloc.ID}/services`);
    expect([ids(own.body), own.index]).toEqual([['r-own'], s.services.index]);
    const missing = await get('/v1/allocation/ffffffff-none/services');
    expect([missing.status, missing.text]).toEqual([404, 'alloc not found']);
  });

  it('answers a job\'s registrations in the job\'s namespace, 404 "job not found" for an unknown job', async () => {
    await runJob(s, mockJob('tj', undefined, { Namespace: 'team' }));
    const its = await get('/v1/job/tj/services');
    expect([ids(its.body), its.index]).toEqual([['r-web-t'], s.services.index]);
    const missing = await get('/v1/job/nope/services');
    expect([missing.status, missing.text]).toEqual([404, 'job not found']);
  });

  it.each(['/v1/services', '/v1/service/web', '/v1/job/tj/services', '/v1/allocation/ffffffff-none/services'])(
    'refuses an index that is not a number on %s with 400 naming it',
    async (path) => {
      const res = await get(`${path}?index=soon`);
      expect([res.status, res.text]).toEqual([400, expect.stringMatching(/^index: /)]);
    },
  );

  it('wakes a blocking read when the catalog changes', async () => {
    const { index } = await get('/v1/service/later');
    const waiting = call(s.socket, 'GET', `/v1/service/later?index=${index}&wait=30s`);
    await new Promise((r) => setImmediate(r));
    s.services.sync('a9', 'g', [reg('r-later', { ServiceName: 'later', AllocID: 'a9' })]);
    const res = await waiting;
    expect(ids(res.json())).toEqual(['r-later']);
    expect(Number(res.headers['x-nomad-index'])).toBeGreaterThan(index);
  });
});

describe('deleting a registration', { timeout: SUITE_TIMEOUT }, () => {
  it('by its name and ID removes it, answers null at the catalog\'s new index, and publishes its deregistration', async () => {
    s.services.sync('d1', 'g', [reg('r-del', { ServiceName: 'gone', AllocID: 'd1', JobID: 'dj', Namespace: 'team' })]);
    const res = await call(s.socket, 'DELETE', '/v1/service/gone/r-del');
    expect([res.status, res.text]).toEqual([200, 'null']);
    expect(Number(res.headers['x-nomad-index'])).toBe(s.services.index);
    expect(s.services.get('r-del', '*')).toBeUndefined();
    const batch = batches.find((b) => b.Index === s.services.index)!;
    expect(batch.Events).toEqual([expect.objectContaining({ Topic: 'Service', Type: 'ServiceDeregistration', Key: 'r-del', Namespace: 'team', FilterKeys: ['dj', 'gone'], Index: batch.Index })]);
    expect((batch.Events[0] as Json)['Payload']['Service']).toMatchObject({ ID: 'r-del', ServiceName: 'gone' });
  });

  it('answers 404 for an unknown ID, and for a known one under another name, removing nothing', async () => {
    s.services.sync('d2', 'g', [reg('r-kept', { ServiceName: 'kept', AllocID: 'd2' })]);
    for (const path of ['/v1/service/kept/r-none', '/v1/service/other/r-kept']) {
      const res = await call(s.socket, 'DELETE', path);
      expect([res.status, res.text]).toEqual([404, 'service registration not found']);
    }
    expect(s.services.get('r-kept')).toBeDefined();
  });

  it('publishes a registration as ServiceRegistration, keyed by ID and filterable by job and name', async () => {
    s.services.sync('e1', 'g', [reg('r-new', { ServiceName: 'fresh', AllocID: 'e1', JobID: 'ej' })]);
    const batch = batches.find((b) => b.Index === s.services.index)!;
    expect(batch.Events.map((e) => [e.Topic, e.Type, e.Key, e.Namespace, e.FilterKeys])).toEqual([['Service', 'ServiceRegistration', 'r-new', 'default', ['ej', 'fresh']]]);
  });
});
