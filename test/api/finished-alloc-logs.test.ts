/**
 * A finished allocation's logs after an agent restart: the new agent restores no runner for it, and serves its
 * tasks' logs from the files left in its alloc dir, as Nomad's client serves a terminal allocation's logs until
 * it is collected (`allocrun alloc logs` on a job that ran before the restart). A follow ends at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, freshDir, serve, type Served } from './in-process-agent.ts';

let restarted: Served;
let allocId: string;

beforeAll(async () => {
  const dataDir = freshDir();
  const first = await serve(dataDir);
  const job = { Job: { ID: 'once', Type: 'batch', TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', 'echo out-1; echo out-2; echo err-1 >&2'] } }] }] } };
  expect((await call(first.socket, 'PUT', '/v1/jobs', job)).status).toBe(200);
  const [alloc] = await waitForAllocs(first.socket, '/v1/job/once/allocations', (l) => l.length === 1 && l[0]!.ClientStatus === 'complete');
  allocId = alloc!.ID;
  await first.stop();
  restarted = await serve(dataDir);
  expect(restarted.agent.get(allocId)).toBeUndefined();
}, 120_000);
afterAll(cleanUp);

describe('logs of an allocation that finished before the agent started', () => {
  it.each([
    ['stdout, plain', 'type=stdout&plain=true', 'out-1\nout-2\n'],
    ['stderr, plain', 'type=stderr&plain=true', 'err-1\n'],
    ['stdout, plain, followed: ends at the end', 'type=stdout&plain=true&follow=true', 'out-1\nout-2\n'],
    ['stdout, the last 6 bytes', 'type=stdout&plain=true&origin=end&offset=6', 'out-2\n'],
  ])('%s', async (_name, query, text) => {
    const res = await call(restarted.socket, 'GET', `/v1/client/fs/logs/${allocId}?task=t&${query}`);
    expect([res.status, res.text]).toEqual([200, text]);
  });

  it("in Nomad's frames", async () => {
    const res = await call(restarted.socket, 'GET', `/v1/client/fs/logs/${allocId}?task=t&type=stdout`);
    const frames = res.text.trim().split('\n').map((l) => JSON.parse(l) as { Data: string; File: string });
    expect(Buffer.concat(frames.map((f) => Buffer.from(f.Data, 'base64'))).toString()).toBe('out-1\nout-2\n');
    expect(frames[0]!.File).toBe('alloc/logs/t.stdout.0');
  });
});
