/**
 * The directory hooks' file calls (src/hooks/dir-calls.ts). removeTree, alloc_dir's destroy: what `rm -rf`
 * removes, it removes (files, full dirs at any depth, links as links, a missing path), and on an allocation's
 * layout it takes the file calls it says: Node's rm took 45 for the same tree, two of every dir's an lstat
 * and a failed rmdir. makeTree: the parent, then its children with their modes, saying which it made.
 */
import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../temp-dirs.ts';

const calls: string[] = [];
const failed: string[] = [];
// The callback calls dir-calls.ts makes, counted, with the code of each that fails.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const counted = (name: string, fn: (...args: any[]) => void) =>
    (...args: any[]): void => {
      calls.push(name);
      const cb = args.pop() as (err: NodeJS.ErrnoException | null, ...rest: unknown[]) => void;
      fn(...args, (err: NodeJS.ErrnoException | null, ...rest: unknown[]) => {
        if (err) failed.push(`${name} ${err.code}`);
        cb(err, ...rest);
      });
    };
  return {
    ...real,
    lstat: counted('lstat', real.lstat),
    readdir: counted('readdir', real.readdir),
    rmdir: counted('rmdir', real.rmdir),
    unlink: counted('unlink', real.unlink),
    mkdir: counted('mkdir', real.mkdir),
  };
});
const { makeDirs, makeTree, removeTree } = await import('../../src/hooks/dir-calls.ts');
const { allocDirHook } = await import('../../src/hooks/alloc-dir-hook.ts');

afterEach(() => {
  calls.length = 0;
  failed.length = 0;
});

/** Nomad's layout as alloc_dir and task_dir build it, for `tasks`. */
function allocLayout(root: string, tasks: string[]): string {
  const allocDir = join(root, 'allocs', 'a1');
  for (const d of ['alloc/logs', 'alloc/data', 'alloc/tmp']) mkdirSync(join(allocDir, d), { recursive: true });
  for (const t of tasks) for (const d of ['local', 'secrets', 'tmp']) mkdirSync(join(allocDir, t, d), { recursive: true });
  return allocDir;
}

