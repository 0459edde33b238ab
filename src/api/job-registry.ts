/**
 * The agent's jobs and their allocations, scheduled the way Nomad's scheduler does on one node: a
 * registration becomes a new job version, and each allocation is kept, updated in place, or replaced;
 * a count change places or stops instances. Registrations of one job are applied one at a time, in the
 * order they arrived. Every change takes the next index and is published on the event stream.
 *
 * A write is planned on copies, committed to the agent's store as one transaction (the job's version, its
 * evaluation, every allocation it places, updates or stops), and only then applied: runners started or
 * told, events published, the caller answered. A failed commit changes nothing. `heal` runs the same
 * reconcile over every job when the agent starts, so a crash between any two steps is made good.
 */
import { randomUUID } from 'node:crypto';
import { map, Subject, Subscription, type Observable } from 'rxjs';
import type { AllocSpec, AllocState } from '../jobspec/types.ts';
import type { Agent, SavedState } from '../runtime/create-agent.ts';
import type { AllocRunner } from '../runtime/create-alloc-runner.ts';
import { allocJson, allocStubJson, type AllocView } from './alloc-json.ts';
import { canonicalJob, sameJob } from './job-canonical.ts';
import { deploymentOf } from './deployment-id.ts';
import { deploymentsPromoted } from './deployment-marks.ts';
import { canaryCountOf, destructiveLimit, maxParallelOf, progressDeadlineOf } from './rollout.ts';
import { PROGRESS_PREFIX, progressRecord, type ProgressRecord } from './progress-deadline.ts';
import { DeploymentWatcher, type DeploymentHost } from './deployment-watcher.ts';
import { groupUpdate } from './job-diff.ts';
import type { Json } from './job-json.ts';
import type { NodeIdentity } from './node.ts';
import { infeasibility, type Infeasible, type NodeFacts } from '../jobspec/constraints.ts';
import { localNodeInfo } from '../env/node-info.ts';
import type { EventBroker, StreamEvent } from './event-broker.ts';
import type { StateIndex } from './state-index.ts';
import type { AgentStore, WriteTx } from '../state/agent-store.ts';
import { readAllocs, readEvals, readJobs } from './registry-records.ts';
import { PortAllocator, probeHost, portsHeld, staticPortsToProbe, type HostBusy } from './port-allocator.ts';
import { askOf, fitResources, hostCapacity, resourcesUsed, type Capacity } from './node-capacity.ts';
import type { FailedPlacement } from './alloc-metric.ts';
import { failedAfterAttempts, failureSummary, planAttempts, settleEvaluations } from './blocked-evals.ts';
import { StoreCommitError } from '../state/agent-store.ts';
import { commitInOrder, commitVisibleInOrder } from './ordered-commit.ts';
import { periodicOf } from '../jobspec/periodic.ts';
import { DEFAULT_JOB_TRACKED_VERSIONS, keptVersions } from './job-versions.ts';
import { withPolicyIds } from './scaling-policies.ts';
import { removeScalingEvents } from './scaling-events.ts';
import { isParameterizedParent } from '../jobspec/parameterized.ts';
import { batchFollowups, nextDelay, nextReschedule, reschedulePolicyOf, trackerAfter } from './reschedule-policy.ts';
import type { FollowupTimer } from './reschedule-timer.ts';
import { writeSubmissions, type SubmissionSource } from './job-submissions.ts';

/** Nomad's IsPeriodic || IsParameterized: the job places nothing itself, its launches or dispatches do. */
const launchesChildren = (job: Json): boolean => periodicOf(job) !== undefined || isParameterizedParent(job);

/** One registered version of a job. */
export interface JobVersion {
  version: number;
  /** The job as submitted, canonical (Nomad's defaults filled), without server fields. */
  job: Json;
  /** One spec per group instance, as the job file loader made them (ids are placeholders). */
  allocs: AllocSpec[];
  submitTime: number;
  jobModifyIndex: number;
  /** Set once the version's deployment succeeded (Nomad's `Stable`): what an auto-revert goes back to. */
  stable?: boolean;
}

/** A registered job. */
export interface JobEntry {
  id: string;
  namespace: string;
  versions: JobVersion[];
  stop: boolean;
  createIndex: number;
  modifyIndex: number;
  jobModifyIndex: number;
}

/** An allocation with its runner (absent for one restored from disk that had already finished). */
export interface AllocEntry extends Omit<AllocView, 'state'> {
  runner?: AllocRunner;
  lastState: AllocState;
  /** Adopted from a runner record the store's allocations table does not have yet (`heal` records it). */
  unrecorded?: boolean;
  /**
   * The state the allocation ended in, recorded when the client garbage collected it (its runner record and alloc
   * dir are gone, or going): what the API shows from then on, and what tells a later agent it finished.
   */
  collectedState?: AllocState;
}

/** What the store keeps of an allocation: all the registry knows of it but its runner and live state. */
export type StoredAlloc = Omit<AllocEntry, 'runner' | 'lastState' | 'modifyIndex' | 'modifyTime' | 'unrecorded'>;

/** An evaluation, as Nomad's scheduler records one per write (always complete here: one node, no queue). */
export interface EvalRecord {
  ID: string;
  Namespace: string;
  Priority: number;
  Type: string;
  TriggeredBy: 'job-register' | 'periodic-job' | 'job-deregister' | 'alloc-stop' | 'alloc-failure' | 'failed-follow-up' | 'reconnect' | 'queued-allocs' | 'max-plan-attempts' | 'deployment-watcher' | 'job-scaling';
  JobID: string;
  JobModifyIndex: number;
  /**
   * `complete` once planned and written (with FailedTGAllocs when groups could not be placed); `blocked` for
   * the evaluation made to place them when capacity frees; `canceled` for a blocked one superseded; `failed`
   * for one whose plan could not be written after Nomad's number of attempts (blocked-evals.ts); `pending` for a
   * follow-up that reschedules failed allocations at its `WaitUntil` (reschedule-timer.ts).
   */
  Status: 'complete' | 'blocked' | 'canceled' | 'failed' | 'pending';
  StatusDescription: string;
  /** Nomad's AllocMetric per group that could not be placed. */
  FailedTGAllocs?: Record<string, Json>;
  QueuedAllocations?: Record<string, number>;
  /** The blocked evaluation this one made, and (on that one) the evaluation that made it. */
  BlockedEval?: string;
  PreviousEval?: string;
  /** When a pending follow-up is processed (RFC 3339, as Nomad's API shows it). */
  WaitUntil?: string;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
}

/** What a registration or deregistration answers (Nomad's JobRegisterResponse). */
export interface RegisterResult {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Warnings: string;
  Index: number;
}

/** Nomad's job summary counters for one group. */
interface GroupSummary {
  Queued: number;
  Complete: number;
  Failed: number;
  Running: number;
  Starting: number;
  Lost: number;
  Unknown: number;
}

/** The instance number of an allocation: its spec's (the agent places with one), else from a name given the job loader's way (`<job>-<group>-<n>`), else 0. */
function instanceOf(spec: AllocSpec): number {
  if (spec.index !== undefined) return spec.index;
  const prefix = `${spec.job}-${spec.group}-`;
  return spec.id.startsWith(prefix) && /^\d+$/.test(spec.id.slice(prefix.length)) ? Number(spec.id.slice(prefix.length)) : 0;
}

const isTerminal = (s: AllocState) => s.clientStatus === 'complete' || s.clientStatus === 'failed';

/** The jobs and allocations of one agent. */
/** Fields of an allocation a write may change: what `apply` copies from a draft onto the live entry. */
const WRITABLE = ['desired', 'desiredDescription', 'spec', 'allocModifyIndex', 'modifyTime', 'jobVersion', 'nextAllocation', 'previousAllocation', 'evalId', 'followupEvalId', 'failedAt'] as const;

/**
 * A placement that did not fit (ports, CPU, cores, memory): its evaluation, group, Nomad's exhausted dimension,
 * what its tasks asked for and how long the attempt took (for the AllocMetric), the reason, whom it replaced.
 */
export interface PlacementFailure extends FailedPlacement {
  evalId?: string;
  group: string;
  reason: string;
  previous?: string;
  /** Set when the node was filtered out (its datacenter, or a constraint), not exhausted. */
  filter?: Infeasible;
}

/** One write being planned: drafts of what changes, applied only after the store has committed them. */
class Change {
  readonly jobs = new Map<string, JobEntry | null>();
  readonly allocs = new Map<string, AllocEntry>();
  /** Drafts of allocations to start once applied (new ones). */
  readonly starts: string[] = [];
  /** Allocations whose runner is told to stop, or to take their new spec in place. */
  readonly kills: string[] = [];
  readonly updates: string[] = [];
  readonly evals: EvalRecord[] = [];
  readonly events: (() => StreamEvent)[] = [];
  /** More writes for the same transaction (a periodic launch's record beside its child job). */
  readonly also: ((tx: WriteTx) => void)[] = [];
  /** The evaluation of the job being planned: what its placements carry as EvalID. */
  evalId?: string;
  /** Placements that found no ports, per group: recorded on the evaluation, nothing placed. */
  readonly failed: PlacementFailure[] = [];
  /** Static ports the host refused to bind, probed before planning. */
  hostBusy: HostBusy = new Map();
  /** Deployments' progress records this write changes (progress-deadline.ts), written in its transaction. */
  readonly progress = new Map<string, ProgressRecord>();
  /** Where the submission of each new job version comes from (job-submissions.ts), written in its transaction. */
  readonly submissions = new Map<string, SubmissionSource>();

  constructor(readonly index: number) {}
}

