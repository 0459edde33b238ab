/**
 * A world for property runs: one allocation of mock-driver tasks on a SimulatedClock, with scripted hooks that
 * record every call, driven by a list of commands. Everything a run does is decided by its plan (hook outcomes
 * are keyed on what the hook itself was told, never on a counter of its own), so the same plan replays the
 * same way, and can be replayed with a persist/restore in the middle.
 */
import { HookError, createAllocRunner, createMockDriver, type AllocRunner, type AllocRunnerHook, type Driver, type TaskHook } from '../../src/index.ts';
import type { AllocSpec, TaskSpec, TaskState } from '../../machines/model.ts';
import { SimulatedClock, settle, untilAborted } from '../../src/testing/index.ts';
import type { NodeInfo } from '../../src/env/node-info.ts';
import { topState } from '../model/state-map.ts';

/** What a task's prestart hook does on a call, chosen by how many calls of it have succeeded before. */
export type PrestartOutcome = 'ok' | 'done' | 'fail' | 'fatal' | 'hang';

export interface TaskPlan {
  spec: TaskSpec;
  /** Outcome of the prestart call made after `i` successful calls; past the end: 'ok'. */
  prestart: PrestartOutcome[];
  /** The poststart hook blocks until the task is stopped. */
  poststartHangs: boolean;
  /** Update hooks block until the task is stopped. */
  updateHangs: boolean;
}

/** One command of a run: an event for the runner, or simulated time passing. */
export type Command =
  | { kind: 'advance'; ms: number }
  | { kind: 'kill' }
  | { kind: 'restart'; task?: string; all?: boolean; failure?: boolean }
  | { kind: 'signal'; task?: string }
  /** A new alloc version (or, when `stale`, one older than the newest sent); `stop` sets desiredStatus stop. */
  | { kind: 'update'; stale: boolean; stop: boolean }
  | { kind: 'shutdown' }
  | { kind: 'destroy' };

export interface WorldPlan {
  alloc: AllocSpec;
  tasks: TaskPlan[];
  prerunFails: boolean;
  commands: Command[];
}

/** One hook call as the hook saw it. */
export interface HookRecord {
  seq: number;
  time: number;
  owner: 'task' | 'alloc';
  task?: string;
  method: string;
  previousState?: unknown;
  /** What a prestart call answered (state and done), once it returned. */
  returned?: { state: { n: number }; done: boolean };
  modifyIndex?: number;
  aborted?: boolean;
}

/** An environment a task's driver or hook was given. */
export interface EnvSeen {
  task: string;
  where: string;
  keys: string[];
}

/** A fixed node, so runs do not depend on the machine they run on. */
export const TEST_NODE: NodeInfo = {
  id: '00000000-0000-4000-8000-000000000000',
  name: 'prop-node',
  datacenter: 'dc1',
  region: 'global',
  attributes: { 'kernel.name': 'linux' },
  meta: {},
};

/** The env keys only task `name` may see: its own env block and what its prestart hook adds. */
export function ownedKeys(spec: TaskSpec): string[] {
  return [...Object.keys(spec.env ?? {}), `HOOK_${spec.name.toUpperCase()}`];
}

/** How to build the runner of a world: which machine variant the runtime binds is up to the module graph. */
export interface WorldOptions {
  /** Persist after this many commands and continue on a new runner built from the snapshot. */
  restoreAt?: number;
}

/** A running world: the runner, its clock, and everything observed so far. */
export class World {
  readonly clock = new SimulatedClock(0);
  readonly log: HookRecord[] = [];
  readonly envs: EnvSeen[] = [];
  /** Breaks of the step invariants, each naming the step. */
  readonly breaks: string[] = [];
  /** Driver starts that began a new workload (recovered ones excluded), per task. */
  readonly starts: Record<string, number> = {};
  runner!: AllocRunner;
  /** Log length when SHUTDOWN was sent; no stop hook may start after it. */
  shutdownSeq?: number;
  /** Log length when the alloc was seen destroyed; no hook may start after it. */
  destroyedSeq?: number;
  /** Clock time by which every non-poststop task must be dead, once a kill has begun. */
  killDeadline?: number;
  restores = 0;
  private newest: number;
  private current: AllocSpec;
  private step = -1;

  private constructor(readonly plan: WorldPlan) {
    this.current = plan.alloc;
    this.newest = plan.alloc.modifyIndex ?? 1;
  }

  /** Builds the world's runner and starts it; the first command comes once its start has settled. */
  static async create(plan: WorldPlan): Promise<World> {
    const w = new World(plan);
    w.runner = w.build();
    w.runner.start();
    await settle();
    return w;
  }

  private plans(name: string): TaskPlan {
    return this.plan.tasks.find((t) => t.spec.name === name)!;
  }

  private record(r: Omit<HookRecord, 'seq' | 'time'>, abort: AbortSignal): HookRecord {
    const rec: HookRecord = { seq: this.log.length, time: this.clock.now(), ...r };
    this.log.push(rec);
    abort.addEventListener('abort', () => (rec.aborted = true), { once: true });
    return rec;
  }

