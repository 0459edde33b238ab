import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../machines/model.ts';

describe('formatDuration', () => {
  const rows: { name: string; ms: number; expected: string }[] = [
    { name: 'prints zero as 0s', ms: 0, expected: '0s' },
    { name: 'prints whole seconds without minutes', ms: 15_000, expected: '15s' },
    { name: 'prints fractional seconds with trailing zeros dropped', ms: 1_500, expected: '1.5s' },
    { name: 'prints minutes with a zero seconds part', ms: 1_800_000, expected: '30m0s' },
    { name: 'prints minutes and seconds', ms: 90_000, expected: '1m30s' },
    { name: 'prints hours with zero minutes and seconds', ms: 86_400_000, expected: '24h0m0s' },
    { name: 'prints every unit of a mixed duration', ms: 3_723_500, expected: '1h2m3.5s' },
    { name: 'prints sub-second durations in milliseconds', ms: 250, expected: '250ms' },
    { name: 'prints fractional milliseconds', ms: 1.5, expected: '1.5ms' },
    { name: 'prints microseconds with the micro sign', ms: 0.001, expected: '1µs' },
    { name: 'prints one nanosecond', ms: 1e-6, expected: '1ns' },
    { name: 'prints a negative duration with a leading minus', ms: -1_500, expected: '-1.5s' },
    { name: 'prints durations beyond 2^53 nanoseconds exactly', ms: 365 * 86_400_000, expected: '8760h0m0s' },
  ];
  for (const row of rows) {
    it(row.name, () => expect(formatDuration(row.ms)).toBe(row.expected));
  }
});