/** The jobs and allocations of one agent. */
export class JobRegistry {
  private readonly jobs = new Map<string, JobEntry>();
  private readonly allocs = new Map<string, AllocEntry>();
  /** Memos of the allocations in order, overall and per job; `setAlloc` drops them. */
  private sorted?: AllocEntry[];
  private byJob?: Map<string, AllocEntry[]>;
  private readonly evals = new Map<string, EvalRecord>();
  /** Allocations whose runner record was damaged and set aside: never started afresh over what may still run. */
  private readonly quarantined = new Map<string, string>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly placements = new Subject<{ spec: AllocSpec; runner: AllocRunner }>();
  /** Index of the newest change to the jobs table and to the allocations table. */
  jobsIndex = 0;
  allocsIndex = 0;
  /**
   * Index of the newest change to any job's summary or status (Nomad's `job_summary` table): with `jobsIndex`,
   * the scope of the jobs list, whose stubs carry both. An allocation update that changes neither (a task
   * event, a health verdict) does not move it.
   */
  summaryIndex = 0;
  /** Index of the newest change to the evaluations table. */
  evalsIndex = 0;
  private readonly summaryAt = new Map<string, number>();
  /** The node every allocation runs on: this agent (node.ts; set before `load`). */
  node!: NodeIdentity;
  /** The node's host ports: what placements of groups with a network block are given. */
  ports = new PortAllocator();
  /** The node's CPU, cores and memory: what the tasks' resource asks are fitted into. */
  capacity: Capacity = hostCapacity();
  /** Each job's open blocked evaluation: processed again when capacity frees. */
  private readonly blocked = new Map<string, string>();
  /** How many versions of each job are kept beyond those an allocation names (job-versions.ts). */
  trackedVersions = DEFAULT_JOB_TRACKED_VERSIONS;
  /** Set once the agent is shutting down: its tasks ending then free nothing to schedule into. */
  private closed = false;
  /** Set once `heal` has written: blocked evaluations wait for it, so they never plan beside the start's reconcile. */
  private healed = false;
  /** What `watch` follows of each runner, until `detach`. */
  private readonly following = new Subscription();
  /** Writes planned and being committed, not yet applied. */
  private readonly inflight = new Set<Change>();
  /**
   * The periodic launcher's part in each write (periodic-launcher.ts): `written` adds to the transaction of the
   * jobs a change writes, `applied` is told once they are live.
   */
  periodic?: { written(tx: WriteTx, jobs: ReadonlyMap<string, JobEntry | null>): void; applied(jobs: ReadonlyMap<string, JobEntry | null>): void };
  /**
   * The clock progress deadlines are set and judged by (the agent's: serve-agent-api.ts gives the one its deployment
   * watcher's timers run on).
   */
  progressNow: () => number = Date.now;
  /**
   * Nomad's deployment watcher on this registry (deployment-watcher.ts): health verdicts roll deployments on, mark
   * versions stable or revert them; promotions; fails by the progress deadline.
   */
  readonly deployments: DeploymentWatcher;
  /** The follow-up evaluations' timers, on the agent's clock (reschedule-timer.ts; set by serve-agent-api.ts before `heal`). */
  followups?: FollowupTimer;
  /** Where the registry reports what it could not do without failing a request (a runner that would not start). */
  log: (line: string) => void = (line) => process.stderr.write(`allocrun agent: ${line}\n`);

  constructor(
    private readonly agent: Agent,
    private readonly index: StateIndex,
    private readonly events: EventBroker,
    private readonly store: AgentStore,
    private readonly now: () => number = Date.now,
  ) {
    this.deployments = new DeploymentWatcher(this.host());
  }

  /** Stops background scheduling (blocked evaluations processed again): the agent is shutting down. */
  close(): void {
    this.closed = true;
    this.followups?.close();
  }

  /**
   * Stops following the runners (`watch`): the API is closed. No one reads their states here any more, and the
   * agent's last saves at its shutdown may settle after the store is closed.
   */
  detach(): void {
    this.following.unsubscribe();
  }

  /** Every allocation this registry starts, as it starts. */
  get placed$(): Observable<{ spec: AllocSpec; runner: AllocRunner }> {
    return this.placements.asObservable();
  }

  /** Runs `fn` after every earlier queued change of job `id`: one registration at a time, in arrival order. */
  serialize<T>(id: string, fn: () => T | Promise<T>): Promise<T> {
    const previous = this.queues.get(id) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.queues.set(id, tail);
    void tail.then(() => this.queues.get(id) === tail && this.queues.delete(id));
    return run;
  }

  /**
   * Registers (or updates) a job: `job` is its API JSON, `allocs` its instances from the job loader.
   * Resolves once the new version, its evaluation and its allocations are durable; a failed commit rejects
   * with a StoreCommitError and changes nothing.
   */
  async register(job: Json, allocs: AllocSpec[], warnings: string, opts: { also?: (tx: WriteTx) => void; trigger?: EvalRecord['TriggeredBy']; submission?: SubmissionSource } = {}): Promise<RegisterResult> {
    const id = String(job['ID']);
    const canonical = canonicalJob(job);
    const existing = this.jobs.get(id);
    if (this.unchanged(existing, canonical)) {
      // Nomad: an unchanged job is not a new version and nothing is scheduled.
      return { EvalID: '', EvalCreateIndex: existing.modifyIndex, JobModifyIndex: existing.jobModifyIndex, Warnings: warnings, Index: existing.modifyIndex };
    }
    const hostBusy = await this.probe(allocs);
    const { change, planned: evalId } = this.planAt(hostBusy, (change) => {
      const entry = this.withVersion(id, existing, canonical, allocs, change.index);
      change.jobs.set(id, entry);
      change.events.push(() => this.jobEvent(this.jobs.get(id)!, 'JobRegistered', change.index));
      if (opts.also) change.also.push(opts.also);
      if (opts.submission) change.submissions.set(id, opts.submission);
      // Nomad evaluates no periodic or parameterized job: its launches and dispatches place children, the job itself nothing.
      if (launchesChildren(canonical)) return '';
      const evalId = this.evaluate(change, entry, opts.trigger ?? 'job-register');
      this.reconcile(change, entry);
      return evalId;
    });
    await this.write(change);
    const { index } = change;
    return { EvalID: evalId, EvalCreateIndex: evalId ? index : 0, JobModifyIndex: index, Warnings: warnings, Index: index };
  }

  /** Whether `canonical` is the job's current version as it stands, the job not stopped: nothing to register or plan. */
  private unchanged(existing: JobEntry | undefined, canonical: Json): existing is JobEntry {
    return existing !== undefined && !existing.stop && sameJob(existing.versions.at(-1)!.job, canonical);
  }

  /** The job's entry with `canonical` (its instances `allocs`) as a new current version, written at `index`. */
  private withVersion(id: string, existing: JobEntry | undefined, canonical: Json, allocs: AllocSpec[], index: number): JobEntry {
    const version: JobVersion = { version: existing ? existing.versions.at(-1)!.version + 1 : 0, job: canonical, allocs, submitTime: this.now(), jobModifyIndex: index };
    return existing
      ? { ...existing, versions: [...existing.versions, version], stop: false, modifyIndex: index, jobModifyIndex: index }
      : { id, namespace: String(canonical['Namespace']), versions: [version], stop: false, createIndex: index, modifyIndex: index, jobModifyIndex: index };
  }

  /** Stops a job (a new version with `Stop`), or with `purge` forgets it; its allocations are stopped. */
  async deregister(id: string, purge: boolean): Promise<RegisterResult | undefined> {
    const existing = this.jobs.get(id);
    if (!existing) return undefined;
    const { change, planned: evalId } = this.planAt(new Map(), (change) => {
      const { index } = change;
      const entry: JobEntry = { ...existing, versions: [...existing.versions], modifyIndex: index, jobModifyIndex: index };
      if (!entry.stop) {
        const current = entry.versions.at(-1)!;
        entry.versions.push({ ...current, version: current.version + 1, submitTime: this.now(), jobModifyIndex: index });
        entry.stop = true;
      }
      change.jobs.set(id, purge ? null : entry);
      change.events.push(() => this.jobEvent(entry, 'JobDeregistered', index));
      const evalId = this.evaluate(change, entry, 'job-deregister');
      for (const a of this.allocsOfJob(id)) if (a.desired === 'run') this.stop(change, a, 'alloc not needed due to job update', 'PlanResult');
      return evalId;
    });
    await this.write(change);
    const { index } = change;
    return { EvalID: evalId, EvalCreateIndex: index, JobModifyIndex: index, Warnings: '', Index: index };
  }

  /** Stops one allocation; a replacement is placed while its job still wants it (`nomad alloc stop`). */
  async stopAllocation(a: AllocEntry): Promise<{ index: number; evalId: string }> {
    const hostBusy = await this.probe(this.jobs.get(a.jobId)?.versions.at(-1)!.allocs ?? []);
    const { change, planned: evalId } = this.planAt(hostBusy, (change) => {
      if (a.desired !== 'run') return '';
      this.stop(change, a, 'alloc was stopped by the user', 'AllocationUpdateDesiredStatus');
      const job = this.jobs.get(a.jobId);
      const template = job && !job.stop ? job.versions.at(-1)!.allocs.filter((s) => s.group === a.group)[a.index] : undefined;
      const evalId = job ? this.evaluate(change, job, 'alloc-stop') : '';
      // A failed allocation already rescheduled has its replacement (Nomad's reconciler ignores it).
      if (job && template && !a.nextAllocation) this.place(change, job, template, a.index, a);
      return evalId;
    });
    await this.write(change);
    return { index: change.index, evalId };
  }

