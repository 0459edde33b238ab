/**
 * Issue 26: the agent's API as Nomad's own clients use it, in process over the agent's socket with a real
 * store: query flags parsed as Go's strconv.ParseBool, Go durations, empty and `null` bodies and fields,
 * canonical jobs (parse with Canonicalize, re-registering what was read back is a no-op), stats sampled from
 * the task's start, and the node (a stable ID in the store, its JSON, its allocations, host stats).
 */
import { cpus, platform, totalmem } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreDamagedError } from '../../src/state/agent-store.ts';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, runJob, running, serve, until, type Served } from './in-process-agent.ts';

afterEach(cleanUp);

/** A task's events as the allocation reports them. */
async function eventsOf(s: Served, allocId: string, task: string): Promise<string[]> {
  const a = (await call(s.socket, 'GET', `/v1/allocation/${allocId}`)).json<{ TaskStates: Record<string, { Events: { Type: string }[] }> }>();
  return a.TaskStates[task]?.Events.map((e) => e.Type) ?? [];
}

/** Runs a two-task job and waits until both tasks have started (an allocation runs once its first task does). */
async function runBoth(s: Served, id: string): Promise<Alloc> {
  const alloc = await runJob(s, mockJob(id, { a: { run_for: '1h' }, b: { run_for: '1h' } }));
  for (const task of ['a', 'b']) await until(() => eventsOf(s, alloc.ID, task), (e) => e.includes('Started'), `task ${task} to start`);
  return alloc;
}

