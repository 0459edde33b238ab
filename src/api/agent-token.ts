/**
 * The agent's token: where it comes from, what is refused, and how a request's token is compared.
 *
 * Sources, first found wins: `--token-file FILE`, `--token T` (the two flags together are refused), then
 * `$ALLOCRUN_TOKEN_FILE`, `$ALLOCRUN_TOKEN` (the two together are refused), then the data dir's
 * `agent-token`, generated (256 random bits, hex) when it does not exist. A token is refused when it is
 * empty or shorter than MIN_TOKEN_LENGTH characters.
 *
 * Permissions, one rule per kind:
 * - a token file (given, or the data dir's) that group or others can read or write, or that another user
 *   owns, is refused, never tightened: others may already have read it, so the fix is the operator's
 *   (`chmod 600 FILE`, or a new token);
 * - the data dir is refused on the same terms (`chmod 700 D`): anyone who can enter it reaches the socket
 *   in the moment before it is made 0600, and anyone who can write it can plant files the agent reads;
 * - the socket is the agent's own, made fresh on every start and chmod'ed to 0600, then checked.
 *
 * Requests are compared in constant time over SHA-256 digests (equal lengths whatever was sent), so
 * neither the token's length nor a matching prefix shows in the timing, and a prefix never passes.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, fstatSync, lstatSync, openSync, readFileSync, statSync, writeSync, constants as fsConstants, type Stats } from 'node:fs';
import { join } from 'node:path';

/** The token file's name in the data dir. */
export const TOKEN_NAME = 'agent-token';
/** The fewest characters a token may have: 16 hex digits are 64 bits, the least worth guessing against. */
export const MIN_TOKEN_LENGTH = 16;
/** Random bytes in a generated token: 256 bits, written as 64 hex digits. */
const GENERATED_BYTES = 32;

/** A token or a permission the agent refuses; the message says what to do. */
export class AgentTokenError extends Error {
  readonly code = 'ErrAgentToken';
  constructor(message: string) {
    super(message);
    this.name = 'AgentTokenError';
  }
}

/** Where a token was given: a value (flag or variable) or a file, and the words that name its source. */
export type TokenSource = { value: string; from: string } | { file: string; from: string };

/** The agent's resolved token, and what to tell the operator about where it is. */
export interface ResolvedToken {
  token: string;
  /** The file it was read from or written to, when there is one. */
  file?: string;
  /** True when it was generated on this start (and written to `file`). */
  generated: boolean;
  /** True when the operator gave it (a flag or variable), false for the data dir's own file. */
  given: boolean;
  /** For the agent's start message: `token from --token-file /etc/allocrun/token`. */
  description: string;
}

/**
 * The token source the flags and environment name, or undefined for none (the data dir's file then).
 * Throws AgentTokenError when both a value and a file are given at the same level.
 */
export function tokenSourceOf(flags: { token?: string; tokenFile?: string }, env: NodeJS.ProcessEnv = process.env): TokenSource | undefined {
  if (flags.token !== undefined && flags.tokenFile !== undefined) throw new AgentTokenError('give one of --token and --token-file, not both');
  if (flags.tokenFile !== undefined) return { file: flags.tokenFile, from: '--token-file' };
  if (flags.token !== undefined) return { value: flags.token, from: '--token' };
  if (env.ALLOCRUN_TOKEN_FILE !== undefined && env.ALLOCRUN_TOKEN !== undefined) {
    throw new AgentTokenError('both ALLOCRUN_TOKEN_FILE and ALLOCRUN_TOKEN are set; unset one of them');
  }
  if (env.ALLOCRUN_TOKEN_FILE !== undefined) return { file: env.ALLOCRUN_TOKEN_FILE, from: 'ALLOCRUN_TOKEN_FILE' };
  if (env.ALLOCRUN_TOKEN !== undefined) return { value: env.ALLOCRUN_TOKEN, from: 'ALLOCRUN_TOKEN' };
  return undefined;
}

