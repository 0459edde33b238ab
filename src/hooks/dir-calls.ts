/**
 * The directory hooks' file calls (alloc_dir, task_dir: 17 mkdirs and a tree's removal per allocation), made
 * with node:fs's callback calls, one promise per batch. Under Node 20 each node:fs/promises call costs the main
 * thread more than the call itself (an async wrapper and its promises around the binding's own): in a loop of
 * the hooks' work alone the promise calls took about twice the user CPU of these (docs/benchmarks.md,
 * 2026-11-27 06:00).
 */
import { lstat, mkdir, readdir, rmdir, unlink, type Dirent } from 'node:fs';
import { join } from 'node:path';

type Done = (err: NodeJS.ErrnoException | null) => void;

/**
 * Makes `parent` (with any missing parents), then its `children` at once, each with its mode in `modes` if
 * given (else the default). Resolves with what each child's mkdir made: its path, or undefined when it was
 * already there (it then keeps the mode it had). Safe to run again over what a run before made.
 */
export function makeTree(parent: string, children: readonly string[], modes: Readonly<Record<string, number>> = {}): Promise<(string | undefined)[]> {
  return new Promise((resolve, reject) => {
    mkdir(parent, { recursive: true }, (err) => (err ? reject(err) : makeEach(parent, children, modes, resolve, reject)));
  });
}

/** `makeTree` for a `parent` that is there (just made): its children only. */
export function makeDirs(parent: string, children: readonly string[], modes: Readonly<Record<string, number>> = {}): Promise<(string | undefined)[]> {
  return new Promise((resolve, reject) => makeEach(parent, children, modes, resolve, reject));
}

function makeEach(
  parent: string,
  children: readonly string[],
  modes: Readonly<Record<string, number>>,
  resolve: (made: (string | undefined)[]) => void,
  reject: (err: Error) => void,
): void {
  const made: (string | undefined)[] = [];
  let left = children.length;
  let failed: Error | undefined;
  if (left === 0) return resolve(made);
  children.forEach((child, i) => {
    const path = join(parent, child);
    const mode = modes[child] ?? 0o777;
    const settle = (e: Error | null, made_?: string) => {
      failed ??= e ?? undefined;
      made[i] = made_;
      if (--left === 0) return failed ? reject(failed) : resolve(made);
    };
    // The parent is there, so a plain mkdir makes each child in one call (a recursive one does the same call
    // with more bookkeeping around it). Already there (a run again): the recursive form, which checks it is
    // a directory and answers undefined, as it would have.
    mkdir(path, mode, (e) => {
      if (!e) return settle(null, path);
      if (e.code !== 'EEXIST') return settle(e);
      mkdir(path, { recursive: true, mode }, (e2, first) => settle(e2, first));
    });
  });
}

/** `done`, with a path that is already gone (another remover, a task cleaning up) taken as success. */
function unlessGone(done: Done): Done {
  return (err) => done(err && err.code !== 'ENOENT' ? err : null);
}

/**
 * Removes `path` and everything under it, as `rm(path, { recursive: true, force: true })` does, in fewer calls.
 * Node's rm (its rimraf) lstats the path twice and then every entry, and tries `rmdir` on each directory before
 * reading it, so each directory with something in it costs a failed call (ENOTEMPTY, an Error built on the
 * main thread) and a second `rmdir`: 45 calls for an allocation's 17 dirs, each a thread-pool job. Here the top
 * is lstat'ed once (a link there is unlinked, never followed, as rm does), every directory is read with its
 * entries' types (no lstat per entry; Node lstats an entry whose type the file system leaves unknown, and a link
 * is unlinked, not followed), and `rmdir` is tried before reading only from the depth `emptyFrom` (the top is 0)
 * where directories are usually empty: a wrong guess costs a failed call, never a wrong result. In Nomad's
 * layout the alloc dir and its children (`alloc/`, each task's dir) always hold dirs and the dirs under those
 * (logs, data, tmp, local, secrets) are often empty: 2, and 23 calls, none failing, for that layout.
 */
export function removeTree(path: string, emptyFrom = 2): Promise<void> {
  return new Promise((resolve, reject) => {
    const done: Done = (err) => (err ? reject(err) : resolve());
    lstat(path, (err, st) => {
      if (err) return unlessGone(done)(err);
      if (!st.isDirectory()) return unlink(path, unlessGone(done));
      removeDir(path, 0, emptyFrom, done);
    });
  });
}

/** Removes the directory `path` (known to be one, not a link) at `depth`, its entries first. */
function removeDir(path: string, depth: number, emptyFrom: number, done: Done): void {
  const readAndRemove = () =>
    readdir(path, { withFileTypes: true }, (err, entries: Dirent[]) => {
      if (err) return unlessGone(done)(err);
      let left = entries.length;
      if (left === 0) return rmdir(path, unlessGone(done));
      let failed: NodeJS.ErrnoException | null = null;
      const removed: Done = (e) => {
        failed ??= e;
        if (--left === 0) return failed ? done(failed) : rmdir(path, unlessGone(done));
      };
      for (const e of entries) {
        const entry = join(path, e.name);
        if (e.isDirectory()) removeDir(entry, depth + 1, emptyFrom, removed);
        else unlink(entry, unlessGone(removed));
      }
    });
  if (depth < emptyFrom) return readAndRemove();
  rmdir(path, (err) => {
    if (!err || err.code === 'ENOENT') return done(null);
    // Not empty (Linux says ENOTEMPTY, POSIX allows EEXIST): read it and remove what is in it first.
    if (err.code === 'ENOTEMPTY' || err.code === 'EEXIST') return readAndRemove();
    done(err);
  });
}
