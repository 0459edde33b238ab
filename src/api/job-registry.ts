/**
 * The agent's jobs and their allocations, scheduled the way Nomad's scheduler does on one node: a
 * registration becomes a new job version, and each allocation is kept, updated in place, or replaced;
 * a count change places or stops instances. Registrations of one job are applied one at a time, in the
 * order they arrived. Every change takes the next index and is published on the event stream.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { skip, Subject, type Observable } from 'rxjs';
import type { AllocSpec, AllocState } from '../jobspec/types.ts';
import type { Agent } from '../runtime/create-agent.ts';
import type { AllocRunner } from '../runtime/create-alloc-runner.ts';
import { allocJson, allocStubJson, type AllocView } from './alloc-json.ts';
import { groupUpdate } from './job-diff.ts';
import type { Json } from './job-json.ts';
import type { EventBroker, StreamEvent } from './event-broker.ts';
import type { StateIndex } from './state-index.ts';
import type { SavedAlloc, SavedRegistry } from './registry-file.ts';

/** Job fields the server owns: a client's copy of them never counts as a change. */
const SERVER_FIELDS = ['Status', 'StatusDescription', 'Stable', 'Version', 'SubmitTime', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex', 'Stop'];

/** One registered version of a job. */
export interface JobVersion {
  version: number;
  /** The job as submitted, without server fields. */
  job: Json;
  /** One spec per group instance, as the job file loader made them (ids are placeholders). */
  allocs: AllocSpec[];
  submitTime: number;
  jobModifyIndex: number;
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

/** The instance number of an allocation named the job loader's way (`<job>-<group>-<n>`), else 0. */
function instanceOf(spec: AllocSpec): number {
  const prefix = `${spec.job}-${spec.group}-`;
  return spec.id.startsWith(prefix) && /^\d+$/.test(spec.id.slice(prefix.length)) ? Number(spec.id.slice(prefix.length)) : 0;
}

const isTerminal = (s: AllocState) => s.clientStatus === 'complete' || s.clientStatus === 'failed';

/** The jobs and allocations of one agent. */
export class JobRegistry {
  private readonly jobs = new Map<string, JobEntry>();
  private readonly allocs = new Map<string, AllocEntry>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly placements = new Subject<{ spec: AllocSpec; runner: AllocRunner }>();
  /** Registry records of allocations an earlier agent made, waiting for `adopt` to meet their runners. */
  private readonly saved = new Map<string, SavedAlloc>();
  /** Called after every change of jobs or desired state (not of task states), to save the registry. */
  onChange: () => void = () => {};
  /** Index of the newest change to the jobs table and to the allocations table. */
  jobsIndex = 0;
  allocsIndex = 0;

  constructor(
    private readonly agent: Agent,
    private readonly index: StateIndex,
    private readonly events: EventBroker,
    private readonly now: () => number = Date.now,
  ) {}

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

  /** Registers (or updates) a job: `job` is its API JSON, `allocs` its instances from the job loader. */
  register(job: Json, allocs: AllocSpec[], warnings: string): RegisterResult {
    const id = String(job['ID']);
    const canonical = Object.fromEntries(Object.entries(job).filter(([k]) => !SERVER_FIELDS.includes(k)));
    const existing = this.jobs.get(id);
    const current = existing?.versions.at(-1);
    if (existing && current && !existing.stop && isDeepStrictEqual(current.job, canonical)) {
      // Nomad: an unchanged job is not a new version and nothing is scheduled.
      return { EvalID: '', EvalCreateIndex: existing.modifyIndex, JobModifyIndex: existing.jobModifyIndex, Warnings: warnings, Index: existing.modifyIndex };
    }
    const index = this.index.next();
    const version: JobVersion = { version: current ? current.version + 1 : 0, job: canonical, allocs, submitTime: this.now(), jobModifyIndex: index };
    const entry: JobEntry = existing ?? { id, namespace: String(job['Namespace'] ?? 'default'), versions: [], stop: false, createIndex: index, modifyIndex: index, jobModifyIndex: index };
    entry.versions.push(version);
    entry.stop = false;
    entry.modifyIndex = entry.jobModifyIndex = index;
    this.jobs.set(id, entry);
    this.jobsIndex = index;
    const events: StreamEvent[] = [this.jobEvent(entry, 'JobRegistered', index)];
    events.push(...this.reconcile(entry, index));
    this.commit(index, events);
    this.onChange();
    return { EvalID: randomUUID(), EvalCreateIndex: index, JobModifyIndex: index, Warnings: warnings, Index: index };
  }

  /** Stops a job (a new version with `Stop`), or with `purge` forgets it; its allocations are stopped. */
  deregister(id: string, purge: boolean): RegisterResult | undefined {
    const entry = this.jobs.get(id);
    if (!entry) return undefined;
    const index = this.index.next();
    const events: StreamEvent[] = [];
    if (!entry.stop) {
      const current = entry.versions.at(-1)!;
      entry.versions.push({ ...current, version: current.version + 1, submitTime: this.now(), jobModifyIndex: index });
      entry.stop = true;
    }
    entry.modifyIndex = entry.jobModifyIndex = index;
    events.push(this.jobEvent(entry, 'JobDeregistered', index));
    for (const a of this.allocsOfJob(id)) if (a.desired === 'run') events.push(this.stop(a, 'alloc not needed due to job update', index, 'PlanResult'));
    if (purge) this.jobs.delete(id);
    this.jobsIndex = index;
    this.commit(index, events);
    this.onChange();
    return { EvalID: randomUUID(), EvalCreateIndex: index, JobModifyIndex: index, Warnings: '', Index: index };
  }

  /** Stops one allocation; a replacement is placed while its job still wants it (`nomad alloc stop`). */
  stopAllocation(a: AllocEntry): number {
    const index = this.index.next();
    const events: StreamEvent[] = [];
    if (a.desired === 'run') {
      events.push(this.stop(a, 'alloc was stopped by the user', index, 'AllocationUpdateDesiredStatus'));
      const job = this.jobs.get(a.jobId);
      const template = job && !job.stop ? job.versions.at(-1)!.allocs.filter((s) => s.group === a.group)[a.index] : undefined;
      if (job && template) events.push(this.place(job, template, a.index, index, a));
    }
    this.commit(index, events);
    this.onChange();
    return index;
  }

  /** Loads what an earlier agent saved; call before `adopt`, with an index started past `saved.index`. */
  restore(saved: SavedRegistry): void {
    for (const job of saved.jobs) this.jobs.set(job.id, job);
    for (const a of saved.allocs) this.saved.set(a.id, a);
    this.jobsIndex = Math.max(0, ...saved.jobs.map((j) => j.modifyIndex));
  }

  /** The registry as `RegistryFile` saves it. */
  snapshot(): SavedRegistry {
    const allocs = [...this.allocs.values()].map(({ runner: _r, lastState: _l, spec: _s, modifyIndex: _m, modifyTime: _t, ...keep }) => keep);
    return { index: this.index.current, jobs: [...this.jobs.values()], allocs };
  }

  /** Takes over allocations an earlier agent ran (restored runners, and finished ones from disk). */
  adopt(found: { spec: AllocSpec; state: AllocState; createdAt?: number; updatedAt: number; runner?: AllocRunner }[]): void {
    for (const r of found) {
      if (this.allocs.has(r.spec.id)) continue;
      const index = this.index.next();
      const known = this.saved.get(r.spec.id);
      const entry: AllocEntry = {
        id: r.spec.id, spec: r.spec, jobId: r.spec.job, namespace: r.spec.namespace ?? 'default', group: r.spec.group,
        index: instanceOf(r.spec), jobVersion: 0, desired: r.spec.desiredStatus ?? 'run', desiredDescription: '',
        createIndex: index, allocModifyIndex: index, createTime: r.createdAt ?? r.updatedAt,
        ...known,
        modifyIndex: index, modifyTime: r.updatedAt, lastState: r.runner?.getState() ?? r.state, runner: r.runner,
      };
      this.allocs.set(entry.id, entry);
      if (r.runner) this.watch(entry, r.runner);
      this.allocsIndex = index;
    }
    this.index.changed(this.index.current);
  }

  /** Every job, sorted by ID. */
  listJobs(): JobEntry[] {
    return [...this.jobs.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  getJob(id: string): JobEntry | undefined {
    return this.jobs.get(id);
  }

  /** Every allocation, oldest first. */
  listAllocs(): AllocEntry[] {
    return [...this.allocs.values()].sort((a, b) => a.createIndex - b.createIndex);
  }

  allocsOfJob(id: string): AllocEntry[] {
    return this.listAllocs().filter((a) => a.jobId === id);
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
    return {
      ...job,
      ID: entry.id,
      Name: job['Name'] ?? entry.id,
      Namespace: entry.namespace,
      Type: job['Type'] ?? version.allocs[0]?.type ?? 'service',
      Priority: job['Priority'] ?? 50,
      Status: this.jobStatus(entry),
      StatusDescription: '',
      Stop: isCurrent ? entry.stop : false,
      Stable: false,
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
      ID: entry.id, ParentID: '', Name: job['Name'], Namespace: entry.namespace, Datacenters: job['Datacenters'] ?? [],
      Type: job['Type'], Priority: job['Priority'], Periodic: false, ParameterizedJob: false, Stop: entry.stop,
      Status: job['Status'], StatusDescription: '', JobSummary: this.summaryJson(entry),
      CreateIndex: entry.createIndex, ModifyIndex: entry.modifyIndex, JobModifyIndex: entry.jobModifyIndex,
      SubmitTime: job['SubmitTime'], Version: job['Version'],
    };
  }

  /** Nomad's JobSummary: allocation counts per group by client status. */
  summaryJson(entry: JobEntry): Json {
    const summary: Record<string, GroupSummary> = {};
    const zero = (): GroupSummary => ({ Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 });
    for (const s of entry.versions.at(-1)!.allocs) summary[s.group] ??= zero();
    for (const a of this.allocsOfJob(entry.id)) {
      const g = (summary[a.group] ??= zero());
      const status = a.lastState.clientStatus;
      if (status === 'pending') g.Starting++;
      else if (status === 'running') g.Running++;
      else if (status === 'complete') g.Complete++;
      else g.Failed++;
    }
    return { JobID: entry.id, Namespace: entry.namespace, Summary: summary, Children: { Pending: 0, Running: 0, Dead: 0 }, CreateIndex: entry.createIndex, ModifyIndex: entry.modifyIndex };
  }

  /** `pending` before any allocation runs, `running` while one is live, `dead` once all are done or the job is stopped. */
  jobStatus(entry: JobEntry): 'pending' | 'running' | 'dead' {
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
    return { ...a, state: a.lastState };
  }

  /** Brings the job's allocations in line with its current version; returns the events of the changes. */
  private reconcile(entry: JobEntry, index: number): StreamEvent[] {
    const version = entry.versions.at(-1)!;
    const events: StreamEvent[] = [];
    const wanted = new Map<string, AllocSpec[]>();
    for (const s of version.allocs) wanted.set(s.group, [...(wanted.get(s.group) ?? []), s]);
    const live = this.allocsOfJob(entry.id).filter((a) => a.desired === 'run');
    for (const a of live) {
      const template = wanted.get(a.group)?.[a.index];
      if (!template) {
        events.push(this.stop(a, 'alloc not needed due to job update', index, 'PlanResult'));
        continue;
      }
      const update = groupUpdate(a.spec, template);
      if (update === 'destructive' && !(a.spec.type === 'batch' && a.lastState.clientStatus === 'complete')) {
        events.push(this.stop(a, 'alloc is being updated due to job update', index, 'PlanResult'));
        events.push(this.place(entry, template, a.index, index, a));
        continue;
      }
      a.jobVersion = version.version;
      if (update === 'inplace' && !isTerminal(a.lastState)) {
        a.spec = { ...template, id: a.id, modifyIndex: index };
        a.allocModifyIndex = a.modifyIndex = index;
        a.runner?.send({ type: 'UPDATE', alloc: a.spec });
        events.push(this.allocEvent(a, 'PlanResult', index));
      }
    }
    for (const [group, templates] of wanted) {
      templates.forEach((template, i) => {
        if (!live.some((a) => a.group === group && a.index === i)) events.push(this.place(entry, template, i, index));
      });
    }
    return events;
  }

  /** Starts a new allocation of `template` as instance `i` of its group. */
  private place(entry: JobEntry, template: AllocSpec, i: number, index: number, previous?: AllocEntry): StreamEvent {
    const id = randomUUID();
    const spec: AllocSpec = { ...template, id, modifyIndex: index };
    const now = this.now();
    const a: AllocEntry = {
      id, spec, jobId: entry.id, namespace: entry.namespace, group: template.group, index: i, jobVersion: entry.versions.at(-1)!.version,
      desired: 'run', desiredDescription: '', createIndex: index, modifyIndex: index, allocModifyIndex: index, createTime: now, modifyTime: now,
      ...(previous && { previousAllocation: previous.id }),
      lastState: { clientStatus: 'pending', taskStates: {} },
    };
    if (previous) previous.nextAllocation = id;
    this.allocs.set(id, a);
    this.allocsIndex = index;
    const runner = this.agent.run(spec);
    a.runner = runner;
    a.lastState = runner.getState();
    this.watch(a, runner);
    this.placements.next({ spec, runner });
    return this.allocEvent(a, 'PlanResult', index);
  }

  /** Marks an allocation stopped and tells its runner to kill its tasks. */
  private stop(a: AllocEntry, why: string, index: number, type: string): StreamEvent {
    a.desired = 'stop';
    a.desiredDescription = why;
    a.spec = { ...a.spec, desiredStatus: 'stop', modifyIndex: index };
    a.allocModifyIndex = a.modifyIndex = index;
    a.modifyTime = this.now();
    this.allocsIndex = index;
    if (a.runner && !isTerminal(a.lastState)) {
      a.runner.send({ type: 'UPDATE', alloc: a.spec });
      // Before its prerun hooks finish an allocation only queues updates; KILL stops it there too.
      a.runner.send({ type: 'KILL' });
    }
    return this.allocEvent(a, type, index);
  }

  /** Every state change of the runner is a client update: the next index, an AllocationUpdated event. */
  private watch(a: AllocEntry, runner: AllocRunner): void {
    runner.state$.pipe(skip(1)).subscribe((state) => {
      const index = this.index.next();
      a.lastState = state;
      a.modifyIndex = index;
      a.modifyTime = this.now();
      this.allocsIndex = index;
      this.commit(index, [this.allocEvent(a, 'AllocationUpdated', index)]);
    });
  }

  private jobEvent(entry: JobEntry, type: string, index: number): StreamEvent {
    return { Topic: 'Job', Type: type, Key: entry.id, Namespace: entry.namespace, FilterKeys: [], Index: index, Payload: { Job: this.jobJson(entry) } };
  }

  private allocEvent(a: AllocEntry, type: string, index: number): StreamEvent {
    return { Topic: 'Allocation', Type: type, Key: a.id, Namespace: a.namespace, FilterKeys: [a.jobId], Index: index, Payload: { Allocation: this.allocStubJson(a) } };
  }

  private commit(index: number, events: StreamEvent[]): void {
    this.events.publish({ Index: index, Events: events });
    this.index.changed(index);
  }
}
