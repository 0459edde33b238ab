/**
 * The `update` block, resolved the way Nomad's API canonicalises it: the group's fields over the job's,
 * over Nomad's DefaultUpdateStrategy. The client uses only the health part (AllocSpec.update); the rest
 * is kept so Nomad's UpdateStrategy.Validate rules can be checked on the merged block.
 */
import { formatDuration, type JobType, type UpdateStrategy } from '../../machines/model.ts';
import type { UpdateBody } from './jobspec-schema.ts';

/** A merged update block with every field set (durations in milliseconds). */
export type ResolvedUpdate = Required<Omit<UpdateBody, 'health_check'>> & { health_check: NonNullable<UpdateBody['health_check']> };

/** Nomad's DefaultUpdateStrategy. */
export const DEFAULT_UPDATE: ResolvedUpdate = {
  max_parallel: 1,
  health_check: 'checks',
  min_healthy_time: 10_000,
  healthy_deadline: 300_000,
  progress_deadline: 600_000,
  auto_revert: false,
  auto_promote: false,
  canary: 0,
  stagger: 30_000,
};

/**
 * Rollout fields allocrun's scheduler does not act on (it honours max_parallel, canary, auto_promote, auto_revert and
 * progress_deadline), so it warns about them, with the reason.
 */
export const ROLLOUT_FIELDS = ['stagger'] as const;

/**
 * Why `stagger` is not acted on, in Nomad's terms: Nomad applies it only to a system job's rolling update (the delay
 * between its sets of max_parallel updates); a service job's deployment is paced by its allocations' health. allocrun
 * has no deployments of system jobs and updates their allocations at once.
 */
export const STAGGER_IGNORED = 'ignored: Nomad applies "stagger" only between the max_parallel sets of a system job\'s update (a service job\'s deployment is paced by its allocations\' health); allocrun updates a system job\'s allocations at once';

/** The group's update block over the job's over the defaults, or undefined when neither has one. */
export function mergeUpdate(job: UpdateBody | undefined, group: UpdateBody | undefined): ResolvedUpdate | undefined {
  if (!job && !group) return undefined;
  const set = (b: UpdateBody | undefined): Partial<UpdateBody> =>
    Object.fromEntries(Object.entries(b ?? {}).filter(([, v]) => v !== undefined));
  return { ...DEFAULT_UPDATE, ...set(job), ...set(group) } as ResolvedUpdate;
}

/** Whether the block turns deployments on (Nomad: `max_parallel = 0` disables them). */
export function deploymentsEnabled(u: ResolvedUpdate): boolean {
  return u.max_parallel > 0;
}

/** What the client acts on, for job types that have deployments (service and system); undefined otherwise. */
export function clientUpdateOf(type: JobType, u: ResolvedUpdate | undefined): UpdateStrategy | undefined {
  if (!u || !deploymentsEnabled(u) || (type !== 'service' && type !== 'system')) return undefined;
  return { minHealthyTime: u.min_healthy_time, healthyDeadline: u.healthy_deadline, healthCheck: u.health_check };
}

/** Nomad's UpdateStrategy.Validate, as (field, message) pairs; `field` undefined means the block as a whole. */
export function updateProblems(u: ResolvedUpdate): { field?: keyof UpdateBody; message: string }[] {
  const out: { field?: keyof UpdateBody; message: string }[] = [];
  if (u.canary === 0 && u.auto_promote) out.push({ field: 'auto_promote', message: 'auto_promote requires a canary count greater than zero' });
  if (u.healthy_deadline <= 0) out.push({ field: 'healthy_deadline', message: 'healthy_deadline must be greater than zero' });
  if (u.min_healthy_time >= u.healthy_deadline) {
    out.push({
      field: 'min_healthy_time',
      message: `min_healthy_time (${formatDuration(u.min_healthy_time)}) must be less than healthy_deadline (${formatDuration(u.healthy_deadline)})`,
    });
  }
  if (u.progress_deadline !== 0 && u.healthy_deadline >= u.progress_deadline) {
    out.push({
      field: 'healthy_deadline',
      message: `healthy_deadline (${formatDuration(u.healthy_deadline)}) must be less than progress_deadline (${formatDuration(u.progress_deadline)})`,
    });
  }
  if (u.stagger <= 0) out.push({ field: 'stagger', message: 'stagger must be greater than zero' });
  return out;
}
