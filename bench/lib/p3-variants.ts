/**
 * One P3 variant's lifecycles for the profiling workloads (bench/profile/p3-variant.ts, p3-garbage.ts): the
 * three-task allocation with or without built-in hooks, the bare XState alloc, or the shape's floor, 100 in flight
 * as P3 runs them.
 */
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { startBareAlloc } from './bare-alloc.ts';
import { runShapeFloorAlloc } from './shape-floor.ts';
import { threeTaskSpec } from './three-task-spec.ts';

/** hooks | nohooks (allocrun), bare (bench/lib/bare-alloc.ts), floor-hooks | floor-nohooks (bench/lib/shape-floor.ts). */
export type P3Variant = 'hooks' | 'nohooks' | 'bare' | 'floor-hooks' | 'floor-nohooks';

/** One lifecycle of `variant`; allocrun's allocations keep their dirs under `dataDir`. */
async function lifecycle(variant: P3Variant, id: string, dataDir: string): Promise<void> {
  if (variant === 'bare') return startBareAlloc({ prestart: 0, main: 0, poststop: 0 }).done;
  if (variant === 'floor-hooks' || variant === 'floor-nohooks') return runShapeFloorAlloc(variant === 'floor-hooks' ? 'hooks' : 'nohooks');
  const r = createAllocRunner(threeTaskSpec(id), { dataDir, builtinHooks: variant === 'hooks' }).start();
  await r.done;
  r.stop();
}

/** Runs `total` lifecycles of `variant`, 100 in flight; `round` keeps allocation ids apart between calls. */
export async function runLifecycles(variant: P3Variant, total: number, round: string, dataDir: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) await lifecycle(variant, `p3-${round}-${next++}`, dataDir);
  };
  await Promise.all(Array.from({ length: Math.min(100, total) }, worker));
}
