/**
 * `createAgent({ dataDir })`: many allocations under one agent, each persisted as it changes; on start
 * the agent restores every allocation it finds (reattaching to live workloads), and `shutdown()` leaves
 * the workloads running for the next agent, as Nomad's client does across restarts.
 */
import { FileStateStore, ensureDataDir } from '../state/file-store.ts';
import { StateStoreError, type AllocRecord, type StateStore } from '../state/store.ts';
import type { AllocSpec } from '../jobspec/types.ts';
import type { AllocState } from '../../machines/model.ts';
import { BehaviorSubject, Subject, type Observable } from 'rxjs';
import { validateAllocSpec } from '../jobspec/validate.ts';
import { CheckScheduler } from '../checks/scheduler.ts';
import { CheckStore } from '../checks/check-store.ts';
import { realClock } from '../drivers/clock.ts';
import { vouchFor } from './validated-specs.ts';
import { gateKills } from './kill-gate.ts';
import { withDefaultDrivers } from './default-drivers.ts';
import { killSaveMayWait, stoppingTasks, unsavedKill } from './restored-kill.ts';
import type { Driver } from '../drivers/controller.ts';
import { createAllocRunner, persistedView, type AllocRunner, type AllocRunnerOptions, type PersistedAllocRunner } from './create-alloc-runner.ts';
import { AllocGarbageCollector, statfsUsage, type AgentGc, type DiskUsage, type GcOptions } from './alloc-gc.ts';
import { collectionOf, finishCollection } from './collect-alloc.ts';
import { localNodeInfo } from '../env/node-info.ts';

/** What the agent keeps per allocation: the store's record plus the actor snapshot to resume from. */
export type AgentRecord = AllocRecord & {
  snapshot?: PersistedAllocRunner;
  /** Set while the garbage collector destroys the allocation: a next agent finishes the collection, never restores it. */
  collecting?: true;
};

export interface AgentOptions extends Omit<AllocRunnerOptions, 'snapshot' | 'dataDir'> {
  dataDir: string;
  /** Where allocations are persisted; default: files under `dataDir`. */
  store?: StateStore;
  /** Told about each persisted allocation `start()` could not restore (the error names the file). */
  onRestoreError?: (err: StateStoreError) => void;
  /** The garbage collector of terminal allocations (alloc-gc.ts; Nomad's client defaults); `usage` reads the disk (default: statfs of `dataDir`). */
  gc?: GcOptions & { usage?: () => Promise<DiskUsage | undefined> };
}

export interface Agent {
  /**
   * Restores every persisted allocation whose runner had not finished (a failed allocation may still
   * have sidecars to kill and poststop tasks to run). A damaged record is moved aside and reported in
   * `restoreErrors`; the others are restored all the same. Resolves with the restored runners.
   */
  start(): Promise<AllocRunner[]>;
  /**
   * Runs a new allocation under this agent; throws a SpecError, before touching the disk, for a bad spec.
   * With `resume`, an earlier agent may have started it and died before its runner's first save: what
   * that one spawned is adopted, not started again.
   */
  run(spec: AllocSpec, opts?: { resume?: boolean }): AllocRunner;
  /** The records `start()` could not restore, each naming its file. */
  readonly restoreErrors: readonly StateStoreError[];
  get(id: string): AllocRunner | undefined;
  list(): AllocRunner[];
  /**
   * The allocation's state as its runner's record last settled on disk, current value first (a restored
   * runner's: the state it was restored from): what an agent restarted now would restore, so what the
   * agent's API shows. Follows the saves (states between two saves are never shown; the last always is); a
   * failed save settles too, with its `error`, so a failing disk does not freeze the view. Completes once
   * saving stops (shutdown, a record set aside); undefined for an id this agent does not run.
   */
  saved$(id: string): Observable<SavedState> | undefined;
  /** Agent exit: every allocation is persisted, then shut down with its tasks left running. */
  shutdown(): Promise<void>;
  /** The garbage collector of terminal allocations: its passes run on the agent's clock from `start()` to `shutdown()`. */
  readonly gc: AgentGc;
  /**
   * The node's meta from now on (Nomad's dynamic node metadata, `/v1/client/metadata`): allocations started or
   * restored after see it as `${meta.*}`; running ones keep the node they started with.
   */
  setNodeMeta(meta: Readonly<Record<string, string>>): void;
}

