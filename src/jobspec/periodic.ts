/**
 * Nomad's `periodic` block: when a periodic job's launcher makes a child job. Nomad reads cron specs with
 * hashicorp/cronexpr; this reads the same dialect with croner, translated where the two differ:
 *
 * - five fields are `minute hour day-of-month month day-of-week`, as in both;
 * - six fields are cronexpr's `minute ... day-of-week year` (croner would read a leading seconds field), so
 *   a `0` seconds field is put in front and croner reads seven;
 * - seven fields are `second minute hour day-of-month month day-of-week year`, as in both;
 * - the predefined specs are cronexpr's (`@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`,
 *   `@hourly`); croner's extra `@midnight` and its `+` (day-of-month AND day-of-week) are refused, as
 *   cronexpr refuses them.
 *
 * What still differs: cronexpr's year runs 1970-2099 (croner's 1-9999); DST gaps and repeats follow croner's
 * rules (a fixed time in a gap runs after it; a repeated hour runs once for fixed-time specs).
 */
import { Cron } from 'croner';
import { z } from 'zod';
import { isParameterizedParent } from './parameterized.ts';

/** cronexpr's predefined specs. */
const PREDEFINED: Readonly<Record<string, string>> = {
  '@yearly': '0 0 0 1 1 * *', '@annually': '0 0 0 1 1 * *', '@monthly': '0 0 0 1 * * *',
  '@weekly': '0 0 0 * * 0 *', '@daily': '0 0 0 * * * *', '@hourly': '0 0 * * * * *',
};

/** A cron spec that cannot be read: why, in cronexpr's terms. */
export class CronSpecError extends Error {
  readonly code = 'ErrCronSpec';
  constructor(message: string) {
    super(message);
    this.name = 'CronSpecError';
  }
}

/** `spec` in croner's seven-field form, or a CronSpecError saying what is wrong with it. */
export function sevenFields(spec: string): string {
  const trimmed = spec.trim();
  if (trimmed.startsWith('@')) {
    const known = PREDEFINED[trimmed];
    if (!known) throw new CronSpecError(`unknown predefined spec ${JSON.stringify(trimmed)}; cron knows ${Object.keys(PREDEFINED).join(', ')}`);
    return known;
  }
  const fields = trimmed.split(/\s+/).filter((f) => f !== '');
  if (fields.some((f) => f.includes('+'))) throw new CronSpecError('"+" is not part of cron\'s syntax');
  if (fields.length === 5) return `0 ${fields.join(' ')} *`;
  if (fields.length === 6) return `0 ${fields.join(' ')}`;
  if (fields.length === 7) return fields.join(' ');
  throw new CronSpecError(`has ${fields.length} field${fields.length === 1 ? '' : 's'}; cron needs 5 (minute hour day-of-month month day-of-week), 6 (and a year) or 7 (a second first, and a year)`);
}

/** Whether `zone` is a time zone the launcher can evaluate in (an IANA name, `UTC`, or `Local`). */
export function timeZoneProblem(zone: string): string | undefined {
  if (zone === '' || zone === 'Local') return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return undefined;
  } catch {
    return `unknown time zone ${JSON.stringify(zone)}: give an IANA name such as "UTC" or "America/New_York"`;
  }
}

/** A checked spec, ready to compute launches in `zone`. */
export function compileCron(spec: string, zone = 'UTC'): Cron {
  const pattern = sevenFields(spec);
  try {
    return new Cron(pattern, { mode: '7-part', ...(zone !== '' && zone !== 'Local' && { timezone: zone }) });
  } catch (err) {
    throw new CronSpecError((err as Error).message.replace(/^CronPattern: /, ''));
  }
}

/** Nomad's PeriodicConfig as the API holds it. */
export interface PeriodicConfig {
  Enabled?: boolean;
  Spec?: string;
  Specs?: string[];
  SpecType?: string;
  ProhibitOverlap?: boolean;
  TimeZone?: string;
}

/** The specs of a periodic config: `crons`, or the deprecated `cron`. */
export function specsOf(p: PeriodicConfig): string[] {
  return [...(p.Specs ?? []), ...(p.Spec ? [p.Spec] : [])];
}

/**
 * The first launch strictly after `afterMs` of any of the config's specs (Nomad's `PeriodicConfig.Next`),
 * or undefined when none comes (a year long past) or a spec cannot be read.
 */
export function nextLaunch(p: PeriodicConfig, afterMs: number): number | undefined {
  let best: number | undefined;
  for (const spec of specsOf(p)) {
    let next: Date | null;
    try {
      next = compileCron(spec, p.TimeZone ?? 'UTC').nextRun(new Date(afterMs));
    } catch {
      continue;
    }
    if (next && (best === undefined || next.getTime() < best)) best = next.getTime();
  }
  return best;
}

/** A job's API JSON's periodic config, when it has one (Nomad's `IsPeriodic`: the block is there). */
export function periodicOf(job: Record<string, unknown> | undefined): PeriodicConfig | undefined {
  const p = job?.['Periodic'];
  return typeof p === 'object' && p !== null && !Array.isArray(p) ? (p as PeriodicConfig) : undefined;
}

/** Nomad's `IsPeriodicActive`: periodic, enabled, not stopped, and not a parameterized job (its dispatches launch). */
export function isPeriodicActive(job: Record<string, unknown> | undefined, stopped: boolean): boolean {
  const p = periodicOf(job);
  return p !== undefined && p.Enabled !== false && !stopped && !isParameterizedParent(job!);
}

/** The job file's `periodic` block. */
export const periodicSchema = z
  .strictObject({
    crons: z.array(z.string()).optional(),
    cron: z.string().optional(),
    time_zone: z.string().optional(),
    prohibit_overlap: z.boolean().optional(),
    enabled: z.boolean().optional(),
    spec_type: z.literal('cron', 'only "cron" specs are supported').optional(),
  })
  .superRefine((p, ctx) => {
    if (p.enabled === false) return;
    if (p.cron !== undefined && p.crons !== undefined) ctx.addIssue({ code: 'custom', path: ['cron'], message: 'give crons or the deprecated cron, not both' });
    if (p.cron === undefined && (p.crons ?? []).length === 0) ctx.addIssue({ code: 'custom', path: ['crons'], message: 'must specify a spec: crons = ["*/5 * * * *"]' });
    const zone = p.time_zone ?? 'UTC';
    const zoneProblem = timeZoneProblem(zone);
    if (zoneProblem) ctx.addIssue({ code: 'custom', path: ['time_zone'], message: zoneProblem });
    const check = (spec: string, path: (string | number)[]) => {
      try {
        compileCron(spec, zoneProblem ? 'UTC' : zone);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path, message: `invalid cron spec ${JSON.stringify(spec)}: ${(err as Error).message}` });
      }
    };
    if (p.cron !== undefined) check(p.cron, ['cron']);
    (p.crons ?? []).forEach((spec, i) => check(spec, ['crons', i]));
  });

/** The parsed `periodic` block. */
export type PeriodicBody = z.output<typeof periodicSchema>;

/** The block as Nomad's API PeriodicConfig, with Nomad's defaults filled. */
export function periodicJson(p: PeriodicBody): PeriodicConfig {
  return {
    Enabled: p.enabled ?? true, Spec: p.cron ?? '', Specs: p.crons ?? [], SpecType: 'cron',
    ProhibitOverlap: p.prohibit_overlap ?? false, TimeZone: p.time_zone ?? 'UTC',
  };
}
