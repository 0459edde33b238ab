/**
 * A task's `artifact` blocks in the job loader: normalised to a list (HCL repeats the block, a JSON or YAML
 * file may write one object), checked as go-getter would read them (sources allocrun can fetch, checksums,
 * archive options, a destination inside the task dir, a mode the source can meet), and turned into the
 * runner's ArtifactSpec. Values holding `${...}` are checked by the artifact hook once interpolated.
 */
import type { ArtifactBody } from './jobspec-schema.ts';
import type { ArtifactSpec } from './types.ts';
import { ArtifactSourceError, HEADER_NAME, SINGLE_FILE_ARCHIVES, defaultDestination, parseSource, relativeDestination } from './artifact-source.ts';
import type { PathSegment } from './spec-error.ts';
import type { RawProblem } from './zod-problems.ts';

interface Report {
  problems: RawProblem[];
  warnings: RawProblem[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `artifact` as a list of bodies: one object becomes a list of one; inside each, `options` and `headers`
 * written as hcl2json's list of one body are unwrapped (twice is reported), nulls dropped.
 */
export function normalizeArtifacts(value: unknown, path: PathSegment[], report: Report): unknown {
  const list = isObject(value) ? [value] : value;
  if (!Array.isArray(list)) return value; // the schema says what it expected
  return list.map((item, i) => {
    if (!isObject(item)) return item;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(item)) {
      if (inner === null) continue;
      if (key === '__proto__') {
        report.problems.push({ path: [...path, i, key], message: 'the key "__proto__" is reserved' });
        continue;
      }
      if ((key === 'options' || key === 'headers') && Array.isArray(inner) && inner.length > 0 && inner.every(isObject)) {
        if (inner.length > 1) report.problems.push({ path: [...path, i, key, 1], message: `"${key}" is defined ${inner.length} times; it may appear only once` });
        out[key] = Object.fromEntries(Object.entries(inner[0] as Record<string, unknown>).filter(([, v]) => v !== null));
      } else {
        out[key] = inner;
      }
    }
    return out;
  });
}

const interpolated = (v: unknown): boolean => typeof v === 'string' && v.includes('${');

/** A string map as far as it is one (the schema reports the rest). */
function strings(v: unknown): Record<string, string> {
  if (!isObject(v)) return {};
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') out[k] = String(x);
  return out;
}

/** Checks every artifact block of a task (`path` is the task's), adding problems naming the field at fault. */
export function checkArtifacts(task: Record<string, unknown>, path: PathSegment[], report: Report): void {
  const list = task['artifact'];
  if (!Array.isArray(list)) return;
  list.forEach((artifact, i) => {
    if (isObject(artifact)) checkArtifact(artifact, [...path, 'artifact', i], report);
  });
}

function checkArtifact(a: Record<string, unknown>, at: PathSegment[], report: Report): void {
  const problem = (err: ArtifactSourceError): void => {
    report.problems.push({ path: [...at, err.field, ...(err.key !== undefined ? [err.key] : [])], message: err.message });
  };
  const options = strings(a['options']);
  const source = a['source'];
  const mode = a['mode'];
  if (typeof source === 'string' && source !== '' && !interpolated(source) && !Object.values(options).some(interpolated)) {
    try {
      const parsed = parseSource(source, options);
      if (parsed.archive && SINGLE_FILE_ARCHIVES.has(parsed.archive) && mode !== 'file') {
        report.problems.push({ path: [...at, 'mode'], message: `a .${parsed.archive} file unpacks to one file, which go-getter writes only in mode = "file" (with a file destination); or set options { archive = false } to keep it packed` });
      }
      if (mode === 'dir' && parsed.getter === 'http' && !parsed.archive) {
        report.problems.push({ path: [...at, 'mode'], message: `mode = "dir" needs an archive to unpack (an http(s) download of a plain file has no directory): use mode = "any" or "file"` });
      }
      if (parsed.subdir !== undefined && parsed.getter === 'http' && !parsed.archive) {
        report.problems.push({ path: [...at, 'source'], message: `"//${parsed.subdir}" picks a directory of an archive, but this source is no archive (by its extension or options { archive })` });
      }
    } catch (err) {
      if (!(err instanceof ArtifactSourceError)) throw err;
      problem(err);
    }
  }
  const destination = a['destination'];
  if (typeof destination === 'string' && destination !== '' && !interpolated(destination)) {
    try {
      relativeDestination(destination);
    } catch (err) {
      if (!(err instanceof ArtifactSourceError)) throw err;
      problem(err);
    }
  }
  if (isObject(a['headers'])) {
    for (const [name, value] of Object.entries(a['headers'])) {
      if (!HEADER_NAME.test(name)) report.problems.push({ path: [...at, 'headers', name], message: `${JSON.stringify(name)} is not an HTTP header name (letters, digits and !#$%&'*+.^_\`|~- only)` });
      else if (typeof value === 'string' && /[\r\n\0]/.test(value)) report.problems.push({ path: [...at, 'headers', name], message: 'a header value must not contain line breaks or NUL' });
    }
  }
}

/** The runner's ArtifactSpec of a checked block: Nomad's defaults filled (mode `any`, destination by mode). */
export function artifactSpecOf(a: ArtifactBody): ArtifactSpec {
  const mode = a.mode ?? 'any';
  return {
    source: a.source,
    destination: a.destination ?? defaultDestination(mode, a.source),
    mode,
    ...(a.options && Object.keys(a.options).length > 0 && { options: a.options }),
    ...(a.headers && Object.keys(a.headers).length > 0 && { headers: a.headers }),
    ...(a.insecure && { insecure: true }),
    ...(a.chown && { chown: true }),
  };
}
