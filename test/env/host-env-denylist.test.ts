/**
 * The host env a task inherits (hostEnvFor): Nomad's client `env.denylist` keeps the agent's credentials
 * from tasks, name for name, and the filter is cached per denylist for `process.env` only.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_ENV_DENYLIST, hostEnvFor } from '../../src/env/host-env.ts';

/** Nomad's DefaultEnvDenylist (client/config/config.go), in its order. */
const NOMAD_DEFAULT_DENYLIST = [
  'CONSUL_TOKEN', 'CONSUL_HTTP_TOKEN', 'CONSUL_HTTP_TOKEN_FILE', 'NOMAD_TOKEN', 'VAULT_TOKEN', 'CONSUL_LICENSE',
  'NOMAD_LICENSE', 'VAULT_LICENSE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN',
  'GOOGLE_APPLICATION_CREDENTIALS',
];

describe("Nomad's default env.denylist", () => {
  it('is exported as Nomad has it, name for name, for embedders who extend it', () => {
    expect([...DEFAULT_ENV_DENYLIST]).toEqual(NOMAD_DEFAULT_DENYLIST);
  });

  it.each(NOMAD_DEFAULT_DENYLIST)('keeps %s from tasks', (name) => {
    expect(hostEnvFor({ [name]: 'secret', KEPT: '1' })).toStrictEqual({ KEPT: '1' });
  });
});

describe('hostEnvFor', () => {
  it('leaves out a variable that is declared but unset, instead of passing it as undefined', () => {
    const out = hostEnvFor({ UNSET: undefined, SET: 'v' });
    expect(Object.keys(out)).toEqual(['SET']);
  });

  it('caches process.env apart for denylists whose names run together the same', () => {
    // ['PATH', 'HOME'] and ['PATHHOME'] joined without a separator would be one cache entry.
    const names = Object.keys(process.env).filter((k) => !k.startsWith('NOMAD_') && !k.startsWith('ALLOCRUN_') && process.env[k] !== undefined);
    const [a, b] = names;
    expect(a && b, 'the test process has two host variables').toBeTruthy();
    const split = hostEnvFor(process.env, [a!, b!]);
    const joined = hostEnvFor(process.env, [`${a}${b}`]);
    expect(split[a!]).toBeUndefined();
    expect(joined[a!]).toBe(process.env[a!]);
    expect(joined[b!]).toBe(process.env[b!]);
  });
});
