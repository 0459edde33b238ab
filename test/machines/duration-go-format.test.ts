// formatDuration follows Go's time.Duration.String() (machines/model.ts): the unit switch happens at the
// unit's own size, and fmtFrac keeps a fraction's leading zeros while dropping its trailing ones.
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../machines/model.ts';

describe('formatDuration at the edges of Go units', () => {
  it('prints exactly one millisecond as 1ms, not 1000µs', () => {
    expect(formatDuration(1)).toBe('1ms');
  });

  it('prints just under a millisecond in microseconds', () => {
    expect(formatDuration(0.999)).toBe('999µs');
  });

  it("keeps a fraction's leading zeros: 1050 ms is 1.05s", () => {
    expect(formatDuration(1_050)).toBe('1.05s');
  });

  it("keeps a fraction's inner zeros and drops only the trailing ones: 1.0005 ms is 1.0005ms", () => {
    expect(formatDuration(1.0005)).toBe('1.0005ms');
  });
});