/**
 * What one settled save of a runner's record holds: the allocation state it wrote, and, when the write failed,
 * why (the state was not written; the runner's next change saves again).
 */
export interface SavedState {
  state: AllocState;
  error?: Error;
}

/** An allocation id already in use by this agent. */
export class DuplicateAllocError extends Error {
  readonly code = 'ErrDuplicateAlloc';
  constructor(id: string) {
    super(`allocation ${JSON.stringify(id)} is already running under this agent`);
    this.name = 'DuplicateAllocError';
  }
}

/** How long a Killing save waits for its kill's exit at most (Nomad's client batches its alloc updates to the servers every 200 ms). */
const KILL_SAVE_WAIT_MS = 500;

/**
 * Persists the newest snapshot of one runner, never two writes at once and never an older after a newer.
 * A save waits for the end of the turn that asked for it (one `setImmediate`), except the allocation's first
 * (its spec), which is never delayed: a start or a kill is a cascade of snapshots (the alloc's and its task
 * runners' macrosteps), and the turn's last one is the one to write. A kill that follows a task's death
 * not yet on disk waits for that save (`deathsDurable`, the kill gate: kill-gate.ts), so the sidecar a main
 * task's death stops is signalled only once the death would be restored. Not a timer on the agent's clock:
 * a simulated clock's `advance` settles the same way.
 * Each settled save whose state is new (or whose outcome differs from the last) is told on `saved$`, with
 * the state the record holds: the agent's API follows that, never the live runner, so no client reads a
 * state a crash could take back (Nomad's task runner persists its state before it tells the server).
 * A kill's first save, the Killing one, waits for the kill's exit where a restore would take the KILL again
 * from the driver's stop marker (restored-kill.ts, killSaveMayWait): one save per kill fewer. Not for long:
 * the API shows the kill once it is saved, so a workload slow to die has it saved KILL_SAVE_WAIT_MS later.
 */
