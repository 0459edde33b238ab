/**
 * What a raw_exec rule suite leaves behind: temp dirs and spawned process groups. Each test pushes what
 * it makes; after each test the groups are SIGKILLed (tracked by pid, never by name) and the dirs removed.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterEach } from 'vitest';

export function leftoversRemovedAfterEach(): { dirs: string[]; children: ChildProcess[] } {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) {
      try {
        process.kill(-c.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return { dirs, children };
}