/** `token` when it is long enough; otherwise an AgentTokenError naming `from` (a flag, variable or file). */
export function checkTokenStrength(token: string, from: string): string {
  if (token === '') throw new AgentTokenError(`${from} is empty: an empty token would let anyone in; ${HOW_TO_MAKE}`);
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new AgentTokenError(`${from} is ${token.length} character${token.length === 1 ? '' : 's'} long; a token needs at least ${MIN_TOKEN_LENGTH}; ${HOW_TO_MAKE}`);
  }
  if (/\s/.test(token)) throw new AgentTokenError(`${from} contains whitespace, which an X-Nomad-Token header cannot carry; ${HOW_TO_MAKE}`);
  return token;
}

const HOW_TO_MAKE = `make one with 'openssl rand -hex 32 > FILE && chmod 600 FILE' and pass --token-file FILE`;

/** A new random token: 256 bits as 64 hex digits. */
export function generateToken(): string {
  return randomBytes(GENERATED_BYTES).toString('hex');
}

/** Why `st` is open to others (`group and others can read it`), or undefined when it is private to its owner. */
function openTo(st: Stats): string | undefined {
  const who = [st.mode & 0o070 ? 'its group' : '', st.mode & 0o007 ? 'others' : ''].filter(Boolean).join(' and ');
  if (!who) return undefined;
  const can = [st.mode & 0o044 ? 'read' : '', st.mode & 0o022 ? 'write' : '', st.isDirectory() && st.mode & 0o011 ? 'enter' : ''].filter(Boolean);
  return `${who} can ${can.length > 0 ? can.join(' and ') : 'use'} it (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`;
}

/** The agent's uid, or undefined where there is none (Windows). */
const myUid = (): number | undefined => process.getuid?.();

/** Refuses a token file others can reach, or one another user owns (they could change it). */
export function checkTokenFileStats(st: Stats, file: string): void {
  if (!st.isFile()) throw new AgentTokenError(`token file ${file} is not a regular file`);
  const uid = myUid();
  if (uid !== undefined && st.uid !== uid) {
    throw new AgentTokenError(`token file ${file} is owned by uid ${st.uid}, not by the agent's user (uid ${uid}): another user could change it; chown it to the agent's user and chmod 600 ${file}`);
  }
  const open = openTo(st);
  if (open) throw new AgentTokenError(`token file ${file} is not private: ${open}; run 'chmod 600 ${file}' and, since others may have read it, consider making a new token`);
}

/** Refuses a data dir others can reach, or one another user owns (section comment). */
export function checkDataDirPrivate(dir: string): void {
  const st = statSync(dir);
  if (!st.isDirectory()) throw new AgentTokenError(`the data dir ${dir} is not a directory`);
  const uid = myUid();
  if (uid !== undefined && st.uid !== uid) {
    throw new AgentTokenError(`the data dir ${dir} is owned by uid ${st.uid}, not by the agent's user (uid ${uid}): chown it to the agent's user, or choose another --data-dir`);
  }
  // Others may pass through it (0711: a task running as another user reaches its own task dir by path)
  // but never list or change it: everything in it is the agent's alone, each file 0600.
  if (st.mode & 0o066) {
    const open = openTo(st);
    throw new AgentTokenError(`the data dir ${dir} is not private: ${open}; its socket and token must be the agent's alone: run 'chmod 700 ${dir}'`);
  }
}

/** Refuses a socket others can reach (after the agent made it 0600: a filesystem that ignores chmod). */
export function checkSocketPrivate(path: string): void {
  const open = openTo(lstatSync(path));
  if (open) throw new AgentTokenError(`the agent's socket ${path} is not private: ${open}, even after chmod 600; put the data dir on a filesystem that keeps modes`);
}

/**
 * Reads a token file after checking it is a private regular file of the agent's user; the text, trimmed.
 * O_NOFOLLOW: the file itself is checked, never what a symlink in its place points at.
 */
