/**
 * The agent's garbage collector (Nomad's client AllocGarbageCollector): terminal allocations beyond
 * `maxAllocs`, oldest first, on the agent's clock; the runner's destroy path removes the alloc dir, the runner
 * leaves the agent and its record the store, in an order a crash between any two steps cannot break.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, type AgentOptions } from '../../src/runtime/create-agent.ts';
import { allocDirOf } from '../../src/runtime/collect-alloc.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { MemoryStore } from './memory-store.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'allocrun-gc-'));
  dirs.push(d);
  return d;
};

const spec = (id: string, runFor: string): AllocSpec => ({ id, job: id, group: 'g', type: 'batch', tasks: [{ name: 'main', driver: 'mock', config: { run_for: runFor } }] });
const noDisk = async () => undefined;

function agentOn(dataDir: string, store: MemoryStore, clock: SimulatedClock, extra: Partial<AgentOptions> = {}) {
  return createAgent({ dataDir, store, clock, seed: 1, gc: { maxAllocs: 2, intervalMs: 60_000, usage: noDisk, ...extra.gc }, ...extra });
}

/** Runs allocations a..e finishing at 1s, 2s, ... in that order (so that order is their age), and waits until all are terminal. */
async function fiveFinished(dataDir: string, store: MemoryStore, clock: SimulatedClock, extra: Partial<AgentOptions> = {}) {
  const agent = agentOn(dataDir, store, clock, extra);
  await agent.start();
  const ids = ['a', 'b', 'c', 'd', 'e'];
  ids.forEach((id, i) => agent.run(spec(id, `${i + 1}s`)));
  await clock.advanceUntil(() => ids.every((id) => agent.gc.isTerminal(id)), 30_000, 500);
  return { agent, ids };
}

