/**
 * Keeping an artifact inside its task dir on the real disk: a destination resolved through every symlink on
 * its way must stay inside, an unpacked tree may hold only symlinks that resolve inside itself (Nomad's
 * artifact inspector), and the move into place never follows a link already at the destination.
 */
import { chmod, lstat, mkdir, readdir, readlink, realpath, rename, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { relativeDestination } from '../jobspec/artifact-source.ts';
import { ArtifactError } from './errors.ts';

/** Whether `path` is `root` or inside it (both absolute and normalised). */
export function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && rel.split(sep)[0] !== '..');
}

/** The deepest existing ancestor of `path` (itself when it exists). */
async function existingAncestor(path: string): Promise<string> {
  let at = path;
  for (;;) {
    try {
      await lstat(at);
      return at;
    } catch {
      const up = dirname(at);
      if (up === at) return at;
      at = up;
    }
  }
}

/**
 * The absolute destination of an (interpolated) `destination` in `taskDir`: a relative one is joined to the
 * task dir, an absolute one (`${NOMAD_TASK_DIR}/bin`) must already be inside it. Whatever of the path
 * exists must resolve, through its symlinks, inside the task dir too.
 */
export async function resolveDestination(taskDir: string, destination: string): Promise<string> {
  let target: string;
  if (isAbsolute(destination)) {
    target = resolve(destination);
    if (!isWithin(resolve(taskDir), target)) throw new ArtifactError(`destination ${JSON.stringify(destination)} is outside the task directory`);
  } else {
    target = resolve(taskDir, relativeDestination(destination));
  }
  // The last component may be a link a file replaces (placeFile); a directory is checked again once made.
  await checkReal(taskDir, target === resolve(taskDir) ? target : dirname(target), destination);
  return target;
}

/** Fails when the existing part of `target` resolves outside the task dir (a symlink pointing out). */
export async function checkReal(taskDir: string, target: string, shown: string): Promise<void> {
  const realRoot = await realpath(taskDir);
  const existing = await existingAncestor(target);
  const real = await realpath(existing).catch(() => existing);
  if (!isWithin(realRoot, real)) throw new ArtifactError(`destination ${JSON.stringify(shown)} resolves outside the task directory (through a symlink) to ${real}`);
}

/** `mkdir -p` of a destination directory, checked again once it exists. */
export async function makeDestinationDir(taskDir: string, dir: string, shown: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await checkReal(taskDir, dir, shown);
  const st = await lstat(dir);
  if (!st.isDirectory()) throw new ArtifactError(`destination ${JSON.stringify(shown)} is not a directory`);
}

/**
 * Nomad's artifact inspector over an unpacked tree: every symlink must resolve inside `root` (dangling ones
 * too are refused). Setuid and setgid bits are cleared on the way, as Nomad's getter umask does.
 */
export async function inspectTree(root: string): Promise<void> {
  const realRoot = await realpath(root);
  const walk = async (dir: string): Promise<void> => {
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      const st = await lstat(path);
      if (st.isSymbolicLink()) {
        const shown = relative(root, path);
        const resolved = await realpath(path).catch(async () => {
          throw new ArtifactError(`symlink ${JSON.stringify(shown)} points at ${JSON.stringify(await readlink(path))}, which does not exist in the artifact`);
        });
        if (!isWithin(realRoot, resolved)) throw new ArtifactError(`artifact includes symlink ${JSON.stringify(shown)} that resolves outside of sandbox`);
      } else if (st.isDirectory()) {
        await walk(path);
      } else if (st.mode & 0o6000) {
        await chmod(path, st.mode & 0o1777);
      }
    }
  };
  await walk(root);
}

/**
 * Nomad's mergeDirectories: moves every entry of `src` into `dst`; directories on both sides merge, anything
 * else at the destination is replaced. Decided on lstat, so a symlink at the destination is replaced, never
 * followed.
 */
export async function mergeInto(src: string, dst: string): Promise<void> {
  for (const name of await readdir(src)) {
    const from = join(src, name);
    const to = join(dst, name);
    const [a, b] = await Promise.all([lstat(from), lstat(to).catch(() => undefined)]);
    if (b && a.isDirectory() && b.isDirectory()) {
      await mergeInto(from, to);
      continue;
    }
    if (b) await rm(to, { recursive: true, force: true });
    await rename(from, to);
  }
}

/** Puts the file `from` at `to`, replacing a file or link there; a directory there is an error. */
export async function placeFile(from: string, to: string, shown: string): Promise<void> {
  const there = await lstat(to).catch(() => undefined);
  if (there?.isDirectory()) throw new ArtifactError(`destination ${JSON.stringify(shown)} is a directory: mode = "file" writes a file there`);
  await rename(from, to);
}
