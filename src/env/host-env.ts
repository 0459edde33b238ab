/**
 * The agent's environment as tasks inherit it: Nomad passes the client's env to raw_exec tasks, minus a
 * denylist of credentials (client `env.denylist`), so tokens meant for the agent never reach a task.
 */

/** Nomad's default `env.denylist`. */
export const DEFAULT_ENV_DENYLIST: readonly string[] = [
  'CONSUL_TOKEN', 'CONSUL_HTTP_TOKEN', 'CONSUL_HTTP_TOKEN_FILE', 'NOMAD_TOKEN', 'VAULT_TOKEN', 'CONSUL_LICENSE',
  'NOMAD_LICENSE', 'VAULT_LICENSE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN',
  'GOOGLE_APPLICATION_CREDENTIALS',
];

/** A frozen copy of `env` without the denied keys (and without NOMAD_* of the agent's own, which tasks get fresh). */
export function hostEnvFor(env: NodeJS.ProcessEnv, denylist: readonly string[] = DEFAULT_ENV_DENYLIST): Readonly<Record<string, string>> {
  const denied = new Set(denylist);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || denied.has(k) || k.startsWith('NOMAD_')) continue;
    out[k] = v;
  }
  return Object.freeze(out);
}
