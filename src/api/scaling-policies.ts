/**
 * Nomad's scaling policies (the state store's `scaling_policy` table, read by `nomad scaling policy list|info` and by
 * the Nomad Autoscaler): one per group of a job's current version that has a `scaling` block, derived from the jobs
 * the registry keeps rather than stored apart. As in Nomad, a policy keeps its ID while its target (namespace, job,
 * group) lives: here the ID is derived from the target and the job's CreateIndex, so a job purged and registered
 * again has new ones. CreateIndex is the job version's that brought the block, ModifyIndex the one that last changed
 * it (as far back as the versions kept).
 */
import { createHash } from 'node:crypto';
import type { JobEntry } from './job-registry.ts';
import { taskGroupsOf, type Json } from './job-json.ts';

/** A policy as `GET /v1/scaling/policy/:id` answers it. */
export interface ScalingPolicy {
  ID: string;
  Type: string;
  Target: Record<string, string>;
  Policy: Json | null;
  Min: number;
  Max: number;
  Enabled: boolean;
  CreateIndex: number;
  ModifyIndex: number;
}

/** A UUID-shaped ID, fixed by the policy's target and its job's CreateIndex. */
export function policyIdOf(namespace: string, job: string, group: string, jobCreateIndex: number): string {
  const h = createHash('sha256').update(`${namespace}\0${job}\0${group}\0${jobCreateIndex}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

const scalingOf = (job: Json, group: string): Json | undefined => taskGroupsOf(job).find((g) => g['Name'] === group)?.['Scaling'] as Json | undefined;

/** The policies of `entry`'s current version, in its groups' order. */
export function policiesOfJob(entry: JobEntry): ScalingPolicy[] {
  const current = entry.versions.at(-1)!;
  const out: ScalingPolicy[] = [];
  for (const g of taskGroupsOf(current.job)) {
    const scaling = g['Scaling'] as Json | undefined;
    if (!scaling) continue;
    const group = String(g['Name']);
    // Created by the oldest kept version of the run that has the block; modified by the one from which it is as now.
    let createIndex = current.jobModifyIndex;
    for (let i = entry.versions.length - 2; i >= 0 && scalingOf(entry.versions[i]!.job, group); i--) createIndex = entry.versions[i]!.jobModifyIndex;
    const modifyIndex = unchangedSince(entry, group);
    out.push({
      ID: policyIdOf(entry.namespace, entry.id, group, entry.createIndex),
      Type: String(scaling['Type'] ?? 'horizontal'),
      Target: { Namespace: entry.namespace, Job: entry.id, Group: group },
      Policy: (scaling['Policy'] as Json | null | undefined) ?? null,
      Min: Number(scaling['Min']),
      Max: Number(scaling['Max']),
      Enabled: scaling['Enabled'] !== false,
      CreateIndex: createIndex,
      ModifyIndex: modifyIndex,
    });
  }
  return out;
}

/** The jobModifyIndex of the oldest kept version from which `group`'s block is the current one's. */
function unchangedSince(entry: JobEntry, group: string): number {
  const now = JSON.stringify(scalingOf(entry.versions.at(-1)!.job, group));
  let since = entry.versions.at(-1)!.jobModifyIndex;
  for (let i = entry.versions.length - 2; i >= 0; i--) {
    if (JSON.stringify(scalingOf(entry.versions[i]!.job, group)) !== now) break;
    since = entry.versions[i]!.jobModifyIndex;
  }
  return since;
}

/** Nomad's ScalingPolicyListStub. */
export function policyStub(p: ScalingPolicy): Json {
  return { ID: p.ID, Enabled: p.Enabled, Type: p.Type, Target: p.Target, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex };
}

/** `job` (its API JSON) with each group's scaling block carrying its policy's ID and indexes, as Nomad's job shows it. */
export function withPolicyIds(entry: JobEntry, job: Json): Json {
  const policies = new Map(policiesOfJob(entry).map((p) => [p.Target['Group'], p]));
  if (policies.size === 0) return job;
  return {
    ...job,
    TaskGroups: taskGroupsOf(job).map((g) => {
      const p = policies.get(String(g['Name']));
      return p && g['Scaling'] ? { ...g, Scaling: { ...(g['Scaling'] as Json), ID: p.ID, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex } } : g;
    }),
  };
}