describe('query flags and durations as Go parses them', { timeout: 60_000 }, () => {
  it.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('purge=%s purges the job', async (flag) => {
    const s = await serve();
    await runJob(s, mockJob('p'));
    expect((await call(s.socket, 'DELETE', `/v1/job/p?purge=${flag}`)).status).toBe(200);
    expect((await call(s.socket, 'GET', '/v1/job/p')).status).toBe(404);
  });

  it.each(['0', 'f', 'F', 'FALSE', 'false', 'False', ''])('purge=%s stops the job and keeps it', async (flag) => {
    const s = await serve();
    await runJob(s, mockJob('p'));
    expect((await call(s.socket, 'DELETE', `/v1/job/p?purge=${flag}`)).status).toBe(200);
    const job = await call(s.socket, 'GET', '/v1/job/p');
    expect(job.status).toBe(200);
    expect(job.json().Stop).toBe(true);
  });

  it('refuses a flag Go would not parse, naming it and what it takes', async () => {
    const s = await serve();
    await runJob(s, mockJob('p'));
    const res = await call(s.socket, 'DELETE', '/v1/job/p?purge=yes');
    expect(res.status).toBe(400);
    expect(res.text).toContain('purge: "yes" is not a boolean: use one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False');
    expect((await call(s.socket, 'GET', '/v1/job/p')).json().Stop).toBe(false);
  });

  it('reads logs with follow=False and plain=True', async () => {
    const s = await serve();
    const body = { Job: { ID: 'logs', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', KillTimeout: 1e9, Config: { command: '/bin/sh', args: ['-c', 'echo hello from raw_exec; exec sleep 3600'] } }] }] } };
    expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/logs/allocations', running);
    await until(async () => (await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc!.ID}?task=t&type=stdout&plain=true`)).text, (t) => t.includes('hello'), 'the first line');
    const res = await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc!.ID}?task=t&type=stdout&follow=False&plain=True`);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('hello from raw_exec\n');
  });

  it('takes Go durations for wait (1m30s, 250ms) and refuses others, naming the parameter', async () => {
    const s = await serve();
    await runJob(s, mockJob('w'));
    const index = Number((await call(s.socket, 'GET', '/v1/job/w')).headers['x-nomad-index']);
    const started = Date.now();
    const res = await call(s.socket, 'GET', `/v1/job/w?index=${index}&wait=250ms`);
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect((await call(s.socket, 'GET', '/v1/job/w?wait=1m30s')).status).toBe(200);
    const bad = await call(s.socket, 'GET', '/v1/job/w?index=1&wait=soon');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('wait: "soon" is not a Go duration');
  });
});

describe('empty and null bodies and fields as Nomad treats them', { timeout: 60_000 }, () => {
  it.each([
    ['no body at all', undefined],
    ['an empty body with a JSON content type', ''],
    ['a null body', 'null'],
    ['null fields', '{"TaskName":null,"AllTasks":null}'],
  ])('restart with %s restarts every running task', async (_what, body) => {
    const s = await serve();
    const alloc = await runBoth(s, 'r');
    const headers = body === '' ? { 'content-type': 'application/json' } : undefined;
    const res = await call(s.socket, 'POST', `/v1/client/allocation/${alloc.ID}/restart`, body, headers);
    expect(res.status, res.text).toBe(200);
    for (const task of ['a', 'b']) await until(() => eventsOf(s, alloc.ID, task), (e) => e.includes('Restart Signaled'), `task ${task} restarted`);
  });

  it('signal with "Task": null signals every task', async () => {
    const s = await serve();
    const alloc = await runBoth(s, 'sig');
    const res = await call(s.socket, 'POST', `/v1/client/allocation/${alloc.ID}/signal`, { Signal: 'SIGUSR1', Task: null });
    expect(res.status, res.text).toBe(200);
    for (const task of ['a', 'b']) await until(() => eventsOf(s, alloc.ID, task), (e) => e.includes('Signaling'), `task ${task} signalled`);
  });

  it('matches body field names case-insensitively, as Go decodes them: "taskname" restarts that task alone', async () => {
    const s = await serve();
    const alloc = await runBoth(s, 'ci');
    expect((await call(s.socket, 'POST', `/v1/client/allocation/${alloc.ID}/restart`, { taskname: 'a' })).status).toBe(200);
    await until(() => eventsOf(s, alloc.ID, 'a'), (e) => e.includes('Restart Signaled'), 'task a restarted');
    expect(await eventsOf(s, alloc.ID, 'b')).not.toContain('Restart Signaled');
  });

  it('still refuses a registration without a body, saying what is missing', async () => {
    const s = await serve();
    const res = await call(s.socket, 'PUT', '/v1/jobs');
    expect(res.status).toBe(400);
    expect(res.text).toContain('the request body is empty: expected a JSON object with Job, EnforceIndex, JobModifyIndex');
  });

  it('refuses a registration body without its Job, saying what to send', async () => {
    const s = await serve();
    const res = await call(s.socket, 'PUT', '/v1/jobs', {});
    expect([res.status, res.text]).toEqual([400, expect.stringContaining('Job: missing: send the job as { "Job": { "ID": …, "TaskGroups": [ … ] } }')]);
    expect(res.text).not.toContain('Invalid input');
  });
});

describe('canonical jobs', { timeout: 60_000 }, () => {
  const HCL = 'job "web" {\n  group "g" {\n    task "t" {\n      driver = "mock"\n      config { run_for = "1h" }\n    }\n  }\n}\n';

  it('parse with Canonicalize fills Nomad\'s defaults; without, says only what the file says', async () => {
    const s = await serve();
    const canonical = await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: HCL, Canonicalize: true });
    expect(canonical.status, canonical.text).toBe(200);
    expect(canonical.json()).toMatchObject({
      ID: 'web', Name: 'web', Namespace: 'default', Region: 'global', Priority: 50, Type: 'service', Datacenters: ['*'],
      TaskGroups: [{
        Name: 'g', Count: 1, EphemeralDisk: { SizeMB: 300 }, RestartPolicy: { Attempts: 2, Interval: 30 * 60e9, Delay: 15e9, Mode: 'fail' },
        ReschedulePolicy: { DelayFunction: 'exponential', Unlimited: true },
        Tasks: [{ Name: 't', KillTimeout: 5e9, LogConfig: { MaxFiles: 10, MaxFileSizeMB: 10 }, Resources: { CPU: 100, MemoryMB: 300 }, RestartPolicy: { Attempts: 2 } }],
      }],
    });
    const plain = (await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: HCL })).json();
    for (const k of ['Namespace', 'Region', 'Priority']) expect(plain).not.toHaveProperty(k);
    expect(plain.TaskGroups[0].Tasks[0]).not.toHaveProperty('KillTimeout');
  });

  it('a job read back with GET and registered unchanged is a no-op with no warnings', async () => {
    const s = await serve();
    const first = await runJob(s, mockJob('same', { t: { run_for: '1h' } }, { Meta: { tag: 'a' } }));
    const read = (await call(s.socket, 'GET', '/v1/job/same')).json();
    const again = await call(s.socket, 'PUT', '/v1/jobs', { Job: read });
    expect(again.status, again.text).toBe(200);
    expect(again.json()).toMatchObject({ EvalID: '', Warnings: '', JobModifyIndex: read.JobModifyIndex });
    const versions = (await call(s.socket, 'GET', '/v1/job/same/versions')).json().Versions;
    expect(versions).toHaveLength(1);
    const allocs = (await call(s.socket, 'GET', '/v1/job/same/allocations')).json<Alloc[]>();
    expect(allocs.map((a) => a.ID)).toEqual([first.ID]);
  });

  it('the parsed canonical job registers without warnings, and registering the file\'s job after it is a no-op', async () => {
    const s = await serve();
    const canonical = (await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: HCL, Canonicalize: true })).json();
    const first = await call(s.socket, 'PUT', '/v1/jobs', { Job: canonical });
    expect(first.json()).toMatchObject({ Warnings: '' });
    const plain = (await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: HCL })).json();
    expect((await call(s.socket, 'PUT', '/v1/jobs', { Job: plain })).json()).toMatchObject({ EvalID: '' });
  });

  it('a job with resources read back with GET registers unchanged: Nomad\'s zero Cores and MemoryMaxMB are not asks', async () => {
    const s = await serve();
    const body = mockJob('sized');
    body.Job.TaskGroups[0]!.Tasks[0] = { ...body.Job.TaskGroups[0]!.Tasks[0]!, Resources: { CPU: 200, MemoryMB: 64 } } as never;
    await runJob(s, body);
    const read = (await call(s.socket, 'GET', '/v1/job/sized')).json();
    expect(read.TaskGroups[0].Tasks[0].Resources).toMatchObject({ CPU: 200, Cores: 0, MemoryMB: 64, MemoryMaxMB: 0 });
    const again = await call(s.socket, 'PUT', '/v1/jobs', { Job: read });
    expect([again.status, again.text]).toEqual([200, expect.stringContaining('"EvalID":""')]);
  });

  it('a real change to a job read back makes a new version', async () => {
    const s = await serve();
    await runJob(s, mockJob('chg', { t: { run_for: '1h' } }, { Meta: { tag: 'a' } }));
    const read = (await call(s.socket, 'GET', '/v1/job/chg')).json();
    read.Priority = 70;
    const res = (await call(s.socket, 'PUT', '/v1/jobs', { Job: read })).json();
    expect(res.EvalID).not.toBe('');
    const job = (await call(s.socket, 'GET', '/v1/job/chg')).json();
    expect([job.Version, job.Priority]).toEqual([1, 70]);
  });
});

