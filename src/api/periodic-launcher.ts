/**
 * Nomad's periodic launcher (`nomad/periodic.go`, PeriodicDispatch) on the agent: a periodic job places
 * nothing itself; at each launch time of its crons the launcher registers a child job
 * `<parent>/periodic-<unix seconds>` (ParentID set, no periodic block: a plain batch job), skipping a launch
 * while an earlier child still runs when `prohibit_overlap` is set. `force` launches one now.
 *
 * Durable without timers that persist: the `periodic` table holds each periodic job's last launch (at first,
 * when it was registered: written in the registration's own transaction), and a launch writes its time in the
 * same transaction as the child job. The next launch is always derived from that record and the clock, so a
 * crash never launches twice (the record moves with the child) and an acknowledged force is never lost (it is
 * answered after that commit). After downtime it does what Nomad's leader does on restore: when at least one
 * launch was missed, one child is launched at once (unless overlap is prohibited and a child still runs), not
 * one per missed launch; then the schedule goes on from now.
 */
import type { Clock } from '../drivers/clock.ts';
import type { AgentStore, WriteTx } from '../state/agent-store.ts';
import { isPeriodicActive, nextLaunch, periodicOf } from '../jobspec/periodic.ts';
import type { JobEntry, JobRegistry, RegisterResult } from './job-registry.ts';
import type { Json } from './job-json.ts';

/** What the `periodic` table keeps per periodic job: its last launch, or when it was first registered (ms). */
export interface LaunchRecord {
  launch: number;
}

/** The longest a platform timer may wait (Node's setTimeout overflows past it). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A force that cannot launch: its HTTP status and Nomad's words. */
export class PeriodicForceError extends Error {
  readonly code = 'ErrPeriodicForce';
  constructor(
    readonly status: 404 | 400,
    message: string,
  ) {
    super(message);
    this.name = 'PeriodicForceError';
  }
}

/** The ID of the child launched at `launchMs` (Nomad's `<parent>/periodic-<unix seconds>`). */
export const childIdOf = (parentId: string, launchMs: number): string => `${parentId}/periodic-${Math.floor(launchMs / 1000)}`;

/** The periodic launcher of one agent; `start` after the registry has healed, `close` before the store closes. */
export class PeriodicLauncher {
  private readonly timers = new Map<string, { handle: unknown; due: number }>();
  private closed = false;

  constructor(
    private readonly registry: JobRegistry,
    private readonly store: AgentStore,
    private readonly clock: Clock,
    private readonly log: (line: string) => void = (line) => registry.log(line),
  ) {}

  /** The time on the launcher's clock. */
  now(): number {
    return this.clock.now();
  }

  /** The record of job `id`, as committed. */
  record(id: string): LaunchRecord | undefined {
    const v = this.store.get('periodic', id) as LaunchRecord | undefined;
    return v && typeof v.launch === 'number' ? v : undefined;
  }

  /** The next launch of job `id` as now scheduled (ms), if it is an active periodic job with one to come. */
  nextLaunchOf(id: string): number | undefined {
    return this.timers.get(id)?.due;
  }

  /** Part of every registry write of jobs: a new periodic job's first record; a purged job's record removed. */
  written(tx: WriteTx, jobs: ReadonlyMap<string, JobEntry | null>): void {
    for (const [id, entry] of jobs) {
      if (entry === null) tx.remove('periodic', id);
      else if (isPeriodicActive(entry.versions.at(-1)!.job, entry.stop) && !this.record(id)) tx.put('periodic', id, { launch: this.clock.now() } satisfies LaunchRecord);
    }
  }

  /** After every registry write of jobs: each one's schedule follows its new state. */
  applied(jobs: ReadonlyMap<string, JobEntry | null>): void {
    for (const id of jobs.keys()) this.schedule(id);
  }

  /**
   * Takes over every periodic job the store holds: one missed launch is made up at once (Nomad's
   * restorePeriodicDispatcher), then each is scheduled from now.
   */
  async start(): Promise<void> {
    const now = this.clock.now();
    for (const entry of this.registry.listJobs()) {
      const job = entry.versions.at(-1)!.job;
      if (!isPeriodicActive(job, entry.stop)) continue;
      const last = this.record(entry.id)?.launch ?? now;
      const missed = nextLaunch(periodicOf(job)!, last);
      if (missed !== undefined && missed < now && this.overlapAllowed(entry)) {
        try {
          await this.launch(entry.id, now, 'restore');
        } catch (err) {
          this.log(`periodic job ${JSON.stringify(entry.id)}: the launch missed while the agent was down could not be made: ${(err as Error).message}`);
        }
      }
      this.schedule(entry.id);
    }
  }

