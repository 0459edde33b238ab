/**
 * What the service routes (src/api/routes/services.ts) check before they act, and the Service topic's publisher,
 * each through an agent served inside the test: every route's path and query schema (an empty name, ID or job
 * ID, a negative index, a wait that is not a duration: 400 naming the field, never a lookup of the empty string
 * or a read that blocks), and the catalog's changes published while the API serves and not after it closed.
 *
 * Served per test on purpose: the routes' schemas and the publisher are built when the API starts, and Stryker's
 * per-test coverage only counts what runs inside a test; the shared agent of route-services-rules starts in
 * beforeAll, so its tests never count as covering them (docs/testing.md, "Code that runs in beforeAll").
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventBatch } from '../../src/api/event-broker.ts';
import type { ServiceRegistrationInput } from '../../src/services/service-registration.ts';
import { recordPublishedBatches } from './published-batches.ts';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, serve, SUITE_TIMEOUT } from './in-process-agent.ts';

afterEach(async () => {
  vi.restoreAllMocks();
  await cleanUp();
});

const reg = (ID: string): ServiceRegistrationInput => ({
  ID, ServiceName: 'web', Namespace: 'default', NodeID: 'n', Datacenter: 'dc1', JobID: 'j', AllocID: 'a1', Tags: [], Address: '127.0.0.1', Port: 80,
});

describe('the service routes check their input', { timeout: SUITE_TIMEOUT }, () => {
  it('refuse an empty name, ID or job ID, a negative index and a wait that is not a duration, with 400 naming the field', async () => {
    const s = await serve();
    s.services.sync('a1', 'g', [reg('r-web-1')]);
    expect((await call(s.socket, 'PUT', '/v1/jobs', mockJob('j'))).status).toBe(200);
    const refusals: [string, string, RegExp][] = [
      ['GET', '/v1/services?index=-1', /^index: /],
      ['GET', '/v1/services?wait=soon', /^wait: /],
      ['GET', '/v1/service/', /^name: /],
      ['GET', '/v1/service/web?index=-1', /^index: /],
      ['GET', '/v1/service/web?wait=soon', /^wait: /],
      ['DELETE', '/v1/service/web/', /^id: /],
      ['DELETE', '/v1/service//r-web-1', /^name: /],
      ['GET', '/v1/job//services', /^id: /],
      ['GET', '/v1/job/j/services?index=-1', /^index: /],
      ['GET', '/v1/job/j/services?wait=soon', /^wait: /],
      ['GET', '/v1/allocation//services', /^id: /],
      ['GET', '/v1/allocation/ffffffff-none/services?index=-1', /^index: /],
    ];
    for (const [method, path, message] of refusals) {
      const res = await call(s.socket, method, path);
      expect([method, path, res.status, res.text]).toEqual([method, path, 400, expect.stringMatching(message)]);
    }
    // Nothing was removed by the refused deletes.
    expect(s.services.get('r-web-1', '*')).toBeDefined();
  });
});

describe('the Service topic', { timeout: SUITE_TIMEOUT }, () => {
  it('carries the catalog\'s changes while the API serves, and none after it closed', async () => {
    const batches: EventBatch[] = [];
    recordPublishedBatches(batches);
    const s = await serve();
    s.services.sync('a1', 'g', [reg('r-live')]);
    expect(batches.flatMap((b) => b.Events).filter((e) => e.Topic === 'Service').map((e) => [e.Type, e.Key])).toEqual([['ServiceRegistration', 'r-live']]);
    await s.api.close();
    const before = batches.length;
    s.services.sync('a1', 'g', []);
    expect(batches.length).toBe(before);
  });
});
