/**
 * Garbage collection through the API of an in-process agent on a driven clock: 200 short batch jobs with
 * gc_max_allocs 10 keep the agent's runners, runner records and alloc dirs bounded while the server keeps every
 * allocation (as Nomad's server keeps what its client collected); a collected allocation's logs are Nomad's
 * `Unknown allocation`; a restarted agent restores none of them and starts none again; `PUT /v1/system/gc` then
 * deletes the dead jobs with their evaluations and allocations. The client routes' refusals are rows of their own.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import type { AgentOptions, AgentRecord } from '../../src/runtime/create-agent.ts';
import type { StateStore } from '../../src/state/store.ts';
import { runCli } from '../cli/spawn-cli.ts';
import { call, type Alloc } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, serve, until, type Served } from './in-process-agent.ts';

afterAll(cleanUp);

const JOBS = 200;
const MAX = 10;
const noDisk = async () => undefined;
const batch = (id: string, runFor = '1s') => mockJob(id, { t: { run_for: runFor } }, { Type: 'batch' });
const gcOptions = (clock: SimulatedClock): Partial<AgentOptions> => ({ clock, gc: { maxAllocs: MAX, intervalMs: 60_000, usage: noDisk } });

const terminalOnDisk = (r: AgentRecord | undefined) => (r?.snapshot?.snapshot as { value?: unknown } | undefined)?.value === 'terminal';

/** What the agent holds of its allocations: runners in memory, runner records in the store, alloc dirs on disk. */
async function held(s: Served) {
  const dir = join(s.dataDir, 'allocs');
  return { runners: s.agent.list().length, records: (await s.store.runners().list()).length, dirs: existsSync(dir) ? readdirSync(dir).length : 0 };
}

/**
 * Advances the clock a second at a time until every allocation the registry shows has finished and its runner is
 * terminal, short of the next pass (the saves the registry follows are real I/O: waited for in real time).
 */
async function untilAllFinished(s: Served, clock: SimulatedClock, pass: number) {
  const done = () => s.api.registry.listAllocs().every((a) => a.lastState.clientStatus === 'complete' && (!s.agent.get(a.id) || s.agent.gc.isTerminal(a.id)));
  await until(async () => {
    if (clock.now() + 1_000 < pass) await clock.advance(1_000);
    return done();
  }, (ok) => ok, 'every allocation finished');
}

