/** Go-style durations (`"15s"`, `"1m30s"`, `"250ms"`, `"1h"`), as Nomad job files write them, in milliseconds. */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

/** Thrown for a string that is not a Go duration; the message says what was expected. */
export class DurationError extends Error {
  readonly code = 'ErrBadDuration';
  constructor(readonly input: string) {
    super(`${JSON.stringify(input)} is not a duration: use a number of milliseconds or a Go duration like "15s", "1m30s", "250ms"`);
    this.name = 'DurationError';
  }
}

/** Parses a Go duration string (or passes a millisecond number through). Negative durations are rejected. */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new DurationError(String(value));
    return value;
  }
  const s = value.trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    total += parseFloat(m[1]!) * UNIT_MS[m[2]!]!;
    matched = re.lastIndex;
  }
  if (s.length === 0 || matched !== s.length) throw new DurationError(value);
  return total;
}
