/** Shared pieces of the visualizer tests: the built page, allocation specs, a hook that holds a task in prestart. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TaskHook } from '../../src/hooks/types.ts';
import type { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';

/** Where screenshots go (gitignored). */
export const OUTPUT_DIR = fileURLToPath(new URL('../../test-output/visualizer/', import.meta.url));

/** Builds the page from source into a fresh directory (pass it as `pageDir`): tests run the page as it is now. */
export function buildPage(): string {
  const dir = mkdtempSync(join(tmpdir(), 'allocrun-page-'));
  execFileSync(process.execPath, [fileURLToPath(new URL('../../visualizer/build.mjs', import.meta.url)), '--outdir', dir], { stdio: 'pipe' });
  mkdirSync(OUTPUT_DIR, { recursive: true });
  return dir;
}

/** A mock-driver task. */
export function mockTask(name: string, config: Record<string, unknown>, extra: Partial<TaskSpec> = {}): TaskSpec {
  return { name, driver: 'mock', config, ...extra };
}

/** An allocation of the given tasks. */
export function alloc(id: string, tasks: TaskSpec[], extra: Partial<AllocSpec> = {}): AllocSpec {
  return { id, job: 'example', group: 'web', type: 'batch', tasks, ...extra };
}

/** A task hook whose prestart waits until `release()`: the task stays visibly pending until the test says so. */
export function holdingHook(): { hook: TaskHook; release(): void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { hook: { name: 'hold', prestart: () => gate }, release };
}

/**
 * Steps simulated time until `done()` holds. The runtime's real I/O (alloc dirs, in libuv's thread pool)
 * settles between steps; every 50 steps real time passes too, so a loaded machine's slow pool is waited for
 * (a burst of steps can otherwise outrun it: seen once in a full run beside a mutation run).
 */
export async function advanceUntil(clock: SimulatedClock, done: () => boolean, step = 100, limit = 2_000): Promise<void> {
  for (let i = 0; i < limit && !done(); i++) {
    await clock.advance(step);
    if (i % 50 === 49) await new Promise((r) => setTimeout(r, 5));
  }
  if (!done()) throw new Error('the runner did not get there');
}
