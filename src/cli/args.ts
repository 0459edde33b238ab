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
  const all: OptionsConfig = { ...options, help: { type: 'boolean', short: 'h' } };
  const args = acceptGoStyleFlags(argv, all);
  try {
    parsed = parseArgs({ args, options: all, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageErrorOf(cmd, err, args, all);
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

/** A flag token's option name and inline value: `--data-dir=x` → data-dir, x; `-d` → the option with short d. */
function flagOf(token: string, options: OptionsConfig): { name: string; known: boolean; inline: boolean } | undefined {
  if (token === '--' || !token.startsWith('-') || token === '-') return undefined;
  if (token.startsWith('--')) {
    const eq = token.indexOf('=');
    const name = token.slice(2, eq < 0 ? undefined : eq);
    return { name: `--${name}`, known: name in options, inline: eq >= 0 };
  }
  const short = token[1]!;
  const long = Object.entries(options).find(([, o]) => o.short === short)?.[0];
  // `-var=x` or `-verbose` from a Nomad habit is one unknown Go-style flag, not an unknown `-v` cluster.
  if (long === undefined && token.length > 2) return { name: token.split('=')[0]!, known: false, inline: token.includes('=') };
  return { name: `-${short}`, known: long !== undefined, inline: token.length > 2 };
}

/**
 * parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes and long generic messages. The code says what
 * went wrong; which flag is found by reading `argv` against the options, not by parsing Node's wording.
 */
function usageErrorOf(cmd: CommandHelp, err: unknown, argv: readonly string[], options: OptionsConfig): Error {
  const e = err as NodeJS.ErrnoException;
  const end = argv.indexOf('--');
  const tokens = end < 0 ? argv : argv.slice(0, end);
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const unknown = tokens.map((t) => flagOf(t, options)).find((f) => f && !f.known);
      return new UsageError(`${cmd.name}: unknown flag ${unknown?.name ?? ''}`.trimEnd(), cmd.name);
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      for (let i = 0; i < tokens.length; i++) {
        const f = flagOf(tokens[i]!, options);
        if (!f?.known) continue;
        const long = f.name.startsWith('--') ? f.name.slice(2) : Object.entries(options).find(([, o]) => o.short === f.name[1])?.[0];
        const type = long ? options[long]?.type : undefined;
        if (type === 'boolean' && f.inline) return new UsageError(`${cmd.name}: flag ${f.name} takes no value`, cmd.name);
        const next = tokens[i + 1];
        if (type === 'string' && !f.inline && (next === undefined || next.startsWith('-'))) return new UsageError(`${cmd.name}: flag ${f.name} needs a value`, cmd.name);
      }
      return new UsageError(`${cmd.name}: a flag has a bad value`, cmd.name);
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(`${cmd.name}: unexpected argument`, cmd.name);
    default:
      return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * Nomad writes long flags with one dash (`-stderr`, `-detach`, `-address=...`): such a token naming a known
 * long option is read as `--name`, so Nomad users' habits work; single letters stay short flags.
 */
function acceptGoStyleFlags(argv: readonly string[], options: OptionsConfig): string[] {
  const end = argv.indexOf('--');
  return argv.map((token, i) => {
    if ((end >= 0 && i > end) || !/^-[a-z][\w-]+(=.*)?$/i.test(token)) return token;
    const name = token.slice(1).split('=')[0]!;
    return name in options ? `-${token}` : token;
  });
}

/** Reads an enum-valued flag, naming the allowed values when it is something else. */
export function oneOf<T extends string>(cmd: CommandHelp, flag: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${cmd.name}: --${flag} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`, cmd.name);
}
