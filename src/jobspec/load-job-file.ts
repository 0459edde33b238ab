/**
 * Nomad job files to AllocSpecs: HCL (`.hcl`, `.nomad`, via HashiCorp's parser), JSON or YAML of the same
 * structure (or Nomad's API JSON). Every problem of a file is collected and thrown as one SpecError with
 * paths and line:column; warnings (Nomad features allocrun ignores) are returned beside the allocations.
 */
import { open } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import type { AllocSpec } from './types.ts';
import { parseHclSource, unescapeTemplates } from './hcl-source.ts';
import { hasVariableValues, resolveVariables, type VariableInputs } from './hcl-variables.ts';
import { jobToAllocs } from './job-to-allocs.ts';
import { jobKeysAt, jobSchema, type JobBody } from './jobspec-schema.ts';
import { parseJsonSource } from './json-source.ts';
import type { DriverChecks } from './driver-config.ts';
import { formatBytes, parseLimits, type ParseLimits } from './limits.ts';
import { fromNomadApi, isNomadApiJob } from './nomad-api.ts';
import { normalizeJobFile, type Report } from './normalize.ts';
import { checkJobRules } from './rules.ts';
import type { ParsedSource } from './source.ts';
import { SpecError, formatPath, sortProblems, type PathSegment, type SpecProblem } from './spec-error.ts';
import { parseYamlSource } from './yaml-source.ts';
import { issueToProblems, type RawProblem } from './zod-problems.ts';

/** The syntaxes a job file can be written in. */
export type JobFileFormat = 'hcl' | 'json' | 'yaml';

/** How to read job text: its syntax, the file name to put in problems, and limits other than the defaults. */
export interface ParseJobOptions extends Partial<ParseLimits> {
  format: JobFileFormat;
  file?: string;
  /** The drivers the job will run on, with their config checks; absent: driver names and configs are not checked. */
  drivers?: DriverChecks;
  /** Values for the HCL file's input variables (`-var`, `-var-file`, `NOMAD_VAR_*`); absent: defaults only. */
  variables?: VariableInputs;
  /**
   * The directory HCL's file functions (`file()`, `fileset()`, ...) read from: the job file's. Absent (a job
   * given as text, as to /v1/jobs/parse): those functions are refused, as Nomad refuses them there.
   */
  baseDir?: string;
}

/** How to read a job file: limits other than the defaults, and the syntax when the extension does not say. */
export interface LoadJobOptions extends Partial<ParseLimits> {
  format?: JobFileFormat;
  /** As ParseJobOptions.drivers. */
  drivers?: DriverChecks;
  /** As ParseJobOptions.variables. */
  variables?: VariableInputs;
}

/** A loaded job: its allocations, and warnings about Nomad features it uses that allocrun ignores. */
export interface LoadedJob {
  allocs: AllocSpec[];
  warnings: SpecProblem[];
  /** The checked job itself: its name and body (durations in ms), for callers that need more than allocations. */
  job: { name: string; body: JobBody };
}

const EXTENSIONS: Record<string, JobFileFormat> = { '.hcl': 'hcl', '.nomad': 'hcl', '.json': 'json', '.yaml': 'yaml', '.yml': 'yaml' };

/** The format a file name implies, or undefined for an unknown extension. */
export function formatOfPath(path: string): JobFileFormat | undefined {
  return EXTENSIONS[extname(path).toLowerCase()];
}

/**
 * Reads a job file into one AllocSpec per group instance; throws a SpecError listing every problem.
 * Read errors (ENOENT, EISDIR, ...) are thrown as they are. An unknown extension is read as JSON when the
 * text starts with `{`, otherwise as HCL (Nomad's own default).
 */
export async function loadJobFile(path: string, options: LoadJobOptions = {}): Promise<AllocSpec[]> {
  return (await loadJob(path, options)).allocs;
}

/** Like loadJobFile, also returning warnings. */
export async function loadJob(path: string, options: LoadJobOptions = {}): Promise<LoadedJob> {
  const limits = parseLimits(options);
  const text = await readCapped(path, limits.maxBytes);
  const format = options.format ?? formatOfPath(path) ?? (text.trimStart().startsWith('{') ? 'json' : 'hcl');
  return parseJob(text, { ...limits, format, file: path, baseDir: dirname(resolve(path)) });
}

/**
 * The file's text, refusing (as a SpecError) one larger than `maxBytes` without reading it all: a regular
 * file by its size, anything else (a pipe, a device) once it has given more.
 */
async function readCapped(path: string, maxBytes: number): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const stat = await handle.stat();
    if (stat.isFile() && stat.size > maxBytes) throw tooLarge(stat.size, maxBytes, path);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes) throw tooLarge(undefined, maxBytes, path);
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    await handle.close();
  }
}

