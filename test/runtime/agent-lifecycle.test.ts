/**
 * `createAgent` in process, around its store: the data dir it makes (or not), saves that go on while an
 * allocation runs, the snapshot shutdown writes, a restored snapshot that fails as it starts, and a shutdown
 * that waits for its allocations. Mock driver, SimulatedClock, a store in memory.
 */
import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent, type AgentOptions } from '../../src/runtime/create-agent.ts';
import type { StateStore } from '../../src/state/store.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import type { TaskHook } from '../../src/hooks/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { MemoryStore } from './memory-store.ts';
import { tempDir } from '../temp-dirs.ts';

const spec = (id: string, runFor = '1h'): AllocSpec => ({ id, job: 'j', group: 'g', type: 'batch', tasks: [{ name: 'main', driver: 'mock', config: { run_for: runFor } }] });

function agentOn(store: StateStore | undefined, clock: SimulatedClock, extra: Partial<AgentOptions> = {}) {
  return createAgent({ dataDir: join(tmpdir(), `allocrun-agent-lifecycle-${process.pid}-absent`), ...(store && { store }), clock, builtinHooks: false, seed: 1, ...extra });
}

describe('agent: its data dir', () => {
  it('makes the data dir and its allocs dir, private to the agent, as soon as it is built with file storage', () => {
    const dataDir = join(tempDir('allocrun-agent-'), 'data');
    createAgent({ dataDir, clock: new SimulatedClock(0), builtinHooks: false });
    expect(statSync(join(dataDir, 'allocs')).isDirectory()).toBe(true);
    expect(statSync(join(dataDir, 'allocs')).mode & 0o777).toBe(0o700);
  });

  it('makes no data dir when it is given a store of its own', async () => {
    const dataDir = join(tempDir('allocrun-agent-'), 'data');
    const clock = new SimulatedClock(0);
    const agent = createAgent({ dataDir, store: new MemoryStore(), clock, builtinHooks: false });
    agent.run(spec('a'));
    await clock.advance(10);
    await agent.shutdown();
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe('agent: saving', () => {
  it('goes on saving as the allocation runs, not only at shutdown: the record says complete once it is', async () => {
    const clock = new SimulatedClock(0);
    const store = new MemoryStore();
    const agent = agentOn(store, clock);
    const runner = agent.run(spec('a', '5s'));
    await clock.advance(10);
    expect(store.records.get('a')!.state.taskStates.main!.state).toBe('running');
    await clock.advance(5_000);
    await runner.done;
    await clock.advance(1);
    expect(store.records.get('a')!.state.clientStatus).toBe('complete');
  });

  it('writes the current snapshot at shutdown even when the saves before it failed', async () => {
    const clock = new SimulatedClock(0);
    const store = new MemoryStore();
    store.failSaves = true;
    const agent = agentOn(store, clock);
    agent.run(spec('a'));
    await clock.advance(10);
    expect(store.records.has('a')).toBe(false);
    store.failSaves = false;
    await agent.shutdown();
    const record = store.records.get('a')!;
    expect(record.state.taskStates.main!.state).toBe('running');
    expect(record.snapshot?.__allocrun).toBe('alloc-runner');
  });
});

describe('agent: restoring and shutting down', () => {
  it('reports, and does not return, a restored allocation whose runner fails as it starts', async () => {
    const clock = new SimulatedClock(0);
    const store = new MemoryStore();
    const first = agentOn(store, clock);
    first.run(spec('good'));
    first.run(spec('bad'));
    await clock.advance(10);
    await first.shutdown();
    // A task runner child of an unknown kind: the snapshot loads, and the actor fails once started.
    const bad = store.records.get('bad')!;
    const snap = bad.snapshot!.snapshot as { children: Record<string, { src: string }> };
    snap.children.main!.src = 'noSuchActor';
    const second = agentOn(store, clock);
    const restored = await second.start();
    expect(restored.map((r) => r.actor.id)).toEqual(['good']);
    expect(second.get('bad')).toBeUndefined();
    expect(second.restoreErrors).toHaveLength(1);
    expect(second.restoreErrors[0]!.message).toMatch(/^bad: allocation "bad" cannot be resumed from its runner snapshot/);
    await second.shutdown();
  });

  it("shutdown resolves only once every allocation has detached, its tasks' shutdown hooks done", async () => {
    const clock = new SimulatedClock(0);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const slow: TaskHook = { name: 'slow', shutdown: () => released };
    const agent = agentOn(new MemoryStore(), clock, { taskHooks: [slow] });
    const runner = agent.run(spec('a'));
    await clock.advance(10);
    let finished = false;
    const shutdown = agent.shutdown().then(() => (finished = true));
    await clock.advance(10);
    expect(finished).toBe(false);
    release();
    await shutdown;
    expect(runner.actor.getSnapshot().value).toBe('detached');
  });
});