  /**
   * Loads what the store holds (jobs, evaluations, the registry's allocations); call before `adopt`. A
   * damaged entry throws a StoreDamagedError naming it: the agent refuses to start rather than lose it.
   */
  load(): void {
    for (const { key, value } of readJobs(this.store)) this.jobs.set(key, value);
    for (const { key, value } of readEvals(this.store)) {
      this.evals.set(key, value);
      const open = this.evals.get(this.blocked.get(value.JobID)!);
      if (value.Status === 'blocked' && (!open || open.CreateIndex < value.CreateIndex)) this.blocked.set(value.JobID, key);
    }
    for (const { key, value } of readAllocs(this.store)) {
      this.setAlloc(key, { ...value, modifyIndex: value.allocModifyIndex, modifyTime: value.createTime, lastState: value.collectedState ?? { clientStatus: 'pending', taskStates: {} } });
    }
    for (const { key, value } of this.store.entries('quarantine').values) {
      // Looked up by allocation ID: a key that is not text names none.
      const entry = value as { table?: unknown; key?: string } | null;
      if (entry?.table === 'runners') this.quarantined.set(entry.key!, `quarantine/${key}`);
    }
    this.jobsIndex = Math.max(0, ...[...this.jobs.values()].map((j) => j.modifyIndex));
    this.evalsIndex = Math.max(0, ...[...this.evals.values()].map((e) => e.ModifyIndex));
    this.allocsIndex = Math.max(0, ...[...this.allocs.values()].map((a) => a.allocModifyIndex));
    // Summaries are counted anew from the restored allocations, and the old agent's last summary changes
    // are not in the store: every job's summary is taken as changed at the store's newest index, past any
    // index an earlier agent served (they are reserved there), so no watcher holding one is answered with a
    // smaller one or left to wait out its whole wait.
    for (const id of this.jobs.keys()) this.summaryAt.set(id, this.store.savedIndex);
    this.summaryIndex = this.store.savedIndex;
  }

  /**
   * Takes over allocations an earlier agent ran (restored runners, and finished ones from their records).
   * One the store does not know (run by an embedding app, or from before the store) gets a record of its
   * own at the next `heal`.
   */
  adopt(found: { spec: AllocSpec; state: AllocState; createdAt?: number; updatedAt: number; runner?: AllocRunner }[]): void {
    for (const r of found) {
      // Called once, with each runner found once: the store's entry, if any, has none yet.
      const known = this.allocs.get(r.spec.id);
      const index = this.index.next();
      const entry: AllocEntry = known
        ? { ...known, modifyIndex: index, modifyTime: r.updatedAt, lastState: r.runner?.getState() ?? r.state, runner: r.runner }
        : {
            id: r.spec.id, spec: r.spec, jobId: r.spec.job, namespace: r.spec.namespace ?? 'default', group: r.spec.group,
            index: instanceOf(r.spec), jobVersion: 0, desired: r.spec.desiredStatus ?? 'run', desiredDescription: '',
            createIndex: index, allocModifyIndex: index, createTime: r.createdAt ?? r.updatedAt,
            modifyIndex: index, modifyTime: r.updatedAt, lastState: r.runner?.getState() ?? r.state, runner: r.runner, unrecorded: true,
          };
      this.setAlloc(entry.id, entry);
      if (r.runner) this.watch(entry, r.runner);
      this.allocsIndex = index;
    }
    this.index.changed(this.index.current);
  }

  /**
   * Reconciles every job with what exists, as Nomad's scheduler does on one node, and makes it so: the
   * allocations a job wants and lacks are placed, extra ones and those of stopped jobs stopped, an
   * allocation the store says should run but that never started is started, one it says should stop is
   * stopped, and a restored runner that missed an in-place update gets it. Desired state wins: nothing
   * desired stopped is ever started again. Run once at agent start, after `load` and `adopt`.
   */
  async heal(): Promise<void> {
    const hostBusy = await this.probe([...this.jobs.values()].flatMap((j) => j.versions.at(-1)!.allocs));
    const { change } = this.planAt(hostBusy, (change) => {
      for (const a of this.allocs.values()) if (a.unrecorded) change.allocs.set(a.id, { ...a, unrecorded: undefined });
      for (const job of this.jobs.values()) {
        const before = change.allocs.size;
        // The job's evaluation is made first, so its placements carry its ID, and dropped (the last one pushed) if nothing changed.
        this.evaluate(change, job, 'reconnect');
        if (job.stop) {
          for (const a of this.allocsOfJob(job.id)) if (a.desired === 'run') this.stop(change, a, 'alloc not needed due to job update', 'PlanResult');
        } else {
          this.reconcile(change, job);
        }
        if (change.allocs.size === before) change.evals.pop();
      }
    });
    // Nothing to make good writes nothing: the start's write has no job, and keeps an evaluation only beside an allocation.
    if (change.allocs.size > 0) await this.write(change);
    else this.index.order.abandon(change.index);
    // Capacity may differ from the last run's: blocked evaluations try again.
    this.healed = true;
    // Nomad's deployment watcher looks at every deployment when it starts: one that moved while no agent ran (or
    // while this one was starting) rolls on, is marked stable, or reverts now.
    for (const job of this.jobs.values()) this.deployments.restored(job);
    this.unblock();
    this.resumeRescheduling();
    // The write told the live runners it stopped (each one it stopped is in the registry once it is applied); the rest are looked at here.
    const told = new Set(change.kills.filter((id) => this.allocs.get(id)!.runner));
    for (const a of this.allocs.values()) {
      // A finished allocation has nothing left to start, stop or update.
      if (told.has(a.id) || isTerminal(a.lastState)) continue;
      if (a.desired !== 'run') {
        // With no runner record, an earlier agent may still have spawned its tasks before it died: a
        // resumed runner, stopped at once, finds and stops them; one that spawned nothing just ends.
        // It starts as the dead agent ran it (a runner born stopping kills its tasks before it can mark
        // them resumed), then is told to stop like any other.
        if (!a.runner && !this.quarantined.has(a.id)) this.start(a, { resume: true, spec: { ...a.spec, desiredStatus: 'run' } });
        if (a.runner && !isTerminal(a.lastState)) this.tellStop(a);
      } else if (a.runner) {
        // The alloc runner's context always holds the spec it runs.
        const running = (a.runner.actor.getSnapshot().context as { alloc: AllocSpec }).alloc;
        if (running.modifyIndex !== a.spec.modifyIndex) a.runner.send({ type: 'UPDATE', alloc: a.spec });
      } else if (this.quarantined.has(a.id)) {
        // Its tasks may still run from before: starting it afresh could run them twice. Said, left to the operator.
        this.log(`allocation ${a.id} (job ${JSON.stringify(a.jobId)}) was not started again: its runner record was damaged and set aside (${this.quarantined.get(a.id)}); stop any of its tasks still running, then 'allocrun alloc stop ${a.id}'`);
        a.lastState = { clientStatus: 'failed', taskStates: {} };
      } else {
        // Committed by an earlier agent that may have spawned its tasks before it died: adopt, never rerun.
        this.start(a, { resume: true });
      }
    }
  }
  /**
   * Evaluates a job as it stands (`nomad job eval`): one evaluation, and what the job lacks is placed, what it
   * has too much is stopped; with `forceReschedule` its failed allocations are replaced too.
   */
  async evaluateJob(id: string, forceReschedule: boolean, trigger: EvalRecord['TriggeredBy'] = 'job-register'): Promise<RegisterResult | undefined> {
    const job = this.jobs.get(id);
    if (!job) return undefined;
    const hostBusy = await this.probe(job.versions.at(-1)!.allocs);
    const { change, planned: evalId } = this.planAt(hostBusy, (change) => {
      const evalId = this.evaluate(change, job, trigger);
      if (job.stop) {
        for (const a of this.allocsOfJob(id)) if (a.desired === 'run') this.stop(change, a, 'alloc not needed due to job update', 'PlanResult');
        return evalId;
      }
      if (forceReschedule) {
        const templates = job.versions.at(-1)!.allocs;
        for (const a of this.allocsOfJob(id)) {
          const template = templates.filter((s) => s.group === a.group)[a.index];
          if (a.desired !== 'run' || a.lastState.clientStatus !== 'failed' || a.nextAllocation || !template) continue;
          this.stop(change, a, 'alloc was rescheduled because it failed', 'PlanResult');
          this.reschedule(change, job, template, a);
        }
      }
      this.reconcile(change, job);
      return evalId;
    });
    await this.write(change);
    return { EvalID: evalId, EvalCreateIndex: change.index, JobModifyIndex: job.jobModifyIndex, Warnings: '', Index: change.index };
  }

