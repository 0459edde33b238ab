/**
 * Nomad's scaling events (`structs.ScalingEvent`, the state store's `scaling_event` table): every `job scale`
 * request, whether it changed the count or only reported (an autoscaler's error or note), is kept per job and
 * group, newest first, at most 20 per group (Nomad's JobTrackedScalingEvents), and shown by
 * `GET /v1/job/:id/scale` and `job scaling-events`.
 *
 * Durable as one `meta` entry per job, `jobs.scaling/<job ID>`, written in its own commit after the job's, as Nomad
 * applies the scale's job, evaluation and event as three Raft writes. The entry goes in the commit that purges or
 * collects the job, as Nomad's DeleteJobTxn deletes its events. It also names the job's CreateIndex: events an
 * agent before that rule left for a job since purged are not those of a new job of the same ID.
 */
import { StoreDamagedError, type AgentStore, type WriteTx } from '../state/agent-store.ts';
import type { Json } from './job-json.ts';

/** Where a job's events are kept: `meta/jobs.scaling/<job ID>`. */
export const SCALING_EVENTS_PREFIX = 'jobs.scaling/';

/** Nomad's JobTrackedScalingEvents: the events kept per group. */
export const TRACKED_SCALING_EVENTS = 20;

/** One scaling event, as Nomad's API shows it (Time in Unix nanoseconds). */
export interface ScalingEvent {
  Time: number;
  Count: number | null;
  PreviousCount: number;
  Message: string;
  Error: boolean;
  Meta: Json | null;
  EvalID: string | null;
  CreateIndex: number;
}

/** What the store keeps of a job's events. */
export interface ScalingEventsRecord {
  /** The CreateIndex of the job the events belong to. */
  jobCreateIndex: number;
  /** The index of the newest event's write. */
  modifyIndex: number;
  /** Per group, newest first. */
  groups: Record<string, ScalingEvent[]>;
}

/** The store key of job `jobId`'s events. */
export const scalingEventsKey = (jobId: string): string => `${SCALING_EVENTS_PREFIX}${jobId}`;

function isEvent(e: unknown): e is ScalingEvent {
  if (typeof e !== 'object' || e === null) return false;
  const v = e as Record<string, unknown>;
  return typeof v['Time'] === 'number' && (v['Count'] === null || typeof v['Count'] === 'number') && typeof v['PreviousCount'] === 'number'
    && typeof v['Message'] === 'string' && typeof v['Error'] === 'boolean' && typeof v['CreateIndex'] === 'number';
}

/**
 * The events of job `jobId` created at `jobCreateIndex` (none when it has none, or only an earlier job's of the
 * same ID); a damaged entry is named, never dropped.
 */
export function scalingEvents(store: Pick<AgentStore, 'get' | 'path'>, jobId: string, jobCreateIndex: number): ScalingEventsRecord {
  const key = scalingEventsKey(jobId);
  const v = store.get('meta', key) as ScalingEventsRecord | undefined;
  const empty: ScalingEventsRecord = { jobCreateIndex, modifyIndex: 0, groups: {} };
  if (v === undefined) return empty;
  const ok = typeof v === 'object' && v !== null && typeof v.jobCreateIndex === 'number' && typeof v.modifyIndex === 'number'
    && typeof v.groups === 'object' && v.groups !== null && Object.values(v.groups).every((list) => Array.isArray(list) && list.every(isEvent));
  if (!ok) throw new StoreDamagedError(`${store.path} is damaged: meta/${key}: expected { jobCreateIndex, modifyIndex, groups: { group: [ScalingEvent] } }`, store.path);
  return v.jobCreateIndex === jobCreateIndex ? v : empty;
}

/** Deletes the events of jobs `jobIds` in `tx`, the write that purges or collects them. */
export function removeScalingEvents(tx: WriteTx, jobIds: Iterable<string>): void {
  for (const id of jobIds) tx.remove('meta', scalingEventsKey(id));
}

/** `record` with `event` first in `group`'s events (written at `index`), the oldest beyond Nomad's 20 dropped. */
export function withScalingEvent(record: ScalingEventsRecord, group: string, event: Omit<ScalingEvent, 'CreateIndex'>, index: number): ScalingEventsRecord {
  const events = [{ ...event, CreateIndex: index }, ...(record.groups[group] ?? [])].slice(0, TRACKED_SCALING_EVENTS);
  return { ...record, modifyIndex: index, groups: { ...record.groups, [group]: events } };
}

