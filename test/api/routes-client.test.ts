/**
 * The client routes of one allocation, by rule, through the agent's HTTP API (one real `allocrun agent`,
 * real processes): a signal reaches the task it names and only it (or every running task when none is
 * named); logs read from the start or the end at an offset, framed as Nomad frames them or plain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startAgent, stream, waitForAllocs, type Alloc, type AgentProcess } from './agent-process.ts';

/** Each task says ready, then writes `<its name>:<signal>` for each USR1 or USR2 it gets. */
const POKEABLE = (name: string) => `trap 'echo ${name}:usr1' USR1; trap 'echo ${name}:usr2' USR2; echo ready; while true; do sleep 0.05; done`;

function apiJob(id: string, tasks: Record<string, string>) {
  return {
    Job: {
      ID: id, Name: id, Type: 'service',
      TaskGroups: [{ Name: 'g', Count: 1, Tasks: Object.entries(tasks).map(([name, script]) => ({ Name: name, Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', script] }, KillTimeout: 1e9 })) }],
    },
  };
}

let agent: AgentProcess;
let alloc: Alloc;
beforeAll(async () => {
  agent = await startAgent();
  expect((await call(agent.socket, 'PUT', '/v1/jobs', apiJob('pokes', { a: POKEABLE('a'), b: POKEABLE('b') }))).status).toBe(200);
  [alloc] = (await waitForAllocs(agent.socket, '/v1/job/pokes/allocations', (l) => l.some((x) => ['a', 'b'].every((t) => x.TaskStates[t]?.State === 'running')))) as [Alloc];
}, 60_000);
afterAll(async () => {
  await agent?.stop();
}, 60_000);

/** Follows a task's stdout (plain) until `text` appears in it; resolves with everything read. */
async function logUntil(task: string, test: (text: string) => boolean): Promise<string> {
  const logs = await stream(agent.socket, `/v1/client/fs/logs/${alloc.ID}?task=${task}&type=stdout&follow=true&plain=true`);
  try {
    return await logs.until(test);
  } finally {
    logs.close();
  }
}

const plainLog = async (task: string, query = '') => (await call(agent.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=${task}&type=stdout&plain=true${query}`)).text;

describe('POST /v1/client/allocation/:id/signal', { timeout: 60_000 }, () => {
  it('with Task signals that task only', async () => {
    await logUntil('a', (t) => t.includes('ready'));
    await logUntil('b', (t) => t.includes('ready'));
    const res = await call(agent.socket, 'POST', `/v1/client/allocation/${alloc.ID}/signal`, { Signal: 'SIGUSR1', Task: 'a' });
    expect([res.status, res.json()]).toEqual([200, {}]);
    await logUntil('a', (t) => t.includes('a:usr1'));
    // b's events say whether it was signalled: a Signaling event is recorded before the signal goes out.
    const now = (await call(agent.socket, 'GET', `/v1/allocation/${alloc.ID}`)).json() as Alloc;
    expect(now.TaskStates.a!.Events.map((e) => e.Type)).toContain('Signaling');
    expect(now.TaskStates.b!.Events.map((e) => e.Type)).not.toContain('Signaling');
    expect(await plainLog('b')).not.toContain('usr1');
  });

  it('without a Task signals every running task', async () => {
    expect((await call(agent.socket, 'POST', `/v1/client/allocation/${alloc.ID}/signal`, { Signal: 'SIGUSR2' })).status).toBe(200);
    await logUntil('a', (t) => t.includes('a:usr2'));
    await logUntil('b', (t) => t.includes('b:usr2'));
  });

  it('refuses a signal name the system does not have (400) and a task the allocation does not have (404)', async () => {
    const bad = await call(agent.socket, 'POST', `/v1/client/allocation/${alloc.ID}/signal`, { Signal: 'SIGNOPE', Task: 'a' });
    expect([bad.status, bad.text]).toEqual([400, expect.stringContaining('Signal')]);
    const noTask = await call(agent.socket, 'POST', `/v1/client/allocation/${alloc.ID}/signal`, { Signal: 'SIGUSR1', Task: 'z' });
    expect(noTask.status).toBe(404);
  });
});

describe('GET /v1/client/fs/logs/:id', { timeout: 60_000 }, () => {
  it('reads the whole log from the start by default, and skips `offset` bytes with origin=start', async () => {
    const whole = await plainLog('a');
    expect(whole.startsWith('ready\n')).toBe(true);
    expect(await plainLog('a', '&origin=start&offset=6')).toBe(whole.slice(6));
  });

  it('reads the last `offset` bytes with origin=end', async () => {
    const whole = await plainLog('a');
    expect(await plainLog('a', '&origin=end&offset=5')).toBe(whole.slice(-5));
    expect(await plainLog('a', '&origin=end&offset=100000')).toBe(whole);
  });

  it("frames the data as Nomad does: base64 Data, the file's name, and Offset counting the bytes sent", async () => {
    const whole = await plainLog('a');
    const framed = (await call(agent.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=a&type=stdout`)).text;
    const frames = framed.trim().split('\n').map((l) => JSON.parse(l) as { Data: string; File: string; Offset: number });
    expect(frames.map((f) => Buffer.from(f.Data, 'base64').toString()).join('')).toBe(whole);
    expect(frames.every((f) => f.File === 'alloc/logs/a.stdout.0')).toBe(true);
    expect(frames.at(-1)!.Offset).toBe(Buffer.byteLength(whole));
  });

  it('refuses a missing task, an unknown type, and an unknown task', async () => {
    expect((await call(agent.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?type=stdout`)).status).toBe(400);
    expect((await call(agent.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=a&type=stdin`)).status).toBe(400);
    expect((await call(agent.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=z&type=stdout`)).status).toBe(404);
  });
});

describe('GET /v1/client/allocation/:id/stats', { timeout: 60_000 }, () => {
  it("answers the allocation's and each task's usage under Nomad's names", async () => {
    const stats = (await call(agent.socket, 'GET', `/v1/client/allocation/${alloc.ID}/stats`)).json();
    expect(stats).toMatchObject({ ResourceUsage: { MemoryStats: { RSS: expect.any(Number) }, CpuStats: { Percent: expect.any(Number) } }, Timestamp: expect.any(Number) });
    expect((await call(agent.socket, 'GET', '/v1/client/allocation/no-such-alloc/stats')).status).toBe(404);
  });
});
