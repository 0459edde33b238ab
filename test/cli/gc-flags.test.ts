import { describe, expect, it } from 'vitest';
import { gcConfigFromFlags } from '../../src/cli/gc-flags.ts';
import { UsageError } from '../../src/cli/errors.ts';

describe("the agent's garbage collection flags (Nomad's gc_* client and *_gc_threshold server options)", () => {
  it('turns the flags into the collectors\' settings, leaving the rest to Nomad\'s defaults', () => {
    expect(gcConfigFromFlags({})).toEqual({ client: {}, server: {} });
    expect(gcConfigFromFlags({ 'gc-max-allocs': '10', 'gc-interval': '30s', 'gc-disk-usage-threshold': '90', 'gc-inode-usage-threshold': '75.5', 'eval-gc-threshold': '2h', 'job-gc-threshold': '24h', 'job-tracked-versions': '3' })).toEqual({
      client: { maxAllocs: 10, intervalMs: 30_000, diskUsageThreshold: 90, inodeUsageThreshold: 75.5 },
      server: { evalGcThresholdMs: 2 * 3_600_000, jobGcThresholdMs: 24 * 3_600_000, jobTrackedVersions: 3 },
    });
  });

  it.each<[string, string, RegExp]>([
    ['gc-max-allocs', 'many', /--gc-max-allocs "many": expected a whole number of allocations/],
    ['gc-max-allocs', '-1', /expected a whole number/],
    ['gc-interval', 'often', /--gc-interval "often": expected a duration/],
    ['gc-interval', '0s', /--gc-interval "0s": must be more than 0s/],
    ['gc-disk-usage-threshold', '120', /--gc-disk-usage-threshold "120": expected a percentage from 0 to 100/],
    ['gc-inode-usage-threshold', '', /expected a percentage/],
    ['eval-gc-threshold', '1 hour', /--eval-gc-threshold "1 hour": expected a duration/],
    ['job-gc-threshold', '-4h', /--job-gc-threshold/],
    ['job-tracked-versions', '0', /--job-tracked-versions "0": expected a whole number of versions, at least 1/],
    ['job-tracked-versions', 'all', /--job-tracked-versions "all"/],
  ])('refuses --%s %s, naming the flag', (flag, value, message) => {
    expect(() => gcConfigFromFlags({ [flag]: value })).toThrow(UsageError);
    expect(() => gcConfigFromFlags({ [flag]: value })).toThrow(message);
  });
});
