/**
 * The agent validates a spec once per run (src/runtime/validated-specs.ts): createAllocRunner skips its
 * own parse only for the spec the agent vouched for in the same step, once; any other spec, or the same
 * one passed again, is validated with the same SpecError as before.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AllocSpec } from '../../src/jobspec/types.ts';

const validate = vi.hoisted(() => ({ calls: 0 }));
vi.mock('../../src/jobspec/validate.ts', async (original) => {
  const real = await original<typeof import('../../src/jobspec/validate.ts')>();
  return {
    ...real,
    validateAllocSpec: (value: unknown) => {
      validate.calls++;
      return real.validateAllocSpec(value);
    },
  };
});
const { createAgent } = await import('../../src/runtime/create-agent.ts');
const { createAllocRunner } = await import('../../src/runtime/create-alloc-runner.ts');
const { validateUnlessVouched, vouchFor } = await import('../../src/runtime/validated-specs.ts');
const { SpecError } = await import('../../src/jobspec/spec-error.ts');

const nowhere = { save: async () => undefined, load: async () => undefined, list: async () => [], remove: async () => undefined };
const spec = (id: string): AllocSpec => ({ id, job: 'j', group: 'g', type: 'batch', tasks: [{ name: 't', driver: 'mock', config: { run_for: '1ms' } }] });
const broken = (id: string) => ({ ...spec(id), tasks: [{ name: 't', driver: 'mock', config: {} }, { name: 't', driver: 'mock', config: {} }] }) as AllocSpec;

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'allocrun-validated-specs-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('a spec is validated once per agent run', () => {
  it('agent.run parses the spec once, not again in createAllocRunner', async () => {
    const agent = createAgent({ dataDir, store: nowhere });
    const before = validate.calls;
    const runner = agent.run(spec('once'));
    expect(validate.calls - before).toBe(1);
    await runner.done;
  });

  it('agent.run of a bad spec throws the SpecError naming the field', () => {
    const agent = createAgent({ dataDir, store: nowhere });
    expect(() => agent.run(broken('bad'))).toThrow(SpecError);
    expect(() => agent.run(broken('bad'))).toThrow(/tasks\[1\]\.name/);
  });

  it('a voucher is used once: the same spec object made bad afterwards is refused by createAllocRunner', () => {
    const s = spec('reused');
    vouchFor(s);
    validateUnlessVouched(s);
    s.tasks.push({ ...s.tasks[0]! });
    expect(() => createAllocRunner(s, { dataDir })).toThrow(SpecError);
  });

  it('a spec the agent refused as a duplicate keeps no voucher', async () => {
    const agent = createAgent({ dataDir, store: nowhere });
    const s = spec('dup');
    const runner = agent.run(s);
    const again = spec('dup');
    expect(() => agent.run(again)).toThrow('allocation "dup" is already running under this agent');
    again.tasks.push({ ...again.tasks[0]! });
    expect(() => createAllocRunner(again, { dataDir })).toThrow(SpecError);
    await runner.done;
  });

  it('createAllocRunner called directly validates every time', () => {
    const before = validate.calls;
    expect(() => createAllocRunner(broken('direct'), { dataDir })).toThrow(SpecError);
    expect(() => createAllocRunner(broken('direct'), { dataDir })).toThrow(SpecError);
    expect(validate.calls - before).toBe(2);
  });
});
