/**
 * What the allocation, evaluation and ACL token routes refuse before they act, through a served agent in
 * process: each query and path parameter is checked by its schema, with a 400 naming it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, SUITE_TIMEOUT } from './in-process-agent.ts';

afterEach(cleanUp);

describe('reads check their input', { timeout: SUITE_TIMEOUT }, () => {
  it('refuses a wait Go would not parse on every blocking read of allocations and evaluations, naming wait', async () => {
    const s = await serve();
    const alloc = await runJob(s, mockJob('web'));
    const evalId = (await call(s.socket, 'GET', '/v1/evaluations')).json<{ ID: string }[]>()[0]!.ID;
    for (const path of ['/v1/allocations', `/v1/allocation/${alloc.ID}`, '/v1/evaluations', `/v1/evaluation/${evalId}`, '/v1/job/web/evaluations']) {
      const res = await call(s.socket, 'GET', `${path}?index=1&wait=soon`);
      expect([path, res.status, res.text]).toEqual([path, 400, expect.stringContaining('wait')]);
    }
  });

  it('refuses an empty ID in the path with 400 rather than looking it up', async () => {
    const s = await serve();
    for (const [method, path] of [['GET', '/v1/evaluation//allocations'], ['PUT', '/v1/allocation//stop'], ['GET', '/v1/acl/token/'], ['DELETE', '/v1/acl/token/']] as const) {
      const res = await call(s.socket, method, path);
      expect([method, path, res.status]).toEqual([method, path, 400]);
    }
  });

  it('refuses the tokens list\'s prefix given twice, naming prefix', async () => {
    const s = await serve();
    const res = await call(s.socket, 'GET', '/v1/acl/tokens?prefix=a&prefix=b');
    expect([res.status, res.text]).toEqual([400, expect.stringContaining('prefix')]);
  });
});
