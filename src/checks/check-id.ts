/**
 * Nomad's check ID (structs.NomadCheckID): an MD5 over the allocation, group and the check's defining
 * fields, so the same check of the same allocation keeps its ID across agent restarts and in-place updates
 * that leave it alone, and a changed check gets a new one.
 */
import { createHash } from 'node:crypto';
import type { CheckSpec } from './spec.ts';

/** The fields the ID is made of: the check as written, with its task (a task service's checks belong to that task). */
export type CheckIdFields = Pick<CheckSpec, 'name' | 'type' | 'port' | 'onUpdate' | 'addressMode' | 'interval' | 'timeout' | 'protocol' | 'path' | 'method' | 'task'>;

/** The check's ID in `allocId` of `group` (the group's name, not the allocation's). */
export function nomadCheckId(allocId: string, group: string, check: CheckIdFields): string {
  const sum = createHash('md5');
  // Empty strings are skipped and durations written as Go's int64 nanoseconds, little-endian, as Nomad does.
  const text = (s: string | undefined) => {
    if (s) sum.update(s);
  };
  const duration = (ms: number) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(BigInt(Math.round(ms * 1e6)));
    sum.update(b);
  };
  text(allocId);
  text(group);
  text(check.task);
  text(check.name);
  text(check.type);
  text(check.port);
  text(check.onUpdate);
  text(check.addressMode);
  duration(check.interval);
  duration(check.timeout);
  text(check.protocol);
  text(check.path);
  text(check.method);
  return sum.digest('hex');
}
