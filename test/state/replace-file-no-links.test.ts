/**
 * replaceFile on a file system without hard links (vfat, exFAT, some network and FUSE ones: `link` answers
 * EPERM or ENOTSUP): every write still replaces the content whole through the rename, none fails.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

vi.mock('node:fs', async (original) => {
  const fs = await original<typeof import('node:fs')>();
  let calls = 0;
  const link = (_from: string, _to: string, cb: (err: NodeJS.ErrnoException) => void) => {
    const err = Object.assign(new Error('operation not permitted, link'), { code: ++calls % 2 === 0 ? 'EPERM' : 'ENOTSUP' });
    queueMicrotask(() => cb(err));
  };
  return { ...fs, default: { ...fs, link }, link };
});

const { replaceFile } = await import('../../src/state/replace-file.ts');

const dir = mkdtempSync(join(tmpdir(), 'allocrun-replace-file-nolinks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('replaceFile where link is refused', () => {
  it('writes, rewrites and rewrites again, the name holding each content whole', async () => {
    const path = join(dir, 'state.json');
    for (const text of ['first', 'a second, longer content', 'third']) {
      await replaceFile(path, text);
      expect(readFileSync(path, 'utf8')).toBe(text);
    }
    expect(readdirSync(dir)).toEqual(['state.json']);
  });
});
