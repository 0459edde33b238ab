/**
 * Temp dirs for a test file that go when its tests are done, passed or failed: importing this module registers
 * the file's removal (vitest runs it after the file's own afterAll hooks, which stop what may still write there).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

afterAll(() => {
  // Retries: an agent or task stopped a moment ago may still be finishing a write in the dir.
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
});

/** A fresh dir under the OS temp dir, removed after the file's tests. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
