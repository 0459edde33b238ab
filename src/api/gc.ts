/**
 * Garbage collection as the API sees it. The client's (the agent's collector, src/runtime/alloc-gc.ts) is
 * recorded here before it deletes anything: the allocation's final state goes into the allocations table, so the
 * API keeps showing it (as Nomad's server keeps an allocation its client collected) and no later agent starts it
 * again. The server's (Nomad's core scheduler, nomad/core_sched.go) deletes, on an interval or when forced
 * (`PUT /v1/system/gc`), the terminal allocations and evaluations older than `evalGcThreshold` and the dead jobs
 * older than `jobGcThreshold`, with their evaluations and allocations; an allocation the agent still holds is
 * collected by the agent first, so the server never forgets one whose dir and record are still there.
 */
import type { Clock } from '../drivers/clock.ts';
import { realClock } from '../drivers/clock.ts';
import { everyInterval, type AbsoluteInterval } from '../runtime/absolute-interval.ts';
import type { Agent } from '../runtime/create-agent.ts';
import type { AllocEntry, EvalRecord, JobEntry, JobRegistry } from './job-registry.ts';

/** The server collector's settings; defaults are Nomad's server defaults. */
export interface ServerGcOptions {
  /** `eval_gc_threshold`: how long a terminal evaluation or allocation is kept (ms; Nomad: 1h). */
  evalGcThresholdMs?: number;
  /** `job_gc_threshold`: how long a dead job is kept (ms; Nomad: 4h). */
  jobGcThresholdMs?: number;
  /** `job_tracked_versions`: how many versions of a job are kept (Nomad: 6; src/api/job-versions.ts). */
  jobTrackedVersions?: number;
  /** How often the server collector runs (ms; Nomad's eval and job GC intervals: 5m). */
  intervalMs?: number;
  /** The clock its interval and thresholds are read on (the agent's). */
  clock?: Clock;
}

/** Nomad's server defaults. */
export const SERVER_GC_DEFAULTS = { evalGcThresholdMs: 3_600_000, jobGcThresholdMs: 4 * 3_600_000, intervalMs: 5 * 60_000 } as const;

/** What one server collection deleted. */
export interface Reaped {
  jobs: string[];
  evals: string[];
  allocs: string[];
}

const isTerminal = (a: AllocEntry) => a.lastState.clientStatus === 'complete' || a.lastState.clientStatus === 'failed';

/** One job's records as the choice reads them (the job may be gone already, its allocations and evaluations not). */
export interface JobRecords {
  job?: JobEntry & { type: string; status: 'pending' | 'running' | 'dead' };
  evals: EvalRecord[];
  allocs: AllocEntry[];
}

/**
 * What the server collects of one job at `now` (ms), Nomad's rules on one node: a dead job (stopped, or a batch
 * job whose allocations all finished) last changed `jobGcThresholdMs` ago or more goes whole, its evaluations and
 * allocations with it. Otherwise a running batch job keeps everything (its finished allocations are what stop the
 * scheduler placing them again); of any other job, a terminal allocation the job no longer wants (replaced, stopped,
 * or the job gone or stopped) older than `evalGcThresholdMs` goes, and a finished evaluation that old whose
 * allocations all go.
 */
export function chooseGarbage(r: JobRecords, now: number, t: { evalGcThresholdMs: number; jobGcThresholdMs: number }): Reaped {
  const { job, evals, allocs } = r;
  const evalOld = (e: EvalRecord) => e.Status !== 'blocked' && e.Status !== 'pending' && now - e.ModifyTime / 1e6 >= t.evalGcThresholdMs;
  if (job && job.status === 'dead' && (job.stop || job.type === 'batch') && allocs.every(isTerminal) && !evals.some((e) => e.Status === 'blocked' || e.Status === 'pending')) {
    const lastChange = Math.max(job.versions.at(-1)!.submitTime, ...allocs.map((a) => a.modifyTime), ...evals.map((e) => e.ModifyTime / 1e6));
    if (now - lastChange >= t.jobGcThresholdMs) return { jobs: [job.id], evals: evals.map((e) => e.ID), allocs: allocs.map((a) => a.id) };
  }
  if (job && !job.stop && job.type === 'batch') return { jobs: [], evals: [], allocs: [] };
  const unwanted = (a: AllocEntry) => !job || job.stop || a.desired !== 'run' || a.nextAllocation !== undefined;
  const going = new Set(allocs.filter((a) => isTerminal(a) && unwanted(a) && now - a.modifyTime >= t.evalGcThresholdMs).map((a) => a.id));
  const goingEvals = evals.filter((e) => evalOld(e) && allocs.every((a) => a.evalId !== e.ID || going.has(a.id)));
  return { jobs: [], evals: goingEvals.map((e) => e.ID), allocs: [...going] };
}

