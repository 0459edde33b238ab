/** alloc_dir: builds the shared allocation directory before any task runs; removes it on destroy (Nomad's alloc_dir_hook). */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocRunnerHook } from './types.ts';

/** The layout Nomad gives every allocation: `alloc/` shared by its tasks, with logs, data and tmp. */
export function allocDirHook(allocDir: string): AllocRunnerHook {
  return {
    name: 'alloc_dir',
    async prerun() {
      // logs makes the alloc dir and alloc/ on its way; data and tmp then go at once.
      await mkdir(join(allocDir, 'alloc/logs'), { recursive: true });
      await Promise.all([mkdir(join(allocDir, 'alloc/data'), { recursive: true }), mkdir(join(allocDir, 'alloc/tmp'), { recursive: true })]);
    },
    async destroy() {
      await rm(allocDir, { recursive: true, force: true });
    },
  };
}