function readPrivateTokenFile(file: string, from: string): string {
  if (file === '') throw new AgentTokenError(`${from} is empty: name the token file`);
  let fd: number;
  try {
    fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new AgentTokenError(`${from} ${file}: no such file`);
    if (code === 'ELOOP') throw new AgentTokenError(`${from} ${file} is a symbolic link; name the file itself`);
    throw new AgentTokenError(`${from} ${file}: cannot read it (${code ?? (err as Error).message})`);
  }
  try {
    checkTokenFileStats(fstatSync(fd), file);
    return readFileSync(fd, 'utf8').trim();
  } finally {
    closeSync(fd);
  }
}

/** Reads a token file after checking it is private and the agent's; the token is its text, trimmed. */
export function readTokenFile(file: string, from: string): string {
  return checkTokenStrength(readPrivateTokenFile(file, from), `the token in ${file} (${from})`);
}

/**
 * The token the agent requires: from `source` when given, else the data dir's `agent-token`, read when it
 * exists (and is private and strong enough) or generated and written 0600 (never over an existing file).
 */
export function resolveAgentToken(source: TokenSource | undefined, dataDir: string): ResolvedToken {
  if (source && 'value' in source) return { token: checkTokenStrength(source.value, source.from), generated: false, given: true, description: `token given by ${source.from}` };
  if (source) return { token: readTokenFile(source.file, source.from), file: source.file, generated: false, given: true, description: `token from ${source.from} ${source.file}` };
  const file = join(dataDir, TOKEN_NAME);
  const token = generateToken();
  let fd: number;
  try {
    // O_EXCL: an existing file (or a symlink planted in its place) is never written through.
    fd = openSync(file, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { token: readTokenFile(file, 'the data dir\'s token file'), file, generated: false, given: false, description: `token in ${file}` };
  }
  try {
    writeSync(fd, `${token}\n`);
  } finally {
    closeSync(fd);
  }
  return { token, file, generated: true, given: false, description: `new token written to ${file}` };
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** True when a request's `X-Nomad-Token` is the token; constant time, whatever its length (module comment). */
export function tokenMatches(given: unknown, token: string): boolean {
  if (typeof given !== 'string') return false;
  // Digests are always 32 bytes, so timingSafeEqual compares in full whatever length was sent.
  return timingSafeEqual(digest(given), digest(token));
}

/** The warning `--token` on a command line deserves: every local user can read it in /proc. */
export const TOKEN_ON_COMMAND_LINE_WARNING =
  'warning: --token is readable by every local user (ps, /proc/<pid>/cmdline); prefer --token-file FILE (mode 0600) or ALLOCRUN_TOKEN_FILE';

/**
 * The token a client sends to an agent's TCP address: `--token`, then `--token-file`, then
 * `$ALLOCRUN_TOKEN`, `$ALLOCRUN_TOKEN_FILE`, `$NOMAD_TOKEN` (Nomad's CLI variable), then the `agent-token`
 * of `dataDir` when one is named and holds the file. Token files are checked as the agent checks them.
 */
export function clientToken(flags: { token?: string; tokenFile?: string }, dataDir: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (flags.token) return flags.token;
  if (flags.tokenFile) return readClientTokenFile(flags.tokenFile, '--token-file');
  if (env.ALLOCRUN_TOKEN) return env.ALLOCRUN_TOKEN;
  if (env.ALLOCRUN_TOKEN_FILE) return readClientTokenFile(env.ALLOCRUN_TOKEN_FILE, 'ALLOCRUN_TOKEN_FILE');
  if (env.NOMAD_TOKEN) return env.NOMAD_TOKEN;
  if (dataDir !== undefined) {
    const file = join(dataDir, TOKEN_NAME);
    try {
      statSync(file);
    } catch {
      return undefined;
    }
    return readClientTokenFile(file, `the token file of data dir ${dataDir}`);
  }
  return undefined;
}

/** A client reads a token file as the agent does, but does not judge the token's strength: the agent does. */
function readClientTokenFile(file: string, from: string): string {
  const token = readPrivateTokenFile(file, from);
  if (token === '') throw new AgentTokenError(`${from} ${file} is empty`);
  return token;
}