  private seeEnv(task: string, where: string, env: Readonly<Record<string, string>>): void {
    this.envs.push({ task, where, keys: Object.keys(env) });
  }

  private taskHook(spec: TaskSpec): TaskHook {
    const name = spec.name;
    const plan = this.plans(name);
    const upper = name.toUpperCase();
    return {
      name: 'probe',
      prestart: async (req, res, abort) => {
        const previous = req.previousState as { n: number } | undefined;
        const rec = this.record({ owner: 'task', task: name, method: 'prestart', previousState: previous }, abort);
        this.seeEnv(name, 'prestart', req.env);
        const n = previous?.n ?? 0;
        const outcome = plan.prestart[n] ?? 'ok';
        if (outcome === 'hang') return untilAborted(abort);
        if (outcome === 'fail') throw new HookError(`scripted prestart failure of ${name}`, true);
        if (outcome === 'fatal') throw new HookError(`scripted fatal prestart failure of ${name}`, false);
        res.env = { [`HOOK_${upper}`]: String(n + 1) };
        res.state = { n: n + 1 };
        res.done = outcome === 'done';
        rec.returned = { state: { n: n + 1 }, done: res.done };
      },
      poststart: async (req, abort) => {
        this.record({ owner: 'task', task: name, method: 'poststart' }, abort);
        this.seeEnv(name, 'poststart', req.env);
        if (plan.poststartHangs) await untilAborted(abort);
      },
      preKilling: async (_req, abort) => void this.record({ owner: 'task', task: name, method: 'preKilling' }, abort),
      exited: async (_req, abort) => void this.record({ owner: 'task', task: name, method: 'exited' }, abort),
      update: async (req, abort) => {
        this.record({ owner: 'task', task: name, method: 'update', modifyIndex: req.alloc.modifyIndex }, abort);
        this.seeEnv(name, 'update', req.env);
        if (plan.updateHangs) await untilAborted(abort);
      },
      stop: async (req, abort) =>
        void this.record({ owner: 'task', task: name, method: 'stop', previousState: req.existingState }, abort),
      shutdown: async (_req, abort) => void this.record({ owner: 'task', task: name, method: 'shutdown' }, abort),
    };
  }

  private allocHook(): AllocRunnerHook {
    return {
      name: 'probe',
      prerun: async (_env, abort) => {
        this.record({ owner: 'alloc', method: 'prerun' }, abort);
        if (this.plan.prerunFails) throw new Error('scripted prerun failure');
      },
      preKill: async (abort) => void this.record({ owner: 'alloc', method: 'preKill' }, abort),
      postrun: async (abort) => void this.record({ owner: 'alloc', method: 'postrun' }, abort),
      destroy: async (abort) => void this.record({ owner: 'alloc', method: 'destroy' }, abort),
      update: async (req, abort) => void this.record({ owner: 'alloc', method: 'update', modifyIndex: req.alloc.modifyIndex }, abort),
      shutdown: async (abort) => void this.record({ owner: 'alloc', method: 'shutdown' }, abort),
    };
  }

  /** The mock driver, watched: which env each start got, and how many workloads were really started. */
  private driver(): Driver {
    const mock = createMockDriver();
    return {
      name: 'mock',
      controller: (task, ctx) => {
        this.seeEnv(task.name, 'driver', ctx.env);
        const ctrl = mock.controller(task, ctx);
        const start = ctrl.start.bind(ctrl);
        ctrl.start = async (signal) => {
          await start(signal);
          this.starts[task.name] = (this.starts[task.name] ?? 0) + 1;
        };
        return ctrl;
      },
      recover: (handle, task, ctx) => mock.recover!(handle, task, ctx),
    };
  }

  private build(snapshot?: ReturnType<AllocRunner['persist']>): AllocRunner {
    const runner = createAllocRunner(this.plan.alloc, {
      clock: this.clock,
      builtinHooks: false,
      node: TEST_NODE,
      hostEnv: {},
      dataDir: '/nonexistent/allocrun-props',
      seed: 11,
      drivers: { mock: this.driver() },
      taskHooks: (t) => [this.taskHook(t)],
      allocHooks: [this.allocHook()],
      ...(snapshot ? { snapshot } : {}),
    });
    runner.actor.subscribe({
      next: (snap) => {
        if (this.destroyedSeq === undefined && topState(snap.value) === 'destroyed') this.destroyedSeq = this.log.length;
      },
      error: (err) => this.breaks.push(`the alloc actor failed: ${(err as Error).message}`),
    });
    return runner;
  }

  /** The top-level state of the alloc runner. */
  top(): string {
    return topState(this.runner.actor.getSnapshot().value);
  }

  /** Whether the runner has let go of its tasks (agent shutdown) or finished for good. */
  finished(): boolean {
    return ['detached', 'destroyed'].includes(this.top());
  }

