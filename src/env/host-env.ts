/**
 * The agent's environment as tasks inherit it: Nomad passes the client's env to raw_exec tasks, minus a
 * denylist of credentials (client `env.denylist`), so tokens meant for the agent never reach a task.
 * allocrun's own variables (`ALLOCRUN_TOKEN`, `ALLOCRUN_TOKEN_FILE`, `ALLOCRUN_ADDR`, `ALLOCRUN_DATA_DIR`,
 * ...) are the agent's too: they name its token and its socket, so none of them is passed on either.
 */

/** Nomad's default `env.denylist`. */
export const DEFAULT_ENV_DENYLIST: readonly string[] = [
  'CONSUL_TOKEN', 'CONSUL_HTTP_TOKEN', 'CONSUL_HTTP_TOKEN_FILE', 'NOMAD_TOKEN', 'VAULT_TOKEN', 'CONSUL_LICENSE',
  'NOMAD_LICENSE', 'VAULT_LICENSE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN',
  'GOOGLE_APPLICATION_CREDENTIALS',
];

/** The prefix of allocrun's own variables, never passed to tasks (they carry the agent's token and socket). */
export const AGENT_ENV_PREFIX = 'ALLOCRUN_';

/** `process.env` filtered, by denylist (joined, so equal lists share one entry). */
const processEnvCache = new Map<string, Readonly<Record<string, string>>>();

/**
 * A frozen copy of `env` without the denied keys (and without NOMAD_* of the agent's own, which tasks get
 * fresh, nor ALLOCRUN_*, the agent's own settings). For `process.env` it is computed once per process and denylist, as Nomad's client reads its
 * environment once at start: reading `process.env` key by key costs about half a millisecond, too much
 * to repeat for every allocation. Later changes to `process.env` are not seen; pass a copy to see them.
 */
export function hostEnvFor(env: NodeJS.ProcessEnv, denylist: readonly string[] = DEFAULT_ENV_DENYLIST): Readonly<Record<string, string>> {
  if (env !== process.env) return filterEnv(env, denylist);
  const key = denylist.join('\0');
  let cached = processEnvCache.get(key);
  if (!cached) {
    cached = filterEnv(env, denylist);
    processEnvCache.set(key, cached);
  }
  return cached;
}

function filterEnv(env: NodeJS.ProcessEnv, denylist: readonly string[]): Readonly<Record<string, string>> {
  const denied = new Set(denylist);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || denied.has(k) || k.startsWith('NOMAD_') || k.startsWith(AGENT_ENV_PREFIX)) continue;
    out[k] = v;
  }
  return Object.freeze(out);
}