  /** Launches a child of job `id` now, whatever its prohibit_overlap says (`nomad job periodic force`). */
  async force(id: string): Promise<RegisterResult> {
    const entry = this.registry.getJob(id);
    if (!entry) throw new PeriodicForceError(404, 'job not found');
    const job = entry.versions.at(-1)!.job;
    if (!periodicOf(job)) throw new PeriodicForceError(400, "can't force launch non-periodic job");
    if (!isPeriodicActive(job, entry.stop)) throw new PeriodicForceError(400, `force launch for job ${JSON.stringify(id)} failed: can't force run non-tracked job ${JSON.stringify(id)} (${entry.namespace}): it is ${entry.stop ? 'stopped' : 'disabled (periodic.enabled = false)'}`);
    return this.launch(id, this.clock.now(), 'force');
  }

  /** Stops every timer: the agent is shutting down. */
  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) this.clock.clearTimeout(t.handle);
    this.timers.clear();
  }

  /** Sets (or clears) job `id`'s timer from its record and the clock (and past `handled`, a launch time dealt with). */
  private schedule(id: string, handled = 0): void {
    const old = this.timers.get(id);
    if (old) this.clock.clearTimeout(old.handle);
    this.timers.delete(id);
    const entry = this.registry.getJob(id);
    if (this.closed || !entry || !isPeriodicActive(entry.versions.at(-1)!.job, entry.stop)) return;
    const after = Math.max(this.record(id)?.launch ?? 0, this.clock.now(), handled);
    const due = nextLaunch(periodicOf(entry.versions.at(-1)!.job)!, after);
    if (due === undefined) return;
    this.arm(id, due);
  }

  private arm(id: string, due: number): void {
    const wait = Math.min(Math.max(0, due - this.clock.now()), MAX_TIMER_MS);
    const handle = this.clock.setTimeout(() => {
      if (this.timers.get(id)?.handle !== handle || this.closed) return;
      // A wait cut at the platform's longest timer: wait on.
      if (this.clock.now() < due) return this.arm(id, due);
      this.timers.delete(id);
      void this.due(id, due);
    }, wait);
    this.timers.set(id, { handle, due });
  }

  /** A launch time has come: launch unless overlap is prohibited and a child runs; then the next one. */
  private async due(id: string, due: number): Promise<void> {
    try {
      const entry = this.registry.getJob(id);
      if (!entry || !isPeriodicActive(entry.versions.at(-1)!.job, entry.stop)) return;
      if (!this.overlapAllowed(entry)) {
        this.log(`periodic job ${JSON.stringify(id)}: skipping the launch of ${new Date(due).toISOString()}: the job prohibits overlap and a child still runs`);
      } else {
        await this.launch(id, due, 'schedule');
      }
    } catch (err) {
      if (!this.closed) this.log(`periodic job ${JSON.stringify(id)}: the launch of ${new Date(due).toISOString()} failed: ${(err as Error).message}`);
    } finally {
      // Past the launch just made (or skipped): a skipped launch is not tried again.
      this.schedule(id, due);
    }
  }

  /** Whether a launch may start now: overlap allowed, or no child of the job still pending or running. */
  private overlapAllowed(entry: JobEntry): boolean {
    if (!periodicOf(entry.versions.at(-1)!.job)?.ProhibitOverlap) return true;
    return !this.registry.listJobs().some((j) => j.versions.at(-1)!.job['ParentID'] === entry.id && this.registry.jobStatus(j) !== 'dead');
  }

  /**
   * Registers the child launched at `at`, in the parent's queue (so a stop or an update of the parent is
   * never crossed), its launch record in the same transaction.
   */
  private launch(id: string, at: number, why: 'schedule' | 'force' | 'restore'): Promise<RegisterResult> {
    return this.registry.serialize(id, async () => {
      const entry = this.registry.getJob(id);
      if (!entry || !isPeriodicActive(entry.versions.at(-1)!.job, entry.stop)) throw new PeriodicForceError(400, `job ${JSON.stringify(id)} is no longer an active periodic job`);
      const parent = entry.versions.at(-1)!;
      const childId = childIdOf(id, at);
      const { Periodic: _p, ...rest } = parent.job;
      const child: Json = { ...rest, ID: childId, Name: childId, ParentID: id };
      const allocs = parent.allocs.map((s) => ({ ...s, job: childId, parentJob: id }));
      const result = await this.registry.register(child, allocs, '', {
        trigger: 'periodic-job',
        also: (tx) => tx.put('periodic', id, { launch: at } satisfies LaunchRecord),
      });
      if (why !== 'schedule') this.log(`periodic job ${JSON.stringify(id)}: launched ${JSON.stringify(childId)} (${why === 'force' ? 'forced' : 'a launch was missed while the agent was down'})`);
      this.schedule(id);
      return result;
    });
  }
}
