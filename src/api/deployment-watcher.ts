/**
 * Nomad's deployment watcher on the agent's registry (job-registry.ts), told of each allocation's health verdict
 * (`moved`) and, at the agent's start, of every current deployment (`restored`): a healthy allocation rolls the
 * deployment on (an evaluation that replaces the next ones), promotes canaries with `auto_promote`, or marks the
 * version stable once all it wants is healthy; an unhealthy one fails it, and `auto_revert` registers the latest
 * stable version again. Promotions (`nomad deployment promote`) and fails by the progress deadline
 * (progress-watcher.ts) are written here too. Every write goes through the registry (`DeploymentHost.write`), one
 * commit each, in the job's queue.
 */
import type { AllocSpec } from '../jobspec/types.ts';
import type { AgentStore, WriteTx } from '../state/agent-store.ts';
import type { AllocEntry, EvalRecord, JobEntry, RegisterResult } from './job-registry.ts';
import type { Json } from './job-json.ts';
import type { HostBusy } from './port-allocator.ts';
import { sameJob } from './job-canonical.ts';
import { deploymentId, deploymentOf } from './deployment-id.ts';
import { deploymentsMarkedFailed, deploymentsPromoted, PROMOTED_KEY } from './deployment-marks.ts';
import { autoPromoteOf, autoRevertOf, canaryCountOf, deploymentSucceeded, progressDeadlineOf } from './rollout.ts';
import { progressRecord, type ProgressRecord } from './progress-deadline.ts';
import type { SubmissionSource } from './job-submissions.ts';

/** One write being planned, as the watcher sees it (the registry's Change). */
export interface PlannedWrite {
  index: number;
  /** Records the write's evaluation; returns its ID. */
  evaluate(job: JobEntry, trigger: EvalRecord['TriggeredBy']): string;
  /** Plans what brings the job in line with its current version (`promoting`: as if that deployment were promoted). */
  reconcile(job: JobEntry, promoting?: string): void;
  setJob(id: string, entry: JobEntry): void;
  setProgress(deployment: string, record: ProgressRecord): void;
  also(write: (tx: WriteTx) => void): void;
}

/** What the watcher asks of the registry. */
export interface DeploymentHost {
  store: AgentStore;
  /** The agent is shutting down. */
  isClosed(): boolean;
  /** The start's reconcile has written. */
  isHealed(): boolean;
  /** The time on the clock progress deadlines run on. */
  progressNow(): number;
  log(line: string): void;
  getJob(id: string): JobEntry | undefined;
  allocsOfJob(id: string): readonly AllocEntry[];
  serialize<T>(id: string, fn: () => T | Promise<T>): Promise<T>;
  evaluateJob(id: string, forceReschedule: boolean, trigger: EvalRecord['TriggeredBy']): Promise<RegisterResult | undefined>;
  register(job: Json, allocs: AllocSpec[], warnings: string, opts: { trigger?: EvalRecord['TriggeredBy']; submission?: SubmissionSource }): Promise<RegisterResult>;
  probe(specs: AllocSpec[]): Promise<HostBusy>;
  /** Plans one write at the next index and commits it (then applies it). */
  write<R>(hostBusy: HostBusy, plan: (w: PlannedWrite) => R): Promise<{ index: number; planned: R }>;
}

export class DeploymentWatcher {
  constructor(private readonly host: DeploymentHost) {}

