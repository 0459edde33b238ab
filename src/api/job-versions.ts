/**
 * How many versions of a job the agent keeps: Nomad's server `job_tracked_versions` (default 6; its state store
 * drops the oldest version beyond it at each new one, upsertJobVersion). Without a bound every registration adds
 * a version to the job's record, which then grows, and is rewritten whole, for as long as the job lives.
 *
 * One difference, on purpose: a Nomad allocation embeds the job it was placed with, an allocation here names its
 * version. So a version some allocation still names is kept past the bound until that allocation is collected
 * (the server collector's `eval_gc_threshold`), and `alloc status` always shows the job the allocation runs.
 */
export const DEFAULT_JOB_TRACKED_VERSIONS = 6;

/**
 * The versions to keep, oldest first as given: the newest `tracked`, and any older one in `named`. The same
 * array when nothing goes, so an unchanged record is not copied.
 */
export function keptVersions<V extends { version: number }>(versions: V[], tracked: number, named: ReadonlySet<number>): V[] {
  const cut = versions.length - tracked;
  if (cut <= 0) return versions;
  const kept = versions.filter((v, i) => i >= cut || named.has(v.version));
  return kept.length === versions.length ? versions : kept;
}
