/**
 * `agent.saved$(id)` (src/runtime/create-agent.ts): the state each settled save of a runner's record wrote,
 * which the agent's API shows instead of the live runner. Mock-driver allocations on a SimulatedClock, saved to
 * a store in memory that can hold or fail its saves.
 */
import { describe, expect, it } from 'vitest';
import { createAgent, type SavedState } from '../../src/runtime/create-agent.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { until } from '../drivers/until.ts';
import { MemoryStore } from './memory-store.ts';

const spec = (id: string): AllocSpec => ({ id, job: 'j', group: 'g', type: 'batch', tasks: [{ name: 'main', driver: 'mock', config: { run_for: '1h' } }] });

function agentOn(store: MemoryStore, clock: SimulatedClock) {
  return createAgent({ dataDir: '/nonexistent/allocrun-saved-state', store, clock, builtinHooks: false, seed: 1 });
}

/** Everything `saved$(id)` tells, as it tells it, and whether it completed. */
function told(agent: ReturnType<typeof agentOn>, id: string) {
  const seen: SavedState[] = [];
  const out = { seen, completed: false };
  agent.saved$(id)!.subscribe({ next: (s) => seen.push(s), complete: () => (out.completed = true) });
  return out;
}

describe('agent.saved$: the runner state its record holds', () => {
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
    const store = new MemoryStore();
    const first = agentOn(store, clock);
    first.run(spec('c'));
    await clock.advance(10);
    await first.shutdown();
    const saved = store.records.get('c')!.state;
    expect(saved.clientStatus).toBe('running');
    const second = agentOn(store, clock);
    await second.start();
    const t = told(second, 'c');
    expect(t.seen[0]!.state).toEqual(saved);
    expect(second.saved$('nope')).toBeUndefined();
    await second.shutdown();
  });
});
