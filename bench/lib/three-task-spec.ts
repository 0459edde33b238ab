/** The allocation P3 and P4 run: a prestart task, the main task and a poststop task, all on the mock driver. */
import type { AllocSpec } from '../../src/jobspec/types.ts';

/** Prestart and poststop run 0 s; the main task runs `mainRunFor` (a Nomad duration). */
export function threeTaskSpec(id: string, mainRunFor = '0s'): AllocSpec {
  return {
    id, job: 'bench', group: 'g', type: 'batch',
    tasks: [
      { name: 'init', driver: 'mock', config: { run_for: '0s' }, lifecycle: { hook: 'prestart' } },
      { name: 'main', driver: 'mock', config: { run_for: mainRunFor } },
      { name: 'cleanup', driver: 'mock', config: { run_for: '0s' }, lifecycle: { hook: 'poststop' } },
    ],
  };
}
