/**
 * Replaces a file's content atomically (a reader or a crash sees the old content or the new, never half)
 * without creating a file per write. On this project's disks creating a file is the dearest call of a save
 * (ext4 here: ~0.5-0.7 ms of kernel CPU for the `open(O_CREAT)` of a new inode, against ~0.15 ms to rewrite
 * an existing one), and an agent saves each runner several times per start and kill. So the inode a rename
 * replaces is kept as the spare the next write fills:
 *
 *   write the new content into `<path>.spare`  (an existing file after the second write)
 *   link `<path>` to `<path>.old`               (the current content keeps a name)
 *   rename `<path>.spare` over `<path>`         (the atomic step)
 *   rename `<path>.old` to `<path>.spare`       (the replaced inode becomes the next spare)
 *
 * A crash between any two steps leaves `<path>` whole; what it leaves of the others the next write copes with.
 * Through libuv's thread pool, not on the caller's thread: synchronous calls cost ~20% less CPU per write,
 * but a write that finishes within the turn that asked for it lets nothing coalesce behind it, and the
 * agent's saves (persistenceFor) coalesce the snapshots that arrive while a write is under way: measured in
 * the agent at load 10-15, 1-2.5 saves per start through the pool against 5.1 on the thread.
 */
import { close, constants, ftruncate, link, open, rename, unlink, write } from 'node:fs';

/** The files besides `path` that `replaceFile` keeps; whoever removes `path` for good removes these too. */
export function spareFilesOf(path: string): string[] {
  return [`${path}.spare`, `${path}.old`];
}

/** Sets `path`'s content to `text` (a new file is 0600), atomically; rejects with the failing call's error. */
export async function replaceFile(path: string, text: string): Promise<void> {
  const [spare, old] = spareFilesOf(path) as [string, string];
  await fill(spare, Buffer.from(text));
  const kept = await keepCurrent(path, old);
  await call<void>((cb) => rename(spare, path, cb));
  if (kept) await call<void>((cb) => rename(old, spare, cb));
}

/** Writes `bytes` as the whole content of `file`, reusing it when it exists; never follows a symlink. */
async function fill(file: string, bytes: Buffer): Promise<void> {
  // One call whether or not the spare exists yet (the mode applies only when it is made).
  const fd = await call<number>((cb) => open(file, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600, cb));
  try {
    for (let at = 0; at < bytes.length; ) at += await call<number>((cb) => write(fd, bytes, at, bytes.length - at, at, (err, n) => cb(err, n)));
    await call<void>((cb) => ftruncate(fd, bytes.length, cb));
  } finally {
    await call<void>((cb) => close(fd, cb));
  }
}

/** What `link` answers where the file system has no hard links. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'ENOSYS']);

/** Gives `path`'s current inode the name `old`; false when there is no current file (the first write). */
async function keepCurrent(path: string, old: string): Promise<boolean> {
  try {
    await call<void>((cb) => link(path, old, cb));
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    // A file system without hard links (vfat, exFAT, some network and FUSE ones): the rename alone still
    // replaces atomically; the replaced inode is let go and the next write makes its spare anew.
    if (NO_LINKS.has(code ?? '')) return false;
    if (code !== 'EEXIST') throw err;
  }
  // Left by a write that stopped between its link and its last rename: an older inode, not needed.
  await call<void>((cb) => unlink(old, cb));
  await call<void>((cb) => link(path, old, cb));
  return true;
}

/** One fs callback call as a promise (fs/promises' FileHandle costs more than the write at an agent's rate). */
function call<T>(run: (cb: (err: NodeJS.ErrnoException | null, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => run((err, value) => (err ? reject(err) : resolve(value as T))));
}
