/** Job files and specs: loading Nomad job files (HCL, JSON, YAML), validating AllocSpecs, SpecError. */
export type * from './types.ts';
export { parseDuration, DurationError } from './duration.ts';
export { SpecError, isSpecError, formatProblem, formatPath, type SpecProblem, type PathSegment } from './spec-error.ts';
export {
  loadJobFile,
  loadJob,
  parseJobText,
  parseJob,
  formatOfPath,
  type JobFileFormat,
  type ParseJobOptions,
  type LoadedJob,
} from './load-job-file.ts';
export { validateAllocSpec } from './validate.ts';