  /** Persists the alloc, drops the runner as a crashed agent would, and resumes from the snapshot. */
  restore(): void {
    const saved = JSON.parse(JSON.stringify(this.runner.persist()));
    this.runner.stop();
    this.restores++;
    this.runner = this.build(saved);
    this.runner.start();
  }

  private killBound(): number {
    const a = this.current;
    const per = (t: TaskSpec) => (t.shutdownDelay ?? 0) + Math.min(t.killTimeout ?? 5_000, 30_000);
    const step = (pick: (t: TaskSpec) => boolean) => Math.max(0, ...a.tasks.filter(pick).map(per));
    const sidecar = (t: TaskSpec) => t.lifecycle?.sidecar === true;
    const poststop = (t: TaskSpec) => t.lifecycle?.hook === 'poststop';
    return (
      (a.shutdownDelay ?? 0) +
      step((t) => !poststop(t) && t.leader === true) +
      step((t) => !poststop(t) && !t.leader && !sidecar(t)) +
      step((t) => !poststop(t) && !t.leader && sidecar(t))
    );
  }

  private beginKill(): void {
    if (this.killDeadline === undefined && !this.finished()) this.killDeadline = this.clock.now() + this.killBound();
  }

  /** Applies one command, lets the runtime settle, then checks the step invariants. */
  async apply(cmd: Command): Promise<void> {
    this.step++;
    const r = this.runner;
    // A finished actor takes no events (XState only warns); time still passes, and no hook may run.
    if (cmd.kind !== 'advance' && r.actor.getSnapshot().status === 'done') return this.checkStep(cmd);
    switch (cmd.kind) {
      case 'advance':
        await this.clock.advance(cmd.ms);
        break;
      case 'kill':
        this.beginKill();
        r.send({ type: 'KILL' });
        break;
      case 'restart':
        r.send({ type: 'RESTART', task: cmd.task, all: cmd.all, failure: cmd.failure });
        break;
      case 'signal':
        r.send({ type: 'SIGNAL', task: cmd.task, signal: 'SIGHUP' });
        break;
      case 'update': {
        let index: number;
        if (cmd.stale) index = Math.max(1, this.newest - 1);
        else index = ++this.newest;
        const alloc: AllocSpec = {
          ...this.current,
          modifyIndex: index,
          meta: { revision: String(index) },
          desiredStatus: cmd.stop ? 'stop' : this.current.desiredStatus,
        };
        if (!cmd.stale) this.current = alloc;
        if (cmd.stop && !cmd.stale) this.beginKill();
        r.send({ type: 'UPDATE', alloc });
        break;
      }
      case 'shutdown':
        if (this.shutdownSeq === undefined) this.shutdownSeq = this.log.length;
        r.send({ type: 'SHUTDOWN' });
        break;
      case 'destroy':
        this.beginKill();
        r.send({ type: 'DESTROY' });
        break;
    }
    await settle();
    this.checkStep(cmd);
  }

  /** Nomad's getClientStatus, written from its source, plus the failed status a prerun failure forces. */
  expectedClientStatus(taskStates: Record<string, TaskState>): string {
    if (this.plan.prerunFails) return 'failed';
    const states = Object.values(taskStates);
    if (states.some((s) => s.state === 'dead' && s.failed)) return 'failed';
    if (states.some((s) => s.state === 'running')) return 'running';
    if (states.some((s) => s.state === 'pending')) return 'pending';
    return 'complete';
  }

  private checkStep(cmd: Command): void {
    const at = `step ${this.step} (${JSON.stringify(cmd)})`;
    const state = this.runner.getState();
    const expected = this.expectedClientStatus(state.taskStates);
    if (state.clientStatus !== expected) this.breaks.push(`${at}: clientStatus ${state.clientStatus}, Nomad's rule says ${expected}`);
    for (const [name, ts] of Object.entries(state.taskStates)) {
      for (let i = 1; i < ts.events.length; i++) {
        if (ts.events[i]!.time < ts.events[i - 1]!.time) {
          this.breaks.push(`${at}: ${name}'s event ${i} (${ts.events[i]!.type}) goes back in time`);
        }
      }
      const last = ts.events.at(-1);
      if (last && last.time > this.clock.now()) this.breaks.push(`${at}: ${name} has an event from the future`);
      const restarting = ts.events.filter((e) => e.type === 'Restarting').length;
      if (ts.restarts !== restarting) this.breaks.push(`${at}: ${name} restarts=${ts.restarts} but ${restarting} Restarting events`);
    }
    if (this.killDeadline !== undefined && this.clock.now() >= this.killDeadline && this.shutdownSeq === undefined) {
      for (const t of this.current.tasks) {
        if (t.lifecycle?.hook === 'poststop') continue;
        const ts = state.taskStates[t.name]!;
        if (ts.state !== 'dead') this.breaks.push(`${at}: ${t.name} is still ${ts.state} past the kill deadline ${this.killDeadline}`);
      }
    }
  }
}
