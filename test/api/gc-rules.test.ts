/**
 * The server collector's choice for one job (src/api/gc.ts `chooseGarbage`), Nomad's core scheduler rules on one
 * node, as a table: what goes of a job's records at a given time, with thresholds of 1h (evaluations and
 * allocations) and 4h (jobs).
 */
import { describe, expect, it } from 'vitest';
import { chooseGarbage, type JobRecords } from '../../src/api/gc.ts';
import type { AllocEntry, EvalRecord } from '../../src/api/job-registry.ts';

const H = 3_600_000;
const T = { evalGcThresholdMs: H, jobGcThresholdMs: 4 * H };
const NOW = 100 * H;

const job = (o: { stop?: boolean; type?: string; status?: 'pending' | 'running' | 'dead'; submitted?: number } = {}) =>
  ({ id: 'j', namespace: 'default', versions: [{ version: 0, job: {}, allocs: [], submitTime: o.submitted ?? 0, jobModifyIndex: 1 }], stop: o.stop ?? false, createIndex: 1, modifyIndex: 1, jobModifyIndex: 1, type: o.type ?? 'service', status: o.status ?? 'running' }) as JobRecords['job'];
const alloc = (id: string, o: { status?: string; age?: number; desired?: string; next?: string; evalId?: string } = {}) =>
  ({ id, jobId: 'j', desired: o.desired ?? 'run', nextAllocation: o.next, evalId: o.evalId ?? 'e1', modifyTime: NOW - (o.age ?? 2 * H), lastState: { clientStatus: o.status ?? 'complete', taskStates: {} } }) as unknown as AllocEntry;
const evaluation = (id: string, o: { status?: EvalRecord['Status']; age?: number } = {}) => ({ ID: id, JobID: 'j', Status: o.status ?? 'complete', ModifyTime: (NOW - (o.age ?? 2 * H)) * 1e6 }) as EvalRecord;

describe('what the server collector takes of one job', () => {
  it.each<[string, JobRecords, { jobs: string[]; evals: string[]; allocs: string[] }]>([
    ['a dead batch job older than job_gc_threshold: the job with its evaluations and allocations', { job: job({ type: 'batch', status: 'dead' }), evals: [evaluation('e1', { age: 5 * H })], allocs: [alloc('a1', { age: 5 * H })] }, { jobs: ['j'], evals: ['e1'], allocs: ['a1'] }],
    ['a dead batch job younger than job_gc_threshold: nothing (its allocations are what keep it from running again)', { job: job({ type: 'batch', status: 'dead' }), evals: [evaluation('e1')], allocs: [alloc('a1')] }, { jobs: [], evals: [], allocs: [] }],
    ['a running batch job: nothing, not even its finished allocations', { job: job({ type: 'batch', status: 'running' }), evals: [evaluation('e1', { age: 9 * H })], allocs: [alloc('a1', { age: 9 * H }), alloc('a2', { status: 'running' })] }, { jobs: [], evals: [], allocs: [] }],
    ['a stopped service job, dead, old enough: all of it', { job: job({ stop: true, status: 'dead' }), evals: [evaluation('e1', { age: 5 * H })], allocs: [alloc('a1', { age: 5 * H, desired: 'stop' })] }, { jobs: ['j'], evals: ['e1'], allocs: ['a1'] }],
    ['a stopped job whose last change is recent: the job stays, its old finished allocations go', { job: job({ stop: true, status: 'dead', submitted: NOW - H / 2 }), evals: [evaluation('e1', { age: 5 * H })], allocs: [alloc('a1', { age: 5 * H, desired: 'stop' })] }, { jobs: [], evals: ['e1'], allocs: ['a1'] }],
    ['a running service job: a replaced failed allocation older than eval_gc_threshold goes, with its evaluation', { job: job(), evals: [evaluation('e1'), evaluation('e2', { age: H / 2 })], allocs: [alloc('a1', { status: 'failed', next: 'a2' }), alloc('a2', { status: 'running', evalId: 'e2' })] }, { jobs: [], evals: ['e1'], allocs: ['a1'] }],
    ['a running service job: a failed allocation nothing replaced stays (the job still wants it)', { job: job(), evals: [evaluation('e1')], allocs: [alloc('a1', { status: 'failed' })] }, { jobs: [], evals: [], allocs: [] }],
    ['a finished allocation younger than eval_gc_threshold stays, and so does its evaluation', { job: job(), evals: [evaluation('e1')], allocs: [alloc('a1', { desired: 'stop', age: H / 2 })] }, { jobs: [], evals: [], allocs: [] }],
    ['a running allocation is never taken, nor its evaluation', { job: job({ stop: true, status: 'running' }), evals: [evaluation('e1')], allocs: [alloc('a1', { status: 'running', desired: 'stop' })] }, { jobs: [], evals: [], allocs: [] }],
    ['a blocked evaluation is never taken, and keeps its dead job', { job: job({ type: 'batch', status: 'dead' }), evals: [evaluation('e1', { status: 'blocked', age: 9 * H })], allocs: [] }, { jobs: [], evals: [], allocs: [] }],
    ['allocations and evaluations of a job already purged: the old finished ones go', { evals: [evaluation('e1')], allocs: [alloc('a1'), alloc('a2', { age: H / 2, evalId: 'e2' })] }, { jobs: [], evals: ['e1'], allocs: ['a1'] }],
  ])('%s', (_, records, expected) => {
    expect(chooseGarbage(records, NOW, T)).toEqual(expected);
  });

  it('forced (nomad system gc: thresholds 0) takes a dead job however recent', () => {
    const records = { job: job({ type: 'batch', status: 'dead', submitted: NOW }), evals: [evaluation('e1', { age: 0 })], allocs: [alloc('a1', { age: 0 })] };
    expect(chooseGarbage(records, NOW, { evalGcThresholdMs: 0, jobGcThresholdMs: 0 })).toEqual({ jobs: ['j'], evals: ['e1'], allocs: ['a1'] });
  });
});
