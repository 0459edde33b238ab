/**
 * What `job run` sends beside the job as `Submission` (src/api/job-submissions.ts), as `nomad job run` does
 * (command/helpers.go JobGetter.Get): the file's text, its format, the `-var` flags as a map and the var files'
 * content run together, so the agent keeps the file the job was run from (`job inspect -hcl` prints it back).
 */
import { readFile } from 'node:fs/promises';
import { formatOfPath } from '../jobspec/index.ts';
import { isNomadApiJob } from '../jobspec/nomad-api.ts';
import type { SubmissionInput } from '../api/job-submissions.ts';

/** Nomad's extractVarFlags: `NAME=VALUE` split at the first `=`; a flag without one is the name, its value "". */
export function variableFlagsOf(vars: readonly string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (const v of vars) {
    const at = v.indexOf('=');
    if (at < 0) flags[v] = '';
    else flags[v.slice(0, at)] = v.slice(at + 1);
  }
  return flags;
}

/**
 * The submission of job file `file` run with `vars` and the var files' texts `varFiles` (var-flags.ts reads them):
 * - Nomad API JSON (`{ "Job": … }`, what `job inspect` prints, Nomad's `job run -json`): format `json`, no variables;
 * - HCL, and JSON in the job file's own structure (HCL's JSON syntax, which Nomad's HCL2 parser reads for a
 *   .json file): format `hcl2`, with the `-var` flags and each var file's content followed by a newline;
 * - YAML: none. Nomad has no YAML format, and the agent keeps only Nomad's.
 */
export async function submissionOfFile(file: string, vars: readonly string[], varFiles: readonly string[]): Promise<SubmissionInput | undefined> {
  const text = await readFile(file, 'utf8');
  const format = formatOfPath(file) ?? (text.trimStart().startsWith('{') ? 'json' : 'hcl');
  if (format === 'yaml') return undefined;
  if (format === 'json' && apiJson(text)) return { Source: text, Format: 'json', VariableFlags: null, Variables: '' };
  return { Source: text, Format: 'hcl2', VariableFlags: variableFlagsOf(vars), Variables: varFiles.map((t) => `${t}\n`).join('') };
}

function apiJson(text: string): boolean {
  try {
    return isNomadApiJob(JSON.parse(text));
  } catch {
    return false;
  }
}
