/**
 * The one argument parser every command uses: node's `util.parseArgs` in strict mode, with `--help`/`-h`
 * added to each command and parseArgs' errors rewritten as UsageErrors that name the flag and the command.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.ts';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** What a command says about itself: shown by `--help` and in usage errors. */
export interface CommandHelp {
  /** The command word, e.g. `run`. */
  name: string;
  /** The synopsis after `allocrun`, e.g. `run <jobfile> [--group G]`. */
  usage: string;
  /** The rest of the help text: what it does, flags, examples. */
  details: string;
}

/** A command: its help and what it does with its own arguments; resolves with the exit status. */
export interface Command extends CommandHelp {
  run(argv: string[]): Promise<number>;
}

/** The values parseArgs gives back for `O`, with the added `help` flag. */
export type ParsedValues<O extends OptionsConfig> = ReturnType<typeof parseArgs<{ options: O & { help: { type: 'boolean'; short: 'h' } }; allowPositionals: true; strict: true }>>['values'];

/** Parsed arguments, or `undefined` when `--help` was asked for (the help is already printed). */
export interface Parsed<O extends OptionsConfig> {
  values: ParsedValues<O>;
  positionals: string[];
}

/** The `--help` text of a command. */
export function helpText(cmd: CommandHelp): string {
  return `Usage: allocrun ${cmd.usage}\n\n${cmd.details.trim()}\n`;
}

/**
 * Parses `argv` for `cmd` with `options` (plus `--help`); prints the help and returns undefined on
 * `--help`; throws a UsageError for unknown flags, missing values, or a positional count outside
 * `[min, max]`.
 */
export function parseCommand<O extends OptionsConfig>(
  cmd: CommandHelp,
  argv: string[],
  options: O,
  positionals: { min: number; max: number; names: string },
): Parsed<O> | undefined {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageErrorOf(cmd, err);
  }
  if (parsed.values.help) {
    process.stdout.write(helpText(cmd));
    return undefined;
  }
  const n = parsed.positionals.length;
  if (n < positionals.min) throw new UsageError(`${cmd.name}: missing ${positionals.names}`, cmd.name);
  if (n > positionals.max) {
    const extra = parsed.positionals.slice(positionals.max).map((p) => JSON.stringify(p)).join(' ');
    throw new UsageError(`${cmd.name}: unexpected argument ${extra}${positionals.max > 0 ? ` (takes ${positionals.names})` : ''}`, cmd.name);
  }
  return parsed as Parsed<O>;
}

/** parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes and long generic messages; say it in our words. */
function usageErrorOf(cmd: CommandHelp, err: unknown): Error {
  const e = err as NodeJS.ErrnoException;
  const msg = e.message ?? '';
  const flag = /--[\w-]+/.exec(msg)?.[0] ?? /'(-\w)/.exec(msg)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`${cmd.name}: unknown flag ${flag ?? e.message}`, cmd.name);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /argument missing/.test(e.message)
        ? new UsageError(`${cmd.name}: flag ${flag ?? ''} needs a value`, cmd.name)
        : new UsageError(`${cmd.name}: flag ${flag ?? ''} takes no value`, cmd.name);
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(`${cmd.name}: unexpected argument`, cmd.name);
    default:
      return err instanceof Error ? err : new Error(String(err));
  }
}

/** Reads an enum-valued flag, naming the allowed values when it is something else. */
export function oneOf<T extends string>(cmd: CommandHelp, flag: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${cmd.name}: --${flag} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`, cmd.name);
}
