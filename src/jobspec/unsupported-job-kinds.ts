/**
 * Job-level blocks that change *when* Nomad runs a job, not how. Nomad registers a periodic or parameterized
 * job and places nothing until a tick or a dispatch; allocrun has neither a periodic launcher nor dispatch, so
 * accepting the block with a warning would run the job at once, which Nomad never does. They are refused,
 * naming what to do instead.
 */
export const UNSUPPORTED_JOB_BLOCKS: Readonly<Record<string, string>> = {
  periodic:
    'periodic jobs are not supported: Nomad launches one on its schedule, never at registration, and allocrun has no periodic launcher (remove the block to run the job once now, or run "allocrun job run" from cron)',
  parameterized:
    'parameterized jobs are not supported: Nomad runs one only when it is dispatched, and allocrun has no dispatch (remove the block, and give the meta it requires in a meta block, to run the job once now)',
};