function tooLarge(size: number | undefined, maxBytes: number, file: string | undefined): SpecError {
  const what = size === undefined ? 'has more bytes than' : `has ${size} bytes, more than`;
  return new SpecError([{ path: '', message: `the job file ${what} the limit of ${maxBytes} (${formatBytes(maxBytes)})`, ...at(file) }]);
}

/** The top of the file: where a problem goes that has no better place. */
function at(file: string | undefined): { file?: string; line: number; column: number } {
  return { ...(file !== undefined && { file }), line: 1, column: 1 };
}

/** Parses job text in the given format into AllocSpecs; throws a SpecError listing every problem. */
export async function parseJobText(text: string, options: ParseJobOptions): Promise<AllocSpec[]> {
  return (await parseJob(text, options)).allocs;
}

/**
 * Like parseJobText, also returning warnings. Every problem has a line and column (1:1 when it belongs to
 * no one place), and the file name when one was given.
 */
export async function parseJob(text: string, options: ParseJobOptions): Promise<LoadedJob> {
  try {
    return await parseWithinLimits(text, options);
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    throw new SpecError(err.problems.map((p) => withLocation(p, options.file)));
  }
}

async function parseWithinLimits(text: string, options: ParseJobOptions): Promise<LoadedJob> {
  const { format, file } = options;
  const limits = parseLimits(options);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxBytes) throw tooLarge(bytes, limits.maxBytes, file);
  // A BOM is an editor's artefact, not content; none of the three parsers wants it.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const source = await parseSource(body, format, file, limits);
  if (format === 'hcl') {
    // Variables are evaluated before HCL's `$${` escapes are removed, so an escaped `$${var.x}` stays literal.
    source.value = unescapeTemplates(await resolveVariables(source.value, options.variables ?? {}, { file, ...(options.baseDir !== undefined && { baseDir: options.baseDir }), text: body, lines: source.lines, locate: source.locate }, limits));
  } else if (hasVariableValues(options.variables)) {
    throw new SpecError([{ path: '', message: `-var and -var-file give values to the input variables of HCL job files; this is a ${format.toUpperCase()} job file`, ...at(file) }]);
  }

  let value = source.value;
  let mapPath = (path: readonly PathSegment[]): readonly PathSegment[] => path;
  if (format !== 'hcl' && isNomadApiJob(value)) {
    const translated = fromNomadApi(value as Record<string, unknown>);
    value = translated.value;
    mapPath = translated.mapPath;
  }

  const report: Report = { problems: [], warnings: [] };
  const job = normalizeJobFile(value, report);
  let parsed: JobBody | undefined;
  if (job) {
    checkJobRules(job, report, options.drivers);
    const result = jobSchema.safeParse(job.body, { reportInput: true });
    if (result.success) parsed = result.data;
    else for (const issue of result.error.issues) report.problems.push(...issueToProblems(issue, ['job', job.name], jobKeysAt));
  }

  const place = (raw: RawProblem): SpecProblem => {
    const offset = source.locate(mapPath(raw.path)) ?? 0;
    return { path: formatPath(raw.path), message: raw.message, ...(file !== undefined && { file }), ...source.lines.at(offset) };
  };
  if (report.problems.length > 0 || !job || !parsed) throw new SpecError(dedupe(report.problems.map(place)));
  return { allocs: jobToAllocs(job.name, parsed), warnings: sortProblems(report.warnings.map(place)), job: { name: job.name, body: parsed } };
}

/** A problem with the file name (when there is one) and a line:column, 1:1 when it had none. */
function withLocation(problem: SpecProblem, file: string | undefined): SpecProblem {
  const { file: own, line, column, ...rest } = problem;
  return { ...rest, ...at(own ?? file), ...(line !== undefined && { line, column: column ?? 1 }) };
}

function parseSource(text: string, format: JobFileFormat, file: string | undefined, limits: ParseLimits): ParsedSource | Promise<ParsedSource> {
  switch (format) {
    case 'hcl':
      return parseHclSource(text, file, limits, { keepEscapes: true });
    case 'json':
      return parseJsonSource(text, file, limits.maxDepth);
    case 'yaml':
      return parseYamlSource(text, file, limits.maxDepth);
    default:
      throw new SpecError([{ path: '', message: `unknown job file format ${JSON.stringify(format)}: use "hcl", "json" or "yaml"`, ...at(file) }]);
  }
}

/** The same problem reached twice (by a rule and by the schema) is reported once. */
function dedupe(problems: SpecProblem[]): SpecProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}\0${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