/** What the server collector works with. */
export interface GcContext {
  agent: Agent;
  registry: JobRegistry;
}

/**
 * Runs the server collector once (`force`: thresholds 0, as `nomad system gc`). One job at a time, in that job's
 * write queue (no registration of it plans meanwhile): its allocations the agent still holds are collected by the
 * agent first (one it cannot collect, still running its last hooks, keeps its job and evaluation), then what was
 * chosen is deleted in one commit. Resolves with what was deleted.
 */
export async function collectServerGarbage(ctx: GcContext, opts: ServerGcOptions & { force?: boolean } = {}): Promise<Reaped> {
  const { agent, registry } = ctx;
  const now = (opts.clock ?? realClock).now();
  const t = opts.force ? { evalGcThresholdMs: 0, jobGcThresholdMs: 0 } : { evalGcThresholdMs: opts.evalGcThresholdMs ?? SERVER_GC_DEFAULTS.evalGcThresholdMs, jobGcThresholdMs: opts.jobGcThresholdMs ?? SERVER_GC_DEFAULTS.jobGcThresholdMs };
  const jobIds = new Set([...registry.listJobs().map((j) => j.id), ...registry.listAllocs().map((a) => a.jobId), ...registry.listEvals().map((e) => e.JobID)]);
  const reaped: Reaped = { jobs: [], evals: [], allocs: [] };
  for (const jobId of jobIds) {
    await registry.serialize(jobId, async () => {
      const chosen = chooseGarbage(recordsOf(registry, jobId), now, t);
      for (const id of [...chosen.allocs]) {
        if (!agent.get(id) && !agent.gc.isTerminal(id)) continue;
        if (await agent.gc.collect(id)) continue;
        // Still running its last hooks (or its collection failed): it stays, and so does whatever refers to it.
        chosen.allocs.splice(chosen.allocs.indexOf(id), 1);
        chosen.jobs = [];
        const evalId = registry.findAlloc(id)?.evalId;
        chosen.evals = chosen.evals.filter((e) => e !== evalId);
      }
      if (chosen.jobs.length + chosen.evals.length + chosen.allocs.length === 0) return;
      await registry.reap(chosen);
      reaped.jobs.push(...chosen.jobs);
      reaped.evals.push(...chosen.evals);
      reaped.allocs.push(...chosen.allocs);
    });
  }
  return reaped;
}

function recordsOf(registry: JobRegistry, jobId: string): JobRecords {
  const entry = registry.getJob(jobId);
  const job = entry && { ...entry, type: String(entry.versions.at(-1)!.job['Type'] ?? 'service'), status: registry.jobStatus(entry) };
  return { job, evals: registry.listEvals().filter((e) => e.JobID === jobId), allocs: [...registry.allocsOfJob(jobId)] };
}

/**
 * Wires garbage collection into the API: the agent's collections are recorded (and followed) by the registry, a
 * finished allocation the registry already recorded as collected (an agent that crashed in between) is collected
 * now, and the server collector runs on its interval. Returns what undoes it, for the API's close.
 */
export function wireGarbageCollection(ctx: GcContext, opts: ServerGcOptions = {}): () => Promise<void> {
  const { agent, registry } = ctx;
  agent.gc.beforeCollect = (id, state) => registry.recordCollection(id, state);
  const following = agent.gc.collected$.subscribe((id) => registry.collected(id));
  // Recorded as collected by an agent that died before it deleted anything: collected now, or (restored from a save
  // older than its end) once it has run to the end again.
  for (const a of registry.listAllocs()) {
    if (!a.collectedState) continue;
    if (agent.gc.isTerminal(a.id)) void agent.gc.collect(a.id);
    else void agent.get(a.id)?.done.then(() => agent.gc.isTerminal(a.id) && agent.gc.collect(a.id), () => undefined);
  }
  const schedule: AbsoluteInterval = everyInterval(opts.clock ?? realClock, opts.intervalMs ?? SERVER_GC_DEFAULTS.intervalMs, () =>
    collectServerGarbage(ctx, opts).catch((err: unknown) => registry.log(`server garbage collection failed: ${err instanceof Error ? err.message : String(err)}`)),
  );
  return async () => {
    following.unsubscribe();
    // Refused, not unrecorded: an allocation collected with no API to record it would look, to the next agent, like one never started.
    agent.gc.beforeCollect = async () => {
      throw new Error('the API is closed: nothing is collected until an agent serves it again');
    };
    await schedule.stop();
  };
}
