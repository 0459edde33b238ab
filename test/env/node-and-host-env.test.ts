import { describe, expect, it } from 'vitest';
import { hostEnvFor } from '../../src/env/host-env.ts';
import { localNodeInfo } from '../../src/env/node-info.ts';

describe('node info and host env are computed once per process', () => {
  it('fingerprints this machine once: every plain localNodeInfo() is the same frozen value', () => {
    const a = localNodeInfo();
    expect(localNodeInfo()).toBe(a);
    expect(Object.isFrozen(a) && Object.isFrozen(a.attributes) && Object.isFrozen(a.meta)).toBe(true);
  });

  it('applies overrides on top of the one fingerprint', () => {
    const n = localNodeInfo({ region: 'eu', attributes: { 'cpu.arch': 'riscv' } });
    expect(n.region).toBe('eu');
    expect(n.attributes['cpu.arch']).toBe('riscv');
    expect(n.attributes['kernel.name']).toBe(localNodeInfo().attributes['kernel.name']);
    expect(localNodeInfo().region).toBe('global');
  });

  it('filters process.env once per denylist', () => {
    expect(hostEnvFor(process.env)).toBe(hostEnvFor(process.env));
    expect(hostEnvFor(process.env, ['PATH'])).toBe(hostEnvFor(process.env, ['PATH']));
    expect(hostEnvFor(process.env, ['PATH']).PATH).toBeUndefined();
  });

  it('filters any other env afresh on every call', () => {
    const env: NodeJS.ProcessEnv = { A: '1', VAULT_TOKEN: 'secret', NOMAD_ALLOC_ID: 'spoof' };
    expect(hostEnvFor(env)).toEqual({ A: '1' });
    env.B = '2';
    expect(hostEnvFor(env)).toEqual({ A: '1', B: '2' });
  });

  it("keeps the agent's own ALLOCRUN_* variables (its token, its socket's data dir) from tasks", () => {
    const env: NodeJS.ProcessEnv = { A: '1', ALLOCRUN_TOKEN: 't'.repeat(32), ALLOCRUN_TOKEN_FILE: '/etc/t', ALLOCRUN_DATA_DIR: '/var/lib/a', ALLOCRUN_ADDR: 'http://x', NOMAD_TOKEN: 'n', ALLOCRUNX: 'kept' };
    expect(hostEnvFor(env)).toEqual({ A: '1', ALLOCRUNX: 'kept' });
  });
});
