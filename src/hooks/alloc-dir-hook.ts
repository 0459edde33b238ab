/** alloc_dir: builds the shared allocation directory before any task runs; removes it on destroy (Nomad's alloc_dir_hook). */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocRunnerHook } from './types.ts';

/** The layout Nomad gives every allocation: `alloc/` shared by its tasks, with logs, data and tmp. */
export function allocDirHook(allocDir: string): AllocRunnerHook {
  return {
    name: 'alloc_dir',
    async prerun() {
      // Top down: a recursive mkdir starts at the leaf and walks up one pool job per missing dir, so
      // `alloc/logs` first cost five jobs in a row (leaf, alloc/, the alloc dir, then alloc/ and the leaf
      // again), then two for data and tmp. The alloc dir, alloc/, then the three leaves at once: five jobs,
      // three in a row (when `allocs/` is there, as it is after the first allocation).
      await mkdir(allocDir, { recursive: true });
      await mkdir(join(allocDir, 'alloc'), { recursive: true });
      await Promise.all(['logs', 'data', 'tmp'].map((d) => mkdir(join(allocDir, 'alloc', d), { recursive: true })));
    },
    async destroy() {
      await rm(allocDir, { recursive: true, force: true });
    },
  };
}
