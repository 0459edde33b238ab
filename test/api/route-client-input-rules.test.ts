/**
 * What the client routes (src/api/routes/client.ts) refuse before they act, through a served agent in
 * process: an empty allocation ID in the path is a 400, never the empty prefix that matches any allocation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, SUITE_TIMEOUT } from './in-process-agent.ts';

afterEach(cleanUp);

describe('client routes check their input', { timeout: SUITE_TIMEOUT }, () => {
  it('refuses an empty allocation ID with 400 on stats, restart and signal, even with an allocation running', async () => {
    const s = await serve();
    await runJob(s, mockJob('web'));
    for (const [method, path] of [['GET', '/v1/client/allocation//stats'], ['POST', '/v1/client/allocation//restart'], ['POST', '/v1/client/allocation//signal']] as const) {
      const res = await call(s.socket, method, path, method === 'POST' ? {} : undefined);
      expect([method, path, res.status]).toEqual([method, path, 400]);
    }
  });
});
