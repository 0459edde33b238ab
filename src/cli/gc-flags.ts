/**
 * The agent's garbage collection settings on its command line, named after Nomad's client and server options
 * (gc_max_allocs, gc_interval, gc_disk_usage_threshold, gc_inode_usage_threshold; eval_gc_threshold,
 * job_gc_threshold, job_tracked_versions): durations as Go writes them ("1m"), thresholds in percent.
 */
import type { ServerGcOptions } from '../api/gc.ts';
import { DurationError, parseDuration } from '../jobspec/duration.ts';
import type { GcOptions } from '../runtime/alloc-gc.ts';
import { UsageError } from './errors.ts';

/** parseArgs options for the flags. */
export const GC_FLAG_OPTIONS = {
  'gc-max-allocs': { type: 'string' },
  'gc-interval': { type: 'string' },
  'gc-disk-usage-threshold': { type: 'string' },
  'gc-inode-usage-threshold': { type: 'string' },
  'eval-gc-threshold': { type: 'string' },
  'job-gc-threshold': { type: 'string' },
  'job-tracked-versions': { type: 'string' },
} as const;

/** The flags' lines of the agent's help. */
export const GC_FLAGS_HELP = `  --gc-max-allocs N             collect finished allocations once the agent holds more than N (default 50)
  --gc-interval D               how often the agent looks (default 1m)
  --gc-disk-usage-threshold P   also collect while the data dir's disk is more than P% used (default 80)
  --gc-inode-usage-threshold P  the same for its inodes (default 70)
  --eval-gc-threshold D         forget finished evaluations and allocations D after they ended (default 1h)
  --job-gc-threshold D          forget dead jobs D after their last change (default 4h)
  --job-tracked-versions N      keep a job's N newest versions, and those an allocation runs (default 6)`;

type Values = Partial<Record<keyof typeof GC_FLAG_OPTIONS, string>>;

/** The collectors' settings the flags give (none given: Nomad's defaults apply); a bad value is a UsageError naming its flag. */
export function gcConfigFromFlags(values: Values): { client: GcOptions; server: ServerGcOptions } {
  const bad = (flag: string, value: string, want: string) => new UsageError(`agent: --${flag} ${JSON.stringify(value)}: ${want}`, 'agent');
  const duration = (flag: keyof Values): number | undefined => {
    const value = values[flag];
    if (value === undefined) return undefined;
    let ms: number;
    try {
      ms = parseDuration(value);
    } catch (err) {
      if (!(err instanceof DurationError)) throw err;
      throw bad(flag, value, 'expected a duration such as "1m" or "4h"');
    }
    if (!(ms > 0)) throw bad(flag, value, 'must be more than 0s');
    return ms;
  };
  const percent = (flag: keyof Values): number | undefined => {
    const value = values[flag];
    if (value === undefined) return undefined;
    const n = Number(value.trim());
    if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100) throw bad(flag, value, 'expected a percentage from 0 to 100');
    return n;
  };
  const client: GcOptions = {};
  const max = values['gc-max-allocs'];
  if (max !== undefined) {
    if (!/^\d+$/.test(max.trim())) throw bad('gc-max-allocs', max, 'expected a whole number of allocations');
    client.maxAllocs = Number(max);
  }
  const interval = duration('gc-interval');
  if (interval !== undefined) client.intervalMs = interval;
  const disk = percent('gc-disk-usage-threshold');
  if (disk !== undefined) client.diskUsageThreshold = disk;
  const inode = percent('gc-inode-usage-threshold');
  if (inode !== undefined) client.inodeUsageThreshold = inode;
  const server: ServerGcOptions = {};
  const evalThreshold = duration('eval-gc-threshold');
  if (evalThreshold !== undefined) server.evalGcThresholdMs = evalThreshold;
  const jobThreshold = duration('job-gc-threshold');
  if (jobThreshold !== undefined) server.jobGcThresholdMs = jobThreshold;
  const tracked = values['job-tracked-versions'];
  if (tracked !== undefined) {
    if (!/^\d+$/.test(tracked.trim()) || Number(tracked) < 1) throw bad('job-tracked-versions', tracked, 'expected a whole number of versions, at least 1');
    server.jobTrackedVersions = Number(tracked);
  }
  return { client, server };
}
