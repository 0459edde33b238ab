/**
 * go-getter's decompressors with Nomad's limits: tar (plain, gzip, bzip2, xz) through node-tar, zip through
 * yauzl, and single compressed files (.gz, .bz2, .xz). Each entry is judged before anything is written: an
 * absolute name, a name that climbs out (`../`, zip slip), a link whose target leaves the archive, a device
 * or FIFO, or more entries or bytes than the client allows fails the whole artifact. Everything unpacks into
 * a fresh directory of the caller's, which is thrown away on failure.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { Duplex, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream, WritableStream as WebWritableStream } from 'node:stream/web';
import { createGunzip } from 'node:zlib';
import { x as tarExtract, type ReadEntry } from 'tar';
import unbzip2 from 'unbzip2-stream';
// A webpack bundle in CommonJS: Node's ESM loader sees only its default export.
import xzDecompress from 'xz-decompress';
import yauzl from 'yauzl';
import type { ArchiveKind } from '../jobspec/artifact-source.ts';
import { formatBytes } from './config.ts';
import { ArtifactError, messageOf } from './errors.ts';

/** Nomad's decompression limits (0: none). */
export interface UnpackLimits {
  fileCount: number;
  sizeBytes: number;
}

const TAR_KINDS: ReadonlySet<ArchiveKind> = new Set(['tar', 'tar.gz', 'tar.bz2', 'tar.xz']);

/** Whether an archive kind unpacks into a directory tree (tar, zip) rather than one file. */
export function unpacksToTree(kind: ArchiveKind): boolean {
  return kind === 'zip' || TAR_KINDS.has(kind);
}

/** The decompressing stream for a kind's compression layer, if it has one. */
function decompressor(kind: ArchiveKind): Duplex | undefined {
  if (kind === 'gz' || kind === 'tar.gz') return createGunzip();
  if (kind === 'bz2' || kind === 'tar.bz2') return unbzip2() as unknown as Duplex;
  if (kind === 'xz' || kind === 'tar.xz') return xzStream();
  return undefined;
}

/** xz-decompress works on web streams: an identity web transform feeds it, both ends as one Node duplex. */
function xzStream(): Duplex {
  const feed = new TransformStream<Uint8Array, Uint8Array>();
  const out = new xzDecompress.XzReadableStream(feed.readable as unknown as ReadableStream<Uint8Array>);
  return Duplex.fromWeb({ writable: feed.writable as unknown as WebWritableStream, readable: out as unknown as WebReadableStream });
}

/** Counts decompressed bytes against the size limit. */
function sizeLimit(limits: UnpackLimits): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      total += chunk.length;
      if (limits.sizeBytes > 0 && total > limits.sizeBytes) done(tooBig(limits));
      else done(null, chunk);
    },
  });
}

const tooBig = (limits: UnpackLimits) => new ArtifactError(`the archive unpacks to more than the client's limit of ${formatBytes(limits.sizeBytes)} (decompression_size_limit)`);
const tooMany = (limits: UnpackLimits) => new ArtifactError(`the archive holds more than the client's limit of ${limits.fileCount} files (decompression_file_count_limit)`);

/** Why an entry name may not be unpacked (absolute, or climbing out of the archive), if it may not. */
export function entryNameProblem(name: string): string | undefined {
  if (name.includes('\0')) return `entry ${JSON.stringify(name)} has a NUL in its name`;
  if (name.startsWith('/') || name.startsWith('\\') || /^[A-Za-z]:/.test(name)) return `entry ${JSON.stringify(name)} has an absolute path`;
  const normal = posix.normalize(name.replace(/\\/g, '/'));
  if (normal === '..' || normal.startsWith('../')) return `entry ${JSON.stringify(name)} leaves the archive's directory (zip slip)`;
  return undefined;
}

