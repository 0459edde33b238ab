/**
 * The fleets P1 and P2 compare: N copies of one command started and killed by plain
 * `child_process.spawn`, by an allocrun agent (one single-task raw_exec allocation each), and by pm2.
 * Every process is tracked by pid so the benchmark can reap it whatever happens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { firstValueFrom, filter } from 'rxjs';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { createAgent, type Agent } from '../../src/runtime/create-agent.ts';
import type { StateStore } from '../../src/state/store.ts';
import { startBareProcessAlloc } from './bare-process-alloc.ts';
import { spawnerPid } from '../../src/drivers/raw-exec/spawner.ts';
import { descendantPidsOf, reapedChildrenCpuMs, trackPid } from './pids.ts';

/** The command every fleet runs: a process that sits until killed. */
export const SLEEP = { command: '/usr/bin/sleep', args: ['1000'] };
/** The signal every fleet stops with (allocrun's kill_signal is set to match). */
export const KILL_SIGNAL = 'SIGTERM';

/** Raw `spawn`s, each in its own process group like raw_exec's. */
export class RawFleet {
  private procs: ChildProcess[] = [];

  /** Spawns `n` processes; resolves once each has spawned. */
  async start(n: number): Promise<void> {
    this.procs = Array.from({ length: n }, () => spawn(SLEEP.command, SLEEP.args, { detached: true, stdio: 'ignore' }));
    try {
      await Promise.all(this.procs.map((p) => once(p, 'spawn')));
    } catch (err) {
      this.track();
      throw err;
    }
  }

  /** Tracks the processes started (outside the timed start: each is a /proc read). */
  track(): void {
    for (const p of this.procs) trackPid(p.pid);
  }

  /** Signals every process group; resolves once each process has exited. */
  async kill(): Promise<void> {
    const exits = this.procs.map((p) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : once(p, 'exit')));
    for (const p of this.procs) process.kill(-p.pid!, KILL_SIGNAL);
    await Promise.all(exits);
    this.procs = [];
  }
}

/** Bare XState allocations, each spawning and killing one process from invoked promises (bare-process-alloc.ts). */
export class BareXStateFleet {
  private allocs: ReturnType<typeof startBareProcessAlloc>[] = [];

  /** Starts `n` allocations; resolves once each one's process runs. */
  async start(n: number): Promise<void> {
    this.allocs = Array.from({ length: n }, () => startBareProcessAlloc({ command: SLEEP.command, args: SLEEP.args, killSignal: KILL_SIGNAL }));
    try {
      await Promise.all(this.allocs.map((a) => a.running));
    } catch (err) {
      this.track();
      throw err;
    }
  }

  /** Tracks the processes started (outside the timed start: each is a /proc read). */
  track(): void {
    for (const a of this.allocs) trackPid(a.pid());
  }

  /** Sends KILL to every allocation; resolves once each is dead (its process exited). */
  async kill(): Promise<void> {
    for (const a of this.allocs) a.actor.send({ type: 'KILL' });
    await Promise.all(this.allocs.map((a) => a.done));
    this.allocs = [];
  }
}

/** One raw_exec allocation of `SLEEP`. */
export function sleepAlloc(id: string): AllocSpec {
  return {
    id, job: 'bench', group: 'g', type: 'service',
    tasks: [{ name: 'sleep', driver: 'raw_exec', config: { command: SLEEP.command, args: SLEEP.args }, killSignal: KILL_SIGNAL }],
  };
}

/** An allocrun agent running one raw_exec allocation per process. */
export class AllocrunFleet {
  private agent: Agent;
  private seq = 0;
  /** The processes that ran before the current start (beforeStart). */
  private known: Set<number> | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly builtinHooks = true,
    /** Another store than the agent's files (a profile's store that keeps nothing, to weigh the saves). */
    store?: StateStore,
  ) {
    this.agent = createAgent({ dataDir, builtinHooks, ...(store && { store }) });
  }

  /**
   * Shuts the agent down (its workloads run on) and starts a new one on the same data dir, which restores
   * every allocation and adopts the live workloads, as after an agent restart.
   */
  async restart(): Promise<void> {
    await this.agent.shutdown();
    this.agent = createAgent({ dataDir: this.dataDir, builtinHooks: this.builtinHooks });
    const restored = await this.agent.start();
    if (this.agent.restoreErrors.length > 0) throw new Error(`restore failed: ${this.agent.restoreErrors[0]!.message}`);
    const bad = restored.find((r) => r.getState().clientStatus !== 'running');
    if (bad) throw new Error(`a restored allocation is not running: ${JSON.stringify(bad.getState())}`);
  }

  /**
   * What runs before the fleet starts, so `track` can tell the fleet's processes apart. Called before a timed
   * start (else `start` takes it): it reads the stat of every process on the box, which is the bench's
   * bookkeeping, not the agent's start.
   */
  beforeStart(): void {
    this.known = new Set(descendantPidsOf(process.pid));
  }

  /** Runs `n` allocations; resolves once every one reports `running`. */
  async start(n: number): Promise<void> {
    if (!this.known) this.beforeStart();
    const runners = Array.from({ length: n }, () => this.agent.run(sleepAlloc(`a${this.seq++}`)));
    try {
      await Promise.all(runners.map((r) => firstValueFrom(r.state$.pipe(filter((s) => s.clientStatus !== 'pending')))));
    } catch (err) {
      this.track();
      throw err;
    }
    const bad = runners.find((r) => r.getState().clientStatus !== 'running');
    if (bad) {
      this.track();
      throw new Error(`an allocation did not reach running: ${JSON.stringify(bad.getState())}`);
    }
  }

  /** Tracks the agent's new processes (supervisors, workloads): after a timed start, as it scans all of /proc. */
  track(): void {
    const known = this.known ?? new Set<number>();
    for (const pid of descendantPidsOf(process.pid)) if (!known.has(pid)) trackPid(pid);
    this.known = undefined;
  }

  /** Sends KILL to every allocation; resolves once every one is terminal. */
  async kill(): Promise<void> {
    const runners = this.agent.list();
    for (const r of runners) r.send({ type: 'KILL' });
    await Promise.all(runners.map((r) => r.done));
  }

  /**
   * CPU (ms) of the raw_exec supervisors that have exited so far: the spawner helper's reaped children, each
   * with the shell it runs the task from (up to its exec). A difference of two marks is what the supervisors
   * of a start-and-kill cost, outside the agent's own usage (P1's goal counts it).
   */
  supervisorsCpuMark(): number {
    const helper = spawnerPid();
    return helper === undefined ? 0 : (reapedChildrenCpuMs(helper) ?? 0);
  }

  /** The allocations' runners. */
  runners() {
    return this.agent.list();
  }

  /** Stops the runners' actors (their processes are gone after `kill`). */
  stop(): void {
    for (const r of this.agent.list()) r.stop();
  }
}