function persistenceFor(store: StateStore, spec: AllocSpec, runner: AllocRunner, createdAt: number, drivers: () => Readonly<Record<string, Driver>>) {
  let pending = false;
  let writing: Promise<void> | undefined;
  let frozen = false;
  /** Whether the first write (the spec) has begun. */
  let started = false;
  /** Set while a write waits for the end of its turn: ends the wait at once (freeze, halt). */
  let hurry: (() => void) | undefined;
  let urgent = false;
  /** Saves asked for so far, and how many of those asks the last finished write covered. */
  let asked = 0;
  let covered = 0;
  const waiting: { upTo: number; resolve: () => void }[] = [];
  /** When each task that is dead on disk died (its finishedAt); a restored runner's record is on disk. */
  let savedDeaths = deathsOf(runner.getState());
  /** The state the last write put on disk, and the tasks that were stopping then (a restored runner's: its record). */
  let savedState = runner.getState();
  let stoppingAtSave = stoppingTasks(runner);
  /** A Killing save waiting for the kill's exit: its deadline, after which it is written all the same. */
  let killSaveDue: NodeJS.Timeout | undefined;
  let killSaveOverdue = false;
  const mayWait = (): boolean => {
    if (urgent || killSaveOverdue || waiting.length > 0) return false;
    if (!killSaveMayWait(runner, drivers(), savedState, stoppingAtSave)) return false;
    killSaveDue ??= setTimeout(() => {
      killSaveDue = undefined;
      killSaveOverdue = true;
      schedule();
    }, KILL_SAVE_WAIT_MS).unref();
    return true;
  };
  const stopWaiting = () => {
    clearTimeout(killSaveDue);
    killSaveDue = undefined;
    killSaveOverdue = false;
  };
  // The runner's state as `state$` last gave it: the same object for the same state, so a save that wrote
  // nothing new is told by reference, not by comparing states. A restored runner's first one is on disk.
  let latest!: AllocState;
  const following = runner.state$.subscribe((state) => (latest = state));
  const saved$ = new BehaviorSubject<SavedState>({ state: latest });
  const settled = (state: AllocState, error: Error | undefined) => {
    const last = saved$.value;
    if (state !== last.state || (error === undefined) !== (last.error === undefined)) saved$.next(error ? { state, error } : { state });
  };
  const stopTelling = () => {
    stopWaiting();
    following.unsubscribe();
    saved$.complete();
  };
  const release = () => {
    for (let i = waiting.length - 1; i >= 0; i--) {
      if (frozen || waiting[i]!.upTo <= covered) waiting.splice(i, 1)[0]!.resolve();
    }
  };
  const endOfTurn = async (): Promise<void> => {
    if (urgent || !started) return;
    await new Promise<void>((resolve) => {
      const immediate = setImmediate(() => {
        hurry = undefined;
        resolve();
      });
      hurry = () => {
        clearImmediate(immediate);
        hurry = undefined;
        resolve();
      };
    });
  };
  const flush = async (): Promise<void> => {
    while (pending && !frozen) {
      await endOfTurn();
      if (!pending || frozen) break;
      pending = false;
      // The Killing save of a kill whose stop marker is its record: the exit's save writes it (or the deadline's).
      if (mayWait()) break;
      stopWaiting();
      started = true;
      const upTo = asked;
      // The state written is the one told: `state$`'s newest value is the runner's state (it emits every change).
      const shown = latest;
      const record: AgentRecord = { spec, state: shown, createdAt, updatedAt: Date.now(), snapshot: savedView(runner.actor) };
      const stopping = stoppingTasks(runner);
      // A failed save is not retried here (the next change saves again); a kill waiting on it goes ahead, and
      // its state is told all the same (as Nomad's task runner logs a failed persist and still tells the server).
      const error = await store.save(spec.id, record).then(() => undefined, (err: unknown) => (err instanceof Error ? err : new Error(String(err))));
      if (!error) {
        savedDeaths = deathsOf(record.state);
        savedState = shown;
        stoppingAtSave = stopping;
      }
      covered = upTo;
      settled(shown, error);
      release();
    }
    release();
  };
  const schedule = () => {
    asked++;
    pending = true;
    if (!writing) writing = flush().finally(() => (writing = undefined));
  };
  /**
   * Resolves once the runner's snapshot as it is now is saved (or saving stopped). It asks for a save
   * itself: a kill's body can run inside the macrostep that caused it, before the agent hears of it.
   */
  const durable = (): Promise<void> => {
    if (frozen) return Promise.resolve();
    schedule();
    const upTo = asked;
    return new Promise((resolve) => waiting.push({ upTo, resolve }));
  };
  return {
    schedule,
    saved$: saved$.asObservable(),
    /**
     * What a kill waits for before its first signal: the save of any task death not yet on disk (a main
     * task's that stops its sidecar, a failed task's that stops its siblings), else nothing. A kill with
     * no such cause (a KILL from outside: the API commits the stop first) signals at once; the driver's stop
     * marker says it was a kill if the agent dies before the kill is saved.
     */
    deathsDurable(): Promise<void> | undefined {
      if (frozen) return undefined;
      const deaths = deathsOf(runner.getState());
      for (const [task, at] of deaths) if (!savedDeaths.has(task) || savedDeaths.get(task) !== at) return durable();
      return undefined;
    },
    /** Writes the current snapshot now and stops writing: what a later agent restores from. */
    async freeze(): Promise<void> {
      urgent = true;
      pending = true;
      hurry?.();
      await writing;
      await flush();
      frozen = true;
      release();
      stopTelling();
    },
    /** Stops writing without a last save, once any write under way is done: the record is being set aside. */
    async halt(): Promise<void> {
      frozen = true;
      pending = false;
      hurry?.();
      release();
      await writing;
      stopTelling();
    },
  };
}

/** When each dead task of `state` died (finishedAt), by task name: what tells a new death from a saved one. */
function deathsOf(state: AllocState): Map<string, number | undefined> {
  const deaths = new Map<string, number | undefined>();
  for (const task in state.taskStates) {
    const ts = state.taskStates[task]!;
    if (ts.state === 'dead') deaths.set(task, ts.finishedAt);
  }
  return deaths;
}

/**
 * Whether a runner's snapshot (live, or as persisted) says it has nothing left to do: its postrun hooks ran
 * (`terminal`) or it was destroyed. Anything else, a failed allocation included, is restored and carries on.
 */
function finishedSnapshot(snap: { status?: string; value?: unknown }): boolean {
  return snap.status === 'done' || snap.value === 'terminal' || snap.value === 'destroyed';
}