  /**
   * What registering `job` (its API JSON and its instances) would do, per group, as Nomad's plan annotates it:
   * planned exactly as `register` plans, never written.
   */
  plan(job: Json, allocs: AllocSpec[], hostBusy: HostBusy = new Map()): { groups: Record<string, { place: number; stop: number; inPlace: number; destructive: number; ignore: number; canary: number }>; jobModifyIndex: number; failed: PlacementFailure[] } {
    const id = String(job['ID']);
    const canonical = canonicalJob(job);
    const existing = this.jobs.get(id);
    const groups: Record<string, { place: number; stop: number; inPlace: number; destructive: number; ignore: number; canary: number }> = {};
    const g = (name: string) => (groups[name] ??= { place: 0, stop: 0, inPlace: 0, destructive: 0, ignore: 0, canary: 0 });
    for (const s of allocs) g(s.group);
    const live = this.allocsOfJob(id).filter((a) => a.desired === 'run');
    // A draft index: nothing planned here is ever written or answered, and the agent's index does not move.
    const change = new Change(this.index.current);
    // An unchanged job is planned as nothing: every allocation it has is ignored.
    if (!this.unchanged(existing, canonical)) {
      const entry = this.withVersion(id, existing, canonical, allocs, change.index);
      change.jobs.set(id, entry);
      change.hostBusy = hostBusy;
      this.reconcile(change, entry);
    }
    // What the new allocations replace (an undefined in it, of one that replaces nothing, matches no allocation).
    const replaced = new Set(change.starts.map((s) => change.allocs.get(s)!.previousAllocation));
    for (const s of change.starts) {
      const a = change.allocs.get(s)!;
      if (a.canary) g(a.group).canary++;
      else if (!a.previousAllocation) g(a.group).place++;
    }
    // A placement that would find no ports is still one the plan wants (Nomad counts it, and reports it in FailedTGAllocs).
    for (const f of change.failed) if (f.previous) replaced.add(f.previous); else g(f.group).place++;
    for (const k of change.kills) (replaced.has(k) ? g(change.allocs.get(k)!.group).destructive++ : g(change.allocs.get(k)!.group).stop++);
    // A replacement that cannot be placed leaves its allocation running (replace), still a planned destructive update.
    const kept = change.failed.flatMap((f) => (f.previous && !change.kills.includes(f.previous) ? [f] : []));
    for (const f of kept) g(f.group).destructive++;
    for (const u of change.updates) g(change.allocs.get(u)!.group).inPlace++;
    const touched = new Set([...change.kills, ...change.updates, ...kept.map((f) => f.previous!)]);
    for (const a of live) if (!touched.has(a.id)) g(a.group).ignore++;
    return { groups, jobModifyIndex: existing?.jobModifyIndex ?? 0, failed: change.failed };
  }