  /**
   * Nomad's deployment watcher, told that allocation `a` has a health verdict. Only the job's current deployment
   * moves: a healthy allocation frees a slot of its rollout, so while allocations of an earlier version still
   * wait to be replaced the job is evaluated again (its reconcile replaces the next ones, up to max_parallel), and
   * once every allocation it wants is healthy the version is marked stable. An unhealthy one fails the
   * deployment: the rest keep their version, and a group with `auto_revert` goes back to the latest stable one.
   */
  moved(job: JobEntry, a: AllocEntry, healthy: boolean): void {
    if (this.host.isClosed() || job.stop) return;
    const version = job.versions.at(-1)!;
    if (a.spec.deploymentId === undefined || a.spec.deploymentId !== deploymentOf(job, version.version, a.spec)) return;
    // Before the start's reconcile has written, `heal` looks at every deployment once it has (`restored`).
    if (!this.host.isHealed()) return;
    const failed = (what: string) => (err: unknown) => this.host.log(`job ${JSON.stringify(job.id)}: ${what} (${err instanceof Error ? err.message : String(err)}); the next health change or agent start tries again`);
    const allocs = this.host.allocsOfJob(job.id);
    if (!healthy) {
      if (a.desired === 'run' && autoRevertOf(version.job, a.group)) {
        this.host.serialize(job.id, () => this.autoRevert(job.id, version.version)).catch(failed(`version ${version.version}'s deployment failed and could not be reverted`));
      }
      return;
    }
    const deployment = a.spec.deploymentId;
    // A failed deployment (by hand, or by its progress deadline) moves no further: no promotion, rollout or stable mark.
    if (this.failed(deployment)) return;
    const canaries = this.canariesOf(job.id, deployment);
    const ready = canaries.size > 0 && [...canaries.values()].every((g) => g.placed.length >= g.wanted && g.placed.every((c) => c.desired !== 'run' || c.lastState.deploymentStatus?.healthy === true));
    if (ready && !deploymentsPromoted(this.host.store).has(deployment)) {
      // Canaries wait for a promotion: Nomad's deployment watcher makes it itself only for groups with auto_promote.
      if ([...canaries.keys()].every((g) => autoPromoteOf(version.job, g))) {
        this.host.serialize(job.id, async () => {
          if (job.versions.at(-1) === version && !deploymentsPromoted(this.host.store).has(deployment)) await this.promote(job.id, deployment);
        }).catch(failed(`version ${version.version}'s canaries could not be promoted`));
      }
      return;
    }
    if (allocs.some((o) => o.desired === 'run' && o.jobVersion !== version.version)) {
      this.host.serialize(job.id, () => this.host.evaluateJob(job.id, false, 'deployment-watcher')).catch(failed(`the rollout of version ${version.version} could not go on`));
    } else if (!version.stable && deploymentSucceeded(version.allocs, version.version, allocs)) {
      this.host.serialize(job.id, () => this.markStable(job.id, version.version)).catch(failed(`version ${version.version} could not be marked stable`));
    }
  }

  /**
   * Promotes `deployment`, the current deployment of job `id` (its canaries accepted: `nomad deployment promote`, or
   * `auto_promote`): the mark and the evaluation it makes (each canary takes its instance's place, the rollout goes
   * on) in one commit. The caller has checked that the canaries are healthy, in the job's queue (`serialize`).
   */
  async promote(id: string, deployment: string): Promise<RegisterResult> {
    const job = this.host.getJob(id);
    if (!job) throw new Error(`job ${JSON.stringify(id)} not found`);
    const hostBusy = await this.host.probe(job.versions.at(-1)!.allocs);
    const { index, planned: evalId } = await this.host.write(hostBusy, (w) => {
      const promoted = deploymentsPromoted(this.host.store);
      promoted.set(deployment, w.index);
      w.also((tx) => tx.put('meta', PROMOTED_KEY, Object.fromEntries(promoted)));
      // Nomad's UpdateDeploymentPromotion: each promoted group with a deadline under way gets a new one from now.
      const record = progressRecord(this.host.store, deployment);
      const requireBy = { ...record.requireBy };
      const current = job.versions.at(-1)!.job;
      for (const group of this.canariesOf(id, deployment).keys()) {
        const pd = progressDeadlineOf(current, group);
        if (pd > 0 && requireBy[group] !== undefined) requireBy[group] = this.host.progressNow() + pd;
      }
      w.setProgress(deployment, { ...record, requireBy });
      const evalId = w.evaluate(job, 'deployment-watcher');
      w.reconcile(job, deployment);
      return evalId;
    });
    return { EvalID: evalId, EvalCreateIndex: index, JobModifyIndex: job.jobModifyIndex, Warnings: '', Index: index };
  }

  /** The canaries of `deployment` in each group of job `id` that asks for them, and how many it asks for. */
  canariesOf(id: string, deployment: string): Map<string, { wanted: number; placed: AllocEntry[] }> {
    const job = this.host.getJob(id);
    const out = new Map<string, { wanted: number; placed: AllocEntry[] }>();
    const version = job?.versions.find((v) => job && deploymentId(job, v.version) === deployment);
    if (!job || !version) return out;
    for (const a of this.host.allocsOfJob(id)) {
      if (!a.canary || a.spec.deploymentId !== deployment) continue;
      const g = out.get(a.group) ?? { wanted: canaryCountOf(version.job, a.group), placed: [] };
      g.placed.push(a);
      out.set(a.group, g);
    }
    return out;
  }

