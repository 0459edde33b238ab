/**
 * Nomad's `-var NAME=VALUE` and `-var-file FILE` flags (and `NOMAD_VAR_<name>` in the environment): values for
 * the input variables of an HCL job file, shared by every command that loads one (`run`, `validate`,
 * `job run`). The files are read here; src/jobspec/hcl-variables.ts parses and applies them.
 */
import { readFile } from 'node:fs/promises';
import type { VariableInputs } from '../jobspec/index.ts';
import { CliError } from './errors.ts';

/** The flags, for parseCommand's options. */
export const VAR_FLAGS = {
  var: { type: 'string', multiple: true },
  'var-file': { type: 'string', multiple: true },
} as const;

/** The flags' lines for a command's help. */
export const VAR_FLAGS_HELP = `  -var NAME=VALUE     set an input variable of an HCL job file (repeatable)
  -var-file F         read variable values from F: HCL name = value lines, or JSON
                      (repeatable); NOMAD_VAR_<name> in the environment sets one too.
                      The last value wins, in Nomad's order: the default,
                      NOMAD_VAR_<name>, each -var-file, each -var`;

/** The inputs the flags and the environment give; a var file that cannot be read is a CliError naming it. */
export async function variableInputsOf(values: { var?: string[]; 'var-file'?: string[] }, env: NodeJS.ProcessEnv = process.env): Promise<VariableInputs> {
  const files = await Promise.all((values['var-file'] ?? []).map(async (file) => ({ file, text: await readVarFile(file) })));
  return { args: values.var ?? [], files, env };
}

async function readVarFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new CliError(`cannot read var file ${file}: ${why}`, 'ErrVarFile');
  }
}
