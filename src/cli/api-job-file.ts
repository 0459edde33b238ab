/** A job file read for the agent's API: what `job run` registers and `job plan` plans. */
import { readFile } from 'node:fs/promises';
import type { SpecProblem, VariableInputs } from '../jobspec/index.ts';
import { jobToApiJson, type Json } from '../api/job-json.ts';
import { loadJob, warningLines } from './job-file.ts';

/**
 * The job file as Nomad API JSON: sent as written when it already is, else converted from the checked jobspec.
 * Its warnings go to stderr unless `quiet` (`job plan` prints the agent's, as Nomad's does), and are returned.
 * `variables` are the values of an HCL file's input variables (var-flags.ts).
 */
export async function apiJobOf(file: string, quiet = false, variables?: VariableInputs): Promise<{ job: Json; warnings: SpecProblem[] }> {
  const { job, warnings } = await loadJob(file, variables);
  if (!quiet) process.stderr.write(warningLines(warnings));
  const text = await readFile(file, 'utf8');
  if (text.trimStart().startsWith('{')) {
    const value = JSON.parse(text) as Json;
    if (value['Job'] && typeof value['Job'] === 'object') return { job: value['Job'] as Json, warnings };
    if ('TaskGroups' in value) return { job: value, warnings };
  }
  return { job: jobToApiJson(job.name, job.body), warnings };
}
