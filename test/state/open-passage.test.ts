/**
 * openPassage (src/state/file-store.ts) lets task users reach their task dirs by path: it makes allocs/
 * when missing and sets the search bit for group and others on the data dir and allocs/ (0700 → 0711),
 * leaving a dir that is already passable as it is.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openPassage } from '../../src/state/file-store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const mode = (p: string) => statSync(p).mode & 0o7777;

function dataDir(dataMode: number, allocsMode?: number): string {
  const root = mkdtempSync(join(tmpdir(), 'allocrun-passage-'));
  dirs.push(root);
  const d = join(root, 'data');
  mkdirSync(d);
  chmodSync(d, dataMode);
  if (allocsMode !== undefined) {
    mkdirSync(join(d, 'allocs'));
    chmodSync(join(d, 'allocs'), allocsMode);
  }
  return d;
}

describe('openPassage', () => {
  it.each<[string, number, number | undefined, [number, number]]>([
    ['a private data dir without allocs/: both passable, allocs/ made', 0o700, undefined, [0o711, 0o711]],
    ['a private data dir and allocs/: both opened to passing only', 0o700, 0o700, [0o711, 0o711]],
    ['dirs already passable by all: left as they are', 0o755, 0o711, [0o755, 0o711]],
    ['a passable data dir, a private allocs/: only allocs/ changes', 0o711, 0o700, [0o711, 0o711]],
  ])('%s', async (_what, dataMode, allocsMode, expected) => {
    const d = dataDir(dataMode, allocsMode);
    await openPassage(d);
    expect([mode(d), mode(join(d, 'allocs'))]).toEqual(expected);
  });
});
