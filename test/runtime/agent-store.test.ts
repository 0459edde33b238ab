/**
 * `createAgent` in process: mock-driver allocations on a SimulatedClock, persisted to a store held in memory,
 * so what the agent writes, when, what it tells of it (`saved$`, what the API shows), and what a new agent
 * restores from it can be read back directly. (The
 * raw_exec agent and its files on disk are test/runtime/agent.test.ts and test/restore/.)
 */
import { describe, expect, it } from 'vitest';
import { createAgent, DuplicateAllocError, type AgentOptions, type AgentRecord, type SavedState } from '../../src/runtime/create-agent.ts';
import { FileStateStore } from '../../src/state/file-store.ts';
import { tempDir } from '../temp-dirs.ts';
import { StateStoreError, type StateScan, type StateStore } from '../../src/state/store.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { SpecError } from '../../src/jobspec/spec-error.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { until } from '../drivers/until.ts';
import { MemoryStore } from './memory-store.ts';

/** A store that also scans, reporting the problems it was given. */
class ScanningStore extends MemoryStore {
  scans: { quarantine?: boolean }[] = [];
  constructor(readonly problems: StateStoreError[] = []) {
    super();
  }
  async scan(opts?: { quarantine?: boolean }): Promise<StateScan> {
    this.scans.push(opts ?? {});
    return { records: await this.list(), problems: this.problems };
  }
}

const spec = (id: string, runFor = '1h'): AllocSpec => ({
  id, job: 'j', group: 'g', type: 'batch',
  tasks: [{ name: 'main', driver: 'mock', config: { run_for: runFor } }],
});

function agentOn(store: StateStore, clock: SimulatedClock, extra: Partial<AgentOptions> = {}) {
  return createAgent({ dataDir: '/nonexistent/allocrun-agent-store', store, clock, builtinHooks: false, seed: 1, ...extra });
}

/** An agent that ran `ids` until their tasks ran, then shut down: the store holds what a new agent restores. */
async function storeAfterShutdown(clock: SimulatedClock, ids: string[], store: MemoryStore = new MemoryStore()) {
  const first = agentOn(store, clock);
  for (const id of ids) first.run(spec(id));
  await clock.advance(10);
  await first.shutdown();
  return store;
}

