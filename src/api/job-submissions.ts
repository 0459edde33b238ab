/**
 * Nomad's job submissions (`structs.JobSubmission`, the state store's `job_submission` table, Nomad 1.6+): the
 * job file a version was registered from (its source, format, `-var` flags and var-file content), kept per job
 * version and shown by `GET /v1/job/:id/submission?version=N` and `job inspect -hcl`. The JSON job loses what
 * only the file has (comments, locals, variables), so this is the one way back to it.
 *
 * Durable as one `meta` entry per job version, `jobs.submission/<version>/<job ID>`, written in the same
 * transaction as the version (the registry's `persist` calls `written`), so an acknowledged registration never
 * loses its source across a crash. Not part of the job's record: a source may be up to 1 MB and the job's record
 * is rewritten at every change of the job, the submission only once.
 *
 * Nomad's rules (nomad/job_endpoint.go, nomad/state/state_store.go upsertJobImpl):
 * - a source over `job_max_source_size` (1 MB, counting Source, Variables and each variable flag's name and
 *   value) is discarded with a warning; the job is registered all the same;
 * - a version registered without a submission takes that of the version its job was copied from (the body's
 *   `Job.Version`, which a revert, a scale or a stop carry), when the job exists and keeps it;
 * - submissions go with their versions (here: while the agent keeps the version, job-versions.ts) and with the
 *   job when it is purged; a job registered again after a purge never sees an earlier one's.
 */
import { StoreDamagedError, type AgentStore, type WriteTx } from '../state/agent-store.ts';
import type { JobEntry } from './job-registry.ts';

/** Where submissions are kept: `meta/jobs.submission/<version>/<job ID>`. */
export const SUBMISSION_PREFIX = 'jobs.submission/';

/** Nomad's server `job_max_source_size` default, "1M" as go-humanize reads it: bytes. */
export const DEFAULT_JOB_MAX_SOURCE_SIZE = 1_000_000;

/** The formats Nomad's CLI and UI send (command/helpers.go: formatHCL1, formatHCL2, formatJSON). */
export const SUBMISSION_FORMATS = ['hcl2', 'json', 'hcl1'] as const;

/** What a register request carries (api.JobSubmission's input fields). */
export interface SubmissionInput {
  Source: string;
  Format: (typeof SUBMISSION_FORMATS)[number];
  VariableFlags: Record<string, string> | null;
  Variables: string;
}

/** A kept submission, as Nomad's API shows it. */
export interface JobSubmission extends SubmissionInput {
  Namespace: string;
  JobID: string;
  Version: number;
  /** The index of the write that stored it: the JobModifyIndex of its version. */
  JobModifyIndex: number;
}

/** Where a new version's submission comes from: the request's, or that of a version the job keeps. */
export type SubmissionSource = { given: SubmissionInput } | { version: number };

/** The store key of version `version` of job `jobId`'s submission (the version first: an ID may hold a `/`). */
export const submissionKey = (jobId: string, version: number): string => `${SUBMISSION_PREFIX}${version}/${jobId}`;

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Nomad's submissionController size: Source, Variables and each flag's name and value, in bytes. */
export function submissionSize(s: SubmissionInput): number {
  let size = utf8(s.Source) + utf8(s.Variables);
  for (const [k, v] of Object.entries(s.VariableFlags ?? {})) size += utf8(k) + utf8(v);
  return size;
}

/** go-humanize's `Bytes` (SI units), as Nomad's warning prints sizes: "33 B", "1.0 MB", "12 kB". */
export function humanBytes(n: number): string {
  if (n < 10) return `${n} B`;
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  const e = Math.floor(Math.log(n) / Math.log(1000));
  const val = Math.floor((n / 1000 ** e) * 10 + 0.5) / 10;
  return `${val < 10 ? val.toFixed(1) : val.toFixed(0)} ${units[e]}`;
}

/**
 * The submission to keep of a request's (Nomad's submissionController): the same one, or none and the warning
 * Nomad answers when it is over `max` bytes.
 */
export function admitSubmission(s: SubmissionInput | undefined, max: number): { submission?: SubmissionInput; warning?: string } {
  if (!s) return {};
  const size = submissionSize(s);
  if (size > max) return { warning: `job source size of ${humanBytes(size)} exceeds maximum of ${humanBytes(max)} and will be discarded` };
  return { submission: s };
}

function isSubmission(v: unknown): v is JobSubmission {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  const flags = s['VariableFlags'];
  return typeof s['Source'] === 'string' && typeof s['Format'] === 'string' && typeof s['Variables'] === 'string'
    && (flags === null || (typeof flags === 'object' && Object.values(flags as object).every((f) => typeof f === 'string')))
    && typeof s['JobID'] === 'string' && typeof s['Version'] === 'number' && typeof s['JobModifyIndex'] === 'number';
}

/**
 * The submission kept for version `version` of `job`, or undefined (none sent, discarded, or the version is no
 * longer kept). An entry written for an earlier job of the same ID (purged since) is not this one's: it must be
 * the one written with this version (its JobModifyIndex). A damaged entry is named, never dropped.
 */
export function readSubmission(store: Pick<AgentStore, 'get' | 'path'>, job: JobEntry, version: number): JobSubmission | undefined {
  const kept = job.versions.find((v) => v.version === version);
  if (!kept) return undefined;
  const key = submissionKey(job.id, version);
  const value = store.get('meta', key);
  if (value === undefined) return undefined;
  if (!isSubmission(value)) throw new StoreDamagedError(`${store.path} is damaged: meta/${key}: expected a job submission { Source, Format, VariableFlags, Variables, JobID, Version, JobModifyIndex }`, store.path);
  return value.JobID === job.id && value.JobModifyIndex === kept.jobModifyIndex ? value : undefined;
}

/**
 * The registry's part (job-registry.ts `persist`): in the transaction of a write, for each job it writes given
 * the job as it was before (`before`), store the new version's submission (from `sources`, or the current one
 * carried over to a stop's version, as Nomad's deregister does), and delete those of the versions it drops (a
 * purge drops them all).
 */
export function writeSubmissions(
  store: Pick<AgentStore, 'get' | 'path'>,
  tx: WriteTx,
  jobs: ReadonlyMap<string, JobEntry | null>,
  index: number,
  before: (id: string) => JobEntry | undefined,
  sources: ReadonlyMap<string, SubmissionSource>,
): void {
  for (const [id, entry] of jobs) {
    const previous = before(id);
    const kept = new Set(entry?.versions.map((v) => v.version));
    for (const v of previous?.versions ?? []) if (!kept.has(v.version)) tx.remove('meta', submissionKey(id, v.version));
    if (!entry) continue;
    const newest = entry.versions.at(-1)!;
    if (previous?.versions.some((v) => v.version === newest.version)) continue;
    const source = sources.get(id) ?? (entry.stop && previous && !previous.stop ? { version: previous.versions.at(-1)!.version } : undefined);
    const given = source && ('given' in source ? source.given : previous && readSubmission(store, previous, source.version));
    if (!given) continue;
    const { Source, Format, VariableFlags, Variables } = given;
    const record: JobSubmission = { Source, Format, VariableFlags, Variables, Namespace: entry.namespace, JobID: id, Version: newest.version, JobModifyIndex: index };
    tx.put('meta', submissionKey(id, newest.version), record);
  }
}
