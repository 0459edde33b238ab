/**
 * What each API route changes, answers and refuses, named after the rule, through the agent's HTTP API
 * only (one real `allocrun agent` for the file, real processes for the tasks): nothing here knows how the
 * agent keeps its state, so these rules hold whatever store it uses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startAgent, stream, waitForAllocs, type Alloc, type AgentProcess } from './agent-process.ts';

/** Sleeps in short steps so the shell runs its traps promptly. */
const IDLE = 'while true; do sleep 0.1; done';

interface TaskOpts {
  script?: string;
  killTimeoutNs?: number;
  lifecycle?: { Hook: string; Sidecar?: boolean };
}

/** A Nomad API job of one group `g` whose tasks run under /bin/sh. */
function apiJob(id: string, tasks: Record<string, TaskOpts>, type = 'service') {
  return {
    Job: {
      ID: id, Name: id, Type: type,
      TaskGroups: [{
        Name: 'g', Count: 1,
        Tasks: Object.entries(tasks).map(([name, t]) => ({
          Name: name, Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', t.script ?? IDLE] }, KillTimeout: t.killTimeoutNs ?? 1e9,
          ...(t.lifecycle && { Lifecycle: t.lifecycle }),
        })),
      }],
    },
  };
}

let agent: AgentProcess;
beforeAll(async () => {
  agent = await startAgent({ http: true });
}, 60_000);
afterAll(async () => {
  await agent?.stop();
}, 60_000);

const allRunning = (job: string, tasks: string[]) => (l: Alloc[]) => l.some((a) => a.JobID === job && a.DesiredStatus === 'run' && tasks.every((t) => a.TaskStates[t]?.State === 'running'));
const types = (a: Alloc, task: string) => a.TaskStates[task]!.Events.map((e) => e.Type);
const count = (xs: string[], x: string) => xs.filter((y) => y === x).length;

/** Registers `job` and waits until every task named runs. */
async function runJob(body: ReturnType<typeof apiJob>): Promise<Alloc> {
  const res = await call(agent.socket, 'PUT', '/v1/jobs', body);
  expect(res.status, res.text).toBe(200);
  const tasks = body.Job.TaskGroups[0]!.Tasks.filter((t) => !t.Lifecycle).map((t) => t.Name);
  const [alloc] = await waitForAllocs(agent.socket, `/v1/job/${body.Job.ID}/allocations`, allRunning(body.Job.ID, tasks));
  return alloc!;
}

describe('the agent token over TCP', { timeout: 30_000 }, () => {
  it.each([
    ['no token', undefined],
    ['the empty string', ''],
    ['a prefix of the token', 'PREFIX'],
    ['the token with one more character', 'LONGER'],
    ['the token in upper case', 'UPPER'],
    ['the token with its last character changed', 'CHANGED'],
  ])('refuses %s with 403 Permission denied', async (_what, kind) => {
    const { host, port, token } = agent.tcp!;
    expect(token).toMatch(/[a-f]/); // upper case differs from it
    const given = kind === undefined ? undefined : { '': '', PREFIX: token.slice(0, -1), LONGER: `${token}0`, UPPER: token.toUpperCase(), CHANGED: `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}` }[kind];
    const res = await call({ host, port, ...(given !== undefined && { token: given }) }, 'GET', '/v1/jobs');
    expect([res.status, res.text]).toEqual([403, 'Permission denied']);
  });

  it('serves exactly the token, on every route (an unknown one answers 404, not 403)', async () => {
    const { host, port, token } = agent.tcp!;
    expect((await call({ host, port, token }, 'GET', '/v1/jobs')).status).toBe(200);
    expect((await call({ host, port, token }, 'GET', '/v1/no/such/route')).status).toBe(404);
    expect((await call({ host, port }, 'GET', '/v1/no/such/route')).status).toBe(403);
  });

  it('asks nothing of a client of the unix socket (the socket file is private to the agent user)', async () => {
    expect((await call(agent.socket, 'GET', '/v1/jobs')).status).toBe(200);
  });
});

