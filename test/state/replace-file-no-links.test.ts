/**
 * replaceFile where `link` is refused. On a file system without hard links (vfat, exFAT, some network and FUSE
 * ones: EPERM, ENOTSUP or ENOSYS) every write still replaces the content whole through the rename alone, none
 * fails; any other refusal fails the write with that error and leaves the content as it was.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const refusal = vi.hoisted(() => ({ code: 'EPERM' }));

vi.mock('node:fs', async (original) => {
  const fs = await original<typeof import('node:fs')>();
  const link = (_from: string, _to: string, cb: (err: NodeJS.ErrnoException) => void) => {
    const err = Object.assign(new Error(`${refusal.code}, link`), { code: refusal.code });
    queueMicrotask(() => cb(err));
  };
  return { ...fs, default: { ...fs, link }, link };
});

const { replaceFile } = await import('../../src/state/replace-file.ts');

const root = mkdtempSync(join(tmpdir(), 'allocrun-replace-file-nolinks-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('replaceFile where link is refused', () => {
  it.each(['EPERM', 'ENOTSUP', 'ENOSYS'])('%s: writes, rewrites and rewrites again, the name holding each content whole', async (code) => {
    refusal.code = code;
    const dir = mkdtempSync(join(root, 'fs-'));
    const path = join(dir, 'state.json');
    for (const text of ['first', 'a second, longer content', 'third']) {
      await replaceFile(path, text);
      expect(readFileSync(path, 'utf8')).toBe(text);
    }
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('any other refusal fails the write with its error, the content as it was', async () => {
    const dir = mkdtempSync(join(root, 'fs-'));
    const path = join(dir, 'state.json');
    await replaceFile(path, 'first'); // the first write links nothing
    refusal.code = 'EIO';
    await expect(replaceFile(path, 'second')).rejects.toMatchObject({ code: 'EIO' });
    expect(readFileSync(path, 'utf8')).toBe('first');
  });
});
