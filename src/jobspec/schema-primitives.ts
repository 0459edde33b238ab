/**
 * The value schemas every jobspec block shares (durations, string maps, bounded integers), in a file of
 * their own so block schemas in other files (service-schema.ts) can use them without an import cycle.
 */
import { z } from 'zod';
import { DurationError, parseDuration } from './duration.ts';
import { describeValue } from './zod-problems.ts';

/** A Go duration string (`"1m30s"`) or a number of milliseconds, to milliseconds. */
export const durationSchema = z.unknown().transform((value, ctx) => {
  if (typeof value !== 'string' && typeof value !== 'number') {
    ctx.issues.push({ code: 'custom', message: `expected a duration like "15s" or "1m30s", got ${describeValue(value)}`, input: value });
    return z.NEVER;
  }
  try {
    return parseDuration(value);
  } catch (err) {
    if (!(err instanceof DurationError)) throw err;
    const hint = typeof value === 'string' && value.startsWith('${') ? '; a runtime value is interpolated only when the task runs, and a duration is needed when the job is read' : '';
    ctx.issues.push({ code: 'custom', message: `${describeValue(value)} is not a duration: write a Go duration like "15s", "1m30s" or "250ms"${hint}`, input: value });
    return z.NEVER;
  }
});

/** Nomad's `map[string]string`: HCL and YAML numbers and booleans convert, as HCL2's type conversion would. */
export const stringMapSchema = z.record(
  z.string(),
  z.unknown().transform((value, ctx) => {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    ctx.issues.push({ code: 'custom', message: `expected a string, got ${describeValue(value)}`, input: value });
    return z.NEVER;
  }),
);

/** A whole number in [min, max], with messages in a job file's words. */
export const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.number().int(`expected a whole number`).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);