describe('POST /v1/client/allocation/:id/restart', { timeout: 60_000 }, () => {
  it('with TaskName restarts that task only; its siblings keep running untouched', async () => {
    const alloc = await runJob(apiJob('restart-one', { a: {}, b: {} }));
    const res = await call(agent.socket, 'POST', `/v1/client/allocation/${alloc.ID}/restart`, { TaskName: 'a' });
    expect([res.status, res.json()]).toEqual([200, {}]);
    const [after] = await waitForAllocs(agent.socket, '/v1/job/restart-one/allocations', (l) => l[0]!.TaskStates.a!.Restarts === 1 && l[0]!.TaskStates.a!.State === 'running');
    expect(count(types(after!, 'a'), 'Started')).toBe(2);
    expect(after!.TaskStates.b).toMatchObject({ State: 'running', Restarts: 0 });
    expect(types(after!, 'b')).not.toContain('Restart Signaled');
    expect(count(types(after!, 'b'), 'Started')).toBe(1);
  });

  it('without a task restarts every running task', async () => {
    const alloc = await runJob(apiJob('restart-all', { a: {}, b: {} }));
    expect((await call(agent.socket, 'POST', `/v1/client/allocation/${alloc.ID}/restart`, {})).status).toBe(200);
    const [after] = await waitForAllocs(agent.socket, '/v1/job/restart-all/allocations', (l) => ['a', 'b'].every((t) => l[0]!.TaskStates[t]!.Restarts === 1 && l[0]!.TaskStates[t]!.State === 'running'));
    for (const t of ['a', 'b']) expect(count(types(after!, t), 'Started')).toBe(2);
  });

  it('answers 404 for a task the allocation does not have, 404 for an unknown allocation, and restarts nothing', async () => {
    const alloc = await runJob(apiJob('restart-one', { a: {}, b: {} }));
    const noTask = await call(agent.socket, 'POST', `/v1/client/allocation/${alloc.ID}/restart`, { TaskName: 'c' });
    expect([noTask.status, noTask.text]).toEqual([404, expect.stringContaining('task "c"')]);
    expect((await call(agent.socket, 'POST', '/v1/client/allocation/00000000-no-such/restart', {})).status).toBe(404);
  });

  it('answers 400 with the runner\'s refusal for an allocation whose tasks have finished', async () => {
    const res = await call(agent.socket, 'PUT', '/v1/jobs', apiJob('finished', { t: { script: 'exit 0' } }, 'batch'));
    expect(res.status).toBe(200);
    const [done] = await waitForAllocs(agent.socket, '/v1/job/finished/allocations', (l) => l[0]?.ClientStatus === 'complete');
    const refused = await call(agent.socket, 'POST', `/v1/client/allocation/${done!.ID}/restart`, { TaskName: 't' });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/not running/);
  });
});

describe('an in-place job update', { timeout: 60_000 }, () => {
  it('reaches the running allocation: the new kill timeout is the one its stop uses', async () => {
    const first = await runJob(apiJob('inplace', { t: { killTimeoutNs: 1e9 } }));
    const update = await call(agent.socket, 'PUT', '/v1/jobs', apiJob('inplace', { t: { killTimeoutNs: 3e9 } }));
    expect(update.status).toBe(200);
    const [same] = await waitForAllocs(agent.socket, '/v1/job/inplace/allocations', (l) => l.length === 1 && l[0]!.JobVersion === 1);
    expect(same!.ID).toBe(first.ID);
    expect((await call(agent.socket, 'POST', `/v1/allocation/${first.ID}/stop`)).status).toBe(200);
    const after = await waitForAllocs(agent.socket, '/v1/job/inplace/allocations', (l) => l.some((a) => a.ID === first.ID && a.ClientStatus === 'complete'));
    const killing = after.find((a) => a.ID === first.ID)!.TaskStates.t!.Events.find((e) => e.Type === 'Killing') as unknown as { KillTimeout: number };
    expect(killing.KillTimeout).toBe(3e9);
  });
});

describe('task event times', { timeout: 60_000 }, () => {
  it('are nanoseconds since the epoch, between the request and the answer read back', async () => {
    const before = Date.now();
    const alloc = await runJob(apiJob('times', { t: {} }));
    const after = Date.now();
    const full = (await call(agent.socket, 'GET', `/v1/allocation/${alloc.ID}`)).json();
    const events = full.TaskStates.t.Events as { Type: string; Time: number }[];
    expect(events.length).toBeGreaterThan(1);
    for (const e of events) {
      expect(Number.isInteger(e.Time)).toBe(true);
      expect(e.Time).toBeGreaterThanOrEqual(before * 1e6);
      expect(e.Time).toBeLessThanOrEqual(after * 1e6);
    }
    const startedAt = Date.parse(full.TaskStates.t.StartedAt);
    expect(startedAt).toBeGreaterThanOrEqual(before);
    expect(startedAt).toBeLessThanOrEqual(after);
    expect(full.CreateTime).toBeGreaterThanOrEqual(before * 1e6);
  });
});

