/**
 * The agent's allocation garbage collector (Nomad's client `AllocGarbageCollector`, client/gc.go): terminal
 * allocations are queued by when they became terminal, and destroyed oldest first while the agent holds more
 * than `maxAllocs` allocations or the data dir's file system is fuller than its thresholds, on an interval of
 * the agent's clock. `collectAll` (`PUT /v1/client/gc`) and `collect` (one allocation) do it on demand.
 * How one allocation is destroyed, and in what order its record and its dir go, is the agent's (`destroy`).
 */
import { statfs } from 'node:fs/promises';
import type { Observable } from 'rxjs';
import type { AllocState } from '../../machines/model.ts';
import type { Clock } from '../drivers/clock.ts';
import { everyInterval, type AbsoluteInterval } from './absolute-interval.ts';

/** The collector's settings; defaults are Nomad's client defaults. */
export interface GcOptions {
  /** `gc_max_allocs`: how many allocations (running and terminal) the agent keeps before it collects terminal ones. */
  maxAllocs?: number;
  /** `gc_interval` in ms: how often the thresholds are looked at. */
  intervalMs?: number;
  /** `gc_disk_usage_threshold`: percent of the data dir's file system in use above which terminal allocations go. */
  diskUsageThreshold?: number;
  /** `gc_inode_usage_threshold`: the same for inodes. */
  inodeUsageThreshold?: number;
}

/** Nomad's client defaults: GCMaxAllocs 50, GCInterval 1m, GCDiskUsageThreshold 80, GCInodeUsageThreshold 70. */
export const GC_DEFAULTS: Required<GcOptions> = { maxAllocs: 50, intervalMs: 60_000, diskUsageThreshold: 80, inodeUsageThreshold: 70 };

/** How full the data dir's file system is, in percent of blocks and of inodes. */
export interface DiskUsage {
  diskPercent: number;
  inodePercent: number;
}

/** What the collector works on: the agent's count of allocations and its way of destroying one. */
export interface GcTarget {
  /** Every allocation the agent holds (runners and finished records alike): what `maxAllocs` bounds. */
  count(): number;
  /** Destroys one terminal allocation: destroy hooks, alloc dir, record. Resolves once it is all gone. */
  destroy(id: string): Promise<void>;
  /** Told what a pass could not do; the pass goes on with the next allocation. */
  log(line: string): void;
}

/** The data dir's file system usage by `statfs` (cheap: one system call); undefined when it cannot be read. */
export function statfsUsage(dir: string): () => Promise<DiskUsage | undefined> {
  return async () => {
    try {
      const s = await statfs(dir);
      const diskPercent = s.blocks > 0 ? ((s.blocks - s.bfree) / s.blocks) * 100 : 0;
      const inodePercent = s.files > 0 ? ((s.files - s.ffree) / s.files) * 100 : 0;
      return { diskPercent, inodePercent };
    } catch {
      return undefined;
    }
  };
}

