/**
 * replaceFile (src/state/replace-file.ts): the name always holds a whole content, the inode a write
 * replaces is the next write's spare (no file created per write after the second), and a write that
 * stopped between any two of its steps (the leftovers it would leave, laid out by hand) is finished by
 * the next one.
 */
import { linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { replaceFile, spareFilesOf } from '../../src/state/replace-file.ts';

const dirs: string[] = [];
function fileIn(): { dir: string; path: string; spare: string; old: string } {
  const dir = mkdtempSync(join(tmpdir(), 'allocrun-replace-file-'));
  dirs.push(dir);
  const path = join(dir, 'state.json');
  const [spare, old] = spareFilesOf(path) as [string, string];
  return { dir, path, spare, old };
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const ino = (p: string) => statSync(p).ino;

describe('replaceFile', () => {
  it('writes a new file 0600 and leaves nothing beside it', async () => {
    const { dir, path } = fileIn();
    await replaceFile(path, 'first');
    expect(readFileSync(path, 'utf8')).toBe('first');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('after the second write, reuses the two inodes in turn instead of creating files', async () => {
    const { dir, path, spare } = fileIn();
    await replaceFile(path, 'one');
    const first = ino(path);
    await replaceFile(path, 'two');
    const second = ino(path);
    expect(ino(spare)).toBe(first);
    await replaceFile(path, 'three');
    expect([ino(path), ino(spare)]).toEqual([first, second]);
    await replaceFile(path, 'four');
    expect([ino(path), ino(spare)]).toEqual([second, first]);
    expect(readFileSync(path, 'utf8')).toBe('four');
    expect(readdirSync(dir).sort()).toEqual(['state.json', 'state.json.spare']);
  });

  it('closes every file it opens (an agent saves thousands of times)', async () => {
    const { path } = fileIn();
    const open = () => readdirSync('/proc/self/fd').length;
    await replaceFile(path, 'warm');
    const before = open();
    for (let i = 0; i < 40; i++) await replaceFile(path, `write ${i}`);
    expect(open() - before, 'file descriptors left open by 40 writes').toBeLessThan(10);
  });

  it('a shorter content leaves nothing of the longer one it replaces', async () => {
    const { path } = fileIn();
    await replaceFile(path, 'x'.repeat(5000));
    await replaceFile(path, 'y'.repeat(6000));
    await replaceFile(path, 'short');
    expect(readFileSync(path, 'utf8')).toBe('short');
  });

  it('a reader holding the replaced file still reads the whole old content until the next write', async () => {
    const { path, spare } = fileIn();
    await replaceFile(path, 'old content');
    await replaceFile(path, 'new content');
    expect([readFileSync(path, 'utf8'), readFileSync(spare, 'utf8')]).toEqual(['new content', 'old content']);
  });

  // Each row lays out what a write that stopped at that step leaves, with `path` holding "before".
  it.each([
    ['after filling the spare', ({ path, spare }: ReturnType<typeof fileIn>) => (writeFileSync(path, 'before'), writeFileSync(spare, 'half-written'))],
    ['after linking the current file to .old', ({ path, spare, old }: ReturnType<typeof fileIn>) => (writeFileSync(path, 'before'), linkSync(path, old), writeFileSync(spare, 'next'))],
    ['after the rename, before .old became the spare', ({ path, old }: ReturnType<typeof fileIn>) => (writeFileSync(old, 'older'), writeFileSync(path, 'before'))],
  ])('a write that stopped %s is finished by the next write', async (_, stopped) => {
    const f = fileIn();
    stopped(f);
    expect(readFileSync(f.path, 'utf8')).toBe('before');
    await replaceFile(f.path, 'after');
    expect(readFileSync(f.path, 'utf8')).toBe('after');
    expect(readFileSync(f.spare, 'utf8')).toBe('before');
    expect(readdirSync(f.dir).sort()).toEqual(['state.json', 'state.json.spare']);
  });

  it('never writes through a spare that is a symlink', async () => {
    const { dir, path, spare } = fileIn();
    const elsewhere = join(dir, 'elsewhere');
    writeFileSync(elsewhere, 'not yours');
    await replaceFile(path, 'one');
    symlinkSync(elsewhere, spare);
    await expect(replaceFile(path, 'two')).rejects.toMatchObject({ code: 'ELOOP' });
    expect([readFileSync(path, 'utf8'), readFileSync(elsewhere, 'utf8')]).toEqual(['one', 'not yours']);
  });

  it('rejects when the directory is missing, writing nothing', async () => {
    const { dir } = fileIn();
    await expect(replaceFile(join(dir, 'gone', 'state.json'), 'x')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(readdirSync(dir)).toEqual([]);
  });
});