describe('GET /v1/event/stream', { timeout: 60_000 }, () => {
  it('resumed from the index of the last batch a client has, sends the batches after it and not that one again', async () => {
    const live = await stream(agent.socket, '/v1/event/stream?topic=Job:resume&topic=Allocation:resume');
    const reg = (await call(agent.socket, 'PUT', '/v1/jobs', apiJob('resume', { t: {} }))).json();
    const text = await live.until((t) => /"ClientStatus":"running"/.test(t));
    live.close();
    const batches = text.trim().split('\n').map((l) => JSON.parse(l) as { Index?: number; Events?: unknown[] }).filter((b) => b.Events);
    expect(batches.length).toBeGreaterThan(1);
    expect(batches[0]!.Index).toBe(reg.JobModifyIndex);
    const had = batches[0]!.Index!;
    const resumed = await stream(agent.socket, `/v1/event/stream?topic=Job:resume&topic=Allocation:resume&index=${had}`);
    const again = await resumed.until((t) => t.includes(`"Index":${batches[1]!.Index}`));
    resumed.close();
    const first = again.trim().split('\n').map((l) => JSON.parse(l) as { Index?: number }).find((b) => b.Index !== undefined)!;
    expect(first.Index).toBe(batches[1]!.Index);
  });

  it("names each change as Nomad does: JobRegistered, PlanResult, AllocationUpdated, AllocationUpdateDesiredStatus, JobDeregistered, with Job and Allocation payloads", async () => {
    const events = await stream(agent.socket, '/v1/event/stream?topic=Job:named&topic=Allocation:named');
    await runJob(apiJob('named', { t: {} }));
    const [alloc] = await waitForAllocs(agent.socket, '/v1/job/named/allocations', (l) => l.length === 1);
    expect((await call(agent.socket, 'POST', `/v1/allocation/${alloc!.ID}/stop`)).status).toBe(200);
    await waitForAllocs(agent.socket, '/v1/job/named/allocations', (l) => l.length === 2 && l.some((a) => a.ID !== alloc!.ID && a.ClientStatus === 'running'));
    expect((await call(agent.socket, 'DELETE', '/v1/job/named')).status).toBe(200);
    const text = await events.until((t) => t.includes('"JobDeregistered"'));
    events.close();
    type Ev = { Topic: string; Type: string; Key: string; Index: number; Payload: { Job?: { ID: string }; Allocation?: { ID: string; JobID: string } } };
    const all = text.trim().split('\n').map((l) => JSON.parse(l) as { Index?: number; Events?: Ev[] }).flatMap((b) => (b.Events ?? []).map((e) => ({ ...e, batch: b.Index })));
    const typesSeen = new Set(all.map((e) => `${e.Topic}:${e.Type}`));
    for (const t of ['Job:JobRegistered', 'Allocation:PlanResult', 'Allocation:AllocationUpdated', 'Allocation:AllocationUpdateDesiredStatus', 'Job:JobDeregistered']) expect(typesSeen).toContain(t);
    for (const e of all) {
      expect(e.Index).toBe(e.batch);
      if (e.Topic === 'Job') expect([e.Key, e.Payload.Job?.ID]).toEqual(['named', 'named']);
      else expect([e.Key, e.Payload.Allocation?.JobID]).toEqual([e.Payload.Allocation?.ID, 'named']);
    }
    expect(all.find((e) => e.Type === 'AllocationUpdateDesiredStatus')!.Key).toBe(alloc!.ID);
  });

  it('answers 400 for a topic the agent does not publish', async () => {
    const res = await call(agent.socket, 'GET', '/v1/event/stream?topic=ACLToken');
    expect([res.status, res.text]).toEqual([400, expect.stringContaining('unknown topic "ACLToken"')]);
  });
});