/** The agent's collector; `start()` arms its interval, `stop()` ends it (a pass under way finishes first). */
export class AllocGarbageCollector {
  /** Terminal allocations by id, with when each became terminal: the oldest is collected first. */
  private readonly queue = new Map<string, number>();
  /** Allocations whose destroy failed in this pass: queued again once it ends, so one pass never loops on them. */
  private readonly failed = new Map<string, number>();
  private readonly settings: Required<GcOptions>;
  private schedule?: AbsoluteInterval;
  /** One pass or collection at a time: a destroy never races another of the same allocation. */
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly target: GcTarget,
    private readonly clock: Clock,
    opts: GcOptions = {},
    private readonly usage: () => Promise<DiskUsage | undefined> = async () => undefined,
  ) {
    this.settings = { ...GC_DEFAULTS, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) };
  }

  /** Queues a terminal allocation, stamped with when it became terminal (a second mark keeps the first). */
  markForCollection(id: string, terminalAt: number): void {
    if (!this.queue.has(id)) this.queue.set(id, terminalAt);
  }

  /** Takes an allocation off the queue without collecting it. */
  remove(id: string): void {
    this.queue.delete(id);
  }

  /** Whether `id` is a terminal allocation waiting to be collected. */
  has(id: string): boolean {
    return this.queue.has(id);
  }

  /** How many terminal allocations wait. */
  get size(): number {
    return this.queue.size;
  }

  /** Arms the interval (absolute-interval.ts): a pass at start + k·interval on the clock. */
  start(): void {
    this.schedule ??= everyInterval(this.clock, this.settings.intervalMs, () => this.keepUsageBelowThreshold());
  }

  /** Disarms the interval and waits for a pass under way. */
  async stop(): Promise<void> {
    const schedule = this.schedule;
    this.schedule = undefined;
    await schedule?.stop();
    await this.running.catch(() => undefined);
  }

  /** One pass: collects the oldest terminal allocations while the agent is over a threshold. Resolves with their ids. */
  keepUsageBelowThreshold(): Promise<string[]> {
    return this.exclusive(async () => {
      const collected: string[] = [];
      for (;;) {
        if (!(await this.overThreshold())) break;
        const id = this.oldest();
        if (id === undefined) break;
        if (await this.destroy(id)) collected.push(id);
      }
      return collected;
    });
  }

  /**
   * Makes room for an allocation the agent just took on (Nomad's MakeRoomFor): collects the oldest terminal
   * allocations while the agent holds more than `maxAllocs`, at once rather than at the next pass, so a burst
   * of new allocations never leaves it holding more finished ones than the bound. Resolves with their ids.
   */
  makeRoom(): Promise<string[]> {
    if (this.target.count() <= this.settings.maxAllocs || this.queue.size === 0) return Promise.resolve([]);
    return this.exclusive(async () => {
      const collected: string[] = [];
      for (let id = this.oldest(); id !== undefined && this.target.count() > this.settings.maxAllocs; id = this.oldest()) if (await this.destroy(id)) collected.push(id);
      return collected;
    });
  }

  /** Collects every terminal allocation now (Nomad's CollectAll). Resolves with their ids. */
  collectAll(): Promise<string[]> {
    return this.exclusive(async () => {
      const collected: string[] = [];
      for (let id = this.oldest(); id !== undefined; id = this.oldest()) if (await this.destroy(id)) collected.push(id);
      return collected;
    });
  }

  /** Collects one allocation if it is terminal; false when it is not queued (running, unknown, or gone already). */
  collect(id: string): Promise<boolean> {
    return this.exclusive(async () => (this.queue.has(id) ? this.destroy(id) : false));
  }

  private async overThreshold(): Promise<boolean> {
    if (this.target.count() > this.settings.maxAllocs) return true;
    const usage = await this.usage();
    return usage !== undefined && (usage.diskPercent > this.settings.diskUsageThreshold || usage.inodePercent > this.settings.inodeUsageThreshold);
  }

  private oldest(): string | undefined {
    let best: string | undefined;
    let at = Infinity;
    for (const [id, t] of this.queue) if (t < at) [best, at] = [id, t];
    return best;
  }

  /** Destroys one queued allocation; a failure is logged and the allocation queued again after this pass. */
  private async destroy(id: string): Promise<boolean> {
    const at = this.queue.get(id)!;
    this.queue.delete(id);
    try {
      await this.target.destroy(id);
      return true;
    } catch (err) {
      this.failed.set(id, at);
      this.target.log(`allocation ${id} could not be garbage collected (tried again at the next pass): ${err instanceof Error ? err.message : String(err)}`);
      return false;
    }
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const body = async () => {
      try {
        return await fn();
      } finally {
        for (const [id, at] of this.failed) this.markForCollection(id, at);
        this.failed.clear();
      }
    };
    const run = this.running.then(body, body);
    this.running = run.catch(() => undefined);
    return run;
  }
}

/** The agent's collector as its users (the API, an embedding app) see it. */
export interface AgentGc {
  /** Collects one terminal allocation now; false when it is not terminal or not this agent's (Nomad then refuses). */
  collect(id: string): Promise<boolean>;
  /** Collects every terminal allocation now (`PUT /v1/client/gc`); resolves with their ids. */
  collectAll(): Promise<string[]>;
  /** One pass of the interval's work now: collects while over `maxAllocs` or a disk threshold. */
  keepUsageBelowThreshold(): Promise<string[]>;
  /** Whether `id` is a terminal allocation the collector may destroy. */
  isTerminal(id: string): boolean;
  /** Each allocation once it is collected (its dir and record gone). */
  readonly collected$: Observable<string>;
  /**
   * Awaited before an allocation's record and dir start to go, with its final state: the API records that the
   * client collected it (durably), so no later agent takes the missing record for an allocation never started.
   * A throw leaves the allocation as it was (queued again at the next pass).
   */
  beforeCollect?: (id: string, state: AllocState) => Promise<void>;
}
