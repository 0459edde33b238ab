/**
 * Nomad's rules for the `reschedule` block (ReschedulePolicy.Validate, TaskGroup.Validate): each group's policy is
 * the job type's default, then the job's block, then the group's, field by field (api's ReschedulePolicy.Merge), and
 * the merged policy must be one the scheduler can follow. Messages are Nomad's; each points at the block written.
 */
import { formatDuration } from '../../machines/model.ts';
import type { JobType } from './types.ts';
import { rescheduleSchema, type RescheduleBody } from './jobspec-schema.ts';
import { isPlainObject, type Report } from './normalize.ts';
import type { PathSegment } from './spec-error.ts';

/** A reschedule policy, durations in ms (Nomad's ReschedulePolicy). */
export interface ReschedulePolicy {
  attempts: number;
  interval: number;
  delay: number;
  delayFunction: string;
  maxDelay: number;
  unlimited: boolean;
}

const S = 1000;
const HOUR = 3600 * S;

/** Nomad's RescheduleDelayFunctions. */
export const DELAY_FUNCTIONS = ['constant', 'exponential', 'fibonacci'] as const;
/** Nomad's ReschedulePolicyMinInterval and ReschedulePolicyMinDelay. */
const MIN_INTERVAL = 15 * S;
const MIN_DELAY = 5 * S;

/** Nomad's default policy per job type (DefaultServiceJobReschedulePolicy, DefaultBatchJobReschedulePolicy); system jobs have none. */
export function defaultReschedulePolicy(type: JobType): ReschedulePolicy | undefined {
  if (type === 'service') return { attempts: 0, interval: 0, delay: 30 * S, delayFunction: 'exponential', maxDelay: HOUR, unlimited: true };
  if (type === 'batch') return { attempts: 1, interval: 24 * HOUR, delay: 5 * S, delayFunction: 'constant', maxDelay: 0, unlimited: false };
  return undefined;
}

