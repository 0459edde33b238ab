/**
 * The client routes of one allocation (src/api/routes/client.ts), rule by rule, through a served agent in
 * process (mock tasks): restart and signal reach the task named (or every running one), with Nomad's
 * defaults; a refusal is the runner's own words; logs read from either end, framed or plain, followed with
 * heartbeats; stats under Nomad's names.
 */
import { Observable } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Controller, Driver, LogLine } from '../../src/drivers/controller.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import { call, stream, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, until, type Served, SUITE_TIMEOUT } from './in-process-agent.ts';

/**
 * The agent's mock driver, whose tasks' output goes to their log files as raw_exec's does, except that a task
 * named `unreadable` stands for one whose log files are gone: reading its logs fails.
 */
function mockWithUnreadableLogs(): Driver {
  const mock = createMockDriver();
  return {
    name: 'mock',
    controller(task, ctx) {
      const c = mock.controller(task, ctx);
      if (task.name !== 'unreadable') return c;
      const logs = () => new Observable<LogLine>((sub) => sub.error(new Error('log file gone')));
      return new Proxy(c, {
        get(target, prop) {
          if (prop === 'logs') return logs;
          const v = Reflect.get(target, prop, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      }) as Controller;
    },
  };
}

const serveKeepingLogs = (heartbeatMs?: number) => serve(undefined, undefined, { agent: { drivers: { mock: mockWithUnreadableLogs() } }, ...(heartbeatMs !== undefined && { api: { heartbeatMs } }) });

afterEach(async () => {
  vi.restoreAllMocks();
  await cleanUp();
});

type Event = { Type: string; Details?: Record<string, string> };
type Full = { ID: string; TaskStates: Record<string, { State: string; Restarts: number; Events: Event[] }> };
const full = async (s: Served, id: string) => (await call(s.socket, 'GET', `/v1/allocation/${id}`)).json<Full>();
const typesOf = (a: Full, task: string) => a.TaskStates[task]!.Events.map((e) => e.Type);
const twoTasks = () => mockJob('two', { a: { run_for: '1h', stdout_string: 'hello from a' }, b: { run_for: '1h' } });
/** Runs the two-task job and waits until both of its tasks run (the allocation runs as soon as one does). */
async function runTwo(s: Served): Promise<Full> {
  const alloc = await runJob(s, twoTasks());
  return until(() => full(s, alloc.ID), (a) => ['a', 'b'].every((t) => a.TaskStates[t]?.State === 'running'), 'both tasks to run');
}

describe('restart and signal', { timeout: SUITE_TIMEOUT }, () => {
  it.each(['PUT', 'POST'])('%s restart with TaskName restarts that task only, and answers {}', async (method) => {
    const s = await serve();
    const alloc = await runTwo(s);
    const res = await call(s.socket, method, `/v1/client/allocation/${alloc.ID}/restart`, { TaskName: 'a' });
    expect([res.status, res.json()]).toEqual([200, {}]);
    const after = await until(() => full(s, alloc.ID), (a) => a.TaskStates['a']!.Restarts === 1 && a.TaskStates['a']!.State === 'running', 'a to restart');
    expect(after.TaskStates['b']!.Restarts).toBe(0);
    expect(typesOf(after, 'b')).not.toContain('Restart Signaled');
  });

  it('restart without a task restarts every running task; with AllTasks, the finished prestart task too', async () => {
    const s = await serve();
    const body = mockJob('init', { init: { run_for: '10ms' }, main: { run_for: '1h' } });
    Object.assign(body.Job.TaskGroups[0]!.Tasks[0]!, { Lifecycle: { Hook: 'prestart', Sidecar: false } });
    await call(s.socket, 'PUT', '/v1/jobs', body);
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/init/allocations', (l) => l[0]?.TaskStates['main']?.State === 'running');
    const started = (a: Full, t: string) => typesOf(a, t).filter((x) => x === 'Started').length;
    expect((await call(s.socket, 'POST', `/v1/client/allocation/${alloc!.ID}/restart`, {})).status).toBe(200);
    const once = await until(() => full(s, alloc!.ID), (a) => started(a, 'main') === 2 && a.TaskStates['main']!.State === 'running', 'main to restart');
    expect(started(once, 'init')).toBe(1);
    expect((await call(s.socket, 'POST', `/v1/client/allocation/${alloc!.ID}/restart`, { AllTasks: true })).status).toBe(200);
    const all = await until(() => full(s, alloc!.ID), (a) => started(a, 'init') === 2 && started(a, 'main') === 3, 'every task to restart');
    expect(all.TaskStates['main']!.State).toBe('running');
  });

  it('signal with Task signals that task only, with the signal named', async () => {
    const s = await serve();
    const alloc = await runTwo(s);
    const res = await call(s.socket, 'POST', `/v1/client/allocation/${alloc.ID}/signal`, { Signal: 'SIGUSR1', Task: 'a' });
    expect([res.status, res.json()]).toEqual([200, {}]);
    const after = await until(() => full(s, alloc.ID), (a) => typesOf(a, 'a').includes('Signaling'), 'a to be signalled');
    expect(after.TaskStates['a']!.Events.find((e) => e.Type === 'Signaling')!.Details).toMatchObject({ signal: 'SIGUSR1' });
    expect(typesOf(after, 'b')).not.toContain('Signaling');
  });

  it.each(['PUT', 'POST'])('%s signal without Task or Signal sends SIGKILL, Nomad\'s default, to every running task', async (method) => {
    const s = await serve();
    const alloc = await runTwo(s);
    expect((await call(s.socket, method, `/v1/client/allocation/${alloc.ID}/signal`, { Signal: '' })).status).toBe(200);
    const after = await until(() => full(s, alloc.ID), (a) => ['a', 'b'].every((t) => typesOf(a, t).includes('Signaling')), 'both tasks to be signalled');
    for (const t of ['a', 'b']) expect(after.TaskStates[t]!.Events.find((e) => e.Type === 'Signaling')!.Details).toMatchObject({ signal: 'SIGKILL' });
  });

  it('refuses a signal the system does not have with 400 naming Signal, and sends nothing', async () => {
    const s = await serve();
    const alloc = await runTwo(s);
    const res = await call(s.socket, 'POST', `/v1/client/allocation/${alloc.ID}/signal`, { Signal: 'SIGNOPE', Task: 'a' });
    expect([res.status, res.text]).toEqual([400, expect.stringContaining('Signal')]);
    expect(typesOf(await full(s, alloc.ID), 'a')).not.toContain('Signaling');
  });

  it('answers 404 naming a task the allocation does not have, and sends nothing', async () => {
    const s = await serve();
    const alloc = await runTwo(s);
    for (const [verb, body] of [['restart', { TaskName: 'z' }], ['signal', { Signal: 'SIGUSR1', Task: 'z' }]] as const) {
      const res = await call(s.socket, 'POST', `/v1/client/allocation/${alloc.ID}/${verb}`, body);
      expect([verb, res.status, res.text]).toEqual([verb, 404, `task "z" in allocation ${alloc.ID} not found`]);
    }
    const now = await full(s, alloc.ID);
    for (const t of ['a', 'b']) expect(typesOf(now, t).filter((x) => x === 'Signaling' || x === 'Restart Signaled')).toEqual([]);
  });

  it('answers 400 with the runner\'s refusal for an allocation whose tasks have finished', async () => {
    const s = await serve();
    const body = mockJob('done', { t: { run_for: '10ms' } }, { Type: 'batch' });
    await call(s.socket, 'PUT', '/v1/jobs', body);
    const [done] = await waitForAllocs(s.socket, '/v1/job/done/allocations', (l) => l[0]?.ClientStatus === 'complete');
    const refused = await call(s.socket, 'POST', `/v1/client/allocation/${done!.ID}/signal`, { Signal: 'SIGUSR1', Task: 't' });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/not running/);
    expect(refused.text.split('\n').length).toBe(1);
  });

  it('answers 400 to commands and stats for an allocation this agent does not run (a stopped one it no longer holds a runner for)', async () => {
    const s = await serve();
    const alloc = await runJob(s, mockJob('web'));
    const entry = s.api.registry.findAlloc(alloc.ID)!;
    const runner = entry.runner;
    entry.runner = undefined;
    try {
      for (const [method, path, body] of [['POST', 'restart', {}], ['POST', 'signal', {}], ['GET', 'stats', undefined]] as const) {
        const res = await call(s.socket, method, `/v1/client/allocation/${alloc.ID}/${path}`, body);
        expect([path, res.status, res.text]).toEqual([path, 400, `allocation ${alloc.ID} is not running on this agent`]);
      }
      // Logs are read from the files its alloc dir keeps instead (none for a mock task): finished-alloc-logs.test.ts.
      const logs = await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`);
      expect([logs.status, logs.text]).toEqual([200, '']);
    } finally {
      entry.runner = runner;
    }
  });
});

describe('GET /v1/client/fs/logs/:id', { timeout: SUITE_TIMEOUT }, () => {
  const logsOf = async (s: Served, id: string, query: string) => call(s.socket, 'GET', `/v1/client/fs/logs/${id}?task=a&type=stdout${query}`);

  it('reads the whole log plain by default from the start, and skips ?offset bytes with origin=start', async () => {
    const s = await serveKeepingLogs();
    const alloc = await runTwo(s);
    const whole = await until(async () => (await logsOf(s, alloc.ID, '&plain=true')).text, (t) => t === 'hello from a\n', 'the log line');
    const res = await logsOf(s, alloc.ID, '&plain=true');
    expect(res.headers['content-type']).toMatch(/^text\/plain; charset=utf-8/);
    expect((await logsOf(s, alloc.ID, '&plain=true&origin=start&offset=6')).text).toBe(whole.slice(6));
    expect((await logsOf(s, alloc.ID, '&plain=true&origin=start&offset=100')).text).toBe('');
  });

  it('reads the last ?offset bytes with origin=end, all of it when offset is larger', async () => {
    const s = await serveKeepingLogs();
    const alloc = await runTwo(s);
    await until(async () => (await logsOf(s, alloc.ID, '&plain=true')).text, (t) => t === 'hello from a\n', 'the log line');
    expect((await logsOf(s, alloc.ID, '&plain=true&origin=end&offset=5')).text).toBe('m a\n'.padStart(5, 'o'));
    expect((await logsOf(s, alloc.ID, '&plain=true&origin=end&offset=1000')).text).toBe('hello from a\n');
    expect((await logsOf(s, alloc.ID, '&plain=true&origin=end')).text).toBe('');
  });

  it('frames data as Nomad does: base64 Data, the file\'s name, and Offset counting the bytes sent, as JSON', async () => {
    const s = await serveKeepingLogs();
    const alloc = await runTwo(s);
    await until(async () => (await logsOf(s, alloc.ID, '&plain=true')).text, (t) => t.length > 0, 'the log line');
    const res = await logsOf(s, alloc.ID, '&origin=start&offset=6');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.text.trim().split('\n').map((l) => JSON.parse(l))).toEqual([{ Offset: 7, Data: Buffer.from('from a\n').toString('base64'), File: 'alloc/logs/a.stdout.0', FileEvent: '' }]);
  });

  it('names the file by task and stream: stderr reads alloc/logs/<task>.stderr.0', async () => {
    const s = await serveKeepingLogs();
    const alloc = await runJob(s, mockJob('err', { a: { run_for: '1h', stderr_string: 'oops' } }));
    const text = await until(async () => (await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=a&type=stderr`)).text, (t) => t.length > 0, 'the stderr line');
    expect(JSON.parse(text.trim())).toMatchObject({ File: 'alloc/logs/a.stderr.0', Data: Buffer.from('oops\n').toString('base64') });
  });

  it('follows: sends lines written after it started, with {} heartbeats when framed and none when plain', async () => {
    const s = await serveKeepingLogs(30);
    const alloc = await runJob(s, mockJob('tick', { a: { run_for: '1h', stdout_string: 'tick', stdout_repeat: 100, stdout_repeat_duration: '100ms' } }));
    const framed = await stream(s.socket, `/v1/client/fs/logs/${alloc.ID}?task=a&type=stdout&follow=true&origin=end`);
    const text = await framed.until((t) => t.includes('{}\n') && t.includes('"Data"'));
    framed.close();
    expect(text.split('\n').filter((l) => l.includes('"Data"')).every((l) => Buffer.from(JSON.parse(l).Data, 'base64').toString() === 'tick\n')).toBe(true);
    const plain = await stream(s.socket, `/v1/client/fs/logs/${alloc.ID}?task=a&type=stdout&follow=true&plain=true&origin=end`);
    const plainText = await plain.until((t) => t.split('tick\n').length > 3);
    plain.close();
    expect(plainText).not.toContain('{}');
    expect(plainText.replaceAll('tick\n', '')).toBe('');
  });

  it('ends a followed stream when the task is dead, and clears its heartbeat when the client closes', async () => {
    const s = await serveKeepingLogs(30);
    const made: unknown[] = [];
    const cleared: unknown[] = [];
    const realSet = globalThis.setInterval;
    vi.spyOn(globalThis, 'setInterval').mockImplementation(((fn: () => void, ms: number) => {
      const t = realSet(fn, ms);
      if (ms === 30) made.push(t);
      return t;
    }) as typeof setInterval);
    const realClear = globalThis.clearInterval;
    vi.spyOn(globalThis, 'clearInterval').mockImplementation(((t: Parameters<typeof clearInterval>[0]) => (cleared.push(t), realClear(t))) as typeof clearInterval);
    const alloc = await runJob(s, mockJob('short', { a: { run_for: '1h', stdout_string: 'bye' } }, { Type: 'batch' }));
    const live = await stream(s.socket, `/v1/client/fs/logs/${alloc.ID}?task=a&type=stdout&follow=true`);
    await live.until((t) => t.includes('{}'));
    expect(made).toHaveLength(1);
    live.close();
    await until(async () => cleared.includes(made[0]), (ok) => ok, 'the heartbeat timer to be cleared', 5_000);
    // A followed stream of a task that ends is ended by the agent.
    const ending = await stream(s.socket, `/v1/client/fs/logs/${alloc.ID}?task=a&type=stdout&follow=true&plain=true`);
    await call(s.socket, 'POST', `/v1/allocation/${alloc.ID}/stop`);
    expect(await ending.ended).toBe('bye\n');
  });

  it('skips ?offset bytes from the start across what was written and what comes next, when following', async () => {
    const s = await serveKeepingLogs();
    const alloc = await runJob(s, mockJob('tick', { a: { run_for: '1h', stdout_string: 'tick', stdout_repeat: 100, stdout_repeat_duration: '150ms' } }));
    const written = await until(async () => (await logsOf(s, alloc.ID, '&plain=true')).text, (t) => t.length >= 5, 'a first line');
    // Two bytes more than what is written now: the rest of the skip cuts into the lines that follow.
    const live = await stream(s.socket, `/v1/client/fs/logs/${alloc.ID}?task=a&type=stdout&follow=true&plain=true&origin=start&offset=${written.length + 2}`);
    const text = await live.until((t) => t.length >= 8);
    live.close();
    expect(text.startsWith('ck\ntick\n')).toBe(true);
  });

  it('answers the headers of a followed plain stream at once, before any output', async () => {
    const s = await serveKeepingLogs();
    const alloc = await runJob(s, mockJob('quiet', { a: { run_for: '1h' } }));
    const live = await stream(s.socket, `/v1/client/fs/logs/${alloc.ID}?task=a&type=stdout&follow=true&plain=true&origin=end`);
    expect([live.status, live.text()]).toEqual([200, '']);
    live.close();
  });

  it('ends the stream with the reader\'s error: a JSON Error frame when framed, nothing more when plain', async () => {
    const s = await serveKeepingLogs();
    const alloc = await runJob(s, mockJob('broken', { unreadable: { run_for: '1h' } }));
    const framed = await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=unreadable&type=stdout`);
    expect([framed.status, framed.text]).toEqual([200, '{"Error":"log file gone"}\n']);
    const plain = await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=unreadable&type=stdout&plain=true`);
    expect([plain.status, plain.text]).toEqual([200, '']);
  });

  it('refuses a task the allocation does not have with 404, and a missing task or unknown type with 400', async () => {
    const s = await serveKeepingLogs();
    const alloc = await runTwo(s);
    const noTask = await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=z&type=stdout`);
    expect([noTask.status, noTask.text]).toEqual([404, `task "z" in allocation ${alloc.ID} not found`]);
    expect((await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?type=stdout`)).status).toBe(400);
    expect((await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=a&type=stdin`)).status).toBe(400);
    expect((await call(s.socket, 'GET', '/v1/client/fs/logs/ffffffff-nope?task=a&type=stdout')).status).toBe(404);
  });
});

describe('GET /v1/client/allocation/:id/stats', { timeout: SUITE_TIMEOUT }, () => {
  it('answers the allocation\'s and each task\'s usage under Nomad\'s names, and 404 for an unknown one', async () => {
    const s = await serve();
    const alloc = await runTwo(s);
    const stats = (await call(s.socket, 'GET', `/v1/client/allocation/${alloc.ID}/stats`)).json();
    expect(stats).toMatchObject({ ResourceUsage: { MemoryStats: expect.any(Object), CpuStats: expect.any(Object) }, Timestamp: expect.any(Number) });
    const miss = await call(s.socket, 'GET', '/v1/client/allocation/ffffffff-nope/stats');
    expect([miss.status, miss.text]).toEqual([404, 'alloc not found']);
  });
});
