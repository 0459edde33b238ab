/**
 * A finished allocation's logs after an agent restart: the new agent restores no runner for it, and serves its
 * tasks' logs from the files left in its alloc dir, as Nomad's client serves a terminal allocation's logs until
 * it is collected (`allocrun alloc logs` on a job that ran before the restart). A follow ends at the end.
 * The mock driver's output goes to the same files (Nomad's mock goes through logmon like every driver).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/spawn-cli.ts';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, serve, type Served } from './in-process-agent.ts';

let restarted: Served;
let allocId: string;
let mockAllocId: string;
const mockTask = { run_for: '50ms', stdout_string: 'mock-out', stdout_repeat: 2, stdout_repeat_duration: '10ms', stderr_string: 'mock-err' };

beforeAll(async () => {
  const dataDir = freshDir();
  const first = await serve(dataDir);
  const job = { Job: { ID: 'once', Type: 'batch', TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', 'echo out-1; echo out-2; echo err-1 >&2'] } }] }] } };
  expect((await call(first.socket, 'PUT', '/v1/jobs', job)).status).toBe(200);
  const [alloc] = await waitForAllocs(first.socket, '/v1/job/once/allocations', (l) => l.length === 1 && l[0]!.ClientStatus === 'complete');
  allocId = alloc!.ID;
  expect((await call(first.socket, 'PUT', '/v1/jobs', mockJob('mock-once', { m: mockTask }, { Type: 'batch' }))).status).toBe(200);
  const [mockAlloc] = await waitForAllocs(first.socket, '/v1/job/mock-once/allocations', (l) => l.length === 1 && l[0]!.ClientStatus === 'complete');
  mockAllocId = mockAlloc!.ID;
  await first.stop();
  restarted = await serve(dataDir);
  expect(restarted.agent.get(allocId)).toBeUndefined();
  expect(restarted.agent.get(mockAllocId)).toBeUndefined();
}, 120_000);
afterAll(cleanUp);

const mockOut = 'mock-out\nmock-out\nmock-out\n';
/** The finished allocation of each driver and its task, once beforeAll has run them. */
const finished = (driver: 'raw_exec' | 'mock') => (driver === 'raw_exec' ? { id: allocId, task: 't' } : { id: mockAllocId, task: 'm' });

describe('logs of an allocation that finished before the agent started', () => {
  it.each([
    ['raw_exec', 'stdout, plain', 'type=stdout&plain=true', 'out-1\nout-2\n'],
    ['raw_exec', 'stderr, plain', 'type=stderr&plain=true', 'err-1\n'],
    ['raw_exec', 'stdout, plain, followed: ends at the end', 'type=stdout&plain=true&follow=true', 'out-1\nout-2\n'],
    ['raw_exec', 'stdout, the last 6 bytes', 'type=stdout&plain=true&origin=end&offset=6', 'out-2\n'],
    ['mock', 'stdout, plain', 'type=stdout&plain=true', mockOut],
    ['mock', 'stderr, plain', 'type=stderr&plain=true', 'mock-err\n'],
    ['mock', 'stdout, plain, followed: ends at the end', 'type=stdout&plain=true&follow=true', mockOut],
  ] as const)('%s: %s', async (driver, _name, query, text) => {
    const { id, task } = finished(driver);
    const res = await call(restarted.socket, 'GET', `/v1/client/fs/logs/${id}?task=${task}&${query}`);
    expect([res.status, res.text]).toEqual([200, text]);
  });

  it("in Nomad's frames", async () => {
    const res = await call(restarted.socket, 'GET', `/v1/client/fs/logs/${allocId}?task=t&type=stdout`);
    const frames = res.text.trim().split('\n').map((l) => JSON.parse(l) as { Data: string; File: string });
    expect(Buffer.concat(frames.map((f) => Buffer.from(f.Data, 'base64'))).toString()).toBe('out-1\nout-2\n');
    expect(frames[0]!.File).toBe('alloc/logs/t.stdout.0');
  });

  it("a mock task's, through `allocrun alloc logs`", async () => {
    const res = await runCli(['alloc', 'logs', mockAllocId, 'm', '--data-dir', restarted.dataDir], { timeoutMs: 60_000 });
    expect([res.code, res.stdout, res.stderr]).toEqual([0, mockOut, '']);
  }, 60_000);
});
