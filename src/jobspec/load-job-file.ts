/**
 * Nomad job files to AllocSpecs: HCL (`.hcl`, `.nomad`, via HashiCorp's parser), JSON or YAML of the same
 * structure (or Nomad's API JSON). Every problem of a file is collected and thrown as one SpecError with
 * paths and line:column; warnings (Nomad features allocrun ignores) are returned beside the allocations.
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { AllocSpec } from './types.ts';
import { parseHclSource } from './hcl-source.ts';
import { jobToAllocs } from './job-to-allocs.ts';
import { jobKeysAt, jobSchema, type JobBody } from './jobspec-schema.ts';
import { parseJsonSource } from './json-source.ts';
import { fromNomadApi, isNomadApiJob } from './nomad-api.ts';
import { normalizeJobFile, type Report } from './normalize.ts';
import { checkJobRules } from './rules.ts';
import type { ParsedSource } from './source.ts';
import { SpecError, formatPath, sortProblems, type PathSegment, type SpecProblem } from './spec-error.ts';
import { parseYamlSource } from './yaml-source.ts';
import { issueToProblems, type RawProblem } from './zod-problems.ts';

/** The syntaxes a job file can be written in. */
export type JobFileFormat = 'hcl' | 'json' | 'yaml';

/** How to read job text: its syntax, and the file name to put in problems. */
export interface ParseJobOptions {
  format: JobFileFormat;
  file?: string;
}

/** A loaded job: its allocations, and warnings about Nomad features it uses that allocrun ignores. */
export interface LoadedJob {
  allocs: AllocSpec[];
  warnings: SpecProblem[];
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
export async function loadJobFile(path: string): Promise<AllocSpec[]> {
  return (await loadJob(path)).allocs;
}

/** Like loadJobFile, also returning warnings. */
export async function loadJob(path: string): Promise<LoadedJob> {
  const text = await readFile(path, 'utf8');
  const format = formatOfPath(path) ?? (text.trimStart().startsWith('{') ? 'json' : 'hcl');
  return parseJob(text, { format, file: path });
}

/** Parses job text in the given format into AllocSpecs; throws a SpecError listing every problem. */
export async function parseJobText(text: string, options: ParseJobOptions): Promise<AllocSpec[]> {
  return (await parseJob(text, options)).allocs;
}

/** Like parseJobText, also returning warnings. */
export async function parseJob(text: string, options: ParseJobOptions): Promise<LoadedJob> {
  const { format, file } = options;
  // A BOM is an editor's artefact, not content; none of the three parsers wants it.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const source = await parseSource(body, format, file);

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
    checkJobRules(job, report);
    const result = jobSchema.safeParse(job.body, { reportInput: true });
    if (result.success) parsed = result.data;
    else for (const issue of result.error.issues) report.problems.push(...issueToProblems(issue, ['job', job.name], jobKeysAt));
  }

  const place = (raw: RawProblem): SpecProblem => {
    const offset = source.locate(mapPath(raw.path));
    return { path: formatPath(raw.path), message: raw.message, ...(file !== undefined && { file }), ...(offset !== undefined && source.lines.at(offset)) };
  };
  if (report.problems.length > 0 || !job || !parsed) throw new SpecError(dedupe(report.problems.map(place)));
  return { allocs: jobToAllocs(job.name, parsed), warnings: sortProblems(report.warnings.map(place)) };
}

function parseSource(text: string, format: JobFileFormat, file?: string): ParsedSource | Promise<ParsedSource> {
  switch (format) {
    case 'hcl':
      return parseHclSource(text, file);
    case 'json':
      return parseJsonSource(text, file);
    case 'yaml':
      return parseYamlSource(text, file);
    default:
      throw new SpecError([{ path: '', message: `unknown job file format ${JSON.stringify(format)}: use "hcl", "json" or "yaml"`, ...(file !== undefined && { file }) }]);
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
