/**
 * Nomad's progress deadline (`update.progress_deadline`, default 10m, 0 off), read from its state store
 * (`updateDeploymentWithAlloc`, `UpdateDeploymentPromotion`) and deployment watcher (`getDeploymentProgressCutoff`,
 * `doneGroups`, `shouldFail`). Each group of a deployment must have an allocation turn healthy by its
 * `RequireProgressBy`: set when the deployment's first allocation of the group is placed (now + deadline), pushed
 * out to each healthy verdict's time + deadline, and reset to now + deadline by the promotion of its canaries. When
 * the earliest deadline of the groups not yet done passes and a group still lacks its healthy allocations (its
 * canaries, while they wait for a promotion), the deployment fails ("Failed due to progress deadline").
 *
 * Durable as an absolute time: the placement's and the promotion's deadlines, and the fail, are kept in the store
 * (one `meta` entry per deployment, written in the transaction that places, promotes or fails); the healthy
 * verdicts' times are the allocations' own saved states. Nothing here waits: `ProgressWatcher` arms one timer per
 * running deployment from what is stored, so an agent that starts after a deadline passed judges it at once.
 */
import { StoreDamagedError, type AgentStore } from '../state/agent-store.ts';
import { ZERO_TIME, type Json } from './job-json.ts';

/** Where a deployment's record is kept: `meta/deployments.progress/<deployment ID>`. */
export const PROGRESS_PREFIX = 'deployments.progress/';

/** Nomad's words for a deployment failed by its progress deadline. */
export const PROGRESS_DEADLINE_FAILED = 'Failed due to progress deadline';

/** What the store keeps of a deployment's progress. */
export interface ProgressRecord {
  /** Per group, the RequireProgressBy its first placement or its promotion set (ms on the agent's clock). */
  requireBy: Record<string, number>;
  /** The index of the write that failed the deployment by its progress deadline. */
  failed?: number;
}

/** The record of `deployment` (empty when it has none); a damaged one is named, never dropped. */
export function progressRecord(store: Pick<AgentStore, 'get' | 'path'>, deployment: string): ProgressRecord {
  const key = `${PROGRESS_PREFIX}${deployment}`;
  const v = store.get('meta', key) as ProgressRecord | undefined;
  if (v === undefined) return { requireBy: {} };
  const ok = typeof v === 'object' && v !== null && typeof v.requireBy === 'object' && v.requireBy !== null
    && Object.values(v.requireBy).every((t) => typeof t === 'number') && (v.failed === undefined || typeof v.failed === 'number');
  if (!ok) throw new StoreDamagedError(`${store.path} is damaged: meta/${key}: expected { requireBy: { group: ms }, failed?: index }`, store.path);
  return v;
}


/**
 * A group's RequireProgressBy (ms), or undefined while it has none: the later of what its placement or promotion
 * set and each healthy verdict's time + the deadline (a deadline of 0 has none).
 */
export function requireProgressBy(deadlineMs: number, recorded: number | undefined, healthyAt: Iterable<number>): number | undefined {
  if (deadlineMs <= 0) return undefined;
  let by = recorded;
  for (const t of healthyAt) if (by === undefined || t + deadlineMs > by) by = t + deadlineMs;
  return by;
}

/** What the watcher reads of one group of a deployment (its JSON, as the deployment routes build it). */
type GroupState = Json & { DesiredTotal?: unknown; DesiredCanaries?: unknown; Promoted?: unknown; HealthyAllocs?: unknown; RequireProgressBy?: unknown; AutoRevert?: unknown };

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const groupsOf = (d: Json): [string, GroupState][] => Object.entries((d['TaskGroups'] ?? {}) as Record<string, GroupState>);

/** Nomad's doneGroups: a group waiting for its canaries' promotion is never done; else done with all it wants healthy. */
function done(g: GroupState): boolean {
  if (num(g.DesiredCanaries) !== 0 && g.Promoted !== true) return false;
  return num(g.HealthyAllocs) >= num(g.DesiredTotal);
}

/** Nomad's getDeploymentProgressCutoff: the earliest RequireProgressBy of the groups not done (ms), if any. */
export function progressCutoff(d: Json): number | undefined {
  let next: number | undefined;
  for (const [, g] of groupsOf(d)) {
    if (done(g) || typeof g.RequireProgressBy !== 'string' || g.RequireProgressBy === ZERO_TIME) continue;
    const at = Date.parse(g.RequireProgressBy);
    if (Number.isFinite(at) && (next === undefined || at < next)) next = at;
  }
  return next;
}

/**
 * Nomad's shouldFail, at the deadline: a group fails unless it has as many healthy allocations as it wants (as many
 * healthy canaries, while it waits for their promotion, which the deadline does not hurry); the deployment rolls
 * back when a group that failed has auto_revert.
 */
export function deadlineVerdict(d: Json): { fail: boolean; rollback: boolean } {
  let fail = false;
  for (const [, g] of groupsOf(d)) {
    const waitingForPromotion = num(g.DesiredCanaries) > 0 && g.Promoted !== true;
    if (num(g.HealthyAllocs) >= (waitingForPromotion ? num(g.DesiredCanaries) : num(g.DesiredTotal))) continue;
    fail = true;
    if (g.AutoRevert === true) return { fail, rollback: true };
  }
  return { fail, rollback: false };
}
