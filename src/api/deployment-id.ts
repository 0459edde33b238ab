/**
 * Which deployment an allocation counts in. Each version of a service job whose groups have an update block is a
 * deployment (routes/deployments.ts); the ID is derived, so it is the same across agent restarts, and the
 * registry gives it to each allocation's spec so its runner knows when an in-place update moves it to another.
 */
import { createHash } from 'node:crypto';
import type { AllocSpec } from '../jobspec/types.ts';

/** A deployment's ID: the same for the same job (by its create index) and version, across agent restarts. */
export function deploymentId(job: { namespace: string; id: string; createIndex: number }, version: number): string {
  const h = createHash('sha256').update(`allocrun-deployment:${job.namespace}:${job.id}:${job.createIndex}:${version}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The deployment of an allocation of `template` at `version` of `job`: only a service group's with an update block has one. */
export function deploymentOf(job: { namespace: string; id: string; createIndex: number }, version: number, template: AllocSpec): string | undefined {
  return template.update && template.type === 'service' ? deploymentId(job, version) : undefined;
}