describe('removeTree', () => {
  it("removes an allocation's empty layout in 23 file calls, none failing (an lstat, then a read and an rmdir per dir that holds dirs, an rmdir per leaf)", async () => {
    const allocDir = allocLayout(tempDir('allocrun-rmtree-'), ['a', 'b', 'c']);
    await removeTree(allocDir);
    expect(existsSync(allocDir)).toBe(false);
    expect(failed).toEqual([]);
    const count = (name: string) => calls.filter((c) => c === name).length;
    expect({ lstat: count('lstat'), readdir: count('readdir'), rmdir: count('rmdir'), unlink: count('unlink') }).toEqual({ lstat: 1, readdir: 5, rmdir: 17, unlink: 0 });
  });

  it('removes files at every depth and dirs that hold them where it guessed empty (logs with files, a full local/)', async () => {
    const allocDir = allocLayout(tempDir('allocrun-rmtree-'), ['a']);
    writeFileSync(join(allocDir, 'alloc/logs/a.stdout.0'), 'out');
    mkdirSync(join(allocDir, 'a/local/deep/er'), { recursive: true });
    writeFileSync(join(allocDir, 'a/local/deep/er/f'), 'x');
    writeFileSync(join(allocDir, 'a/top-file'), 'x');
    await removeTree(allocDir);
    expect(existsSync(allocDir)).toBe(false);
    // The guesses that were wrong (logs, local, deep, er: each held something), and nothing else.
    expect(failed).toEqual(Array(4).fill('rmdir ENOTEMPTY'));
  });

  it('unlinks links, never what they point at, whether inside the tree or the tree itself', async () => {
    const root = tempDir('allocrun-rmtree-');
    const outside = join(root, 'outside');
    mkdirSync(join(outside, 'keep'), { recursive: true });
    writeFileSync(join(outside, 'keep', 'f'), 'x');
    const allocDir = allocLayout(root, ['a']);
    symlinkSync(outside, join(allocDir, 'a/local/link'));
    symlinkSync(outside, join(allocDir, 'link-at-1'));
    await removeTree(allocDir);
    expect(existsSync(allocDir)).toBe(false);
    const linkTop = join(root, 'link-top');
    symlinkSync(outside, linkTop);
    await removeTree(linkTop);
    expect(existsSync(linkTop)).toBe(false);
    expect(readdirSync(join(outside, 'keep'))).toEqual(['f']);
  });

  it('takes a missing path as removed, and removes a plain file', async () => {
    const root = tempDir('allocrun-rmtree-');
    await expect(removeTree(join(root, 'never-made'))).resolves.toBeUndefined();
    writeFileSync(join(root, 'file'), 'x');
    await removeTree(join(root, 'file'));
    expect(existsSync(join(root, 'file'))).toBe(false);
  });

  it('alloc_dir removes what it built through it on destroy', async () => {
    const allocDir = join(tempDir('allocrun-rmtree-'), 'allocs', 'x');
    const hook = allocDirHook(allocDir);
    await hook.prerun!({}, new AbortController().signal);
    expect(existsSync(join(allocDir, 'alloc/logs'))).toBe(true);
    // One mkdir per dir: the alloc dir, alloc/, its three leaves.
    expect({ calls, failed }).toEqual({ calls: Array(5).fill('mkdir'), failed: [] });
    calls.length = 0;
    await hook.destroy!(new AbortController().signal);
    expect(existsSync(allocDir)).toBe(false);
    // An lstat, a read and an rmdir each for the alloc dir and alloc/, an rmdir per leaf.
    expect({ calls: calls.length, failed }).toEqual({ calls: 8, failed: [] });
  });
});

describe('makeTree', () => {
  it('makes the parent with its missing parents, then each child with its mode, saying which it made', async () => {
    const root = tempDir('allocrun-maketree-');
    const parent = join(root, 'x', 'y');
    const made = await makeTree(parent, ['a', 'b'], { b: 0o700 });
    expect(made).toEqual([join(parent, 'a'), join(parent, 'b')]);
    expect(statSync(join(parent, 'b')).mode & 0o777).toBe(0o700 & ~process.umask());
    expect(statSync(join(parent, 'a')).isDirectory()).toBe(true);
    // Again over what is there: nothing made, nothing failed that the caller sees.
    expect(await makeTree(parent, ['a', 'b', 'c'])).toEqual([undefined, undefined, join(parent, 'c')]);
    expect(statSync(join(parent, 'b')).mode & 0o777).toBe(0o700 & ~process.umask());
    expect(await makeTree(parent, [])).toEqual([]);
  });

  it('makeDirs makes each child of a parent that is there in one call, and answers undefined for one already there', async () => {
    const parent = tempDir('allocrun-maketree-');
    calls.length = 0;
    expect(await makeDirs(parent, ['a', 'b'], { b: 0o700 })).toEqual([join(parent, 'a'), join(parent, 'b')]);
    expect({ calls, failed }).toEqual({ calls: ['mkdir', 'mkdir'], failed: [] });
    expect(statSync(join(parent, 'b')).mode & 0o777).toBe(0o700 & ~process.umask());
    expect(await makeDirs(parent, ['b'])).toEqual([undefined]);
    await expect(makeDirs(join(parent, 'gone'), ['a'])).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('fails with the first error when a child cannot be made (a file in its place)', async () => {
    const root = tempDir('allocrun-maketree-');
    writeFileSync(join(root, 'taken'), 'x');
    await expect(makeTree(root, ['ok', 'taken'])).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(makeTree(join(root, 'taken'), ['a'])).rejects.toMatchObject({ code: expect.stringMatching(/EEXIST|ENOTDIR/) });
  });
});
