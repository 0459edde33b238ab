/**
 * Which keys a task's `env` may use. A key becomes `KEY=value` in the process environment, so a key with
 * `=` (or a NUL, or a newline) would reach the process as another variable than the one written; and the
 * runtime's own NOMAD_* variables (the task's dirs, its alloc id) must not be overridden by a job file.
 */

/**
 * Nomad's environment variable name characters (helper.CleanEnvVar): ASCII letters, `_`, `.`, and digits
 * after the first character. Nomad rewrites other characters to `_`; allocrun refuses them instead, so
 * the name a task sees is the name the file says.
 */
const ENV_NAME = /^[A-Za-z_.][A-Za-z0-9_.]*$/;

/**
 * The NOMAD_* variables allocrun's runtime sets for every task (src/env/task-env.ts), and the prefix of the
 * ones it derives from meta keys. test/jobspec/env-names.test.ts checks this list against a built TaskEnv.
 */
export const RUNTIME_ENV_NAMES: ReadonlySet<string> = new Set([
  'NOMAD_ALLOC_ID', 'NOMAD_SHORT_ALLOC_ID', 'NOMAD_ALLOC_NAME', 'NOMAD_ALLOC_INDEX', 'NOMAD_ALLOC_DIR',
  'NOMAD_GROUP_NAME', 'NOMAD_JOB_NAME', 'NOMAD_JOB_ID', 'NOMAD_NAMESPACE', 'NOMAD_DC', 'NOMAD_REGION',
  'NOMAD_TASK_NAME', 'NOMAD_TASK_DIR', 'NOMAD_SECRETS_DIR', 'NOMAD_CPU_LIMIT', 'NOMAD_MEMORY_LIMIT',
  'NOMAD_MEMORY_MAX_LIMIT',
]);
/** Prefixes of runtime variables with a name per key (`NOMAD_META_<key>`). */
export const RUNTIME_ENV_PREFIXES: readonly string[] = [
  'NOMAD_META_',
  // One per allocated port label (NOMAD_PORT_http, ...).
  'NOMAD_PORT_', 'NOMAD_HOST_PORT_', 'NOMAD_ALLOC_PORT_', 'NOMAD_IP_', 'NOMAD_HOST_IP_', 'NOMAD_ADDR_', 'NOMAD_HOST_ADDR_',
];

/** Why `key` cannot be an env key (for the message after the key's path), or undefined when it can. */
export function envKeyProblem(key: string): string | undefined {
  if (!ENV_NAME.test(key)) {
    const nomad = key.replace(/[^A-Za-z0-9_.]/g, '_').replace(/^[0-9]/, '_');
    const hint = key === '' ? '' : `; Nomad would rename it ${JSON.stringify(nomad)}`;
    return `${JSON.stringify(key)} is not a valid environment variable name: use letters, digits, "_" and "." and do not start with a digit${hint}`;
  }
  if (RUNTIME_ENV_NAMES.has(key) || RUNTIME_ENV_PREFIXES.some((p) => key.startsWith(p))) {
    return `${JSON.stringify(key)} would override the variable of that name the runtime sets for every task; choose another name`;
  }
  return undefined;
}