describe('allocation stats', { timeout: 60_000 }, () => {
  it.skipIf(platform() !== 'linux')('has real figures at the first read of a task that has run a few seconds', async () => {
    const s = await serve();
    const body = {
      Job: {
        ID: 'busy', Type: 'service',
        TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', KillTimeout: 1e9, Config: { command: '/bin/sh', args: ['-c', 'while :; do :; done'] } }] }],
      },
    };
    expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/busy/allocations', running);
    // Wait on the task's start time (not on the stats: reading them must not be what starts sampling).
    const startedAt = Date.parse((alloc!.TaskStates.t as unknown as { StartedAt: string }).StartedAt);
    await until(async () => Date.now(), (now) => now - startedAt >= 2_500, 'the task to have run 2.5 s');
    const stats = (await call(s.socket, 'GET', `/v1/client/allocation/${alloc!.ID}/stats`)).json();
    const t = stats.Tasks.t;
    expect(t, JSON.stringify(stats)).toBeDefined();
    expect(t.ResourceUsage.MemoryStats.RSS).toBeGreaterThan(0);
    expect(t.ResourceUsage.CpuStats.Percent).toBeGreaterThan(10);
    expect(stats.ResourceUsage.MemoryStats.RSS).toBe(t.ResourceUsage.MemoryStats.RSS);
    expect(stats.Timestamp).toBeGreaterThan(startedAt * 1e6);
  });
});

