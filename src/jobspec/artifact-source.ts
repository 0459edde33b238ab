/**
 * go-getter's reading of an artifact's `source` and `options` (detectors, forced getters, its magic query
 * parameters `checksum`, `archive` and `filename`, archive types by extension) and the destination rule, as
 * pure functions: the job loader checks a job with them and the artifact hook fetches by what they return.
 * allocrun fetches what needs no cloud account: http(s) URLs and local files.
 */
import { posix } from 'node:path';

/** The hashes go-getter checks a download against. */
export const CHECKSUM_TYPES = { md5: 32, sha1: 40, sha256: 64, sha512: 128 } as const;
export type ChecksumType = keyof typeof CHECKSUM_TYPES;

/** What go-getter unpacks: tar archives (plain or compressed), zip, and single compressed files. */
export type ArchiveKind = 'tar' | 'tar.gz' | 'tar.bz2' | 'tar.xz' | 'zip' | 'gz' | 'bz2' | 'xz';

/** go-getter's decompressor names (the extension, or `options { archive = "..." }`) to the kind each unpacks. */
export const ARCHIVE_EXTENSIONS: Readonly<Record<string, ArchiveKind>> = {
  'tar.gz': 'tar.gz', tgz: 'tar.gz', 'tar.bz2': 'tar.bz2', tbz2: 'tar.bz2', 'tar.xz': 'tar.xz', txz: 'tar.xz',
  tar: 'tar', zip: 'zip', gz: 'gz', bz2: 'bz2', xz: 'xz',
};

/** go-getter's zstd decompressors: Node 20's zlib has no zstd, so these are refused rather than kept packed. */
const ZSTD_EXTENSIONS = ['tar.zst', 'tzst', 'zst'];

/** Kinds that unpack to one file: go-getter refuses them for a directory destination. */
export const SINGLE_FILE_ARCHIVES: ReadonlySet<ArchiveKind> = new Set(['gz', 'bz2', 'xz']);

/** Getters go-getter has that need an account, a VCS client or a cloud SDK: refused by name. */
const UNSUPPORTED_GETTERS: Readonly<Record<string, string>> = {
  s3: 'Amazon S3', gcs: 'Google Cloud Storage', git: 'git', hg: 'Mercurial',
};

/** Where a problem with an artifact lies: the field of the artifact block, and the key inside options. */
export type ArtifactField = 'source' | 'destination' | 'mode' | 'options' | 'headers';

/** A source, option or destination go-getter (or allocrun) cannot use; `field` names where it is. */
export class ArtifactSourceError extends Error {
  readonly code = 'ErrArtifactSource';
  constructor(message: string, readonly field: ArtifactField, readonly key?: string) {
    super(message);
    this.name = 'ArtifactSourceError';
  }
}

/** A checksum to verify a download with. */
export interface Checksum {
  type: ChecksumType;
  /** Lower-case hex. */
  hex: string;
}

/** A source as the fetcher uses it. */
export interface ParsedSource {
  getter: 'http' | 'file';
  /** http: the URL to request, go-getter's own query parameters removed. */
  url?: URL;
  /** file: the absolute path to read. */
  path?: string;
  checksum?: Checksum;
  /** How to unpack it; undefined: kept as fetched. */
  archive?: ArchiveKind;
  /** The name it gets in `any` mode: go-getter's `filename` option, else the last segment of the path. */
  filename: string;
  /** go-getter's `source//subdir`: only that directory of the unpacked archive (or local dir) is kept. */
  subdir?: string;
}