/** Why a link may not be unpacked (absolute, or resolving outside the archive), if it may not. */
export function linkProblem(name: string, target: string, hard: boolean): string | undefined {
  if (target.startsWith('/') || /^[A-Za-z]:/.test(target)) return `${hard ? 'hard link' : 'symlink'} ${JSON.stringify(name)} points at the absolute path ${JSON.stringify(target)}`;
  // A hard link's target is named from the archive's root, a symlink's from the link's own directory.
  const resolved = posix.normalize(hard ? target : posix.join(posix.dirname(name), target));
  if (resolved === '..' || resolved.startsWith('../')) return `${hard ? 'hard link' : 'symlink'} ${JSON.stringify(name)} points at ${JSON.stringify(target)}, outside the archive`;
  return undefined;
}

/**
 * Unpacks a tar or zip archive into the empty directory `into`. In `single` mode (go-getter's file mode)
 * the archive must hold exactly one regular file, whose path in `into` is returned.
 */
export async function unpackTree(archive: string, kind: ArchiveKind, into: string, limits: UnpackLimits, signal: AbortSignal, single = false): Promise<string | undefined> {
  await mkdir(into, { recursive: true });
  const files = kind === 'zip' ? await unpackZip(archive, into, limits, signal, single) : await unpackTar(archive, kind, into, limits, signal, single);
  if (!single) return undefined;
  if (files.length !== 1) throw new ArtifactError(`mode = "file" needs an archive of exactly one file; this one holds ${files.length === 0 ? 'none' : `${files.length} entries`}`);
  return join(into, files[0]!);
}

async function unpackTar(archive: string, kind: ArchiveKind, into: string, limits: UnpackLimits, signal: AbortSignal, single: boolean): Promise<string[]> {
  let refused: ArtifactError | undefined;
  const names: string[] = [];
  const source = createReadStream(archive);
  const refuse = (err: ArtifactError): false => {
    refused ??= err;
    source.destroy(err);
    return false;
  };
  const unpack = tarExtract({
    cwd: into,
    strict: true,
    preserveOwner: false,
    filter: (path: string, entry: unknown): boolean => {
      if (refused) return false;
      const e = entry as ReadEntry;
      const why = entryNameProblem(path) ?? entryTypeProblem(e, single);
      if (why) return refuse(new ArtifactError(why));
      if ((e.type === 'SymbolicLink' || e.type === 'Link') && e.linkpath !== undefined) {
        const link = linkProblem(path, e.linkpath, e.type === 'Link');
        if (link) return refuse(new ArtifactError(link));
      }
      names.push(path);
      if (limits.fileCount > 0 && names.length > limits.fileCount) return refuse(tooMany(limits));
      return true;
    },
  });
  const steps: (NodeJS.ReadableStream | NodeJS.WritableStream | Duplex)[] = [source];
  const d = decompressor(kind);
  if (d) steps.push(d);
  steps.push(sizeLimit(limits), unpack as unknown as NodeJS.WritableStream);
  try {
    await pipeline(steps as unknown as [NodeJS.ReadableStream, NodeJS.WritableStream], { signal });
  } catch (err) {
    if (refused) throw refused;
    if (err instanceof ArtifactError) throw err;
    signal.throwIfAborted();
    throw new ArtifactError(`unpacking the ${kind} archive: ${messageOf(err)}`);
  }
  if (refused) throw refused;
  return names.filter((n) => !n.endsWith('/'));
}

function entryTypeProblem(e: ReadEntry, single: boolean): string | undefined {
  switch (e.type) {
    case 'File':
    case 'OldFile':
    case 'ContiguousFile':
      return undefined;
    case 'Directory':
    case 'SymbolicLink':
    case 'Link':
      return single ? `mode = "file" needs an archive of exactly one file; entry ${JSON.stringify(e.path)} is a ${e.type === 'Directory' ? 'directory' : 'link'}` : undefined;
    default:
      return `entry ${JSON.stringify(e.path)} is a ${e.type} entry: only files, directories and links are unpacked`;
  }
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: true, decodeStrings: true, validateEntrySizes: true }, (err, zip) => (err ? reject(err) : resolve(zip!)));
  });
}

function entryStream(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s!))));
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

