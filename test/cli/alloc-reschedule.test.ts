/**
 * `alloc status`'s rescheduling lines (src/cli/alloc-reschedule.ts), from the allocation's API JSON as the agent
 * writes it (alloc-json.ts): Nomad's *Reschedule Attempts*, *Replacement Alloc ID* and *Reschedule Eligibility*,
 * after Created and Modified.
 */
import { describe, expect, it } from 'vitest';
import { allocJson, type AllocView } from '../../src/api/alloc-json.ts';
import { placementOfApiAlloc, recordOfApiAlloc, type ApiAllocation } from '../../src/cli/api-records.ts';
import { fromNow, rescheduleLines, type RescheduledAlloc } from '../../src/cli/alloc-reschedule.ts';
import { formatAllocDetail } from '../../src/cli/status.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';

const T = Date.UTC(2026, 10, 27, 12, 0, 0);
const spec: AllocSpec = { id: 'a1b2c3d4-0000-4000-8000-000000000000', job: 'web', group: 'api', type: 'service', tasks: [{ name: 'main', driver: 'mock', config: {} }] };
const view: AllocView = {
  id: spec.id, spec, jobId: 'web', namespace: 'default', group: 'api', index: 0, jobVersion: 0, desired: 'run', desiredDescription: '',
  createIndex: 1, modifyIndex: 2, allocModifyIndex: 2, createTime: T, modifyTime: T, state: { clientStatus: 'failed', taskStates: {} },
};
const jobWith = (policy: Record<string, unknown>) => ({ Type: 'service', TaskGroups: [{ Name: 'api', ReschedulePolicy: policy, Tasks: [{ Name: 'main', Driver: 'mock' }] }] });
const limited = jobWith({ Attempts: 3, Interval: 3600e9, Delay: 5e9, DelayFunction: 'constant', MaxDelay: 0, Unlimited: false });
const event = (at: number) => ({ RescheduleTime: at * 1e6, PrevAllocID: 'p', PrevNodeID: 'n', Delay: 5e9 });
const api = (v: AllocView, job: unknown) => JSON.parse(JSON.stringify(allocJson(v, job as Record<string, unknown>))) as ApiAllocation & RescheduledAlloc;

describe("alloc status's rescheduling lines", () => {
  it('counts the attempts within the interval of a limited policy, links the replacement, and says when the follow-up is due', () => {
    const a = api({ ...view, rescheduleTracker: { Events: [event(T - 7200_000), event(T - 60_000)] }, nextAllocation: 'f0e1d2c3-0000-4000-8000-000000000000', followupEvalId: 'e9e8e7e6-0000-4000-8000-000000000000' }, limited);
    expect(rescheduleLines(a, new Date(T + 95_000).toISOString(), { now: T })).toEqual([
      ['Reschedule Attempts', '1/3'],
      ['Replacement Alloc ID', 'f0e1d2c3'],
      ['Reschedule Eligibility', '1m35s from now'],
    ]);
  });

  it('shows no attempts for an unlimited policy, and no eligibility once the follow-up time has passed', () => {
    const a = api({ ...view, rescheduleTracker: { Events: [event(T - 60_000)] }, followupEvalId: 'e9e8e7e6-0000-4000-8000-000000000000' }, jobWith({ Attempts: 0, Unlimited: true }));
    expect(rescheduleLines(a, new Date(T - 1).toISOString(), { now: T })).toEqual([]);
  });

  it('prints them in the header after Modified, as Nomad does', () => {
    const a = api({ ...view, nextAllocation: 'f0e1d2c3-0000-4000-8000-000000000000' }, limited);
    const lines = formatAllocDetail(recordOfApiAlloc(a), { now: T, placement: { ...placementOfApiAlloc(a), reschedule: rescheduleLines(a, undefined, { now: T }) } }).split('\n');
    const modified = lines.findIndex((l) => l.startsWith('Modified'));
    expect(lines[modified + 1]).toMatch(/^Replacement Alloc ID += f0e1d2c3$/);
  });

  it('writes a wait the way Nomad does', () => {
    expect([fromNow(T + 25_000, T), fromNow(T + 3_725_000, T), fromNow(T, T)]).toEqual(['25s from now', '1h2m from now', '0s from now']);
  });
});
