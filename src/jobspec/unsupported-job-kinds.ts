/**
 * Job-level blocks that change *when* Nomad runs a job, not how. Nomad registers a parameterized job and
 * places nothing until a dispatch; allocrun has no dispatch, so accepting the block with a warning would run
 * the job at once, which Nomad never does. It is refused, naming what to do instead. (`periodic` is run by the
 * agent's launcher: src/api/periodic-launcher.ts.)
 */
export const UNSUPPORTED_JOB_BLOCKS: Readonly<Record<string, string>> = {
  parameterized:
    'parameterized jobs are not supported: Nomad runs one only when it is dispatched, and allocrun has no dispatch (remove the block, and give the meta it requires in a meta block, to run the job once now)',
};