describe('job routes', { timeout: 60_000 }, () => {
  it('PUT /v1/job/:id refuses a body whose Job.ID is another job, with 400, and registers nothing', async () => {
    const res = await call(agent.socket, 'PUT', '/v1/job/one', apiJob('two', { t: {} }));
    expect([res.status, res.text]).toEqual([400, expect.stringContaining('Job ID does not match')]);
    expect((await call(agent.socket, 'GET', '/v1/job/two')).status).toBe(404);
    expect((await call(agent.socket, 'GET', '/v1/job/one')).status).toBe(404);
  });

  it('registration with EnforceIndex applies only at the current JobModifyIndex', async () => {
    const first = (await call(agent.socket, 'PUT', '/v1/jobs', apiJob('enforce', { t: {} }))).json();
    const stale = await call(agent.socket, 'PUT', '/v1/jobs', { ...apiJob('enforce', { t: { killTimeoutNs: 2e9 } }), EnforceIndex: true, JobModifyIndex: first.JobModifyIndex - 1 });
    expect([stale.status, stale.text]).toEqual([400, expect.stringContaining('conflicting job modify index')]);
    expect((await call(agent.socket, 'GET', '/v1/job/enforce')).json().Version).toBe(0);
    const current = await call(agent.socket, 'PUT', '/v1/jobs', { ...apiJob('enforce', { t: { killTimeoutNs: 2e9 } }), EnforceIndex: true, JobModifyIndex: first.JobModifyIndex });
    expect(current.status).toBe(200);
    expect((await call(agent.socket, 'GET', '/v1/job/enforce')).json().Version).toBe(1);
    const fresh = await call(agent.socket, 'PUT', '/v1/jobs', { ...apiJob('enforce-new', { t: {} }), EnforceIndex: true, JobModifyIndex: 5 });
    expect([fresh.status, fresh.text]).toEqual([400, expect.stringContaining('does not exist')]);
  });

  it('registering answers Nomad\'s fields, and an unchanged job keeps its version and index', async () => {
    const first = await call(agent.socket, 'PUT', '/v1/jobs', apiJob('fields', { t: {} }));
    expect(first.json()).toMatchObject({ EvalID: expect.any(String), JobModifyIndex: expect.any(Number), Warnings: '', Index: expect.any(Number), KnownLeader: true, LastContact: 0 });
    const again = (await call(agent.socket, 'PUT', '/v1/jobs', apiJob('fields', { t: {} }))).json();
    expect(again).toMatchObject({ EvalID: '', JobModifyIndex: first.json().JobModifyIndex });
    expect((await call(agent.socket, 'GET', '/v1/job/fields')).json().Version).toBe(0);
  });

  it('PUT /v1/validate/job answers 200 with the problems of an invalid job, and with none for a valid one', async () => {
    const bad = apiJob('v', { t: {} });
    Object.assign(bad.Job.TaskGroups[0]!.Tasks[0]!, { Driver: '' });
    const invalid = await call(agent.socket, 'PUT', '/v1/validate/job', bad);
    expect(invalid.status).toBe(200);
    expect(invalid.json()).toMatchObject({ DriverConfigValidated: false, ValidationErrors: [expect.stringContaining('driver')] });
    const valid = (await call(agent.socket, 'PUT', '/v1/validate/job', apiJob('v', { t: {} }))).json();
    expect(valid).toMatchObject({ ValidationErrors: [], Error: '' });
    expect((await call(agent.socket, 'GET', '/v1/job/v')).status).toBe(404);
  });

  it('DELETE /v1/job/:id stops the job but keeps it readable; ?purge forgets it', async () => {
    await runJob(apiJob('del', { t: {} }));
    expect((await call(agent.socket, 'DELETE', '/v1/job/del')).status).toBe(200);
    await waitForAllocs(agent.socket, '/v1/job/del/allocations', (l) => l.every((a) => a.DesiredStatus === 'stop' && a.ClientStatus === 'complete'));
    expect((await call(agent.socket, 'GET', '/v1/job/del')).json()).toMatchObject({ Stop: true, Status: 'dead' });
    expect((await call(agent.socket, 'DELETE', '/v1/job/del?purge=true')).status).toBe(200);
    expect((await call(agent.socket, 'GET', '/v1/job/del')).status).toBe(404);
  });

  it("a job's Status and Summary follow its allocations: complete and failed runs are counted per group, and the job is dead once all are done", async () => {
    const failing = apiJob('fails', { t: { script: 'exit 3' } }, 'batch');
    Object.assign(failing.Job.TaskGroups[0]!, { RestartPolicy: { Attempts: 0, Interval: 60e9, Delay: 0, Mode: 'fail' } });
    for (const body of [apiJob('succeeds', { t: { script: 'exit 0' } }, 'batch'), failing]) expect((await call(agent.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    await waitForAllocs(agent.socket, '/v1/job/succeeds/allocations', (l) => l[0]?.ClientStatus === 'complete');
    await waitForAllocs(agent.socket, '/v1/job/fails/allocations', (l) => l[0]?.ClientStatus === 'failed');
    const zero = { Queued: 0, Starting: 0, Running: 0, Complete: 0, Failed: 0, Lost: 0, Unknown: 0 };
    expect((await call(agent.socket, 'GET', '/v1/job/succeeds/summary')).json()).toMatchObject({ JobID: 'succeeds', Summary: { g: { ...zero, Complete: 1 } } });
    expect((await call(agent.socket, 'GET', '/v1/job/fails/summary')).json()).toMatchObject({ JobID: 'fails', Summary: { g: { ...zero, Failed: 1 } } });
    expect((await call(agent.socket, 'GET', '/v1/job/succeeds')).json()).toMatchObject({ Status: 'dead', Stop: false });
    const stubs = (await call(agent.socket, 'GET', '/v1/jobs?prefix=fails')).json() as { ID: string; Status: string; JobSummary: { Summary: Record<string, { Failed: number }> } }[];
    expect(stubs).toMatchObject([{ ID: 'fails', Status: 'dead', Type: 'batch', JobSummary: { Summary: { g: { Failed: 1 } } } }]);
  });

  it('GET /v1/jobs?prefix= lists only the jobs whose ID starts with it', async () => {
    const list = (await call(agent.socket, 'GET', '/v1/jobs?prefix=restart-')).json() as { ID: string }[];
    expect(list.map((j) => j.ID).sort()).toEqual(['restart-all', 'restart-one']);
  });
});

describe('allocation routes', { timeout: 60_000 }, () => {
  it('find an allocation by a unique prefix of its ID, in the list and by itself', async () => {
    const alloc = await runJob(apiJob('prefix', { t: {} }));
    const prefix = alloc.ID.slice(0, 8);
    const list = (await call(agent.socket, 'GET', `/v1/allocations?prefix=${prefix}`)).json() as Alloc[];
    expect(list.map((a) => a.ID)).toEqual([alloc.ID]);
    expect((await call(agent.socket, 'GET', `/v1/allocation/${prefix}`)).json()).toMatchObject({ ID: alloc.ID, JobID: 'prefix' });
  });

  it('GET answers with X-Nomad-Index, and a blocking query at that index waits for a change', async () => {
    const alloc = await runJob(apiJob('prefix', { t: {} }));
    const head = await call(agent.socket, 'GET', `/v1/allocation/${alloc.ID}`);
    const index = Number(head.headers['x-nomad-index']);
    expect(index).toBeGreaterThan(0);
    expect(head.headers['x-nomad-knownleader']).toBe('true');
    const waiting = call(agent.socket, 'GET', `/v1/allocation/${alloc.ID}?index=${index}&wait=30s`);
    expect((await call(agent.socket, 'POST', `/v1/client/allocation/${alloc.ID}/signal`, { Signal: 'SIGWINCH', Task: 't' })).status).toBe(200);
    const moved = await waiting;
    expect(Number(moved.headers['x-nomad-index'])).toBeGreaterThan(index);
  });

  it('the agent and status routes answer what Nomad clients probe for', async () => {
    const self = (await call(agent.socket, 'GET', '/v1/agent/self')).json();
    expect(self).toMatchObject({ config: { Region: 'global', Datacenter: 'dc1', DataDir: agent.dataDir, Client: { Enabled: true }, Server: { Enabled: true } }, member: { Status: 'alive' } });
    const leader = (await call(agent.socket, 'GET', '/v1/status/leader')).json() as string;
    expect((await call(agent.socket, 'GET', '/v1/status/peers')).json()).toEqual([leader]);
    expect((await call(agent.socket, 'GET', '/v1/regions')).json()).toEqual(['global']);
  });

  it('an unknown path answers 404 naming the method and path', async () => {
    const res = await call(agent.socket, 'GET', '/v1/allocationz?x=1');
    expect([res.status, res.text]).toEqual([404, 'Invalid URL: GET /v1/allocationz']);
  });
});