describe('agent garbage collection', () => {
  it('keeps everything until the interval, then destroys the oldest terminal allocations beyond gc_max_allocs', async () => {
    const dataDir = freshDir();
    const store = new MemoryStore();
    const clock = new SimulatedClock(0);
    const { agent, ids } = await fiveFinished(dataDir, store, clock);
    expect(agent.list()).toHaveLength(5);
    expect(ids.map((id) => existsSync(allocDirOf(dataDir, id)))).toEqual([true, true, true, true, true]);
    await clock.advanceUntil(() => agent.list().length === 2, 120_000);
    // Collected at the first pass (60s on the agent's clock), the three that finished first.
    expect(clock.now()).toBe(60_000);
    expect(agent.list().map((r) => r.actor.id).sort()).toEqual(['d', 'e']);
    expect([...store.records.keys()].sort()).toEqual(['d', 'e']);
    expect(ids.map((id) => existsSync(allocDirOf(dataDir, id)))).toEqual([false, false, false, true, true]);
    await agent.shutdown();
  });

  it('makes room for a new allocation at once, not at the next pass (Nomad\'s MakeRoomFor): the oldest terminal ones beyond gc_max_allocs', async () => {
    const dataDir = freshDir();
    const store = new MemoryStore();
    const clock = new SimulatedClock(0);
    const { agent } = await fiveFinished(dataDir, store, clock);
    expect(clock.now()).toBeLessThan(60_000);
    agent.run(spec('f', '1h'));
    // Six held, two allowed: the four that finished first go, with no pass and no clock step.
    await clock.advanceUntil(() => agent.list().length === 2, 1_000, 0);
    expect(clock.now()).toBeLessThan(60_000);
    expect(agent.list().map((r) => r.actor.id).sort()).toEqual(['e', 'f']);
    expect([...store.records.keys()].sort()).toEqual(['e', 'f']);
    await agent.shutdown();
  });

  it('never collects a running allocation, however many there are', async () => {
    const dataDir = freshDir();
    const clock = new SimulatedClock(0);
    const agent = agentOn(dataDir, new MemoryStore(), clock, { gc: { maxAllocs: 0 } });
    await agent.start();
    agent.run(spec('long', '1h'));
    await clock.advance(120_000);
    expect(agent.get('long')).toBeDefined();
    expect(await agent.gc.collect('long')).toBe(false);
    expect(existsSync(allocDirOf(dataDir, 'long'))).toBe(true);
    await agent.shutdown();
  });

  it('collects one terminal allocation on demand, and all of them with collectAll', async () => {
    const dataDir = freshDir();
    const store = new MemoryStore();
    const clock = new SimulatedClock(0);
    const { agent } = await fiveFinished(dataDir, store, clock, { gc: { maxAllocs: 50 } });
    const told: string[] = [];
    agent.gc.collected$.subscribe((id) => told.push(id));
    expect(await agent.gc.collect('c')).toBe(true);
    expect(await agent.gc.collect('c')).toBe(false);
    expect(agent.get('c')).toBeUndefined();
    expect(store.records.has('c')).toBe(false);
    expect((await agent.gc.collectAll()).sort()).toEqual(['a', 'b', 'd', 'e']);
    expect(told.sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(agent.list()).toEqual([]);
    expect(store.records.size).toBe(0);
    await agent.shutdown();
  });

  it('collects every terminal allocation while the disk is fuller than its threshold', async () => {
    const clock = new SimulatedClock(0);
    const { agent } = await fiveFinished(freshDir(), new MemoryStore(), clock, { gc: { maxAllocs: 50, usage: async () => ({ diskPercent: 91, inodePercent: 1 }) } });
    await clock.advance(60_000);
    expect(agent.list()).toEqual([]);
    await agent.shutdown();
  });

  it('counts and collects the finished allocations a restarted agent found on disk, and never restores a collected one', async () => {
    const dataDir = freshDir();
    const store = new MemoryStore();
    const clock = new SimulatedClock(0);
    const { agent } = await fiveFinished(dataDir, store, clock, { gc: { maxAllocs: 50 } });
    await agent.gc.collect('a');
    await agent.shutdown();
    const next = agentOn(dataDir, store, clock);
    expect(await next.start()).toEqual([]);
    expect(store.records.has('a')).toBe(false);
    expect(await next.gc.keepUsageBelowThreshold()).toEqual(['b', 'c']);
    expect([...store.records.keys()].sort()).toEqual(['d', 'e']);
    expect(existsSync(allocDirOf(dataDir, 'b'))).toBe(false);
    expect(existsSync(allocDirOf(dataDir, 'd'))).toBe(true);
    await next.shutdown();
  });

  it('a crash in the middle of a destroy leaves a marked record, which the next agent finishes: no record, no dir, nothing restored', async () => {
    const dataDir = freshDir();
    const store = new MemoryStore();
    const clock = new SimulatedClock(0);
    // A destroy hook that never returns: the agent "dies" with the destroy under way.
    let destroying!: () => void;
    const reached = new Promise<void>((r) => (destroying = r));
    const hang = { name: 'hangs_on_destroy', destroy: () => (destroying(), new Promise<void>(() => undefined)) };
    const { agent } = await fiveFinished(dataDir, store, clock, { gc: { maxAllocs: 50 }, allocHooks: [hang] });
    void agent.gc.collect('a');
    await reached;
    expect(store.records.get('a')?.collecting).toBe(true);
    // The crash: this agent writes nothing more; a new one starts on what it left.
    const next = agentOn(dataDir, store, new SimulatedClock(0), { gc: { maxAllocs: 50 } });
    expect(await next.start()).toEqual([]);
    expect(store.records.has('a')).toBe(false);
    expect(existsSync(allocDirOf(dataDir, 'a'))).toBe(false);
    expect(next.gc.isTerminal('a')).toBe(false);
    expect(next.gc.isTerminal('b')).toBe(true);
    await next.shutdown();
  });

  it('a crash before the mark leaves the allocation whole: the record unmarked, the dir there', async () => {
    const dataDir = freshDir();
    const store = new MemoryStore();
    const clock = new SimulatedClock(0);
    const { agent } = await fiveFinished(dataDir, store, clock, { gc: { maxAllocs: 50 } });
    // The API's record of the collection fails (as a crash before the mark would stop it): nothing else happens.
    agent.gc.beforeCollect = async () => {
      throw new Error('store closed');
    };
    expect(await agent.gc.collect('a')).toBe(false);
    expect(store.records.get('a')?.collecting).toBeUndefined();
    expect(existsSync(allocDirOf(dataDir, 'a'))).toBe(true);
    expect(agent.gc.isTerminal('a')).toBe(true);
    await agent.shutdown();
  });

  it('with the file store (each record inside its alloc dir) a collection leaves neither, and a new agent restores nothing', async () => {
    const dataDir = freshDir();
    const clock = new SimulatedClock(0);
    const agent = createAgent({ dataDir, clock, seed: 1, gc: { maxAllocs: 0, intervalMs: 60_000, usage: noDisk } });
    await agent.start();
    agent.run(spec('f', '1s'));
    await clock.advanceUntil(() => agent.gc.isTerminal('f'), 30_000, 500);
    expect(existsSync(join(allocDirOf(dataDir, 'f'), 'state.json'))).toBe(true);
    await clock.advance(60_000);
    expect(agent.list()).toEqual([]);
    expect(existsSync(allocDirOf(dataDir, 'f'))).toBe(false);
    await agent.shutdown();
    const next = createAgent({ dataDir, clock, seed: 1, gc: { usage: noDisk } });
    expect(await next.start()).toEqual([]);
    expect(next.gc.isTerminal('f')).toBe(false);
    await next.shutdown();
  });
});
