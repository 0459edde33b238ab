/**
 * One artifact fetched into a task dir the way go-getter's Client.Get does it for Nomad: the source is
 * fetched into a work dir inside the task dir, checked against its checksum, unpacked there if it is an
 * archive, inspected for links out, and only then moved to its destination (merged into a directory, or
 * renamed onto a file). A failure at any step leaves the destination as it was and removes the work dir.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { ArtifactSpec } from '../jobspec/types.ts';
import { ArtifactSourceError, SINGLE_FILE_ARCHIVES, parseSource, type ParsedSource } from '../jobspec/artifact-source.ts';
import { verifyChecksum } from './checksum.ts';
import type { ArtifactConfig } from './config.ts';
import { inspectTree, isWithin, makeDestinationDir, mergeInto, placeFile, resolveDestination } from './confine.ts';
import { ArtifactError } from './errors.ts';
import { downloadHttp, shownUrl } from './fetch-http.ts';
import { copyLocalFile, copyLocalTree, localKind } from './fetch-local.ts';
import { decompressFile, unpackTree, unpacksToTree } from './unpack.ts';

/** The prefix of work dirs in a task dir; ones an agent left behind when it died are removed before a fetch. */
export const WORK_DIR_PREFIX = '.artifact-';

/** Removes work dirs a dead agent left in the task dir (never the task's own files). */
export async function removeStaleWorkDirs(taskDir: string): Promise<void> {
  const names = await readdir(taskDir).catch(() => [] as string[]);
  await Promise.all(names.filter((n) => n.startsWith(WORK_DIR_PREFIX)).map((n) => rm(join(taskDir, n), { recursive: true, force: true })));
}

/** The source as messages show it (no password). */
function shown(parsed: ParsedSource): string {
  return parsed.url ? shownUrl(parsed.url) : parsed.path!;
}

/** Fetches one artifact (its fields already interpolated) into `taskDir`. */
export async function getArtifact(artifact: ArtifactSpec, taskDir: string, config: ArtifactConfig, signal: AbortSignal): Promise<void> {
  let parsed: ParsedSource;
  try {
    parsed = parseSource(artifact.source, artifact.options);
  } catch (err) {
    if (err instanceof ArtifactSourceError) throw new ArtifactError(`${err.field === 'options' ? `option "${err.key}"` : err.field}: ${err.message}`);
    throw err;
  }
  const dest = await resolveDestination(taskDir, artifact.destination);
  const work = await mkdtemp(join(taskDir, WORK_DIR_PREFIX));
  try {
    await fetchAndPlace(artifact, parsed, taskDir, dest, work, config, signal);
  } finally {
    // An extractor refused mid-archive can still be finishing a file in the work dir when the refusal
    // arrives, so the removal retries (rm retries ENOTEMPTY and EBUSY), and a removal that still fails never
    // replaces why the fetch failed: the next fetch into this task dir sweeps what is left (removeStaleWorkDirs).
    await rm(work, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 }).catch(() => undefined);
  }
}

async function fetchAndPlace(artifact: ArtifactSpec, parsed: ParsedSource, taskDir: string, dest: string, work: string, config: ArtifactConfig, signal: AbortSignal): Promise<void> {
  const limits = { fileCount: config.decompressionFileCountLimit, sizeBytes: config.decompressionSizeLimit };
  const download = join(work, 'download');
  let tree: string | undefined;
  if (parsed.getter === 'http') {
    await downloadHttp(parsed.url!, download, { headers: artifact.headers, timeout: config.httpReadTimeout, maxBytes: config.httpMaxSize, insecure: artifact.insecure, signal });
  } else if ((await localKind(parsed.path!)) === 'dir') {
    if (parsed.checksum) throw new ArtifactError(`checksum cannot be specified for directory download (${parsed.path} is a directory)`);
    if (artifact.mode === 'file') throw new ArtifactError(`mode = "file" needs a file, but ${parsed.path} is a directory`);
    tree = join(work, 'tree');
    await copyLocalTree(parsed.path!, tree, signal);
  } else {
    await copyLocalFile(parsed.path!, download);
  }

  if (!tree) {
    if (parsed.checksum) await verifyChecksum(download, parsed.checksum, shown(parsed));
    const archive = parsed.archive;
    if (artifact.mode === 'file') {
      if (parsed.subdir !== undefined) throw new ArtifactError(`"//${parsed.subdir}" picks a directory, which mode = "file" cannot write`);
      let file = download;
      if (archive && unpacksToTree(archive)) file = (await unpackTree(download, archive, join(work, 'tree'), limits, signal, true))!;
      else if (archive) {
        file = join(work, 'unpacked');
        await decompressFile(download, archive, file, limits, signal);
      }
      await makeDestinationDir(taskDir, dirname(dest), artifact.destination);
      await placeFile(file, dest, artifact.destination);
      return;
    }
    if (!archive) {
      if (artifact.mode === 'dir') throw new ArtifactError(`mode = "dir" needs an archive or a local directory, but ${shown(parsed)} is a plain file`);
      if (parsed.subdir !== undefined) throw new ArtifactError(`"//${parsed.subdir}" picks a directory of an archive, but ${shown(parsed)} is no archive`);
      const name = basename(parsed.filename);
      if (name === '' || name === '.' || name === '..' || name === '/') throw new ArtifactError(`${shown(parsed)} names no file (its path ends in "/"): set options { filename = "..." } or mode = "file" with a destination`);
      await makeDestinationDir(taskDir, dest, artifact.destination);
      await placeFile(download, join(dest, name), artifact.destination);
      return;
    }
    if (SINGLE_FILE_ARCHIVES.has(archive)) throw new ArtifactError(`${archive}-compressed files can only unarchive to a single file: set mode = "file" (with a file destination)`);
    tree = join(work, 'tree');
    await unpackTree(download, archive, tree, limits, signal);
  }

  let root = tree;
  if (parsed.subdir !== undefined) {
    root = join(tree, parsed.subdir);
    const st = await stat(root).catch(() => undefined);
    if (!isWithin(tree, root) || !st?.isDirectory()) throw new ArtifactError(`subdirectory "${parsed.subdir}" is not in ${shown(parsed)}`);
  }
  await inspectTree(root);
  await makeDestinationDir(taskDir, dest, artifact.destination);
  await mergeInto(root, dest);
}