const FORCED = /^([A-Za-z0-9]+)::(.+)$/s;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/** go-getter's detectors for sources written without a scheme, for the getters allocrun refuses. */
function detectedGetter(source: string): string | undefined {
  if (/^git@[^:]+:/.test(source) || /^(github\.com|bitbucket\.org)\//.test(source)) return 'git';
  if (/^[^/]*amazonaws\.com\//.test(source)) return 's3';
  if (/^(www|storage)\.googleapis\.com\//.test(source)) return 'gcs';
  return undefined;
}

function unsupported(getter: string): ArtifactSourceError {
  const what = UNSUPPORTED_GETTERS[getter];
  const why = what ? `${what} sources are not supported` : `go-getter has no "${getter}" getter`;
  return new ArtifactSourceError(`${why}: allocrun fetches http:// and https:// URLs and local files (an absolute path or a file:// URL)`, 'source');
}

/** Go's strconv.ParseBool. */
function parseBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}

/** `options { checksum = "sha256:..." }`: a type and its hex digest (a bare digest's type is read from its length, as go-getter does). */
export function parseChecksum(value: string): Checksum {
  const at = value.indexOf(':');
  const type = at < 0 ? undefined : value.slice(0, at);
  const hex = (at < 0 ? value : value.slice(at + 1)).toLowerCase();
  const types = Object.keys(CHECKSUM_TYPES).join(', ');
  if (type === 'file') throw new ArtifactSourceError(`checksum files ("file:<url>") are not supported: give the digest itself, as "sha256:<hex>"`, 'options', 'checksum');
  if (type !== undefined && !(type in CHECKSUM_TYPES)) throw new ArtifactSourceError(`unsupported checksum type ${JSON.stringify(type)}: use one of ${types}, as "sha256:<hex>"`, 'options', 'checksum');
  if (!/^[0-9a-f]+$/.test(hex)) throw new ArtifactSourceError(`checksum ${JSON.stringify(value)} is not "type:hex": the digest must be hexadecimal`, 'options', 'checksum');
  if (type === undefined) {
    const guessed = (Object.entries(CHECKSUM_TYPES) as [ChecksumType, number][]).find(([, len]) => len === hex.length);
    if (!guessed) throw new ArtifactSourceError(`checksum ${JSON.stringify(value)} has no type and its length (${hex.length}) is no known digest's: write "sha256:<hex>" (types: ${types})`, 'options', 'checksum');
    return { type: guessed[0], hex };
  }
  const want = CHECKSUM_TYPES[type as ChecksumType];
  if (hex.length !== want) throw new ArtifactSourceError(`a ${type} checksum has ${want} hex digits, this one has ${hex.length}`, 'options', 'checksum');
  return { type: type as ChecksumType, hex };
}

/** `options { archive = ... }`: false keeps the download packed; a type name forces that type; true or unset goes by extension. */
function archiveOption(value: string | undefined, path: string): ArchiveKind | undefined {
  if (value !== undefined && value !== '') {
    const flag = parseBool(value);
    if (flag === false) return undefined;
    if (flag === undefined) {
      if (ZSTD_EXTENSIONS.includes(value)) throw zstd('options');
      const kind = ARCHIVE_EXTENSIONS[value];
      if (!kind) throw new ArtifactSourceError(`archive ${JSON.stringify(value)} is no archive type: use false to keep the download as it is, or one of ${Object.keys(ARCHIVE_EXTENSIONS).join(', ')}`, 'options', 'archive');
      return kind;
    }
  }
  return archiveOfPath(path);
}

function zstd(field: ArtifactField): ArtifactSourceError {
  return new ArtifactSourceError(`zstd archives cannot be unpacked here (Node 20 has no zstd): set options { archive = false } to keep the file as it is`, field, field === 'options' ? 'archive' : undefined);
}

/** The archive kind a path's extension names (the longest match, as go-getter picks), if any. */
export function archiveOfPath(path: string): ArchiveKind | undefined {
  let best: string | undefined;
  for (const ext of [...Object.keys(ARCHIVE_EXTENSIONS), ...ZSTD_EXTENSIONS]) {
    if (path.endsWith(`.${ext}`) && (!best || ext.length > best.length)) best = ext;
  }
  if (best && ZSTD_EXTENSIONS.includes(best)) throw zstd('source');
  return best ? ARCHIVE_EXTENSIONS[best] : undefined;
}

/** go-getter's SourceDirSubdir: `https://host/a.tgz//dir` is `https://host/a.tgz` and subdir `dir`. */
function splitSubdir(source: string): [string, string | undefined] {
  const scheme = SCHEME.exec(source);
  const start = scheme ? scheme[0].length : 0;
  const queryAt = source.indexOf('?', start);
  const end = queryAt < 0 ? source.length : queryAt;
  const at = source.indexOf('//', start);
  if (at < 0 || at >= end) return [source, undefined];
  const subdir = source.slice(at + 2, end);
  return [source.slice(0, at) + source.slice(end), subdir === '' ? undefined : subdir];
}

/**
 * Reads a source and its options as go-getter does; throws an ArtifactSourceError naming the field for a
 * source allocrun cannot fetch (a cloud or VCS getter, a relative path, an unknown scheme) or a bad option.
 */
export function parseSource(source: string, options: Readonly<Record<string, string>> = {}): ParsedSource {
  if (source.trim() === '') throw new ArtifactSourceError('must not be empty: write the URL or the absolute path to fetch', 'source');
  let rest = source;
  const forced = FORCED.exec(source);
  let getter: string | undefined;
  if (forced && !SCHEME.test(source)) {
    getter = forced[1]!.toLowerCase();
    rest = forced[2]!;
    if (getter !== 'http' && getter !== 'https' && getter !== 'file') throw unsupported(getter);
  }
  const detected = detectedGetter(rest);
  if (detected) throw unsupported(detected);
  const [base, subdir] = splitSubdir(rest);
  const scheme = SCHEME.exec(base)?.[1]?.toLowerCase();
  let url: URL;
  if (scheme) {
    if (scheme !== 'http' && scheme !== 'https' && scheme !== 'file') throw unsupported(scheme);
    try {
      url = new URL(base);
    } catch {
      throw new ArtifactSourceError(`${JSON.stringify(source)} is not a valid URL`, 'source');
    }
  } else if (base.startsWith('/')) {
    url = new URL('file://');
    const q = base.indexOf('?');
    url.pathname = q < 0 ? base : base.slice(0, q);
    if (q >= 0) url.search = base.slice(q);
  } else {
    throw new ArtifactSourceError(`${JSON.stringify(source)} is neither a URL nor an absolute path: go-getter resolves a relative path against no directory, so write an http(s):// URL, an absolute path or a file:// URL`, 'source');
  }
  for (const [k, v] of Object.entries(options)) url.searchParams.set(k, v);
  const q = url.searchParams;
  const checksumValue = q.get('checksum');
  const archiveValue = q.get('archive') ?? undefined;
  const filenameValue = q.get('filename');
  for (const magic of ['checksum', 'archive', 'filename']) q.delete(magic);
  const checksum = checksumValue ? parseChecksum(checksumValue) : undefined;
  const path = decodeURIComponent(url.pathname);
  const archive = archiveOption(archiveValue, path);
  const filename = filenameValue || posix.basename(path);
  const kind: ParsedSource['getter'] = (getter ?? url.protocol.slice(0, -1)) === 'file' ? 'file' : 'http';
  if (kind === 'file') {
    if (url.host !== '' && url.host !== 'localhost') throw new ArtifactSourceError(`file:// URL ${JSON.stringify(source)} names host ${JSON.stringify(url.host)}: a local file is file:///absolute/path`, 'source');
    return { getter: 'file', path, filename, ...(checksum && { checksum }), ...(archive && { archive }), ...(subdir && { subdir }) };
  }
  return { getter: 'http', url, filename, ...(checksum && { checksum }), ...(archive && { archive }), ...(subdir && { subdir }) };
}

/**
 * The destination relative to the task dir, normalised; throws for an absolute path or one that leaves the
 * task dir (`../x`). Symlinks on the way are the fetcher's to check, on the real disk.
 */
export function relativeDestination(destination: string): string {
  if (destination.includes('\0')) throw new ArtifactSourceError('must not contain a NUL character', 'destination');
  if (posix.isAbsolute(destination) || /^[A-Za-z]:[\\/]/.test(destination)) {
    throw new ArtifactSourceError(`${JSON.stringify(destination)} is an absolute path: a destination is relative to the task directory (e.g. "local/" or "local/bin")`, 'destination');
  }
  const normal = posix.normalize(destination.replace(/\\/g, '/'));
  if (normal === '..' || normal.startsWith('../')) {
    throw new ArtifactSourceError(`${JSON.stringify(destination)} escapes the task directory: an artifact lands inside it (e.g. "local/")`, 'destination');
  }
  return normal;
}

/** Nomad's default destination: `local/` in any and dir mode, `local/<file name of the source>` in file mode. */
export function defaultDestination(mode: string | undefined, source: string): string {
  if (mode !== 'file') return 'local/';
  let name: string;
  try {
    name = parseSource(source).filename;
  } catch {
    name = posix.basename(source.split('?')[0] ?? source);
  }
  return posix.join('local', name || 'artifact');
}

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