describe('200 short batch jobs with gc_max_allocs 10', () => {
  it('keeps runners, records and dirs bounded, keeps the server view, and restores none of the collected after a restart', async () => {
    const dataDir = freshDir();
    const clock = new SimulatedClock(Date.now());
    let s = await serve(dataDir, undefined, { agent: gcOptions(clock) });
    let nextPass = clock.now() + 60_000;
    const peaks = { runners: 0, records: 0, dirs: 0 };
    for (let start = 0; start < JOBS; start += 20) {
      const registered = await Promise.all(Array.from({ length: 20 }, (_, i) => call(s.socket, 'PUT', '/v1/jobs', batch(`b-${start + i}`))));
      expect(registered.map((r) => r.status)).toEqual(Array(20).fill(200));
      await untilAllFinished(s, clock, nextPass);
      // The next pass of the interval (every 60s on the agent's clock).
      await clock.advance(nextPass - clock.now());
      nextPass += 60_000;
      // The pass's commits are the store's (real I/O, not the clock's): waited for in real time.
      const now = await until(() => held(s), (h) => h.runners <= MAX, `the pass after ${start + 20} jobs`);
      for (const k of ['runners', 'records', 'dirs'] as const) peaks[k] = Math.max(peaks[k], now[k]);
      expect(now, `after ${start + 20} jobs`).toEqual({ runners: MAX, records: MAX, dirs: MAX });
    }
    // Never more than one batch of 20 over the bound between two passes.
    expect(peaks).toEqual({ runners: MAX, records: MAX, dirs: MAX });

    // The server still shows every allocation, finished; a collected one's logs are gone with its dir.
    const listed = (await call(s.socket, 'GET', '/v1/allocations')).json<Alloc[]>();
    expect(listed).toHaveLength(JOBS);
    expect(new Set(listed.map((a) => a.ClientStatus))).toEqual(new Set(['complete']));
    const collected = listed.find((a) => !s.agent.get(a.ID))!;
    const logs = await call(s.socket, 'GET', `/v1/client/fs/logs/${collected.ID}?task=t&type=stdout&plain=true`);
    expect([logs.status, logs.text]).toEqual([404, `Unknown allocation ${JSON.stringify(collected.ID)}`]);
    expect((await call(s.socket, 'GET', `/v1/client/fs/ls/${collected.ID}?path=/`)).status).toBe(404);

    // A restart: the collected allocations are neither restored nor started again; the server view is the same.
    // (Once the kept ones' terminal snapshots are on disk: a save cut short would have one restored, rightly.)
    await until(async () => (await s.store.runners().list()).every((r) => terminalOnDisk(r as AgentRecord)), (ok) => ok, 'the kept records terminal on disk');
    await s.stop();
    s = await serve(dataDir, undefined, { agent: gcOptions(new SimulatedClock(Date.now())) });
    expect(s.agent.list()).toEqual([]);
    expect(await held(s)).toEqual({ runners: 0, records: MAX, dirs: MAX });
    const after = (await call(s.socket, 'GET', '/v1/allocations')).json<Alloc[]>();
    expect(after.map((a) => [a.ID, a.ClientStatus]).sort()).toEqual(listed.map((a) => [a.ID, 'complete']).sort());
    expect((await call(s.socket, 'GET', `/v1/client/fs/logs/${collected.ID}?task=t&type=stdout&plain=true`)).status).toBe(404);

    // The server's collector, forced (`allocrun system gc`, as `nomad system gc`): every job is dead, so jobs,
    // evaluations and allocations go, and the client's last ten with them.
    const gc = await runCli(['system', 'gc', '--data-dir', dataDir], { timeoutMs: 60_000 });
    expect([gc.code, gc.stderr]).toEqual([0, '']);
    expect((await call(s.socket, 'GET', '/v1/allocations')).json()).toEqual([]);
    expect((await call(s.socket, 'GET', '/v1/jobs')).json()).toEqual([]);
    expect((await call(s.socket, 'GET', '/v1/evaluations')).json()).toEqual([]);
    expect(await held(s)).toEqual({ runners: 0, records: 0, dirs: 0 });
    expect(s.store.entries('allocs').values).toEqual([]);
  }, 240_000);
});

