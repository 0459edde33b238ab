/**
 * The `periodic` block: Nomad's cron dialect (hashicorp/cronexpr) read through croner, and the problems a job
 * file's block is refused with (file, line, field).
 */
import { describe, expect, it } from 'vitest';
import { specError } from './spec-error-of.ts';
import { parseJob, parseJobText } from '../../src/jobspec/index.ts';
import { nextLaunch, sevenFields } from '../../src/jobspec/periodic.ts';
import { jobToApiJson } from '../../src/api/job-json.ts';

const hcl = (text: string) => parseJobText(text, { format: 'hcl', file: 'job.nomad' });
const periodicJob = (block: string, type = 'batch') => `job "j" {\n  type = "${type}"\n  periodic {\n${block}\n  }\n  group "g" {\n    task "t" {\n      driver = "mock"\n    }\n  }\n}\n`;
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const FROM = Date.parse('2026-01-01T00:02:00Z'); // a Thursday

describe("Nomad's cron dialect", () => {
  it.each([
    ['five fields: minute hour day-of-month month day-of-week', ['*/5 * * * *'], 'UTC', '2026-01-01T00:05:00.000Z'],
    ['six fields end with a year (cronexpr), not start with seconds', ['0 3 * * * 2030'], 'UTC', '2030-01-01T03:00:00.000Z'],
    ['seven fields: a second first and a year last', ['30 0 3 * * * *'], 'UTC', '2026-01-01T03:00:30.000Z'],
    ['@daily', ['@daily'], 'UTC', '2026-01-02T00:00:00.000Z'],
    ['@weekly is on Sunday', ['@weekly'], 'UTC', '2026-01-04T00:00:00.000Z'],
    ['@hourly', ['@hourly'], 'UTC', '2026-01-01T01:00:00.000Z'],
    ['in the time zone given', ['0 9 * * *'], 'America/New_York', '2026-01-01T14:00:00.000Z'],
    ['the earliest of several crons', ['0 12 * * *', '*/10 * * * *'], 'UTC', '2026-01-01T00:10:00.000Z'],
    ['none once its year is past', ['0 0 1 1 * 2020'], 'UTC', undefined],
  ])('%s', (_what, specs, zone, next) => {
    expect(iso(nextLaunch({ Specs: specs, TimeZone: zone }, FROM))).toBe(next);
  });

  it('launches strictly after the time given, so a launch at a cron time is not made again', () => {
    expect(iso(nextLaunch({ Spec: '*/5 * * * *' }, Date.parse('2026-01-01T00:05:00Z')))).toBe('2026-01-01T00:10:00.000Z');
  });

  it.each([
    ['@midnight', /unknown predefined spec "@midnight"/],
    ['* * *', /has 3 fields; cron needs 5/],
    ['0 0 * * 1+2', /"\+" is not part of cron's syntax/],
  ])('refuses %s', (spec, why) => {
    expect(() => sevenFields(spec)).toThrow(why);
  });
});

describe('the periodic block in job files', () => {
  it('loads crons, time_zone and prohibit_overlap into Nomad\'s PeriodicConfig', async () => {
    const loaded = await parseJob(periodicJob('    crons = ["*/5 * * * *"]\n    time_zone = "Europe/Paris"\n    prohibit_overlap = true'), { format: 'hcl' });
    expect(jobToApiJson(loaded.job.name, loaded.job.body)['Periodic']).toEqual({ Enabled: true, Spec: '', Specs: ['*/5 * * * *'], SpecType: 'cron', ProhibitOverlap: true, TimeZone: 'Europe/Paris' });
    expect(loaded.warnings).toEqual([]);
  });

  it('loads the deprecated cron', async () => {
    const loaded = await parseJob(periodicJob('    cron = "@daily"'), { format: 'hcl' });
    expect(jobToApiJson(loaded.job.name, loaded.job.body)['Periodic']).toMatchObject({ Spec: '@daily', Specs: [] });
  });

  it.each([
    ['a bad field', '    crons = ["*/5 * * * *", "61 * * * *"]', 'job.j.periodic.crons[1]', 4, 'invalid cron spec "61 * * * *": Invalid value for minute: 61'],
    ['a wrong number of fields', '    cron = "* * *"', 'job.j.periodic.cron', 4, 'invalid cron spec "* * *": has 3 fields'],
    ['an unknown time zone', '    crons = ["@daily"]\n    time_zone = "Mars/Base"', 'job.j.periodic.time_zone', 5, 'unknown time zone "Mars/Base"'],
    ['no spec', '    prohibit_overlap = true', 'job.j.periodic.crons', 3, 'must specify a spec'],
    ['both cron and crons', '    cron = "@daily"\n    crons = ["@hourly"]', 'job.j.periodic.cron', 4, 'give crons or the deprecated cron, not both'],
    ['an unknown key', '    crons = ["@daily"]\n    every = "5m"', 'job.j.periodic.every', 5, 'every'],
  ])('refuses %s, naming file, line and field', async (_what, block, path, line, why) => {
    const e = await specError(hcl(periodicJob(block)));
    const problem = e.problems.find((p) => p.path === path);
    expect(problem, JSON.stringify(e.problems)).toMatchObject({ file: 'job.nomad', line });
    expect(problem!.message).toContain(why);
  });

  it('refuses a periodic service job: its children must run to completion (Nomad: batch or sysbatch)', async () => {
    const e = await specError(hcl(periodicJob('    crons = ["@daily"]', 'service')));
    expect(e.problems.map((p) => [p.path, p.message])).toEqual([['job.j.periodic', 'periodic can only be used with "batch" or "sysbatch" jobs; this job\'s type is "service"']]);
  });

  it('reads API JSON\'s Periodic, keeping Enabled: false', async () => {
    const job = (p: unknown) => JSON.stringify({ Job: { ID: 'j', Type: 'batch', Periodic: p, TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock' }] }] } });
    const on = await parseJob(job({ Enabled: true, Specs: ['*/15 * * * *'], SpecType: 'cron', ProhibitOverlap: true, TimeZone: 'UTC' }), { format: 'json' });
    expect(jobToApiJson(on.job.name, on.job.body)['Periodic']).toMatchObject({ Enabled: true, Specs: ['*/15 * * * *'], ProhibitOverlap: true });
    const off = await parseJob(job({ Enabled: false, Spec: '', SpecType: 'cron' }), { format: 'json' });
    expect(jobToApiJson(off.job.name, off.job.body)['Periodic']).toMatchObject({ Enabled: false });
    const bad = await specError(parseJob(job({ Enabled: true, Specs: ['nope'] }), { format: 'json' }));
    expect(bad.problems[0]!.message).toContain('invalid cron spec "nope"');
  });
});