  /**
   * What `heal` does for each job's current deployment: as if its allocations' verdicts had just come in (an
   * unhealthy one first), so a rollout, a stable mark or a revert the previous agent did not get to is done now.
   */
  restored(job: JobEntry): void {
    const version = job.versions.at(-1)!;
    const judged = this.host.allocsOfJob(job.id).filter((a) => a.spec.deploymentId !== undefined && a.spec.deploymentId === deploymentOf(job, version.version, a.spec) && a.lastState.deploymentStatus?.healthy !== undefined);
    const sick = judged.find((a) => a.desired === 'run' && a.lastState.deploymentStatus?.healthy === false);
    const well = judged.find((a) => a.lastState.deploymentStatus?.healthy === true);
    if (sick) this.moved(job, sick, false);
    else if (well) this.moved(job, well, true);
    // Failed by its progress deadline with the revert not yet registered (the agent stopped between the two writes).
    const current = deploymentId(job, version.version);
    if (!job.stop && progressRecord(this.host.store, current).failed !== undefined && version.allocs.some((s) => autoRevertOf(version.job, s.group))) {
      this.host.serialize(job.id, () => this.autoRevert(job.id, version.version)).catch((err: unknown) => this.host.log(`job ${JSON.stringify(job.id)}: version ${version.version}'s deployment failed and could not be reverted (${err instanceof Error ? err.message : String(err)}); the next agent start tries again`));
    }
  }

  /** Whether `deployment` was marked failed by hand (`nomad deployment fail`) or failed by its progress deadline. */
  failed(deployment: string): boolean {
    return deploymentsMarkedFailed(this.host.store).has(deployment) || progressRecord(this.host.store, deployment).failed !== undefined;
  }

  /**
   * Nomad's deployment watcher at a passed progress deadline: `deployment`, the deployment of `version` of job `id`,
   * is failed (the record and an evaluation in one commit), then, with `rollback`, the latest stable version is
   * registered again. In the job's queue, and only while the job is still at that version and `still()` says the
   * deadline still fails it (a health verdict may have come in meanwhile).
   */
  failByProgressDeadline(id: string, deployment: string, version: number, rollback: boolean, still: () => boolean): Promise<void> {
    return this.host.serialize(id, async () => {
      const job = this.host.getJob(id);
      if (this.host.isClosed() || !job || job.stop || job.versions.at(-1)!.version !== version || deploymentId(job, version) !== deployment) return;
      if (this.failed(deployment) || !still()) return;
      await this.host.write(new Map(), (w) => {
        w.evaluate(job, 'deployment-watcher');
        w.setProgress(deployment, { ...progressRecord(this.host.store, deployment), failed: w.index });
      });
      this.host.log(`job ${JSON.stringify(id)}: version ${version}'s deployment failed: no allocation turned healthy by its progress deadline`);
      if (rollback) await this.autoRevert(id, version);
    });
  }

  /** Marks `version` of job `id` stable (its deployment succeeded), durably, unless the job has moved on since. */
  private async markStable(id: string, version: number): Promise<void> {
    const job = this.host.getJob(id);
    const current = job?.versions.at(-1);
    if (!job || job.stop || current?.version !== version || current.stable) return;
    await this.host.write(new Map(), (w) => {
      w.setJob(id, { ...job, modifyIndex: w.index, versions: job.versions.map((v) => (v === current ? { ...v, stable: true } : v)) });
    });
  }

  /**
   * Nomad's auto-revert: version `failed`'s deployment failed, so the latest stable version before it is
   * registered again as the job's next version, unless the job has moved on since or no earlier version is stable
   * (or the stable one is the same job).
   */
  private async autoRevert(id: string, failed: number): Promise<void> {
    const job = this.host.getJob(id);
    const current = job?.versions.at(-1);
    if (!job || job.stop || current?.version !== failed) return;
    const target = job.versions.filter((v) => v.version < failed && v.stable).at(-1);
    if (!target || sameJob(target.job, current.job)) return;
    this.host.log(`job ${JSON.stringify(id)}: version ${failed}'s deployment failed; reverting to version ${target.version}, the latest stable one (auto_revert)`);
    // As a revert: the version registered again keeps the job file it was registered from (job-submissions.ts).
    await this.host.register(target.job, target.allocs, '', { trigger: 'deployment-watcher', submission: { version: target.version } });
  }
}
