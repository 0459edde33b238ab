/**
 * `createAgent({ dataDir })`: many allocations under one agent, each persisted as it changes; on start
 * the agent restores every allocation it finds (reattaching to live workloads), and `shutdown()` leaves
 * the workloads running for the next agent, as Nomad's client does across restarts.
 */
import { FileStateStore } from '../state/file-store.ts';
import type { AllocRecord, StateStore } from '../state/store.ts';
import type { AllocSpec } from '../jobspec/types.ts';
import { createAllocRunner, type AllocRunner, type AllocRunnerOptions, type PersistedAllocRunner } from './create-alloc-runner.ts';

/** What the agent keeps per allocation: the store's record plus the actor snapshot to resume from. */
export type AgentRecord = AllocRecord & { snapshot?: PersistedAllocRunner };

export interface AgentOptions extends Omit<AllocRunnerOptions, 'snapshot' | 'dataDir'> {
  dataDir: string;
  /** Where allocations are persisted; default: files under `dataDir`. */
  store?: StateStore;
}

export interface Agent {
  /** Restores every persisted allocation that had not finished. Resolves with the restored runners. */
  start(): Promise<AllocRunner[]>;
  /** Runs a new allocation under this agent. */
  run(spec: AllocSpec): AllocRunner;
  get(id: string): AllocRunner | undefined;
  list(): AllocRunner[];
  /** Agent exit: every allocation is persisted, then shut down with its tasks left running. */
  shutdown(): Promise<void>;
}

/** An allocation id already in use by this agent. */
export class DuplicateAllocError extends Error {
  readonly code = 'ErrDuplicateAlloc';
  constructor(id: string) {
    super(`allocation ${JSON.stringify(id)} is already running under this agent`);
    this.name = 'DuplicateAllocError';
  }
}

/** Persists the newest snapshot of one runner, never two writes at once and never an older after a newer. */
function persistenceFor(store: StateStore, spec: AllocSpec, runner: AllocRunner, createdAt: number) {
  let pending = false;
  let writing: Promise<void> | undefined;
  let frozen = false;
  const flush = async (): Promise<void> => {
    while (pending && !frozen) {
      pending = false;
      const record: AgentRecord = { spec, state: runner.getState(), createdAt, updatedAt: Date.now(), snapshot: runner.persist() };
      await store.save(spec.id, record).catch(() => undefined);
    }
  };
  const schedule = () => {
    pending = true;
    if (!writing) writing = flush().finally(() => (writing = undefined));
  };
  return {
    schedule,
    /** Writes the current snapshot now and stops writing: what a later agent restores from. */
    async freeze(): Promise<void> {
      pending = true;
      await writing;
      await flush();
      frozen = true;
    },
  };
}

/** Builds an agent; call `start()` to restore what `dataDir` holds. */
export function createAgent(opts: AgentOptions): Agent {
  const store = opts.store ?? new FileStateStore(opts.dataDir);
  const runners = new Map<string, { runner: AllocRunner; persist: ReturnType<typeof persistenceFor> }>();

  const launch = (spec: AllocSpec, snapshot?: PersistedAllocRunner, createdAt = Date.now()): AllocRunner => {
    if (runners.has(spec.id)) throw new DuplicateAllocError(spec.id);
    const { store: _store, ...runnerOpts } = opts;
    void _store;
    const runner = createAllocRunner(spec, { ...runnerOpts, dataDir: opts.dataDir, snapshot });
    const persist = persistenceFor(store, spec, runner, createdAt);
    runners.set(spec.id, { runner, persist });
    runner.state$.subscribe(() => persist.schedule());
    runner.start();
    persist.schedule();
    return runner;
  };

  return {
    async start() {
      const restored: AllocRunner[] = [];
      for (const record of (await store.list()) as AgentRecord[]) {
        if (!record.snapshot || runners.has(record.spec.id)) continue;
        const status = record.state.clientStatus;
        if (status === 'complete' || status === 'failed') continue;
        restored.push(launch(record.spec, record.snapshot, record.createdAt ?? record.updatedAt));
      }
      return restored;
    },
    run: (spec) => launch(spec),
    get: (id) => runners.get(id)?.runner,
    list: () => [...runners.values()].map((r) => r.runner),
    async shutdown() {
      // Persist first: the record must say "running" for the next agent, not "detaching".
      await Promise.all([...runners.values()].map((r) => r.persist.freeze()));
      for (const { runner } of runners.values()) runner.send({ type: 'SHUTDOWN' });
      await Promise.all([...runners.values()].map((r) => r.runner.done));
    },
  };
}
