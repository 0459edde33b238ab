/** alloc_dir: builds the shared allocation directory before any task runs; removes it on destroy (Nomad's alloc_dir_hook). */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocRunnerHook } from './types.ts';

/** The layout Nomad gives every allocation: `alloc/` shared by its tasks, with logs, data and tmp. */
export function allocDirHook(allocDir: string): AllocRunnerHook {
  return {
    name: 'alloc_dir',
    async prerun() {
      for (const sub of ['alloc/logs', 'alloc/data', 'alloc/tmp']) await mkdir(join(allocDir, sub), { recursive: true });
    },
    async destroy() {
      await rm(allocDir, { recursive: true, force: true });
    },
  };
}
