/** alloc_dir: builds the shared allocation directory before any task runs; removes it on destroy (Nomad's alloc_dir_hook). */
import { join } from 'node:path';
import { makeDirs, makeTree, removeTree } from './dir-calls.ts';
import { signalFree } from './signal-free.ts';
import type { AllocRunnerHook } from './types.ts';

/** The layout Nomad gives every allocation: `alloc/` shared by its tasks, with logs, data and tmp. */
export function allocDirHook(allocDir: string): AllocRunnerHook {
  const alloc = join(allocDir, 'alloc');
  // Neither call can be cut short (signal-free.ts): a half-built or half-removed dir is finished by the next run.
  return signalFree<AllocRunnerHook>({
    name: 'alloc_dir',
    async prerun() {
      // Top down: a recursive mkdir starts at the leaf and walks up one pool job per missing dir, so
      // `alloc/logs` first cost five jobs in a row (leaf, alloc/, the alloc dir, then alloc/ and the leaf
      // again), then two for data and tmp. The alloc dir, alloc/, then the three leaves at once: five jobs,
      // three in a row (when `allocs/` is there, as it is after the first allocation).
      await makeTree(allocDir, ['alloc']);
      await makeDirs(alloc, ['logs', 'data', 'tmp']);
    },
    async destroy() {
      // rm -rf in about half of Node's `rm` file calls (dir-calls.ts): the layout above is known.
      await removeTree(allocDir);
    },
  });
}
