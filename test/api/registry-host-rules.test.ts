/**
 * What the registry takes from the host and tells it (src/api/job-registry.ts), rule by rule, through one
 * served agent in process (mock tasks; each test its own job IDs): a static port the host will not let the
 * agent bind fails each kind of write's placement (register, evaluate, an allocation's stop, a plan) in
 * Nomad's dimension; a plan that replaces an allocation it cannot place counts a destructive update; a stop
 * version is submitted now; each placement is announced on `placed$`; and what the registry could not do is
 * said on the agent's stderr by default.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT, serveWithRoom } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
let held: Server;
let port: number;
const log: string[] = [];
beforeAll(async () => {
  s = await serveWithRoom();
  s.api.registry.log = (line) => log.push(line);
  // A port something else on the host listens on: the agent cannot bind it.
  held = createServer();
  await new Promise<void>((r) => held.listen(0, '0.0.0.0', r));
  port = (held.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((r) => held.close(r));
  await cleanUp();
});

const put = async (path: string, body?: unknown, method = 'PUT') => {
  const res = await call(s.socket, method, path, body);
  expect(res.status, res.text).toBe(200);
  return res.json<Json>();
};
const allocsOf = async (id: string) => (await call(s.socket, 'GET', `/v1/job/${id}/allocations`)).json<Json[]>();
const withStatic = (id: string, value: number) => {
  const body = mockJob(id);
  (body.Job.TaskGroups[0] as Json)['Networks'] = [{ Mode: 'host', ReservedPorts: [{ Label: 'http', Value: value }] }];
  return body;
};
const collision = (value: number) => ({ DimensionExhausted: { [`network: reserved port collision http=${value}`]: 1 } });

describe('a static port the host holds', { timeout: SUITE_TIMEOUT }, () => {
  it('fails a registration\'s placement in Nomad\'s dimension, and says why in the log', async () => {
    const reg = await put('/v1/jobs', withStatic('busy', port));
    expect(await allocsOf('busy')).toEqual([]);
    const evaluation = (await call(s.socket, 'GET', `/v1/evaluation/${reg['EvalID']}`)).json<Json>();
    expect(evaluation['FailedTGAllocs']['g']).toMatchObject(collision(port));
    expect(log.at(-1)).toContain(`static port ${port} (port "http") cannot be bound on the host`);
  });

  it('fails a job evaluation\'s placement too', async () => {
    await put('/v1/jobs', withStatic('busy-eval', port));
    const answer = await put('/v1/job/busy-eval/evaluate', {});
    expect(await allocsOf('busy-eval')).toEqual([]);
    expect((await call(s.socket, 'GET', `/v1/evaluation/${answer['EvalID']}`)).json<Json>()['FailedTGAllocs']['g']).toMatchObject(collision(port));
  });

  it('fails a plan\'s placement, which the plan still counts', async () => {
    const answer = await put('/v1/job/busy-plan/plan', withStatic('busy-plan', port), 'POST');
    expect(answer['FailedTGAllocs']['g']).toMatchObject(collision(port));
    expect(answer['Annotations']['DesiredTGUpdates']['g']).toMatchObject({ Place: 1 });
  });

  it('is not probed for an allocation\'s replacement when it is that allocation\'s own: its stopping task holds it', async () => {
    // A free port, taken by the job, then by the host behind the stopped allocation's back.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '0.0.0.0', r));
    const free = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const alloc = await runJob(s, withStatic('moved', free) as ReturnType<typeof mockJob>);
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(free, '0.0.0.0', r));
    try {
      const stop = await put(`/v1/allocation/${alloc.ID}/stop`);
      const after = await allocsOf('moved');
      expect(after.find((a) => a['ID'] !== alloc.ID)).toMatchObject({ PreviousAllocation: alloc.ID, EvalID: stop['EvalID'] });
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });

  it('is probed for the replacement of a finished allocation, which holds nothing: the stop places none', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '0.0.0.0', r));
    const free = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const body = withStatic('finished', free);
    Object.assign(body.Job, { Type: 'batch' });
    (body.Job.TaskGroups[0]!.Tasks[0] as Json)['Config'] = { run_for: '10ms' };
    await put('/v1/jobs', body);
    const [done] = await waitForAllocs(s.socket, '/v1/job/finished/allocations', (l) => l[0]?.ClientStatus === 'complete');
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(free, '0.0.0.0', r));
    try {
      const stop = await put(`/v1/allocation/${done!.ID}/stop`);
      expect((await allocsOf('finished')).map((a) => a['ID'])).toEqual([done!.ID]);
      expect((await call(s.socket, 'GET', `/v1/evaluation/${stop['EvalID']}`)).json<Json>()['FailedTGAllocs']['g']).toMatchObject(collision(free));
    } finally {
      // Its blocked evaluation goes with it, so nothing is placed once the port frees.
      await put('/v1/job/finished?purge=true', undefined, 'DELETE');
      await new Promise((r) => taken.close(r));
    }
  });
});

describe('a plan', { timeout: SUITE_TIMEOUT }, () => {
  it('that replaces an allocation with one that does not fit counts a destructive update, nothing placed or stopped', async () => {
    const body = (mb: number) => {
      const b = mockJob('outgrown');
      (b.Job.TaskGroups[0]!.Tasks[0] as Json)['Resources'] = { MemoryMB: mb };
      return b;
    };
    await runJob(s, body(16));
    const reg = s.api.registry;
    const room = reg.capacity;
    reg.capacity = { cpu: 0, cores: 64, memoryMB: 100 };
    try {
      const answer = await put('/v1/job/outgrown/plan', body(200), 'POST');
      expect(answer['Annotations']['DesiredTGUpdates']['g']).toMatchObject({ Place: 0, Stop: 0, DestructiveUpdate: 1, Ignore: 0 });
      expect(answer['FailedTGAllocs']['g']).toMatchObject({ DimensionExhausted: { memory: 1 } });
    } finally {
      reg.capacity = room;
    }
  });
});

describe('a stopped job\'s version', { timeout: SUITE_TIMEOUT }, () => {
  it('is submitted when the job is stopped', async () => {
    await runJob(s, mockJob('stamped'));
    const before = Date.now();
    await call(s.socket, 'DELETE', '/v1/job/stamped');
    const after = Date.now();
    const [stopped, first] = (await call(s.socket, 'GET', '/v1/job/stamped/versions')).json<Json>()['Versions'] as Json[];
    expect(stopped!['SubmitTime']).toBeGreaterThanOrEqual(before * 1e6);
    expect(stopped!['SubmitTime']).toBeLessThanOrEqual(after * 1e6);
    expect(first!['SubmitTime']).toBeLessThan(before * 1e6 + 1);
  });
});

describe('placements', { timeout: SUITE_TIMEOUT }, () => {
  it('are announced on placed$ with the allocation\'s spec and its runner, as each starts', async () => {
    const seen: { id: string; runner: unknown }[] = [];
    const sub = s.api.registry.placed$.subscribe(({ spec, runner }) => seen.push({ id: spec.id, runner }));
    try {
      const alloc = await runJob(s, mockJob('announced'));
      expect(seen.map((p) => p.id)).toEqual([alloc.ID]);
      expect(seen[0]!.runner).toBe(s.agent.get(alloc.ID));
    } finally {
      sub.unsubscribe();
    }
  });
});

describe('what the registry could not do', { timeout: SUITE_TIMEOUT }, () => {
  it('is said on the agent\'s stderr unless it is given a log', async () => {
    const other = await serve();
    const lines: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (lines.push(String(chunk)), true));
    const run = vi.spyOn(other.agent, 'run').mockImplementationOnce(() => {
      throw new Error('no runner today');
    });
    try {
      expect((await call(other.socket, 'PUT', '/v1/jobs', mockJob('unlogged'))).status).toBe(200);
      expect(lines.filter((l) => l.includes('no runner today'))).toEqual([expect.stringMatching(/^allocrun agent: allocation [0-9a-f-]{36} \(job "unlogged"\) could not be started: no runner today\n$/)]);
    } finally {
      run.mockRestore();
      write.mockRestore();
    }
  });
});