/** The fields a block sets, in the policy's names; undefined for no block, null when the block itself is invalid. */
function partial(raw: unknown): Partial<ReschedulePolicy> | undefined | null {
  if (raw === undefined) return undefined;
  const parsed = rescheduleSchema.safeParse(raw);
  if (!parsed.success) return null;
  const b: RescheduleBody = parsed.data;
  const out: Partial<ReschedulePolicy> = { attempts: b.attempts, interval: b.interval, delay: b.delay, delayFunction: b.delay_function, maxDelay: b.max_delay, unlimited: b.unlimited };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

/** Nomad's ReschedulePolicy.Validate: its messages, in its order. */
export function rescheduleProblems(r: ReschedulePolicy): string[] {
  // Not enabled: nothing to check (Nomad's Enabled()).
  if (!(r.attempts > 0 || r.unlimited)) return [];
  const out: string[] = [];
  const d = formatDuration;
  if (r.attempts > 0) {
    if (r.interval <= 0) out.push('Interval must be a non zero value if Attempts > 0');
    if (r.unlimited) {
      out.push(`Reschedule Policy with Attempts = ${r.attempts}, Interval = ${d(r.interval)}, and Unlimited = ${r.unlimited} is ambiguous`);
      out.push('If Attempts >0, Unlimited cannot also be set to true');
    }
  }
  let delayChecked = true;
  if (r.delay < MIN_DELAY) {
    out.push(`Delay cannot be less than ${d(MIN_DELAY)} (got ${d(r.delay)})`);
    delayChecked = false;
  }
  if (!(DELAY_FUNCTIONS as readonly string[]).includes(r.delayFunction)) {
    out.push(`Invalid delay function ${JSON.stringify(r.delayFunction)}, must be one of [${DELAY_FUNCTIONS.map((f) => JSON.stringify(f)).join(' ')}]`);
    delayChecked = false;
  }
  if (r.delayFunction !== 'constant') {
    // Nomad prints the delay here, not the max delay: kept, as its users see it.
    if (r.maxDelay < MIN_DELAY) {
      out.push(`Max Delay cannot be less than ${d(MIN_DELAY)} (got ${d(r.delay)})`);
      delayChecked = false;
    }
    if (r.maxDelay < r.delay) {
      out.push(`Max Delay cannot be less than Delay ${d(r.delay)} (got ${d(r.maxDelay)})`);
      delayChecked = false;
    }
  }
  if (!r.unlimited) {
    if (r.interval < MIN_INTERVAL) out.push(`Interval cannot be less than ${d(MIN_INTERVAL)} (got ${d(r.interval)})`);
    if (delayChecked) out.push(...delayParamProblems(r));
  }
  return out;
}

/** Nomad's validateDelayParams / viableAttempts: whether `attempts` fit in `interval` given the delays between them. */
function delayParamProblems(r: ReschedulePolicy): string[] {
  let possible = 0;
  let recommended = 0;
  let valid = true;
  if (r.delayFunction === 'constant') {
    recommended = r.attempts * r.delay;
    if (r.interval < recommended) {
      possible = Math.floor(r.interval / r.delay);
      valid = false;
    }
  } else if (r.delayFunction === 'exponential') {
    for (let i = 0; i < r.attempts; i++) {
      const next = 2 ** i * r.delay;
      if (next > r.maxDelay) recommended += r.maxDelay;
      else recommended = next;
      if (recommended < r.interval) possible++;
    }
    valid = possible >= r.attempts;
  } else {
    const slots = [r.delay, r.delay];
    let ceiling = false;
    for (let i = 2; i < r.attempts; i++) {
      let next: number;
      if (ceiling) next = slots[i - 1]! + r.maxDelay;
      else {
        next = slots[i - 1]! + slots[i - 2]!;
        if (next > r.maxDelay) {
          next = r.maxDelay;
          ceiling = true;
        }
      }
      slots.push(next);
    }
    recommended = slots.at(-1)!;
    if (r.interval < recommended) {
      valid = false;
      const over = slots.findIndex((s) => s > r.interval);
      possible = over < 0 ? 0 : over;
    }
  }
  if (valid) return [];
  const d = formatDuration;
  const first = r.delayFunction === 'constant'
    ? `Nomad can only make ${possible} attempts in ${d(r.interval)} with initial delay ${d(r.delay)} and delay function ${JSON.stringify(r.delayFunction)}`
    : `Nomad can only make ${possible} attempts in ${d(r.interval)} with initial delay ${d(r.delay)}, delay function ${JSON.stringify(r.delayFunction)}, and delay ceiling ${d(r.maxDelay)}`;
  return [first, `Set the interval to at least ${d(Math.round(recommended / S) * S)} to accommodate ${r.attempts} attempts`];
}

/**
 * Checks every group's merged reschedule policy of a normalised job body at `path`, adding Nomad's problems to
 * `report` at the block that set the policy (the group's, else the job's). System jobs may not have one.
 */
export function checkReschedule(body: Record<string, unknown>, groups: Record<string, unknown>, path: PathSegment[], type: JobType | undefined, report: Report): void {
  if (!type) return;
  const jobOwn = partial(body['reschedule']);
  if (jobOwn === null) return; // its own fields are wrong: the schema reports them
  const seen = new Set<string>();
  const add = (at: PathSegment[], message: string) => {
    const key = `${JSON.stringify(at)}|${message}`;
    if (seen.has(key)) return;
    seen.add(key);
    report.problems.push({ path: at, message });
  };
  const jobAt = [...path, 'reschedule'];
  for (const [name, group] of Object.entries(groups)) {
    if (!isPlainObject(group)) continue;
    const own = partial(group['reschedule']);
    if (own === null) continue;
    const at = own !== undefined ? [...path, 'group', name, 'reschedule'] : jobAt;
    if (own === undefined && jobOwn === undefined) continue; // the type's default, which is valid
    const base = defaultReschedulePolicy(type);
    if (!base) {
      add(at, 'System jobs should not have a reschedule policy');
      continue;
    }
    for (const message of rescheduleProblems({ ...base, ...jobOwn, ...own })) add(at, message);
  }
}