/** Whether a persisted runner has nothing left to do (finishedSnapshot): start() holds its record, never resumes it. */
function runnerFinished(persisted: PersistedAllocRunner): boolean {
  return finishedSnapshot(persisted.snapshot as { status?: string; value?: unknown });
}

/**
 * What a save keeps of the runner: the persisted snapshot to resume from while it has anything left to do;
 * once finished, only the status and state value that say so. A finished runner is never resumed: start() reads
 * nothing else of its snapshot (runnerFinished, by the same rule), so its context and children were written,
 * read back and held for nothing, and every allocation's last save copied and serialised them (~33 µs of the
 * agent's thread at each kill; a 4.7 KB record becomes 1.1 KB: docs/benchmarks.md, 2026-11-27 11:10).
 */
function savedView(actor: AllocRunner['actor']): PersistedAllocRunner {
  const snap = actor.getSnapshot() as { status: string; value: unknown };
  if (!finishedSnapshot(snap)) return persistedView(actor);
  return { __allocrun: 'alloc-runner', snapshot: { status: snap.status, value: snap.value } };
}

/** Builds an agent; call `start()` to restore what `dataDir` holds. */
export function createAgent(opts: AgentOptions): Agent {
  if (!opts.store) ensureDataDir(opts.dataDir);
  const store = opts.store ?? new FileStateStore(opts.dataDir);
  const runners = new Map<string, { runner: AllocRunner; persist: ReturnType<typeof persistenceFor>; createdAt: number }>();
  // Records of allocations that had finished before this agent started: not restored, but held (and collected) all the same.
  const finished = new Map<string, AgentRecord>();
  const clock = opts.clock ?? realClock;
  // One check scheduler and result store for every allocation (Nomad's client-wide checkstore).
  const checks = { ...opts.checks, scheduler: opts.checks?.scheduler ?? new CheckScheduler(opts.clock ?? realClock), store: opts.checks?.store ?? new CheckStore() };

  // The node new allocations see: replaced whole when its meta changes (a node is an immutable value: task-env.ts).
  let node = opts.node;

  // The drivers the runners use, asked whether a task's stop leaves a marker and whether a restored task's stop had begun (restored-kill.ts).
  let drivers: Record<string, Driver> | undefined;
  const driversOfRunners = () => (drivers ??= withDefaultDrivers(opts.drivers, { taskUser: opts.taskUser }));

  const launch = (spec: AllocSpec, snapshot?: PersistedAllocRunner, createdAt = Date.now(), resume = false, validated = false): AllocRunner => {
    if (runners.has(spec.id)) throw new DuplicateAllocError(spec.id);
    const { store: _store, ...runnerOpts } = opts;
    void _store;
    // Validated by run() a moment ago: createAllocRunner need not parse it again (validated-specs.ts).
    if (validated) vouchFor(spec);
    const runner = createAllocRunner(spec, { ...runnerOpts, ...(node && { node }), dataDir: opts.dataDir, snapshot, resume, checks });
    const persist = persistenceFor(store, spec, runner, createdAt, driversOfRunners);
    runners.set(spec.id, { runner, persist, createdAt });
    gateKills(runner.actor.system, () => persist.deathsDurable());
    // Every snapshot, not only task-state changes: a hook finishing or a start beginning is progress a
    // restore must not repeat.
    runner.actor.subscribe({ next: () => persist.schedule(), error: () => persist.schedule() });
    // Awaited by whoever wants the outcome; an actor error must not become an unhandled rejection here.
    runner.done.then(() => {
      // Terminal (postrun done), not detached at shutdown: from now on the garbage collector may destroy it.
      if (runners.get(spec.id)?.runner === runner && runner.actor.getSnapshot().value === 'terminal') collector.markForCollection(spec.id, clock.now());
    }, () => undefined);
    runner.start();
    persist.schedule();
    return runner;
  };

  let beforeCollect: AgentGc['beforeCollect'];
  const collected$ = new Subject<string>();
  const collector = new AllocGarbageCollector(
    {
      count: () => runners.size + finished.size,
      log: (line) => process.stderr.write(`allocrun agent: ${line}\n`),
      destroy: async (id) => {
        const live = runners.get(id);
        const record = finished.get(id);
        if (!live && !record) return;
        const collection = collectionOf({ store, dataDir: opts.dataDir, id, live, record });
        await beforeCollect?.(id, collection.state);
        await collection.run();
        runners.delete(id);
        finished.delete(id);
        collected$.next(id);
      },
    },
    clock,
    opts.gc,
    opts.gc?.usage ?? statfsUsage(opts.dataDir),
  );
  const gc: AgentGc = {
    collect: (id) => collector.collect(id),
    collectAll: () => collector.collectAll(),
    keepUsageBelowThreshold: () => collector.keepUsageBelowThreshold(),
    isTerminal: (id) => collector.has(id),
    collected$: collected$.asObservable(),
    get beforeCollect() {
      return beforeCollect;
    },
    set beforeCollect(fn) {
      beforeCollect = fn;
    },
  };

  const restoreErrors: StateStoreError[] = [];
  const report = (err: StateStoreError) => {
    restoreErrors.push(err);
    opts.onRestoreError?.(err);
  };

  return {
    async start() {
      const restored: AllocRunner[] = [];
      const scan = store.scan ? await store.scan({ quarantine: true }) : { records: await store.list(), problems: [] };
      scan.problems.forEach(report);
      for (const record of scan.records as AgentRecord[]) {
        // A collection the last agent did not finish: its dir and record go now, before anyone reads them.
        if (record.collecting) {
          await finishCollection(store, opts.dataDir, record.spec.id);
          continue;
        }
        if (record.snapshot && !runners.has(record.spec.id) && runnerFinished(record.snapshot)) {
          finished.set(record.spec.id, record);
          collector.markForCollection(record.spec.id, record.updatedAt);
        }
        if (!record.snapshot || runners.has(record.spec.id) || runnerFinished(record.snapshot)) continue;
        try {
          const runner = launch(record.spec, record.snapshot, record.createdAt ?? record.updatedAt);
          const snap = runner.actor.getSnapshot();
          if (snap.status === 'error') throw snap.error;
          // A KILL the dead agent took (its stop signals out) and died before saving: taken again, once.
          const killed = unsavedKill(runner, driversOfRunners());
          if (killed) {
            process.stderr.write(`allocrun agent: allocation ${record.spec.id}: task ${JSON.stringify(killed)} was being killed when the last agent stopped, and its record does not say so: killing the allocation again\n`);
            runner.send({ type: 'KILL' });
          }
          restored.push(runner);
        } catch (err) {
          const failed = runners.get(record.spec.id);
          failed?.runner.stop();
          // A snapshot this runtime cannot resume (damaged, or from an incompatible version). Its saves stop
          // before the record is set aside: a save landing after would bring the damaged record back.
          await failed?.persist.halt();
          runners.delete(record.spec.id);
          const where = store.locate?.(record.spec.id) ?? record.spec.id;
          const problem = new StateStoreError(
            `${where}: allocation ${JSON.stringify(record.spec.id)} cannot be resumed from its runner snapshot (damaged, or written by an incompatible allocrun): ${err instanceof Error ? err.message : String(err)}`,
            where,
            { cause: err },
          );
          report(store.quarantine ? await store.quarantine(record.spec.id, problem) : problem);
        }
      }
      collector.start();
      return restored;
    },
    get restoreErrors() {
      return restoreErrors;
    },
    run: (spec, runOpts) => {
      const runner = launch(validateAllocSpec(spec), undefined, Date.now(), runOpts?.resume ?? false, true);
      // Room for it among the allocations the agent holds (Nomad's MakeRoomFor), beside its start.
      collector.makeRoom().catch((err: unknown) => process.stderr.write(`allocrun agent: making room for allocation ${spec.id}: ${err instanceof Error ? err.message : String(err)}\n`));
      return runner;
    },
    get: (id) => runners.get(id)?.runner,
    list: () => [...runners.values()].map((r) => r.runner),
    saved$: (id) => runners.get(id)?.persist.saved$,
    gc,
    setNodeMeta(meta) {
      const base = node ?? localNodeInfo();
      node = Object.freeze({ ...base, meta: Object.freeze({ ...meta }) });
    },
    async shutdown() {
      await collector.stop();
      // Persist first: the record must say "running" for the next agent, not "detaching".
      await Promise.all([...runners.values()].map((r) => r.persist.freeze()));
      for (const { runner } of runners.values()) runner.send({ type: 'SHUTDOWN' });
      await Promise.all([...runners.values()].map((r) => r.runner.done));
    },
  };
}