describe('the node', { timeout: 60_000 }, () => {
  it('keeps one node ID in the store, the same after a restart, and every allocation carries it', async () => {
    const dir = freshDir();
    const s = await serve(dir);
    const id = s.store.get('meta', 'nodeId') as string;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const alloc = await runJob(s, mockJob('n'));
    expect((alloc as Alloc & { NodeID: string }).NodeID).toBe(id);
    expect((await call(s.socket, 'GET', `/v1/allocation/${alloc.ID}`)).json().NodeID).toBe(id);
    await s.stop();
    const again = await serve(dir);
    expect(again.store.get('meta', 'nodeId')).toBe(id);
    expect((await call(again.socket, 'GET', '/v1/nodes')).json().map((n: { ID: string }) => n.ID)).toEqual([id]);
  });

  it('refuses a store whose node ID is damaged, naming it, and leaves it as it was', async () => {
    const dir = freshDir();
    await expect(serve(dir, (store) => store.commit((tx) => tx.put('meta', 'nodeId', 'not-a-uuid')))).rejects.toThrow(StoreDamagedError);
    await expect(serve(dir)).rejects.toThrow(/meta\/nodeId: expected the node's UUID, got "not-a-uuid"/);
  });

  it('lists the node (with attributes on ?os=true, by ID prefix) and answers its JSON with host attributes and drivers', async () => {
    const s = await serve();
    const id = s.store.get('meta', 'nodeId') as string;
    const [stub] = (await call(s.socket, 'GET', '/v1/nodes')).json();
    expect(stub).toMatchObject({ ID: id, Status: 'ready', SchedulingEligibility: 'eligible', Datacenter: 'dc1', NodePool: 'default', Drain: false });
    expect(stub).not.toHaveProperty('Attributes');
    const [withOs] = (await call(s.socket, 'GET', '/v1/nodes?os=true')).json();
    expect(withOs.Attributes['kernel.name']).toBe(platform());
    expect((await call(s.socket, 'GET', `/v1/nodes?prefix=${id.slice(0, 4)}`)).json()).toHaveLength(1);
    expect((await call(s.socket, 'GET', `/v1/nodes?prefix=${id.startsWith('f') ? '0' : 'f'}`)).json()).toEqual([]);

    const node = await call(s.socket, 'GET', `/v1/node/${id}`);
    expect(node.status).toBe(200);
    expect(Number(node.headers['x-nomad-index'])).toBeGreaterThan(0);
    const n = node.json();
    expect(n).toMatchObject({ ID: id, Status: 'ready', Attributes: { 'cpu.numcores': String(cpus().length), 'memory.totalbytes': String(totalmem()) } });
    expect(n.NodeResources.Memory.MemoryMB).toBe(Math.floor(totalmem() / 1024 / 1024));
    expect(n.Drivers.mock).toMatchObject({ Detected: true, Healthy: true });
    expect(n.Drivers.raw_exec.Healthy).toBe(platform() === 'linux');
    expect(n.Events[0]).toMatchObject({ Message: 'Node registered', Subsystem: 'Cluster' });
    expect((await call(s.socket, 'GET', '/v1/node/0b7a0c5e-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it("answers the node's allocations in full, and 404 for another node", async () => {
    const s = await serve();
    const id = s.store.get('meta', 'nodeId') as string;
    const alloc = await runJob(s, mockJob('na'));
    const list = (await call(s.socket, 'GET', `/v1/node/${id}/allocations`)).json();
    expect(list.map((a: { ID: string }) => a.ID)).toEqual([alloc.ID]);
    expect(list[0]).toMatchObject({ NodeID: id, Job: { ID: 'na' } });
    expect((await call(s.socket, 'GET', '/v1/node/0b7a0c5e-0000-4000-8000-000000000000/allocations')).status).toBe(404);
  });

  it('answers host stats: memory, each core, the data dir\'s disk', async () => {
    const s = await serve();
    const stats = (await call(s.socket, 'GET', '/v1/client/stats')).json();
    expect(stats.Memory.Total).toBe(totalmem());
    expect(stats.Memory.Used).toBeGreaterThan(0);
    expect(stats.CPU).toHaveLength(cpus().length);
    for (const c of stats.CPU) expect(c.Idle + c.User + c.System).toBeCloseTo(100, 0);
    expect(stats.DiskStats[0].Size).toBeGreaterThan(0);
    expect(stats.Uptime).toBeGreaterThan(0);
    expect((await call(s.socket, 'GET', '/v1/client/stats?node_id=0b7a0c5e-0000-4000-8000-000000000000')).status).toBe(404);
  });
});