async function unpackZip(archive: string, into: string, limits: UnpackLimits, signal: AbortSignal, single: boolean): Promise<string[]> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(archive);
  } catch (err) {
    throw new ArtifactError(`not a valid zip archive: ${messageOf(err)}`);
  }
  const names: string[] = [];
  // Links are made once every file is written, so no entry is ever written through one the archive made.
  const links: [string, string][] = [];
  let total = 0;
  await new Promise<void>((resolve, reject) => {
      const fail = (err: unknown) => {
        try {
          zip.close();
        } catch {
          // Already closed (autoClose, or an earlier failure): nothing more to release.
        }
        reject(err instanceof ArtifactError ? err : new ArtifactError(zipMessage(err)));
      };
      zip.on('error', fail);
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        void (async () => {
          signal.throwIfAborted();
          const name = entry.fileName;
          const why = entryNameProblem(name);
          if (why) throw new ArtifactError(why);
          names.push(name);
          if (limits.fileCount > 0 && names.length > limits.fileCount) throw tooMany(limits);
          const unixMode = entry.versionMadeBy >> 8 === 3 ? (entry.externalFileAttributes >>> 16) & 0xffff : 0;
          const target = join(into, name);
          if (name.endsWith('/')) {
            if (single) throw new ArtifactError(`mode = "file" needs an archive of exactly one file; entry ${JSON.stringify(name)} is a directory`);
            await mkdir(target, { recursive: true });
          } else if ((unixMode & S_IFMT) === S_IFLNK) {
            if (single) throw new ArtifactError(`mode = "file" needs an archive of exactly one file; entry ${JSON.stringify(name)} is a link`);
            const chunks: Buffer[] = [];
            for await (const c of await entryStream(zip, entry)) chunks.push(c as Buffer);
            const linkTarget = Buffer.concat(chunks).toString('utf8');
            const bad = linkProblem(name, linkTarget, false);
            if (bad) throw new ArtifactError(bad);
            links.push([target, linkTarget]);
          } else {
            await mkdir(dirname(target), { recursive: true });
            const mode = unixMode & 0o777 || 0o644;
            const stream = await entryStream(zip, entry);
            stream.on('data', (c: Buffer) => {
              total += c.length;
              if (limits.sizeBytes > 0 && total > limits.sizeBytes) stream.destroy(tooBig(limits));
            });
            await pipeline(stream, createWriteStream(target, { flags: 'wx', mode }), { signal });
          }
          zip.readEntry();
        })().catch(fail);
      });
      zip.readEntry();
    });
  for (const [at, target] of links) {
    await mkdir(dirname(at), { recursive: true });
    await symlink(target, at).catch((err: unknown) => {
      throw new ArtifactError(`symlink ${JSON.stringify(at.slice(into.length + 1))}: ${messageOf(err)}`);
    });
  }
  return names.filter((n) => !n.endsWith('/'));
}

/** yauzl's refusals read as what they are: zip slip and absolute paths named. */
function zipMessage(err: unknown): string {
  const m = messageOf(err);
  if (/invalid relative path/.test(m)) return `${m.replace(/^invalid relative path: /, 'entry ')} leaves the archive's directory (zip slip)`;
  if (/absolute path/.test(m)) return `zip entry with an ${m}`;
  return `unpacking the zip archive: ${m}`;
}

/** Decompresses a single-file archive (.gz, .bz2, .xz) into the new file `to`. */
export async function decompressFile(archive: string, kind: ArchiveKind, to: string, limits: UnpackLimits, signal: AbortSignal): Promise<void> {
  const d = decompressor(kind);
  if (!d || unpacksToTree(kind)) throw new ArtifactError(`a ${kind} archive does not unpack to a single file`);
  await mkdir(dirname(to), { recursive: true });
  try {
    await pipeline(createReadStream(archive), d, sizeLimit(limits), createWriteStream(to, { flags: 'wx', mode: 0o644 }), { signal });
  } catch (err) {
    if (err instanceof ArtifactError) throw err;
    signal.throwIfAborted();
    throw new ArtifactError(`decompressing the ${kind} file: ${messageOf(err)}`);
  }
}
