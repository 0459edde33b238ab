/**
 * The agent's token rules (src/api/agent-token.ts), on real files: which source wins, what is refused and
 * with which fix, what is generated, and that the comparison lets no prefix or near miss through.
 */
import { chmod, chown, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AgentTokenError,
  checkDataDirPrivate,
  checkTokenStrength,
  clientToken,
  generateToken,
  MIN_TOKEN_LENGTH,
  readTokenFile,
  resolveAgentToken,
  tokenMatches,
  tokenSourceOf,
} from '../../src/api/agent-token.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function privateDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'allocrun-token-'));
  dirs.push(d);
  return d;
}
async function tokenFile(dir: string, text: string, mode = 0o600): Promise<string> {
  const file = join(dir, `t-${Math.random().toString(36).slice(2)}`);
  await writeFile(file, text, { mode });
  await chmod(file, mode);
  return file;
}
const GOOD = 'a'.repeat(MIN_TOKEN_LENGTH);

describe('token strength', () => {
  it.each([
    ['', '--token is empty'],
    ['x', '--token is 1 character long; a token needs at least 16'],
    ['a'.repeat(15), '--token is 15 characters long; a token needs at least 16'],
    ['abcdefgh ijklmnop', '--token contains whitespace'],
  ])('refuses %j, naming where it came from', (token, message) => {
    expect(() => checkTokenStrength(token, '--token')).toThrow(message);
    expect(() => checkTokenStrength(token, '--token')).toThrow(AgentTokenError);
  });

  it('accepts 16 characters', () => {
    expect(checkTokenStrength(GOOD, '--token')).toBe(GOOD);
  });

  it('generates 256 random bits as 64 hex digits, different each time', () => {
    const a = generateToken();
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(generateToken()).not.toBe(a);
  });
});

describe('token sources', () => {
  it('prefers the flags over the environment, and a file over a value at the same level is an error', () => {
    const env = { ALLOCRUN_TOKEN: 'env-value', ALLOCRUN_TOKEN_FILE: undefined };
    expect(tokenSourceOf({ tokenFile: '/f' }, env)).toEqual({ file: '/f', from: '--token-file' });
    expect(tokenSourceOf({ token: 'v' }, env)).toEqual({ value: 'v', from: '--token' });
    expect(tokenSourceOf({}, env)).toEqual({ value: 'env-value', from: 'ALLOCRUN_TOKEN' });
    expect(tokenSourceOf({}, { ALLOCRUN_TOKEN_FILE: '/g' })).toEqual({ file: '/g', from: 'ALLOCRUN_TOKEN_FILE' });
    expect(tokenSourceOf({}, {})).toBeUndefined();
    expect(() => tokenSourceOf({ token: 'v', tokenFile: '/f' }, {})).toThrow('give one of --token and --token-file, not both');
    expect(() => tokenSourceOf({}, { ALLOCRUN_TOKEN: 'v', ALLOCRUN_TOKEN_FILE: '/f' })).toThrow('both ALLOCRUN_TOKEN_FILE and ALLOCRUN_TOKEN are set');
  });

  it('keeps an empty ALLOCRUN_TOKEN as a source, so it is refused rather than skipped', () => {
    const source = tokenSourceOf({}, { ALLOCRUN_TOKEN: '' });
    expect(source).toEqual({ value: '', from: 'ALLOCRUN_TOKEN' });
    expect(() => resolveAgentToken(source, '/nonexistent')).toThrow('ALLOCRUN_TOKEN is empty');
  });
});

