// An attempt's first intent is created in place (no temp file and rename): what a crash while writing it
// leaves must read as a start that never happened, so a restore spawns afresh.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findEarlierSpawn } from '../../src/drivers/raw-exec/launch.ts';
import { attemptPrefix, ensurePrivateDir, privateDir, readIntent, writeIntent } from '../../src/drivers/raw-exec/supervisor.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function taskDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'allocrun-intent-'));
  dirs.push(dir);
  ensurePrivateDir(dir);
  return dir;
}

describe("an attempt's first intent, written in place", () => {
  it('cut short by a crash, names no claim: a restore cancels that token and finds no earlier start', async () => {
    const dir = taskDir();
    const intent = join(privateDir(dir), 'exec-3.intent');
    writeFileSync(intent, '9f3a', { mode: 0o600 }); // what was on disk of "9f3a21c0\n" when the agent died
    const query = { task: 'web', taskDir: dir, attempt: 3, clock: new SimulatedClock(), pollMs: 100, watchedPollMs: 5_000 };
    await expect(findEarlierSpawn(query, new AbortController().signal)).resolves.toBeUndefined();
    expect(readFileSync(`${attemptPrefix(dir, 3, '9f3a')}.claim`, 'utf8')).toBe('void\n');
  });

  it('is replaced whole by a later intent of the same attempt', () => {
    const dir = taskDir();
    writeIntent(dir, 5, 'first');
    writeIntent(dir, 5, 'second');
    expect(readIntent(dir, 5)).toBe('second');
    expect(readFileSync(join(privateDir(dir), 'exec-5.intent'), 'utf8')).toBe('second\n');
  });
});
