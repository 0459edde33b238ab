/** Test fixture: a mock-driver task with a short kill timeout, for the fidelity suites. */
import type { TaskSpec } from '../../src/jobspec/types.ts';

/** A mock task named `name` running `config` (Nomad's mock driver keys). */
export const task = (name: string, config: Record<string, unknown>, extra: Partial<TaskSpec> = {}): TaskSpec => ({
  name,
  driver: 'mock',
  config,
  killTimeout: 1_000,
  ...extra,
});