describe('token files', () => {
  it('reads a private token file, trimmed', async () => {
    const dir = await privateDir();
    const file = await tokenFile(dir, `${GOOD}\n`);
    expect(readTokenFile(file, '--token-file')).toBe(GOOD);
    expect(resolveAgentToken({ file, from: '--token-file' }, dir)).toMatchObject({ token: GOOD, file, generated: false, given: true, description: `token from --token-file ${file}` });
  });

  it.each([0o644, 0o640, 0o604, 0o620, 0o602])('refuses a token file at mode %s with the chmod that fixes it', async (mode) => {
    const dir = await privateDir();
    const file = await tokenFile(dir, GOOD, mode);
    expect(() => readTokenFile(file, '--token-file')).toThrow(`token file ${file} is not private`);
    expect(() => readTokenFile(file, '--token-file')).toThrow(`run 'chmod 600 ${file}'`);
  });

  it('refuses an empty or short token file, a missing one, and a symlink in its place', async () => {
    const dir = await privateDir();
    const empty = await tokenFile(dir, '\n');
    const short = await tokenFile(dir, 'short');
    expect(() => readTokenFile(empty, '--token-file')).toThrow(/the token in .* \(--token-file\) is empty/);
    expect(() => readTokenFile(short, '--token-file')).toThrow('5 characters long; a token needs at least 16');
    expect(() => readTokenFile(join(dir, 'missing'), '--token-file')).toThrow('no such file');
    expect(() => readTokenFile('', 'ALLOCRUN_TOKEN_FILE')).toThrow('ALLOCRUN_TOKEN_FILE is empty: name the token file');
    const link = join(dir, 'link');
    await symlink(await tokenFile(dir, GOOD), link);
    expect(() => readTokenFile(link, '--token-file')).toThrow('is a symbolic link');
  });

  it.runIf(process.getuid?.() === 0)('refuses a token file another user owns (they could change it), even at 0600', async () => {
    const dir = await privateDir();
    const file = await tokenFile(dir, GOOD);
    await chown(file, 65534, 65534); // nobody
    expect(() => readTokenFile(file, '--token-file')).toThrow(`token file ${file} is owned by uid 65534, not by the agent's user (uid 0)`);
  });

  it("generates the data dir's token file at 0600 when there is none, and reads the same one next time", async () => {
    const dir = await privateDir();
    const first = resolveAgentToken(undefined, dir);
    expect(first).toMatchObject({ file: join(dir, 'agent-token'), generated: true, given: false, description: `new token written to ${join(dir, 'agent-token')}` });
    expect(first.token).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(first.file!)).mode & 0o777).toBe(0o600);
    expect((await readFile(first.file!, 'utf8')).trim()).toBe(first.token);
    expect(resolveAgentToken(undefined, dir)).toMatchObject({ token: first.token, generated: false, description: `token in ${first.file}` });
  });

  it("refuses the data dir's own token file when others can read it, instead of using it", async () => {
    const dir = await privateDir();
    await writeFile(join(dir, 'agent-token'), `${GOOD}\n`, { mode: 0o644 });
    await chmod(join(dir, 'agent-token'), 0o644);
    expect(() => resolveAgentToken(undefined, dir)).toThrow(`run 'chmod 600 ${join(dir, 'agent-token')}'`);
  });
});

describe('the data dir', () => {
  it('is accepted at 0700, or passable but not listable (0711), and refused with the chmod that fixes it when group or others can read or write it', async () => {
    const dir = await privateDir();
    expect(() => checkDataDirPrivate(dir)).not.toThrow();
    for (const mode of [0o711, 0o701, 0o710]) {
      await chmod(dir, mode);
      expect(() => checkDataDirPrivate(dir)).not.toThrow();
    }
    for (const mode of [0o755, 0o750, 0o704, 0o720, 0o702, 0o770, 0o1777]) {
      await chmod(dir, mode);
      expect(() => checkDataDirPrivate(dir)).toThrow(`run 'chmod 700 ${dir}'`);
    }
    await chmod(dir, 0o700);
  });
});

describe('comparing a request token', () => {
  const token = generateToken();
  it('accepts exactly the token', () => {
    expect(tokenMatches(token, token)).toBe(true);
  });
  it.each([
    ['a prefix', token.slice(0, -1)],
    ['the token and more', `${token}x`],
    ['the empty string', ''],
    ['one character changed', `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`],
  ])('refuses %s', (_what, given) => {
    expect(tokenMatches(given, token)).toBe(false);
  });
  it('refuses a missing or repeated header', () => {
    expect(tokenMatches(undefined, token)).toBe(false);
    expect(tokenMatches([token, token], token)).toBe(false);
  });
});

describe('the client finds the token', () => {
  it('in --token, --token-file, ALLOCRUN_TOKEN, ALLOCRUN_TOKEN_FILE, NOMAD_TOKEN, then the data dir, in that order', async () => {
    const dir = await privateDir();
    const file = await tokenFile(dir, 'from-file\n');
    const envFile = await tokenFile(dir, 'from-env-file\n');
    await writeFile(join(dir, 'agent-token'), 'from-data-dir\n', { mode: 0o600 });
    const all = { ALLOCRUN_TOKEN: 'from-env', ALLOCRUN_TOKEN_FILE: envFile, NOMAD_TOKEN: 'from-nomad' };
    expect(clientToken({ token: 'from-flag', tokenFile: file }, dir, all)).toBe('from-flag');
    expect(clientToken({ tokenFile: file }, dir, all)).toBe('from-file');
    expect(clientToken({}, dir, all)).toBe('from-env');
    expect(clientToken({}, dir, { ...all, ALLOCRUN_TOKEN: undefined })).toBe('from-env-file');
    expect(clientToken({}, dir, { NOMAD_TOKEN: 'from-nomad' })).toBe('from-nomad');
    expect(clientToken({}, dir, {})).toBe('from-data-dir');
    expect(clientToken({}, undefined, {})).toBeUndefined();
  });

  it('refuses a token file others can read, as the agent does', async () => {
    const dir = await privateDir();
    const file = await tokenFile(dir, GOOD, 0o644);
    expect(() => clientToken({ tokenFile: file }, undefined, {})).toThrow(`run 'chmod 600 ${file}'`);
  });
});
