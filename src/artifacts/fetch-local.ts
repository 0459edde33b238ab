/**
 * go-getter's file getter in copy mode, with Nomad's DisableSymlinks: a local file is copied, a local
 * directory is copied tree and all, and a symlink inside that tree is refused rather than followed or kept
 * (it could point anywhere on the host).
 */
import { copyFile, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ArtifactError, messageOf } from './errors.ts';

/** What a local source is. */
export async function localKind(path: string): Promise<'file' | 'dir'> {
  try {
    const st = await stat(path);
    if (st.isDirectory()) return 'dir';
    if (st.isFile()) return 'file';
    throw new ArtifactError(`${path} is neither a regular file nor a directory`);
  } catch (err) {
    if (err instanceof ArtifactError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ArtifactError(code === 'ENOENT' ? `${path}: no such file or directory` : `${path}: ${messageOf(err)}`);
  }
}

/** Copies the local file `from` to the new file `to`. */
export async function copyLocalFile(from: string, to: string): Promise<void> {
  await copyFile(from, to).catch((err: unknown) => {
    throw new ArtifactError(`copying ${from}: ${messageOf(err)}`);
  });
}

/** Copies the directory `from` into the new directory `to`; a symlink anywhere inside is refused. */
export async function copyLocalTree(from: string, to: string, signal: AbortSignal): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from)) {
    signal.throwIfAborted();
    const src = join(from, entry);
    const dst = join(to, entry);
    const st = await lstat(src);
    if (st.isSymbolicLink()) throw new ArtifactError(`${src} is a symlink: copying symlinks from a local source is disabled (go-getter's DisableSymlinks)`);
    if (st.isDirectory()) await copyLocalTree(src, dst, signal);
    else if (st.isFile()) await copyLocalFile(src, dst);
    else throw new ArtifactError(`${src} is neither a regular file nor a directory`);
  }
}
