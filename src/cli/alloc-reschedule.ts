/**
 * The rescheduling lines of `alloc status` (Nomad's formatAllocBasicInfo): *Reschedule Attempts* (those within the
 * policy's interval / its attempts, shown only when the attempts are limited), *Replacement Alloc ID* once the
 * allocation was replaced, *Reschedule Eligibility* while its follow-up evaluation waits (`25s from now`).
 */
import type { AgentClient } from './api-client.ts';
import { shortId } from './format.ts';

/** What the lines read of an allocation's API JSON. */
export interface RescheduledAlloc {
  TaskGroup: string;
  ModifyTime: number;
  NextAllocation?: string;
  FollowupEvalID?: string;
  RescheduleTracker?: { Events?: { RescheduleTime: number }[] | null } | null;
  Job?: { TaskGroups?: { Name: string; ReschedulePolicy?: { Attempts?: number; Interval?: number } | null }[] } | null;
}

/** `1m30s from now`: the two largest units of how far ahead `at` is (Nomad's prettyTimeDiff). */
export function fromNow(at: number, now: number): string {
  let s = Math.max(0, Math.round((at - now) / 1000));
  const parts: string[] = [];
  for (const [u, n] of [['h', 3600], ['m', 60], ['s', 1]] as const) {
    if (s >= n && parts.length < 2) {
      parts.push(`${Math.floor(s / n)}${u}`);
      s %= n;
    }
  }
  return `${parts.join('') || '0s'} from now`;
}

/** The lines, given the follow-up evaluation's `WaitUntil` (RFC 3339) when it has one. */
export function rescheduleLines(a: RescheduledAlloc, waitUntil: string | undefined, opts: { verbose?: boolean; now?: number } = {}): [string, string][] {
  const id = (v: string) => (opts.verbose ? v : shortId(v));
  const out: [string, string][] = [];
  const events = a.RescheduleTracker?.Events ?? [];
  const policy = a.Job?.TaskGroups?.find((g) => g.Name === a.TaskGroup)?.ReschedulePolicy;
  // Nomad's RescheduleInfo at the allocation's modify time: the attempts within the interval.
  if (events.length > 0 && (policy?.Attempts ?? 0) > 0) {
    const attempted = events.filter((e) => a.ModifyTime - e.RescheduleTime < (policy?.Interval ?? 0)).length;
    out.push(['Reschedule Attempts', `${attempted}/${policy!.Attempts}`]);
  }
  if (a.NextAllocation) out.push(['Replacement Alloc ID', id(a.NextAllocation)]);
  const now = opts.now ?? Date.now();
  const at = waitUntil ? Date.parse(waitUntil) : NaN;
  if (a.FollowupEvalID && at > now) out.push(['Reschedule Eligibility', fromNow(at, now)]);
  return out;
}

/** The lines for `a`, reading its follow-up evaluation from the agent (none when it is gone). */
export async function fetchRescheduleLines(client: AgentClient, a: RescheduledAlloc, opts: { verbose?: boolean } = {}): Promise<[string, string][]> {
  let waitUntil: string | undefined;
  if (a.FollowupEvalID) {
    try {
      waitUntil = (await client.get<{ WaitUntil?: string }>(`/v1/evaluation/${a.FollowupEvalID}`)).body.WaitUntil;
    } catch {
      // Collected meanwhile: no eligibility line, as Nomad prints none for an evaluation it cannot read.
    }
  }
  return rescheduleLines(a, waitUntil, opts);
}