describe('the client garbage collection routes', () => {
  it('refuses a running allocation with Nomad\'s words, collects a finished one, and PUT /v1/client/gc collects the rest', async () => {
    const clock = new SimulatedClock(Date.now());
    const s = await serve(freshDir(), undefined, { agent: { clock, gc: { maxAllocs: 50, intervalMs: 60_000, usage: noDisk } } });
    for (const [id, runFor] of [['long', '1h'], ['short-1', '1s'], ['short-2', '1s']] as const) expect((await call(s.socket, 'PUT', '/v1/jobs', batch(id, runFor))).status).toBe(200);
    const idOf = (job: string) => s.api.registry.allocsOfJob(job)[0]!.id;
    const finished = () => ['short-1', 'short-2'].every((j) => s.agent.gc.isTerminal(idOf(j)));
    for (let i = 0; i < 50 && !finished(); i++) await clock.advance(1_000);
    const running = await call(s.socket, 'PUT', `/v1/client/allocation/${idOf('long')}/gc`);
    expect([running.status, running.text]).toEqual([500, 'No such allocation on client, or allocation not eligible for GC']);
    expect(s.agent.get(idOf('long'))).toBeDefined();

    const one = await call(s.socket, 'PUT', `/v1/client/allocation/${idOf('short-1')}/gc`);
    expect(one.status).toBe(200);
    expect(s.agent.get(idOf('short-1'))).toBeUndefined();
    // Durable before answered: the allocations table holds its final state, the runner record is gone.
    expect((s.store.get('allocs', idOf('short-1')) as { collectedState?: { clientStatus: string } }).collectedState?.clientStatus).toBe('complete');
    expect(s.store.get('runners', idOf('short-1'))).toBeUndefined();
    const shown = (await call(s.socket, 'GET', `/v1/allocation/${idOf('short-1')}`)).json<Alloc>();
    expect(shown.ClientStatus).toBe('complete');
    const again = await call(s.socket, 'PUT', `/v1/client/allocation/${idOf('short-1')}/gc`);
    expect(again.status).toBe(500);

    expect((await call(s.socket, 'PUT', '/v1/client/gc')).status).toBe(200);
    expect(s.agent.list().map((r) => r.actor.id)).toEqual([idOf('long')]);
    expect(s.store.get('runners', idOf('short-2'))).toBeUndefined();
    // Its kill runs on the driven clock: driven here, before the harness stops the agent.
    const long = s.agent.get(idOf('long'))!;
    long.send({ type: 'KILL' });
    let ended = false;
    void long.done.finally(() => (ended = true));
    await until(async () => (ended || (await clock.advance(1_000)), ended), (e) => e, 'the long allocation killed');
  }, 60_000);

  it('shows a collected allocation as it ended, though a save of an earlier state settled after the collection was recorded', async () => {
    // The runner's records, with one save held: the running state's, still in flight when the allocation ends.
    let runners: StateStore | undefined;
    let release: (() => void) | undefined;
    let held: Promise<void> | undefined;
    const holding: StateStore = {
      save: async (id, record) => {
        if (!held && record.state.clientStatus === 'running') {
          held = new Promise((resolve) => (release = resolve));
          await held;
        }
        return runners!.save(id, record);
      },
      load: (id) => runners!.load(id),
      list: () => runners!.list(),
      remove: (id) => runners!.remove(id),
    };
    const clock = new SimulatedClock(Date.now());
    const s = await serve(freshDir(), async (store) => void (runners = store.runners()), { agent: { clock, store: holding, gc: { maxAllocs: 50, intervalMs: 60_000, usage: noDisk } } });
    expect((await call(s.socket, 'PUT', '/v1/jobs', batch('brief', '1s'))).status).toBe(200);
    const id = await until(async () => s.api.registry.allocsOfJob('brief')[0]?.id, (v) => v !== undefined && held !== undefined, 'the running state being saved');
    await until(async () => (await clock.advance(500), s.agent.gc.isTerminal(id!)), (ok) => ok, 'the allocation ended');
    // The collection is recorded (its final state, durably) before the runner's saves are halted; the held save
    // lands after that record, with the state it was saving.
    const collecting = call(s.socket, 'PUT', `/v1/client/allocation/${id}/gc`);
    await until(async () => (s.store.get('allocs', id!) as { collectedState?: unknown } | undefined)?.collectedState, (v) => v !== undefined, 'the collection recorded');
    release!();
    expect((await collecting).status).toBe(200);
    // The held save's state has been heard (it settled before the collection went on); what is shown is the end.
    expect((await call(s.socket, 'GET', `/v1/allocation/${id}`)).json<Alloc>().ClientStatus).toBe('complete');
  });

  it.each([
    ['its terminal snapshot on disk: the next agent collects it at start', false],
    ['its record an older save (the end never saved): the next agent collects it once it has run to the end again', true],
  ])('an agent that died after the API recorded a collection, before the record was marked, %s', async (_, older) => {
    const dataDir = freshDir();
    const clock = new SimulatedClock(Date.now());
    const first = await serve(dataDir, undefined, { agent: { clock, gc: { maxAllocs: 50, intervalMs: 60_000, usage: noDisk } } });
    expect((await call(first.socket, 'PUT', '/v1/jobs', batch('once', '5s'))).status).toBe(200);
    const id = first.api.registry.allocsOfJob('once')[0]!.id;
    const running = await until(async () => first.store.get('runners', id) as AgentRecord | undefined, (r) => r?.state.clientStatus === 'running', 'the allocation running');
    // Finished, and its terminal snapshot on disk (what a next agent finds).
    const savedTerminal = () => terminalOnDisk(first.store.get('runners', id) as AgentRecord | undefined);
    await until(async () => (savedTerminal() || (await clock.advance(1_000)), savedTerminal() && first.agent.gc.isTerminal(id)), (t) => t, 'the allocation finished');
    // The API's record commits, then the agent "dies": nothing after step 1 happens.
    const record = first.agent.gc.beforeCollect!;
    first.agent.gc.beforeCollect = async (allocId, state) => {
      await record(allocId, state);
      throw new Error('killed');
    };
    expect(await first.agent.gc.collect(id)).toBe(false);
    if (older) await first.store.runners().save(id, running!);
    expect(first.store.get('runners', id)).toBeDefined();
    expect(existsSync(join(dataDir, 'allocs', id))).toBe(true);
    await first.stop();

    const nextClock = new SimulatedClock(Date.now());
    const next = await serve(dataDir, undefined, { agent: { clock: nextClock, gc: { maxAllocs: 50, intervalMs: 600_000, usage: noDisk } } });
    expect(next.agent.list().length).toBe(older ? 1 : 0);
    await until(async () => (older && (await nextClock.advance(1_000)), next.store.get('runners', id) === undefined && !existsSync(join(dataDir, 'allocs', id))), (gone) => gone, 'the collection finished');
    expect(next.agent.list()).toEqual([]);
    expect((await call(next.socket, 'GET', `/v1/allocation/${id}`)).json<Alloc>().ClientStatus).toBe('complete');
  }, 60_000);
});