describe('agent: persisting each allocation', () => {
  it('refuses a spec that breaks the job rules before anything is saved', async () => {
    const store = new MemoryStore();
    const agent = agentOn(store, new SimulatedClock(0));
    expect(() => agent.run({ ...spec('a'), tasks: [] })).toThrow(SpecError);
    expect(store.saves).toEqual([]);
    expect(agent.list()).toEqual([]);
  });

  it('refuses a second allocation with the same id, with ErrDuplicateAlloc, and keeps the first', async () => {
    const clock = new SimulatedClock(0);
    const agent = agentOn(new MemoryStore(), clock);
    const first = agent.run(spec('a'));
    let err: unknown;
    try {
      agent.run(spec('a'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DuplicateAllocError);
    expect(err).toMatchObject({ code: 'ErrDuplicateAlloc', name: 'DuplicateAllocError', message: 'allocation "a" is already running under this agent' });
    expect(agent.get('a')).toBe(first);
    expect(agent.list()).toEqual([first]);
    await agent.shutdown();
  });

  it('saves the spec, the state and a resumable snapshot, and saves again as the allocation runs', async () => {
    const clock = new SimulatedClock(0);
    const store = new MemoryStore();
    const agent = agentOn(store, clock);
    agent.run(spec('a', '5s'));
    await clock.advance(10);
    const running = store.records.get('a')!;
    expect(running.spec).toEqual(spec('a', '5s'));
    expect(running.state.taskStates.main!.state).toBe('running');
    expect(running.snapshot?.__allocrun).toBe('alloc-runner');
    expect(running.createdAt).toEqual(expect.any(Number));
    expect(running.updatedAt).toBeGreaterThanOrEqual(running.createdAt!);

    await clock.advance(5_000);
    await agent.get('a')!.done;
    await agent.shutdown();
    const finished = store.records.get('a')!;
    expect(finished.state.clientStatus).toBe('complete');
    expect(finished.createdAt).toBe(running.createdAt);
  });

  it('keeps of a finished runner only the status and state value that say so: its context and children are written for nothing, since no agent resumes it', async () => {
    const clock = new SimulatedClock(0);
    const store = new MemoryStore();
    const agent = agentOn(store, clock);
    agent.run(spec('a', '5s'));
    await clock.advance(10);
    // Running: the whole snapshot, to resume from.
    const running = store.records.get('a')!.snapshot!.snapshot as { value: unknown; context?: unknown; children?: Record<string, unknown> };
    expect(running.context).toBeDefined();
    expect(Object.keys(running.children ?? {})).toEqual(['main']);
    await clock.advance(5_000);
    await agent.get('a')!.done;
    await clock.advance(1);
    const finished = store.records.get('a')!;
    expect(finished.state.clientStatus).toBe('complete');
    expect(finished.state.taskStates.main!.state).toBe('dead');
    expect(finished.snapshot).toEqual({ __allocrun: 'alloc-runner', snapshot: { status: agent.get('a')!.actor.getSnapshot().status, value: 'terminal' } });
    await agent.shutdown();
    expect(Object.keys(store.records.get('a')!.snapshot!.snapshot as object).sort()).toEqual(['status', 'value']);
    // A next agent holds it as finished, as it did the whole snapshot: not restored, no error.
    const second = agentOn(store, clock);
    expect(await second.start()).toEqual([]);
    expect(second.restoreErrors).toEqual([]);
    expect(second.get('a')).toBeUndefined();
    await second.shutdown();
  });

  it('a finished runner\'s record passes the file store\'s checks, and a next agent on the files holds it as finished', async () => {
    const dataDir = tempDir('allocrun-agent-finished-');
    const clock = new SimulatedClock(0);
    const first = createAgent({ dataDir, clock, builtinHooks: false, seed: 1 });
    first.run(spec('a', '5s'));
    await clock.advance(10);
    await clock.advance(5_000);
    await first.get('a')!.done;
    await first.shutdown();
    const record = (await new FileStateStore(dataDir).load('a')) as AgentRecord;
    expect(record.state.clientStatus).toBe('complete');
    expect(record.snapshot).toEqual({ __allocrun: 'alloc-runner', snapshot: { status: expect.any(String), value: 'terminal' } });
    const second = createAgent({ dataDir, clock, builtinHooks: false, seed: 1 });
    expect(await second.start()).toEqual([]);
    expect(second.restoreErrors).toEqual([]);
    await second.shutdown();
  });

  it('never runs two saves of one allocation at once, and the last save holds the newest state', async () => {
    const clock = new SimulatedClock(0);
    const store = new MemoryStore();
    let release!: () => void;
    store.hold = new Promise<void>((r) => (release = r));
    const agent = agentOn(store, clock);
    agent.run(spec('a', '5s'));
    await clock.advance(10);
    // The first save is held; every snapshot since has only marked the record as pending.
    expect(store.saves).toEqual([]);
    store.hold = undefined;
    release();
    await clock.advance(5_000);
    await agent.get('a')!.done;
    await agent.shutdown();
    expect(store.overlapped).toBe(false);
    // The held save, then one for everything that queued behind it, and so on: never one per snapshot.
    expect(store.saves.at(-1)!.state.clientStatus).toBe('complete');
  });

  it('keeps running when a save fails', async () => {
    const clock = new SimulatedClock(0);
    const store = new MemoryStore();
    store.failSaves = true;
    const agent = agentOn(store, clock);
    const runner = agent.run(spec('a', '5s'));
    await clock.advance(5_010);
    expect((await runner.done).clientStatus).toBe('complete');
    await agent.shutdown();
    expect(store.saves).toEqual([]);
  });

  it('saves nothing after shutdown: the record says running, as the next agent must find it', async () => {
    const clock = new SimulatedClock(0);
    const store = new MemoryStore();
    const agent = agentOn(store, clock);
    agent.run(spec('a'));
    await clock.advance(10);
    await agent.shutdown();
    const saved = store.saves.length;
    const record = store.records.get('a')!;
    expect(record.state.taskStates.main!.state).toBe('running');
    expect((record.snapshot!.snapshot as { value: unknown }).value).not.toBe('detaching');
    await clock.advance(60_000);
    expect(store.saves).toHaveLength(saved);
  });
});

describe("agent: restoring (Nomad's client restores every allocation it persisted)", () => {
  it('restores a running allocation from the store, reattaching to its workload instead of starting it again', async () => {
    const clock = new SimulatedClock(0);
    const store = await storeAfterShutdown(clock, ['a']);
    const second = agentOn(store, clock);
    const [restored] = await second.start();
    expect(restored!.actor.id).toBe('a');
    expect(second.get('a')).toBe(restored);
    expect(second.list()).toEqual([restored]);
    await clock.advance(3_600_000);
    const final = await restored!.done;
    expect(final.clientStatus).toBe('complete');
    expect(final.taskStates.main!.events.filter((e) => e.type === 'Started')).toHaveLength(1);
    await second.shutdown();
  });

  it('keeps the allocation creation time of the record it restores', async () => {
    const clock = new SimulatedClock(0);
    const store = await storeAfterShutdown(clock, ['a']);
    const createdAt = store.records.get('a')!.createdAt!;
    store.records.set('a', { ...store.records.get('a')!, createdAt: createdAt - 1_000 });
    const second = agentOn(store, clock);
    await second.start();
    await second.shutdown();
    expect(store.records.get('a')!.createdAt).toBe(createdAt - 1_000);
  });

  it('takes the update time as the creation time of a record that has none', async () => {
    const clock = new SimulatedClock(0);
    const store = await storeAfterShutdown(clock, ['a']);
    const { createdAt: _dropped, ...old } = store.records.get('a')!;
    store.records.set('a', { ...old, updatedAt: 42 });
    const second = agentOn(store, clock);
    await second.start();
    await second.shutdown();
    expect(store.records.get('a')!.createdAt).toBe(42);
  });

  it('leaves alone a record without a snapshot, one whose postrun hooks ran, and one already running here', async () => {
    const clock = new SimulatedClock(0);
    const store = await storeAfterShutdown(clock, ['running', 'nosnap']);
    const { snapshot: _none, ...bare } = store.records.get('nosnap')!;
    store.records.set('nosnap', bare);
    // An allocation that ran to the end: its runner reached `terminal`.
    const ended = agentOn(store, clock);
    ended.run(spec('ended', '1s'));
    await clock.advance(1_010);
    await ended.get('ended')!.done;
    await ended.shutdown();
    expect((store.records.get('ended')!.snapshot!.snapshot as { value: unknown }).value).toBe('terminal');

    const second = agentOn(store, clock);
    const already = second.run(spec('running'));
    const restored = await second.start();
    expect(restored).toEqual([]);
    expect(second.list()).toEqual([already]);
    await second.shutdown();
  });

  it('leaves alone a destroyed allocation and one whose runner finished as an actor', async () => {
    const clock = new SimulatedClock(0);
    const store = await storeAfterShutdown(clock, ['destroyed', 'done']);
    const as = (id: string, snap: Record<string, unknown>) => {
      const r = store.records.get(id)!;
      store.records.set(id, { ...r, snapshot: { __allocrun: 'alloc-runner', snapshot: { ...(r.snapshot!.snapshot as object), ...snap } } });
    };
    as('destroyed', { value: 'destroyed' });
    as('done', { status: 'done' });
    const second = agentOn(store, clock);
    expect(await second.start()).toEqual([]);
    expect(second.restoreErrors).toEqual([]);
  });

  it('restores a failed allocation: it may still have work to do', async () => {
    const clock = new SimulatedClock(0);
    const store = new MemoryStore();
    const first = agentOn(store, clock);
    first.run({
      ...spec('f'),
      tasks: [
        { name: 'main', driver: 'mock', config: { run_for: '1s', exit_code: 1 }, restart: { attempts: 0, interval: 60_000, delay: 1_000, mode: 'fail' } },
        { name: 'side', driver: 'mock', config: { run_for: '1h' }, lifecycle: { hook: 'prestart', sidecar: true } },
      ],
    });
    await clock.advance(1);
    await first.shutdown();
    await clock.advance(2_000);
    const second = agentOn(store, clock);
    const [restored] = await second.start();
    expect(restored!.actor.id).toBe('f');
    await clock.advanceUntil(() => restored!.getState().taskStates.side!.state === 'dead');
    expect((await restored!.done).clientStatus).toBe('failed');
  });

  it('asks a store that can scan to quarantine damaged records, and reports each problem it found', async () => {
    const clock = new SimulatedClock(0);
    const problem = new StateStoreError('allocs/x/state.json: not JSON', 'allocs/x/state.json');
    const store = await storeAfterShutdown(clock, ['a'], new ScanningStore([problem]));
    const told: StateStoreError[] = [];
    const second = agentOn(store, clock, { onRestoreError: (e) => told.push(e) });
    const restored = await second.start();
    expect((store as ScanningStore).scans).toEqual([{ quarantine: true }]);
    expect(restored.map((r) => r.actor.id)).toEqual(['a']);
    expect(second.restoreErrors).toEqual([problem]);
    expect(told).toEqual([problem]);
    await second.shutdown();
  });

  it('reports a snapshot it cannot resume, naming the allocation, and restores the others', async () => {
    const clock = new SimulatedClock(0);
    const store = await storeAfterShutdown(clock, ['good', 'bad']);
    const bad = store.records.get('bad')!;
    store.records.set('bad', { ...bad, snapshot: { __allocrun: 'alloc-runner', snapshot: { status: 'active', value: 'no-such-state', context: {} } } });
    const second = agentOn(store, clock);
    const restored = await second.start();
    expect(restored.map((r) => r.actor.id)).toEqual(['good']);
    expect(second.get('bad')).toBeUndefined();
    expect(second.list().map((r) => r.actor.id)).toEqual(['good']);
    expect(second.restoreErrors).toHaveLength(1);
    const err = second.restoreErrors[0]!;
    expect(err).toBeInstanceOf(StateStoreError);
    expect(err.path).toBe('bad');
    expect(err.message).toMatch(/^bad: allocation "bad" cannot be resumed from its runner snapshot \(damaged, or written by an incompatible allocrun\): ./);
    expect(err.cause).toBeDefined();
    await second.shutdown();
  });

  it('shuts every allocation down with its workload left running, so a later agent finds it alive', async () => {
    const clock = new SimulatedClock(0);
    const store = await storeAfterShutdown(clock, ['a', 'b']);
    const second = agentOn(store, clock);
    const restored = await second.start();
    await second.shutdown();
    for (const r of restored) expect(r.actor.getSnapshot().value).toBe('detached');
    const third = agentOn(store, clock);
    expect((await third.start()).map((r) => r.actor.id).sort()).toEqual(['a', 'b']);
    await third.shutdown();
  });
});

/** Everything `saved$(id)` tells, as it tells it, and whether it completed. */
function told(agent: ReturnType<typeof agentOn>, id: string) {
  const out = { seen: [] as SavedState[], completed: false };
  agent.saved$(id)!.subscribe({ next: (s) => out.seen.push(s), complete: () => (out.completed = true) });
  return out;
}

describe('agent.saved$: the runner state its record holds (what the agent\'s API shows)', () => {
  it('tells a state only once the save writing it has landed, then the newest one saved', async () => {
    const clock = new SimulatedClock(0);
    const store = new MemoryStore();
    let release!: () => void;
    store.hold = new Promise<void>((r) => (release = r));
    const agent = agentOn(store, clock);
    const runner = agent.run(spec('a'));
    const t = told(agent, 'a');
    await clock.advance(10);
    expect(runner.getState().clientStatus).toBe('running');
    await until(() => store.writing > 0, 'a save held');
    expect(t.seen.map((s) => s.state.clientStatus)).toEqual(['pending']);
    store.hold = undefined;
    release();
    await until(() => t.seen.at(-1)?.state.clientStatus === 'running', 'the running state told');
    // The record holds what was told: nothing told is ahead of the disk.
    expect(store.records.get('a')!.state.taskStates).toEqual(t.seen.at(-1)!.state.taskStates);
    expect(t.seen.every((s) => s.error === undefined)).toBe(true);
    await agent.shutdown();
    expect(t.completed, 'completed once saving stopped').toBe(true);
  });

  it('tells the state of a save that failed, with its error, and the next one that lands without', async () => {
    const clock = new SimulatedClock(0);
    const store = new MemoryStore();
    store.failSaves = true;
    const agent = agentOn(store, clock);
    const runner = agent.run(spec('b'));
    const t = told(agent, 'b');
    await clock.advance(10);
    await until(() => t.seen.at(-1)?.state.clientStatus === 'running', 'the unsaved running state told');
    expect(t.seen.at(-1)!.error?.message).toBe('disk full');
    expect(store.records.has('b')).toBe(false);
    store.failSaves = false;
    runner.send({ type: 'KILL' });
    await clock.advance(100);
    await until(() => t.seen.at(-1)?.state.clientStatus === 'complete' && t.seen.at(-1)!.error === undefined, 'the saved end told');
    expect(store.records.get('b')!.state.clientStatus).toBe('complete');
    await agent.shutdown();
  });

  it('starts a restored runner at the state it was restored from, and is undefined for an id the agent does not run', async () => {
    const clock = new SimulatedClock(0);
    const store = await storeAfterShutdown(clock, ['c']);
    const saved = store.records.get('c')!.state;
    expect(saved.clientStatus).toBe('running');
    const second = agentOn(store, clock);
    await second.start();
    expect(told(second, 'c').seen[0]!.state).toEqual(saved);
    expect(second.saved$('nope')).toBeUndefined();
    await second.shutdown();
  });
});