  listJobs(): JobEntry[] {
    return [...this.jobs.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  getJob(id: string): JobEntry | undefined {
    return this.jobs.get(id);
  }

  /** Every allocation, oldest first (the memo itself: read-only, so no caller can reorder it). */
  listAllocs(): readonly AllocEntry[] {
    return this.sortedAllocs();
  }

  /** A job's allocations, oldest first: from a per-job index, not a scan, since lists ask it once per job. */
  allocsOfJob(id: string): readonly AllocEntry[] {
    if (!this.byJob) {
      this.byJob = new Map();
      for (const a of this.sortedAllocs()) {
        const of = this.byJob.get(a.jobId);
        if (of) of.push(a);
        else this.byJob.set(a.jobId, [a]);
      }
    }
    return this.byJob.get(id) ?? [];
  }

  /** The sorted allocations, kept until one is added or replaced (their order is by createIndex, which never changes). */
  private sortedAllocs(): AllocEntry[] {
    return (this.sorted ??= [...this.allocs.values()].sort((a, b) => a.createIndex - b.createIndex));
  }

  private setAlloc(id: string, entry: AllocEntry): void {
    this.allocs.set(id, entry);
    this.sorted = undefined;
    this.byJob = undefined;
  }

  /**
   * Records durably that the client is about to garbage collect allocation `id`, which ended in `state` (gc.ts):
   * written before its runner record goes, so an agent started after any crash shows it finished, never
   * starts it again for want of that record.
   */
  async recordCollection(id: string, state: AllocState): Promise<void> {
    const a = this.allocs.get(id);
    if (!a) return;
    // Set on the live entry first: a write committed from now on carries it (`persist`).
    a.collectedState = state;
    a.lastState = state;
    // Written once every lower index has applied: the entry then holds what they wrote (a stop committed, not yet applied).
    await commitVisibleInOrder({ store: this.store, events: this.events, index: this.index }, this.index.order.take(), (tx) => tx.put('allocs', id, storedOf(a)));
  }

  /** The client collected allocation `id`: it has no runner any more. */
  collected(id: string): void {
    const a = this.allocs.get(id);
    if (a) delete a.runner;
  }

  /**
   * Deletes what the server's garbage collector chose (gc.ts), as one write at the next index: committed, then
   * gone from every list, the tables' indexes moved so blocking queries see it. Resolves with that index.
   */
  async reap(chosen: { jobs: string[]; evals: string[]; allocs: string[] }): Promise<number> {
    const index = this.index.order.take();
    const jobIds = new Set([...chosen.jobs, ...chosen.allocs.map((id) => this.allocs.get(id)?.jobId ?? '')]);
    await commitInOrder({ store: this.store, events: this.events, index: this.index }, index, (tx) => {
      // A collected periodic job's launch record goes with it.
      for (const id of chosen.jobs) (tx.remove('jobs', id), tx.remove('periodic', id));
      // And its job files (job-submissions.ts), as Nomad's DeleteJobTxn deletes them.
      writeSubmissions(this.store, tx, new Map(chosen.jobs.map((id) => [id, null])), index, (id) => this.jobs.get(id), new Map());
      removeScalingEvents(tx, chosen.jobs);
      for (const id of chosen.evals) tx.remove('evals', id);
      for (const id of chosen.allocs) tx.remove('allocs', id);
    }, () => {
      for (const id of chosen.jobs) {
        this.jobs.delete(id);
        this.summaryAt.delete(id);
      }
      for (const id of chosen.evals) this.evals.delete(id);
      for (const id of chosen.allocs) this.allocs.delete(id);
      this.sorted = undefined;
      this.byJob = undefined;
      if (chosen.jobs.length > 0) this.jobsIndex = index;
      if (chosen.evals.length > 0) this.evalsIndex = index;
      if (chosen.allocs.length > 0) this.allocsIndex = index;
      for (const id of jobIds) if (this.jobs.has(id)) this.summaryMoved(id, index);
      this.index.changed(index);
    });
    return index;
  }

  /** An allocation by ID or unique ID prefix (as Nomad resolves short IDs). */
  findAlloc(idOrPrefix: string): AllocEntry | undefined {
    const exact = this.allocs.get(idOrPrefix);
    if (exact) return exact;
    const found = [...this.allocs.values()].filter((a) => a.id.startsWith(idOrPrefix));
    return found.length === 1 ? found[0] : undefined;
  }

  /** The job as Nomad's API returns it, at `version` (default: the current one). */
  jobJson(entry: JobEntry, version = entry.versions.at(-1)!): Json {
    const job = version.job;
    const isCurrent = version === entry.versions.at(-1);
    // The canonical job has its Name, Type and Priority (Nomad's defaults filled); the current version's scaling
    // blocks carry their policies' IDs.
    return {
      ...(isCurrent ? withPolicyIds(entry, job) : job),
      ID: entry.id,
      Namespace: entry.namespace,
      Status: this.jobStatus(entry),
      StatusDescription: '',
      Stop: isCurrent ? entry.stop : false,
      Stable: version.stable === true,
      Version: version.version,
      SubmitTime: version.submitTime * 1e6,
      CreateIndex: entry.createIndex,
      ModifyIndex: isCurrent ? entry.modifyIndex : version.jobModifyIndex,
      JobModifyIndex: version.jobModifyIndex,
    };
  }

  /** The list form (`JobListStub`). */
  jobStubJson(entry: JobEntry): Json {
    const job = this.jobJson(entry);
    return {
      ID: entry.id, ParentID: job['ParentID'] ?? '', Name: job['Name'], Namespace: entry.namespace, Datacenters: job['Datacenters'] ?? [],
      Type: job['Type'], Priority: job['Priority'], Periodic: periodicOf(job) !== undefined, ParameterizedJob: isParameterizedParent(job), Stop: entry.stop,
      Status: job['Status'], StatusDescription: '', JobSummary: this.summaryJson(entry),
      CreateIndex: entry.createIndex, ModifyIndex: entry.modifyIndex, JobModifyIndex: entry.jobModifyIndex,
      SubmitTime: job['SubmitTime'], Version: job['Version'], Stable: job['Stable'],
    };
  }

  /** The index of the newest change to the job's summary or status (0: none since the agent started). */
  summaryIndexOf(id: string): number {
    return this.summaryAt.get(id) ?? 0;
  }

  private summaryMoved(id: string, index: number): void {
    // Never back: an allocation adopted at start moves a summary at its stored (older) index.
    if (this.jobs.has(id)) this.summaryAt.set(id, Math.max(index, this.summaryAt.get(id) ?? 0));
    else this.summaryAt.delete(id);
    this.summaryIndex = Math.max(this.summaryIndex, index);
    // A periodic job's summary counts its children: a child's change is its parent's too.
    const parent = this.jobs.get(id)?.versions.at(-1)!.job['ParentID'];
    if (typeof parent === 'string' && parent !== id && this.jobs.has(parent)) this.summaryMoved(parent, index);
  }

  /** What a job's list stub shows of its allocations: its summary's counts and its status. */
  private summarySignature(entry: JobEntry): string {
    return `${this.jobStatus(entry)}|${JSON.stringify(this.summaryJson(entry)['Summary'])}`;
  }

  /** Nomad's JobSummary: allocation counts per group by client status. */
  summaryJson(entry: JobEntry): Json {
    const summary: Record<string, GroupSummary> = {};
    const zero = (): GroupSummary => ({ Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 });
    // A periodic or parameterized job places nothing itself: its groups show zeros, its children are counted below.
    const periodic = launchesChildren(entry.versions.at(-1)!.job);
    for (const s of entry.versions.at(-1)!.allocs) (summary[s.group] ??= zero()).Queued += entry.stop || periodic ? 0 : 1;
    for (const a of this.allocsOfJob(entry.id)) {
      const g = (summary[a.group] ??= zero());
      // Queued: wanted by the job and not placed (a placement that found no ports waits here, as in Nomad).
      if (a.desired === 'run' && g.Queued > 0) g.Queued--;
      const status = a.lastState.clientStatus;
      if (status === 'pending') g.Starting++;
      else if (status === 'running') g.Running++;
      else if (status === 'complete') g.Complete++;
      else g.Failed++;
    }
    // Nomad's summary takes Queued from the scheduler's unplaced count: a replacement waiting in a blocked
    // evaluation is queued though the allocation it replaces still runs (and so counts as placed above).
    const blocked = this.evals.get(this.blocked.get(entry.id) ?? '');
    for (const [group, n] of Object.entries(blocked?.Status === 'blocked' ? (blocked.QueuedAllocations ?? {}) : {})) {
      const g = (summary[group] ??= zero());
      g.Queued = Math.max(g.Queued, n);
    }
    const children = { Pending: 0, Running: 0, Dead: 0 };
    if (periodic) {
      for (const child of this.jobs.values()) {
        if (child.versions.at(-1)!.job['ParentID'] !== entry.id) continue;
        const status = this.jobStatus(child);
        children[status === 'pending' ? 'Pending' : status === 'running' ? 'Running' : 'Dead']++;
      }
    }
    return { JobID: entry.id, Namespace: entry.namespace, Summary: summary, Children: children, CreateIndex: entry.createIndex, ModifyIndex: Math.max(entry.modifyIndex, this.summaryIndexOf(entry.id)) };
  }

  /** `pending` before any allocation runs, `running` while one is live, `dead` once all are done or the job is stopped. */
  jobStatus(entry: JobEntry): 'pending' | 'running' | 'dead' {
    // Nomad: a periodic or parameterized job runs (launches, or waits for dispatches) until it is stopped.
    if (launchesChildren(entry.versions.at(-1)!.job)) return entry.stop ? 'dead' : 'running';
    const allocs = this.allocsOfJob(entry.id);
    if (allocs.some((a) => a.lastState.clientStatus === 'running')) return 'running';
    if (entry.stop) return 'dead';
    if (allocs.some((a) => !isTerminal(a.lastState))) return 'pending';
    return allocs.length > 0 ? 'dead' : 'pending';
  }

  /** The allocation as `GET /v1/allocation/:id` returns it. */
  allocJson(a: AllocEntry): Json {
    const job = this.jobs.get(a.jobId);
    const version = job?.versions.find((v) => v.version === a.jobVersion);
    return allocJson(this.view(a), job && version ? this.jobJson(job, version) : undefined);
  }

  allocStubJson(a: AllocEntry): Json {
    return allocStubJson(this.view(a));
  }

  private view(a: AllocEntry): AllocView {
    // A canary is shown as one until its deployment is promoted, as Nomad clears DeploymentStatus.Canary then.
    const canary = a.canary === true && !deploymentsPromoted(this.store).has(a.spec.deploymentId ?? '');
    return { ...a, canary, state: a.lastState, nodeId: this.node.id, nodeName: this.node.name };
  }

  /** Every evaluation, oldest first. */
  listEvals(): EvalRecord[] {
    return [...this.evals.values()].sort((a, b) => a.CreateIndex - b.CreateIndex);
  }

  getEval(id: string): EvalRecord | undefined {
    return this.evals.get(id) ?? [...this.evals.values()].find((e) => e.ID.startsWith(id));
  }

  /**
   * Processes every open blocked evaluation again, each in its job's queue (Nomad unblocks them when capacity
   * frees): it completes once its allocations are placed, else stays blocked with the new failures.
   */
  /**
   * The node's meta or attributes changed: blocked evaluations are processed again, since a constraint that
   * left an allocation unplaced may hold now (Nomad unblocks on a node update).
   */
  nodeChanged(): void {
    if (this.blocked.size > 0) this.unblock();
  }

  private unblock(): void {
    if (!this.healed) return;
    for (const [jobId, evalId] of [...this.blocked]) {
      this.serialize(jobId, () => this.evaluateBlocked(jobId, evalId)).catch((err: unknown) => this.log(`blocked evaluation ${evalId} of job ${JSON.stringify(jobId)} could not be processed again: ${err instanceof Error ? err.message : String(err)}`));
    }
  }

  /**
   * One open blocked evaluation processed again (see `unblock`); nothing when it was settled meanwhile (each
   * write that completes, cancels or fails it takes it out of `blocked` as it changes its status), nor once the
   * agent is shutting down. Its plan is tried as often as Nomad's scheduler submits one; a store that refuses
   * every try fails it.
   */
  private async evaluateBlocked(jobId: string, evalId: string, attempt = 1): Promise<void> {
    const e = this.evals.get(evalId);
    const job = this.jobs.get(jobId);
    if (this.closed || this.blocked.get(jobId) !== evalId || !e || !job) return;
    const hostBusy = await this.probe(job.versions.at(-1)!.allocs);
    const { change } = this.planAt(hostBusy, (change) => {
      change.evals.push({ ...e, ModifyIndex: change.index, ModifyTime: this.now() * 1e6 });
      change.evalId = e.ID;
      if (job.stop) {
        for (const a of this.allocsOfJob(job.id)) if (a.desired === 'run') this.stop(change, a, 'alloc not needed due to job update', 'PlanResult');
      } else {
        this.reconcile(change, job);
      }
    });
    try {
      await this.write(change);
    } catch (err) {
      if (!(err instanceof StoreCommitError)) throw err;
      const limit = planAttempts(e.Type);
      if (attempt < limit) return this.evaluateBlocked(jobId, evalId, attempt + 1);
      await this.failEvaluation(e, limit, err);
    }
  }

  /** Records `e` failed after `limit` plans that could not be written, with a blocked evaluation to try again. */
  private async failEvaluation(e: EvalRecord, limit: number, cause: Error): Promise<void> {
    const index = this.index.order.take();
    let evals: ReturnType<typeof failedAfterAttempts>;
    try {
      evals = failedAfterAttempts(e, limit, index, this.now() * 1e6);
    } catch (err) {
      this.index.order.abandon(index);
      throw err;
    }
    await commitInOrder({ store: this.store, events: this.events, index: this.index }, index, (tx) => {
      for (const r of evals) tx.put('evals', r.ID, r);
    }, () => {
      for (const r of evals) this.evals.set(r.ID, r);
      this.blocked.set(e.JobID, evals[1].ID);
      this.evalsIndex = index;
      this.log(`evaluation ${e.ID} of job ${JSON.stringify(e.JobID)} failed: its plan could not be written ${limit} times (${cause.message}); blocked evaluation ${evals[1].ID} will try again when capacity frees`);
      this.events.publish({ Index: index, Events: evals.map((r) => evalEvent(r, index)) });
      this.index.changed(index);
    });
  }

  /**
   * Once the agent has healed: every pending follow-up evaluation the store holds is armed (processed at once when
   * its `WaitUntil` has passed), and failures no follow-up covers yet (the agent was down, or stopped between the
   * failure and its write) get one.
   */
  private resumeRescheduling(): void {
    this.followups?.applied(this.listEvals().filter((e) => e.Status === 'pending'));
    for (const id of this.jobs.keys()) this.noticeFailed(id);
  }

  /** An allocation of job `id` failed: its reschedule is planned in the job's queue (Nomad's alloc-failure evaluation). */
  private noticeFailed(id: string): void {
    if (!this.healed || this.closed) return;
    this.serialize(id, () => this.rescheduleLater(id)).catch((err: unknown) => this.log(`job ${JSON.stringify(id)}: the reschedule of its failed allocations could not be recorded (${err instanceof Error ? err.message : String(err)}); the next agent start tries again`));
  }

  /**
   * Nomad's reconciler on a failure (updateByReschedulable, createRescheduleLaterEvals): each failed allocation still
   * wanted whose policy allows another attempt, and that no follow-up covers, gets a pending follow-up evaluation at
   * its fail time + its next delay (failures due within 5s of each other share one), named on it as FollowupEvalID,
   * all in one commit. The fail time is when the agent's clock saw it.
   */
  private async rescheduleLater(id: string): Promise<void> {
    const job = this.jobs.get(id);
    if (this.closed || !job || job.stop) return;
    const now = this.progressNow();
    const due = this.allocsOfJob(id).flatMap((a) => {
      if (a.desired !== 'run' || a.lastState.clientStatus !== 'failed' || a.followupEvalId || a.nextAllocation) return [];
      const version = job.versions.find((v) => v.version === a.jobVersion) ?? job.versions.at(-1)!;
      const policy = reschedulePolicyOf(version.job, a.group);
      const next = policy && nextReschedule(policy, a.rescheduleTracker?.Events ?? [], now);
      return next?.eligible ? [{ a, at: next.at }] : [];
    });
    if (due.length === 0) return;
    const { change } = this.planAt(new Map(), (change) => {
      const created = this.now() * 1e6;
      for (const batch of batchFollowups(due)) {
        const e: EvalRecord = {
          ID: randomUUID(), Namespace: job.namespace, Priority: Number(job.versions.at(-1)!.job['Priority'] ?? 50), Type: String(job.versions.at(-1)!.job['Type'] ?? 'service'),
          TriggeredBy: 'alloc-failure', JobID: job.id, JobModifyIndex: job.jobModifyIndex, Status: 'pending', StatusDescription: 'created for delayed rescheduling',
          WaitUntil: new Date(batch.at).toISOString(), CreateIndex: change.index, ModifyIndex: change.index, CreateTime: created, ModifyTime: created,
        };
        change.evals.push(e);
        for (const { a } of batch.members) {
          const d = this.draft(change, a);
          Object.assign(d, { followupEvalId: e.ID, failedAt: now, allocModifyIndex: change.index, modifyTime: this.now() });
          change.events.push(() => this.allocEvent(this.allocs.get(a.id)!, 'PlanResult', change.index));
        }
      }
    });
    await this.write(change);
  }

  /** A follow-up evaluation's `WaitUntil` has come (reschedule-timer.ts): processed in its job's queue. */
  followupDue(evalId: string): Promise<void> {
    const e = this.evals.get(evalId);
    return e ? this.serialize(e.JobID, () => this.followUp(evalId)) : Promise.resolve();
  }

  /**
   * Processes a pending follow-up evaluation once (a complete one is left alone): each failed allocation it names that
   * is still wanted and not yet replaced gets a replacement (rescheduled), and the evaluation is complete, in one
   * commit. A job stopped, purged or moved on meanwhile leaves nothing to place: it completes with no placement.
   */
  private async followUp(evalId: string): Promise<void> {
    const job = this.jobs.get(this.evals.get(evalId)?.JobID ?? '');
    const hostBusy = await this.probe(job && !job.stop ? job.versions.at(-1)!.allocs : []);
    const e = this.evals.get(evalId);
    if (this.closed || !e || e.Status !== 'pending') return;
    const { change } = this.planAt(hostBusy, (change) => {
      change.evals.push({ ...e, Status: 'complete', StatusDescription: '', ModifyIndex: change.index, ModifyTime: this.now() * 1e6 });
      change.evalId = e.ID;
      const entry = this.jobs.get(e.JobID);
      if (!entry || entry.stop) return;
      const templates = entry.versions.at(-1)!.allocs;
      for (const a of this.allocsOfJob(entry.id)) {
        if (a.followupEvalId !== e.ID || a.desired !== 'run' || a.lastState.clientStatus !== 'failed' || a.nextAllocation) continue;
        const template = templates.filter((t) => t.group === a.group)[a.index];
        if (template) this.reschedule(change, entry, template, a);
      }
    });
    await this.write(change);
  }

  /**
   * Plans the replacement of failed allocation `a` (Nomad's computePlacements with a reschedule): placed with `a` as
   * its PreviousAllocation and a RescheduleTracker of `a`'s attempts and this one; `a` keeps its desired status, its
   * NextAllocation set.
   */
  private reschedule(change: Change, job: JobEntry, template: AllocSpec, a: AllocEntry): void {
    const placed = this.place(change, job, template, a.index, a);
    if (!placed) return;
    const version = job.versions.find((v) => v.version === a.jobVersion) ?? job.versions.at(-1)!;
    const policy = reschedulePolicyOf(version.job, a.group);
    const now = this.progressNow();
    if (policy) placed.rescheduleTracker = trackerAfter(policy, { id: a.id, nodeId: this.node.id, tracker: a.rescheduleTracker }, now, nextDelay(policy, a.rescheduleTracker?.Events ?? [], a.failedAt ?? now));
    // One stopped in this plan (a forced reschedule) already changes, with its event.
    if (change.kills.includes(a.id)) return;
    Object.assign(this.draft(change, a), { allocModifyIndex: change.index, modifyTime: this.now() });
    change.events.push(() => this.allocEvent(this.allocs.get(a.id)!, 'PlanResult', change.index));
  }

  /** The static ports `specs` ask for that the host will not let this agent bind (those its allocations hold aside). */
  probe(specs: AllocSpec[]): Promise<HostBusy> {
    const ports = staticPortsToProbe(specs, this.allocs.values());
    return ports.length === 0 ? Promise.resolve(new Map()) : probeHost(ports);
  }

  /** Records the evaluation a write makes; returns its ID. */
  private evaluate(change: Change, job: JobEntry, trigger: EvalRecord['TriggeredBy']): string {
    const now = this.now() * 1e6;
    const version = job.versions.at(-1);
    const e: EvalRecord = {
      ID: randomUUID(), Namespace: job.namespace, Priority: Number(version?.job['Priority'] ?? 50), Type: String(version?.job['Type'] ?? version?.allocs[0]?.type ?? 'service'),
      TriggeredBy: trigger, JobID: job.id, JobModifyIndex: job.jobModifyIndex, Status: 'complete', StatusDescription: '',
      CreateIndex: change.index, ModifyIndex: change.index, CreateTime: now, ModifyTime: now,
    };
    change.evals.push(e);
    change.evalId = e.ID;
    return e.ID;
  }

  /** The draft of `a` in `change` (made on first use): plans change drafts, never live entries. */
  private draft(change: Change, a: AllocEntry): AllocEntry {
    let d = change.allocs.get(a.id);
    if (!d) change.allocs.set(a.id, (d = { ...a }));
    return d;
  }

  /** Plans what brings the job's allocations in line with its current version. */
  private reconcile(change: Change, entry: JobEntry, promoting?: string): void {
    const version = entry.versions.at(-1)!;
    // A periodic or parameterized job's allocations are its children's, each a job of its own.
    if (launchesChildren(version.job)) return;
    const wanted = new Map<string, AllocSpec[]>();
    for (const s of version.allocs) wanted.set(s.group, [...(wanted.get(s.group) ?? []), s]);
    // In instance order, as Nomad's reconciler takes a group's destructive updates by name.
    // A failed allocation already rescheduled is not counted: its replacement is (Nomad's filterByRescheduleable).
    const live = this.allocsOfJob(entry.id).filter((a) => a.desired === 'run' && !(a.nextAllocation && isTerminal(a.lastState))).sort((x, y) => x.index - y.index);
    const promoted = deploymentsPromoted(this.store);
    if (promoting) promoted.set(promoting, change.index);
    // The allocations each group's new version replaces, decided once every allocation has been looked at (rollOut).
    const destructive = new Map<string, { a: AllocEntry; template: AllocSpec }[]>();
    for (const a of live) {
      const template = wanted.get(a.group)?.[a.index];
      // A canary of a deployment that was never promoted is not needed once another version is current (Nomad's cancelUnneededCanaries).
      const staleCanary = a.canary && a.spec.deploymentId !== deploymentOf(entry, version.version, a.spec) && !promoted.has(a.spec.deploymentId ?? '');
      if (!template || staleCanary) {
        this.stop(change, a, 'alloc not needed due to job update', 'PlanResult');
        continue;
      }
      const newVersion = a.jobVersion !== version.version;
      // A new version the node no longer suits (its datacenters or constraints leave the node out) cannot be
      // applied in place: the allocation must be replaced, as Nomad's genericAllocUpdateFn decides.
      const update = newVersion && infeasibility(version.job, a.group, this.nodeFacts()) ? 'destructive' : groupUpdate(a.spec, template);
      if (update === 'destructive' && !(a.spec.type === 'batch' && a.lastState.clientStatus === 'complete')) {
        destructive.set(a.group, [...(destructive.get(a.group) ?? []), { a, template }]);
        continue;
      }
      if (newVersion) this.draft(change, a).jobVersion = version.version;
      // A new version moves the allocation to its deployment, as Nomad updates in place every allocation it does not
      // replace: the runner is told, so its health is watched anew for the new deployment.
      const deployment = deploymentOf(entry, version.version, template);
      // A canary stays one until its deployment is promoted; the promotion's update tells its runner it no longer is.
      const canary = a.spec.canary === true && !promoted.has(a.spec.deploymentId ?? '');
      if ((update === 'inplace' || a.spec.canary !== (canary || undefined) || (newVersion && deployment !== a.spec.deploymentId)) && !isTerminal(a.lastState)) {
        const d = this.draft(change, a);
        d.spec = { ...template, id: a.id, index: a.index, modifyIndex: change.index, ...(a.spec.ports && { ports: a.spec.ports }), ...(deployment && { deploymentId: deployment }), ...(canary && { canary: true }) };
        d.allocModifyIndex = change.index;
        change.updates.push(a.id);
        change.events.push(() => this.allocEvent(this.allocs.get(a.id)!, 'PlanResult', change.index));
      }
    }
    for (const [group, list] of destructive) this.rollOut(change, entry, list, live.filter((a) => a.group === group && change.allocs.get(a.id)?.desired !== 'stop'), promoted);
    for (const [group, templates] of wanted) {
      templates.forEach((template, i) => {
        if (!live.some((a) => a.group === group && a.index === i)) this.place(change, entry, template, i);
      });
    }
  }

  /**
   * Plans a group's destructive updates (`list`, in instance order) as Nomad's reconciler does. Without a deployment
   * each is replaced at once. With one, a group whose update block asks for canaries first gets them, beside the
   * allocations they will replace (placed on the instances first in line, none stopped), until the deployment is
   * promoted; once it is, each canary takes the place of the old allocation of its instance, which is stopped.
   * Then `max_parallel` at a time are replaced (computeLimit: rollout.ts); the rest keep running their version
   * until a health change evaluates the job again.
   */
  private rollOut(change: Change, entry: JobEntry, list: { a: AllocEntry; template: AllocSpec }[], live: AllocEntry[], promoted: ReadonlyMap<string, number>): void {
    const version = entry.versions.at(-1)!;
    const { group } = list[0]!.a;
    const deployment = deploymentOf(entry, version.version, list[0]!.template);
    if (deployment === undefined) {
      for (const { a, template } of list) this.replace(change, entry, template, a);
      return;
    }
    const failed = this.deployments.failed(deployment);
    const canaries = live.filter((a) => a.canary && a.spec.deploymentId === deployment);
    const wantedCanaries = canaryCountOf(version.job, group);
    if (wantedCanaries > 0 && !promoted.has(deployment)) {
      if (failed || live.some((a) => a.spec.deploymentId === deployment && a.lastState.deploymentStatus?.healthy === false)) return;
      const taken = new Set(canaries.map((c) => c.index));
      for (const { a, template } of list.filter(({ a }) => !taken.has(a.index)).slice(0, Math.max(0, wantedCanaries - canaries.length))) {
        const placed = this.place(change, entry, template, a.index);
        if (placed) {
          placed.canary = true;
          placed.spec = { ...placed.spec, canary: true };
        }
      }
      return;
    }
    const rest: typeof list = [];
    for (const item of list) {
      if (canaries.some((c) => c.index === item.a.index)) this.stop(change, item.a, 'alloc not needed as deployment was promoted: a canary has taken its place', 'PlanResult');
      else rest.push(item);
    }
    let limit = destructiveLimit(maxParallelOf(version.job, group), deployment, live, failed);
    for (const { a, template } of rest) {
      if (limit-- <= 0) return;
      this.replace(change, entry, template, a);
    }
  }

  /**
   * Plans replacing `a` with a new allocation of `template` (a destructive update). The old one is stopped first,
   * so what it holds counts as free for the new one; when the new one cannot be placed, the stop is taken back
   * (Nomad's PopUpdate): the old allocation keeps running, and the evaluation's blocked one replaces it later.
   */
  private replace(change: Change, entry: JobEntry, template: AllocSpec, a: AllocEntry): void {
    const before = change.allocs.get(a.id);
    const saved = before && { ...before };
    const [kills, events, failed] = [change.kills.length, change.events.length, change.failed.length];
    this.stop(change, a, 'alloc is being updated due to job update', 'PlanResult');
    this.place(change, entry, template, a.index, a);
    if (change.failed.length === failed) return;
    change.kills.length = kills;
    change.events.length = events;
    if (saved) change.allocs.set(a.id, saved);
    else change.allocs.delete(a.id);
  }

  /** What constraints read of this node: its identity, class, pool and meta, the fingerprinted attributes tasks see too. */
  private nodeFacts(): NodeFacts {
    const info = localNodeInfo();
    return { id: this.node.id, name: this.node.name, datacenter: this.node.datacenter, class: this.node.class, pool: this.node.pool, attributes: info.attributes, meta: this.node.meta };
  }

  /** Plans a new allocation of `template` as instance `i` of its group, replacing `previous` when given; returns its draft, or undefined when it did not fit. */
  private place(change: Change, entry: JobEntry, template: AllocSpec, i: number, previous?: AllocEntry): AllocEntry | undefined {
    // What the node holds: the live allocations, then what writes being committed place or stop, then this plan's.
    const started = process.hrtime.bigint();
    const job = change.jobs.get(entry.id) ?? entry;
    // The node is judged before its capacity, as Nomad's feasibility checks come before bin packing.
    const filter = infeasibility(job.versions.at(-1)!.job, template.group, this.nodeFacts());
    if (filter) {
      const reason = 'pool' in filter
        ? `the job's node pool ${JSON.stringify(filter.pool)} does not include the node (in node pool ${JSON.stringify(this.node.pool)})`
        : 'datacenter' in filter
        ? `the job's datacenters do not include the node's datacenter ${JSON.stringify(filter.datacenter)}`
        : `the node does not meet the constraint ${JSON.stringify(filter.constraint)}`;
      change.failed.push({ evalId: change.evalId, group: template.group, dimension: '', datacenter: this.node.datacenter, tasks: [], reason, filter, ...(previous && { previous: previous.id }) });
      return undefined;
    }
    const holders = [...this.allocs.values(), ...[...this.inflight].flatMap((c) => [...c.allocs.values()]), ...change.allocs.values()];
    const ports = template.network && this.ports.assign(template.network, portsHeld(holders), change.hostBusy);
    // Ports first, then CPU, cores and memory, in the order Nomad's bin packing checks them.
    const fit = ports && !ports.ok ? ports : fitResources(askOf(template), resourcesUsed(holders), this.capacity);
    if (!fit.ok) {
      const tasks = template.tasks.map((t) => {
        const ask = askOf({ tasks: [t] });
        return { name: t.name, cpu: ask.cpu, memoryMB: ask.memoryMB };
      });
      change.failed.push({
        evalId: change.evalId, group: template.group, dimension: fit.dimension, datacenter: this.node.datacenter, reason: fit.reason, tasks,
        allocationTime: Number(process.hrtime.bigint() - started), ...(previous && { previous: previous.id }),
      });
      return undefined;
    }
    const id = randomUUID();
    const now = this.now();
    const index = change.index;
    const version = job.versions.at(-1)!.version;
    const deployment = deploymentOf(job, version, template);
    const a: AllocEntry = {
      id, spec: { ...template, id, index: i, modifyIndex: index, ...(ports?.ok && { ports: ports.ports }), ...(deployment && { deploymentId: deployment }) }, jobId: entry.id, namespace: entry.namespace, group: template.group, index: i, jobVersion: version,
      desired: 'run', desiredDescription: '', createIndex: index, modifyIndex: index, allocModifyIndex: index, createTime: now, modifyTime: now,
      ...(previous && { previousAllocation: previous.id }),
      ...(change.evalId && { evalId: change.evalId }),
      lastState: { clientStatus: 'pending', taskStates: {} },
    };
    if (previous) this.draft(change, previous).nextAllocation = id;
    change.allocs.set(id, a);
    change.starts.push(id);
    change.events.push(() => this.allocEvent(this.allocs.get(id)!, 'PlanResult', index));
    return a;
  }

  /** Plans marking an allocation stopped; its runner is told once the write is durable. */
  private stop(change: Change, a: AllocEntry, why: string, type: string): void {
    const d = this.draft(change, a);
    d.desired = 'stop';
    d.desiredDescription = why;
    d.spec = { ...d.spec, desiredStatus: 'stop', modifyIndex: change.index };
    d.allocModifyIndex = change.index;
    d.modifyTime = this.now();
    change.kills.push(a.id);
    change.events.push(() => this.allocEvent(this.allocs.get(a.id)!, type, change.index));
  }

  /**
   * Takes the next index in the agent's apply order and plans a write at it (`plan` fills the change). A plan that
   * throws gives its index back, so no later write waits on it; otherwise the caller writes the change, or
   * abandons its index when there is nothing to write.
   */
  private planAt<R>(hostBusy: HostBusy, plan: (change: Change) => R): { change: Change; planned: R } {
    const change = new Change(this.index.order.take());
    change.hostBusy = hostBusy;
    try {
      return { change, planned: plan(change) };
    } catch (err) {
      this.index.order.abandon(change.index);
      throw err;
    }
  }

  /** Commits `change` and, once it is durable and every lower index has applied, applies it: the live entries, the runners, the events. */
  private async write(change: Change): Promise<void> {
    const { index } = change;
    this.trimVersions(change);
    this.progressStarts(change);
    const touched = new Set([...change.jobs.keys(), ...[...change.allocs.values()].map((a) => a.jobId)]);
    let settled: ReturnType<typeof settleEvaluations>;
    try {
      settled = settleEvaluations(change.evals, change.failed, (jobId) => this.evals.get(this.blocked.get(jobId) ?? ''), index, this.now() * 1e6);
    } catch (err) {
      this.index.order.abandon(index);
      throw err;
    }
    change.evals.splice(0, change.evals.length, ...settled.evals);
    // Until it is applied, another job's plan counts what this one places (and stops), so two never share a port or memory.
    this.inflight.add(change);
    const applied = () => {
      this.inflight.delete(change);
      this.apply(change, settled, touched);
    };
    try {
      // Applied once every lower index has (in the commit's own turn when none is open), and published before any
      // batch of a later index.
      await commitInOrder({ store: this.store, events: this.events, index: this.index }, index, (tx) => this.persist(tx, change), applied);
    } catch (err) {
      this.inflight.delete(change);
      throw err;
    }
  }

  /**
   * Nomad's updateDeploymentWithAlloc: the first allocation `change` places in a group of a deployment (a new one, or
   * one an in-place update moves into it) starts the group's progress deadline, now + its progress_deadline.
   */
  private progressStarts(change: Change): void {
    for (const d of change.allocs.values()) {
      const deployment = d.spec.deploymentId;
      if (deployment === undefined || d.desired !== 'run' || this.allocs.get(d.id)?.spec.deploymentId === deployment) continue;
      const job = change.jobs.get(d.jobId) ?? this.jobs.get(d.jobId);
      const version = job?.versions.find((v) => v.version === d.jobVersion);
      const pd = version ? progressDeadlineOf(version.job, d.group) : 0;
      if (pd <= 0) continue;
      const record = change.progress.get(deployment) ?? progressRecord(this.store, deployment);
      if (record.requireBy[d.group] !== undefined) continue;
      change.progress.set(deployment, { ...record, requireBy: { ...record.requireBy, [d.group]: this.progressNow() + pd } });
    }
  }

  /**
   * Each job `change` writes keeps its newest versions and those an allocation names: the allocation as this
   * write leaves it, or as a write still in flight does (job-versions.ts).
   */
  private trimVersions(change: Change): void {
    for (const [id, job] of change.jobs) {
      if (!job || job.versions.length <= this.trackedVersions) continue;
      const named = new Set<number>();
      for (const a of this.allocsOfJob(id)) if (!change.allocs.has(a.id)) named.add(a.jobVersion);
      for (const c of [...this.inflight, change]) for (const a of c.allocs.values()) if (a.jobId === id) named.add(a.jobVersion);
      const versions = keptVersions(job.versions, this.trackedVersions, named);
      // A new entry, never the live one: the commit may still fail.
      if (versions !== job.versions) change.jobs.set(id, { ...job, versions });
    }
  }

  /** Makes a durable `change` visible: the live entries, the runners, the summaries, the events, the index. */
  private apply(change: Change, settled: ReturnType<typeof settleEvaluations>, touched: Set<string>): void {
    const { index } = change;
    // Read after the commit, with the apply below in the same turn: the summaries as they were just before it.
    const before = new Map([...touched].map((id) => [id, this.jobs.get(id) && this.summarySignature(this.jobs.get(id)!)]));
    for (const [jobId, evalId] of settled.blocked) {
      if (evalId) this.blocked.set(jobId, evalId);
      else this.blocked.delete(jobId);
    }
    // Nomad's scheduler logs what it could not place; its API says it only by dimension.
    const failedHere = change.failed.filter((f) => change.evals.some((e) => e.ID === f.evalId));
    if (failedHere.length > 0) this.log(`job ${JSON.stringify(change.evals[0]!.JobID)}: ${failureSummary(failedHere)}`);
    for (const [id, job] of change.jobs) {
      const live = this.jobs.get(id);
      // Kept as the same object: a blocking query holding the entry sees the change.
      if (job && live) Object.assign(live, job);
      else if (job) this.jobs.set(id, job);
      else this.jobs.delete(id);
      this.jobsIndex = index;
    }
    for (const e of change.evals) this.evals.set(e.ID, e);
    if (change.evals.length > 0) this.evalsIndex = index;
    this.followups?.applied(change.evals);
    if (change.jobs.size > 0) this.periodic?.applied(change.jobs);
    for (const [id, d] of change.allocs) {
      const live = this.allocs.get(id);
      if (!live) {
        this.setAlloc(id, d);
      } else {
        // Moved to the job's new version and nothing else: a change of the allocation all the same, which its
        // lists (their memo and their watchers, keyed by this index) must see.
        const moved = live.jobVersion !== d.jobVersion;
        for (const k of WRITABLE) (live as unknown as Record<string, unknown>)[k] = d[k];
        delete live.unrecorded;
        live.modifyIndex = Math.max(live.modifyIndex, moved ? index : d.allocModifyIndex);
      }
      this.allocsIndex = index;
    }
    for (const id of change.updates) {
      const a = this.allocs.get(id)!;
      a.modifyIndex = index;
      a.runner?.send({ type: 'UPDATE', alloc: a.spec });
    }
    for (const id of change.kills) {
      const a = this.allocs.get(id)!;
      a.modifyIndex = index;
      if (a.runner && !isTerminal(a.lastState)) this.tellStop(a);
    }
    for (const id of change.starts) this.start(this.allocs.get(id)!);
    for (const id of touched) {
      const job = this.jobs.get(id);
      if (job ? this.summarySignature(job) !== before.get(id) : before.get(id) !== undefined) this.summaryMoved(id, index);
    }
    this.events.publish({ Index: index, Events: [...change.evals.map((e) => evalEvent(e, index)), ...change.events.map((e) => e())] });
    this.index.changed(index);
    // What was stopped no longer counts against the node: blocked evaluations of other jobs try again.
    if (change.kills.length > 0 && this.blocked.size > 0) queueMicrotask(() => this.unblock());
  }

  /** The transaction of `change`: every job, evaluation and allocation it touches, and the index. */
  private persist(tx: WriteTx, change: Change): void {
    for (const [id, job] of change.jobs) {
      if (job) tx.put('jobs', id, job);
      else (tx.remove('jobs', id), removeScalingEvents(tx, [id]));
    }
    for (const e of change.evals) tx.put('evals', e.ID, e);
    // A draft planned before the client collected its allocation must not write the record of that away.
    for (const d of change.allocs.values()) tx.put('allocs', d.id, storedOf({ ...d, collectedState: d.collectedState ?? this.allocs.get(d.id)?.collectedState }));
    for (const write of change.also) write(tx);
    for (const [deployment, record] of change.progress) tx.put('meta', `${PROGRESS_PREFIX}${deployment}`, record);
    if (change.jobs.size > 0) this.periodic?.written(tx, change.jobs);
    // Each new version's job file, and those of the versions dropped, in the same commit as the versions.
    if (change.jobs.size > 0) writeSubmissions(this.store, tx, change.jobs, change.index, (id) => this.jobs.get(id), change.submissions);
    tx.index(change.index);
  }

  /** Starts the runner of an allocation whose record is durable. */
  private start(a: AllocEntry, opts: { resume?: boolean; spec?: AllocSpec } = {}): void {
    let runner: AllocRunner;
    try {
      runner = this.agent.run(opts.spec ?? a.spec, { resume: opts.resume });
    } catch (err) {
      // The record stays (desired run): the next agent start tries again. Said, never swallowed.
      this.log(`allocation ${a.id} (job ${JSON.stringify(a.jobId)}) could not be started: ${err instanceof Error ? err.message : String(err)}`);
      a.lastState = { clientStatus: 'failed', taskStates: {} };
      return;
    }
    a.runner = runner;
    this.watch(a, runner);
    this.placements.next({ spec: a.spec, runner });
  }

  /** Tells a live runner its allocation is to stop. */
  private tellStop(a: AllocEntry): void {
    a.runner!.send({ type: 'UPDATE', alloc: a.spec });
    // Before its prerun hooks finish an allocation only queues updates; KILL stops it there too.
    a.runner!.send({ type: 'KILL' });
  }

  /**
   * Every state of the runner that reaches its record on disk is a client update: the next index, an
   * AllocationUpdated event. The live state is not shown: a state shown before its save could be taken back by
   * a crash (a client that read `running` reading `pending` after the restart), so the API follows the agent's
   * saves (`saved$`), as Nomad's client persists a task's state before it tells the servers. A failed save is
   * shown all the same and said in the log, as Nomad's client does: a failing disk must not freeze the view.
   * The stream's current value is what the entry shows from now on (a fresh runner's first state, a restored
   * runner's last saved one).
   */
  private watch(a: AllocEntry, runner: AllocRunner): void {
    const saved$ = this.agent.saved$(a.id) ?? runner.state$.pipe(map((state) => ({ state }) as SavedState));
    let shown: AllocState | undefined;
    let failing = false;
    this.following.add(saved$.subscribe(({ state, error }) => {
      if (error && !failing) this.log(`allocation ${a.id}: its runner's state could not be saved (${error.message}); the API shows it all the same, and the next change saves again`);
      else if (!error && failing) this.log(`allocation ${a.id}: its runner's state is saved again`);
      failing = error !== undefined;
      // Collected: its final state is recorded (recordCollection); a save still settling is of an earlier one.
      if (a.collectedState) return;
      if (shown === undefined) {
        shown = a.lastState = state;
        return;
      }
      if (state === shown) return;
      shown = state;
      // Applied in index order: behind the writes of lower indexes still committing (a stop of this allocation
      // whose commit has not ended sets its ModifyIndex when it applies, which must not be past this change's).
      this.index.order.applyNext((index) => {
        // Collected while this waited for its turn: the collection's state stands.
        if (a.collectedState) return;
        // What it held is free once its tasks are gone: blocked evaluations try again, as Nomad unblocks them.
        if (this.blocked.size > 0 && isTerminal(state) && !isTerminal(a.lastState)) queueMicrotask(() => this.unblock());
        const job = this.jobs.get(a.jobId);
        const before = job && this.summarySignature(job);
        const verdict = a.lastState.deploymentStatus?.healthy;
        const failedNow = state.clientStatus === 'failed' && a.lastState.clientStatus !== 'failed';
        a.lastState = state;
        a.modifyIndex = index;
        a.modifyTime = this.now();
        this.allocsIndex = index;
        if (job && this.summarySignature(job) !== before) this.summaryMoved(job.id, index);
        this.events.publish({ Index: index, Events: [this.allocEvent(a, 'AllocationUpdated', index)] });
        this.index.changed(index);
        const healthy = state.deploymentStatus?.healthy;
        if (job && healthy !== undefined && healthy !== verdict) this.deployments.moved(job, a, healthy);
        if (job && failedNow) this.noticeFailed(job.id);
      });
    }));
  }

  /** The deployment watcher's part (deployment-watcher.ts): what a health verdict, a promotion or a passed deadline moves. */
  private host(): DeploymentHost {
    return {
      store: this.store,
      isClosed: () => this.closed,
      isHealed: () => this.healed,
      progressNow: () => this.progressNow(),
      log: (line) => this.log(line),
      getJob: (id) => this.jobs.get(id),
      allocsOfJob: (id) => this.allocsOfJob(id),
      serialize: (id, fn) => this.serialize(id, fn),
      evaluateJob: (id, force, trigger) => this.evaluateJob(id, force, trigger),
      register: (job, allocs, warnings, opts) => this.register(job, allocs, warnings, opts),
      probe: (specs) => this.probe(specs),
      write: async (hostBusy, plan) => {
        const { change, planned } = this.planAt(hostBusy, (change) => plan({
          index: change.index,
          evaluate: (job, trigger) => this.evaluate(change, job, trigger),
          reconcile: (job, promoting) => this.reconcile(change, job, promoting),
          setJob: (id, entry) => change.jobs.set(id, entry),
          setProgress: (deployment, record) => change.progress.set(deployment, record),
          also: (write) => change.also.push(write),
        }));
        await this.write(change);
        return { index: change.index, planned };
      },
    };
  }

  private jobEvent(entry: JobEntry, type: string, index: number): StreamEvent {
    return { Topic: 'Job', Type: type, Key: entry.id, Namespace: entry.namespace, FilterKeys: [], Index: index, Payload: { Job: this.jobJson(entry) } };
  }

  private allocEvent(a: AllocEntry, type: string, index: number): StreamEvent {
    return { Topic: 'Allocation', Type: type, Key: a.id, Namespace: a.namespace, FilterKeys: [a.jobId], Index: index, Payload: { Allocation: this.allocStubJson(a) } };
  }
}

/** Nomad's `EvaluationUpdated` event for an evaluation a write recorded. */
function evalEvent(e: EvalRecord, index: number): StreamEvent {
  return { Topic: 'Evaluation', Type: 'EvaluationUpdated', Key: e.ID, Namespace: e.Namespace, FilterKeys: [e.JobID], Index: index, Payload: { Evaluation: e } };
}

/** What the store keeps of an allocation. */
function storedOf(a: AllocEntry): StoredAlloc {
  const { runner: _r, lastState: _l, modifyIndex: _m, modifyTime: _t, unrecorded: _u, ...keep } = a;
  return keep;
}
