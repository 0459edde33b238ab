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
  type LoadJobOptions,
} from './load-job-file.ts';
export { DEFAULT_PARSE_LIMITS, type ParseLimits } from './limits.ts';
export type { VariableInputs } from './hcl-variables.ts';
export { warmHclWorker, stopHclWorker } from './hcl-parser.ts';
export { validateAllocSpec } from './validate.ts';
export { MAX_NAME_BYTES, MAX_ALLOC_ID_BYTES } from './names.ts';
export type { DriverChecks, DriverConfigCheck, DriverConfigProblem, DriverTaskFields } from './driver-config.ts';
export type { JobBody, GroupBody, TaskBody } from './jobspec-schema.ts';
export { apiFieldOf } from './nomad-api.ts';
