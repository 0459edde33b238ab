/**
 * The arithmetic of Nomad's rescheduling (nomad/structs: Allocation.NextDelay, RescheduleEligible, rescheduleInfo,
 * NextRescheduleTime; scheduler: updateRescheduleTracker; the reconciler's batching of follow-up evaluations), as
 * pure functions of a group's policy, an allocation's tracker and times in ms. The registry decides when they apply.
 */
import type { Json } from './job-json.ts';
import { taskGroupsOf } from './job-json.ts';
import type { ReschedulePolicy } from '../jobspec/reschedule-rules.ts';

/** A group's reschedule policy, durations in ms: the one the jobspec's rules check (reschedule-rules.ts). */
export type { ReschedulePolicy };

/** Nomad's RescheduleEvent as its API shows it: times and delay in ns. */
export interface RescheduleEvent {
  RescheduleTime: number;
  PrevAllocID: string;
  PrevNodeID: string;
  Delay: number;
}

/** Nomad's RescheduleTracker: the reschedule attempts that led to an allocation. */
export interface RescheduleTracker {
  Events: RescheduleEvent[];
}

/** Nomad's maxPastRescheduleEvents: what an unlimited policy's tracker keeps. */
const MAX_PAST_EVENTS = 5;
/** Nomad's batchedFailedAllocWindowSize: failures due this close share one follow-up evaluation. */
export const BATCH_WINDOW_MS = 5_000;

const NS = 1e6;
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * The policy of `group` in a canonical job (its ReschedulePolicy: the type's default, the job's block, the group's);
 * none for a system job, or a group without one.
 */
export function reschedulePolicyOf(job: Json, group: string): ReschedulePolicy | undefined {
  const type = job['Type'];
  if (type === 'system' || type === 'sysbatch') return undefined;
  const p = taskGroupsOf(job).find((g) => g['Name'] === group)?.['ReschedulePolicy'] as Json | undefined;
  if (!p) return undefined;
  return {
    attempts: num(p['Attempts']), interval: num(p['Interval']) / NS, delay: num(p['Delay']) / NS,
    delayFunction: String(p['DelayFunction'] ?? 'constant'), maxDelay: num(p['MaxDelay']) / NS, unlimited: p['Unlimited'] === true,
  };
}

/**
 * Nomad's Allocation.NextDelay: the wait before the next attempt, by the delay function over the tracker's delays,
 * capped by the max delay; once capped, a failure longer after the last attempt than the cap starts over from
 * `delay`. `failedAt` is the allocation's fail time (ms).
 */
export function nextDelay(policy: ReschedulePolicy, events: readonly RescheduleEvent[], failedAt: number): number {
  let delay = policy.delay;
  if (events.length === 0) return delay;
  const last = events.at(-1)!;
  if (policy.delayFunction === 'exponential') delay = (last.Delay / NS) * 2;
  else if (policy.delayFunction === 'fibonacci') {
    if (events.length >= 2) {
      const n1 = last.Delay / NS;
      const n2 = events.at(-2)!.Delay / NS;
      // The series starts again after a reset to the first delay.
      delay = n2 === policy.maxDelay && n1 === policy.delay ? n1 : n1 + n2;
    }
  } else return delay;
  if (policy.maxDelay > 0 && delay > policy.maxDelay) {
    delay = policy.maxDelay;
    if (failedAt - last.RescheduleTime / NS > delay) delay = policy.delay;
  }
  return delay;
}

/** Nomad's rescheduleInfo: how many of the tracker's attempts fall within the interval before `failedAt`. */
export function attemptsInInterval(policy: ReschedulePolicy, events: readonly RescheduleEvent[], failedAt: number): number {
  return events.filter((e) => failedAt - e.RescheduleTime / NS < policy.interval).length;
}

/**
 * Nomad's NextRescheduleTime for a failed allocation: when it is to be replaced (fail time + next delay), and whether
 * its policy allows another attempt (unlimited; or attempts left within the interval, the delay shorter than it).
 */
export function nextReschedule(policy: ReschedulePolicy, events: readonly RescheduleEvent[], failedAt: number): { at: number; delay: number; eligible: boolean } {
  const delay = nextDelay(policy, events, failedAt);
  let eligible = policy.unlimited || (policy.attempts > 0 && events.length === 0);
  if (!policy.unlimited && policy.attempts > 0 && events.length > 0) {
    eligible = attemptsInInterval(policy, events, failedAt) < policy.attempts && delay < policy.interval;
  }
  return { at: failedAt + delay, delay, eligible };
}

/**
 * Nomad's updateRescheduleTracker: the replacement's tracker, the previous allocation's events (those within the
 * interval; an unlimited policy's last five) and this attempt's, at `now` (ms).
 */
export function trackerAfter(policy: ReschedulePolicy, prev: { id: string; nodeId: string; tracker?: RescheduleTracker }, now: number, delay: number): RescheduleTracker {
  const past = prev.tracker?.Events ?? [];
  const kept = policy.attempts > 0
    ? past.filter((e) => policy.interval > 0 && now * NS - e.RescheduleTime <= policy.interval * NS)
    : past.slice(Math.max(0, past.length - MAX_PAST_EVENTS));
  return { Events: [...kept.map((e) => ({ ...e })), { RescheduleTime: Math.round(now * NS), PrevAllocID: prev.id, PrevNodeID: prev.nodeId, Delay: Math.round(delay * NS) }] };
}

/**
 * Nomad's createRescheduleLaterEvals batching: `due` sorted by time, each batch starting at its first time and
 * taking every later one within the window. Returns the batches' times and members, in order.
 */
export function batchFollowups<T extends { at: number }>(due: readonly T[]): { at: number; members: T[] }[] {
  const sorted = [...due].sort((a, b) => a.at - b.at);
  const out: { at: number; members: T[] }[] = [];
  for (const d of sorted) {
    const last = out.at(-1);
    if (last && d.at - last.at < BATCH_WINDOW_MS) last.members.push(d);
    else out.push({ at: d.at, members: [d] });
  }
  return out;
}