describe('the server collector on its interval', () => {
  it('forgets a dead batch job with its evaluation and allocation only once job_gc_threshold has passed, at a pass of its interval', async () => {
    const clock = new SimulatedClock(Date.now());
    const H = 3_600_000;
    const s = await serve(freshDir(), undefined, { agent: gcOptions(clock), api: { gc: { clock, intervalMs: 5 * 60_000, evalGcThresholdMs: H, jobGcThresholdMs: 4 * H } } });
    expect((await call(s.socket, 'PUT', '/v1/jobs', batch('nightly'))).status).toBe(200);
    const id = s.api.registry.allocsOfJob('nightly')[0]!.id;
    const dead = () => s.api.registry.jobStatus(s.api.registry.getJob('nightly')!) === 'dead' && terminalOnDisk(s.store.get('runners', id) as AgentRecord);
    await until(async () => (dead() || (await clock.advance(1_000)), dead()), (d) => d, 'the job dead');
    // Past eval_gc_threshold, short of job_gc_threshold: a dead batch job keeps everything.
    await clock.advance(2 * H);
    expect((await call(s.socket, 'GET', '/v1/job/nightly')).status).toBe(200);
    expect(s.api.registry.listEvals().filter((e) => e.JobID === 'nightly')).toHaveLength(1);
    // The first pass after four hours takes it all, the client's allocation first.
    await clock.advance(2 * H + 5 * 60_000);
    await until(async () => (await call(s.socket, 'GET', '/v1/job/nightly')).status, (status) => status === 404, 'the job forgotten');
    expect((await call(s.socket, 'GET', `/v1/allocation/${id}`)).status).toBe(404);
    expect(s.api.registry.listEvals().filter((e) => e.JobID === 'nightly')).toEqual([]);
    expect(s.store.get('runners', id)).toBeUndefined();
    expect(s.store.get('allocs', id)).toBeUndefined();
    expect(existsSync(join(s.dataDir, 'allocs', id))).toBe(false);
  }, 60_000);
});
