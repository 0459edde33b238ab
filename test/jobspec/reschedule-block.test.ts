/**
 * The `reschedule` block (job and group level): no longer warned about as ignored; the merged policy (the type's
 * default, the job's block, the group's) checked with Nomad's ReschedulePolicy.Validate, in its words, at the block
 * that set it; as Nomad's API JSON (`ReschedulePolicy`, `Reschedule`) both ways.
 */
import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/jobspec/index.ts';
import { jobToApiJson } from '../../src/api/job-json.ts';
import { canonicalJob } from '../../src/api/job-canonical.ts';
import { problemsOf } from './problems-of.ts';

function jobWith({ type = 'service', job = '', group = '' }: { type?: string; job?: string; group?: string }): string {
  return `job "j" {\n type = "${type}"\n${job}\n  group "g" {\n${group}\n    task "t" {\n driver = "mock"\n    }\n  }\n}\n`;
}

describe('the reschedule block', () => {
  it('is read, not warned about as ignored', async () => {
    const loaded = await parseJob(jobWith({ group: 'reschedule {\n delay = "10s"\n delay_function = "constant"\n}' }), { format: 'hcl' });
    expect(loaded.warnings.filter((w) => w.path.includes('reschedule'))).toEqual([]);
  });

  it('is the job\'s ReschedulePolicy in the API JSON, the group\'s over the job\'s over the type\'s default', async () => {
    const loaded = await parseJob(jobWith({ job: 'reschedule {\n delay = "10s"\n delay_function = "constant"\n}', group: 'reschedule {\n delay = "20s"\n}' }), { format: 'hcl' });
    const api = jobToApiJson(loaded.job.name, loaded.job.body);
    expect(api['Reschedule']).toEqual({ Delay: 10e9, DelayFunction: 'constant' });
    const group = (canonicalJob(api)['TaskGroups'] as Record<string, unknown>[])[0]!;
    expect(group['ReschedulePolicy']).toEqual({ Attempts: 0, Interval: 0, Delay: 20e9, DelayFunction: 'constant', MaxDelay: 3600e9, Unlimited: true });
  });

  it('keeps `attempts = 0` from Nomad\'s API JSON (it turns a batch job\'s default off)', async () => {
    const text = JSON.stringify({ Job: { ID: 'j', Type: 'batch', TaskGroups: [{ Name: 'g', ReschedulePolicy: { Attempts: 0, Unlimited: false }, Tasks: [{ Name: 't', Driver: 'mock' }] }] } });
    const loaded = await parseJob(text, { format: 'json' });
    expect(loaded.job.body.group['g']!.reschedule).toEqual({ attempts: 0, unlimited: false });
  });

  it.each<[string, { type?: string; job?: string; group?: string }, string[]]>([
    ['a delay under 5s', { group: 'reschedule {\n delay = "1s"\n}' }, ['job.j.group.g.reschedule: Delay cannot be less than 5s (got 1s)']],
    ['an unknown delay function', { group: 'reschedule {\n delay_function = "linear"\n}' }, ['job.j.group.g.reschedule: Invalid delay function "linear", must be one of ["constant" "exponential" "fibonacci"]']],
    ['max_delay under the delay', { group: 'reschedule {\n delay = "1m"\n max_delay = "30s"\n}' }, ['job.j.group.g.reschedule: Max Delay cannot be less than Delay 1m0s (got 30s)']],
    ['attempts with unlimited', { group: 'reschedule {\n attempts = 3\n interval = "1h"\n}' }, [
      'job.j.group.g.reschedule: Reschedule Policy with Attempts = 3, Interval = 1h0m0s, and Unlimited = true is ambiguous',
      'job.j.group.g.reschedule: If Attempts >0, Unlimited cannot also be set to true',
    ]],
    ['an interval under 15s with limited attempts', { type: 'batch', group: 'reschedule {\n interval = "10s"\n}' }, ['job.j.group.g.reschedule: Interval cannot be less than 15s (got 10s)']],
    ['more attempts than the interval holds', { type: 'batch', group: 'reschedule {\n attempts = 10\n interval = "1h"\n delay = "20m"\n}' }, [
      'job.j.group.g.reschedule: Nomad can only make 3 attempts in 1h0m0s with initial delay 20m0s and delay function "constant"',
      'job.j.group.g.reschedule: Set the interval to at least 3h20m0s to accommodate 10 attempts',
    ]],
    ['exponential attempts past the interval', { group: 'reschedule {\n unlimited = false\n attempts = 10\n interval = "30m"\n delay = "5m"\n max_delay = "40m"\n}' }, [
      'job.j.group.g.reschedule: Nomad can only make 3 attempts in 30m0s with initial delay 5m0s, delay function "exponential", and delay ceiling 40m0s',
      'job.j.group.g.reschedule: Set the interval to at least 4h40m0s to accommodate 10 attempts',
    ]],
    ['a job-level block, checked merged and named once', { job: 'reschedule {\n delay = "2s"\n}' }, ['job.j.reschedule: Delay cannot be less than 5s (got 2s)']],
    ['a system job with a block', { type: 'system', group: 'reschedule {\n delay = "10s"\n}' }, ['job.j.group.g.reschedule: System jobs should not have a reschedule policy']],
  ])('refuses %s, in Nomad\'s words', async (_what, at, expected) => {
    expect(await problemsOf(jobWith(at))).toEqual(expected);
  });

  it('accepts attempts = 0 (rescheduling off) whatever its delays say', async () => {
    await expect(parseJob(jobWith({ group: 'reschedule {\n attempts = 0\n unlimited = false\n delay = "1s"\n}' }), { format: 'hcl' })).resolves.toBeDefined();
  });
});
