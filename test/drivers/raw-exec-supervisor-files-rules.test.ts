/**
 * The supervisor's files, read and written by the agent (supervisor.ts), pinned rule by rule on a temp dir:
 * the claim a supervisor and a restoring agent race for, the intent a start leaves behind, the workload's pid
 * and exit status (lines of the claim; files of their own from a previous script's supervisor), the stop marker, the private dir's guard and the pruning of old attempts. Milliseconds
 * each: the rules about real supervisors are in raw-exec-claim-reap and raw-exec-supervisor.
 */
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import {
  attemptPrefix,
  CLAIM_LOST,
  clearSupervisorFiles,
  decodeShellStatus,
  ensurePrivateDir,
  goVariable,
  markStopping,
  NO_FIFOS,
  OUTPUT_FDS,
  outputFifos,
  privateDir,
  pruneAttempts,
  readClaim,
  readExitStatus,
  readIntent,
  readSupervisorRecord,
  readWorkloadPid,
  stoppingReason,
  supervisorLive,
  voidClaim,
  writeIntent,
} from '../../src/drivers/raw-exec/supervisor.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh task dir with its private dir made. */
function taskDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'allocrun-supfiles-'));
  dirs.push(dir);
  ensurePrivateDir(dir);
  return dir;
}

/** A fresh attempt prefix, with `files` (suffix → content) written under it. */
function prefixWith(files: Record<string, string> = {}): string {
  const prefix = attemptPrefix(taskDir(), 0, 'tok');
  for (const [suffix, text] of Object.entries(files)) writeFileSync(`${prefix}${suffix}`, text);
  return prefix;
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe('the supervisor files are named per task attempt and token, in <task dir>/private', () => {
  it('puts every attempt under private/ as exec-<attempt>-<token>', () => {
    expect(privateDir('/t')).toBe('/t/private');
    expect(attemptPrefix('/t', 3, 'abc')).toBe('/t/private/exec-3-abc');
    expect(attemptPrefix('/t', 'x', 'abc')).toBe('/t/private/exec-x-abc');
  });

  it('names the output FIFOs .out and .err, and the supervisor fds holding them 5 and 6', () => {
    expect(outputFifos('/p/exec-1-t')).toEqual({ stdout: '/p/exec-1-t.out', stderr: '/p/exec-1-t.err' });
    expect(OUTPUT_FDS).toEqual({ stdout: 5, stderr: 6 });
  });

  it('tells a lost claim (125) from output pipes it could not make (124)', () => {
    expect(CLAIM_LOST).toBe(125);
    expect(NO_FIFOS).toBe(124);
  });
});

describe('the go variable is a name the task env does not hold', () => {
  it.each([
    [{}, 'allocrun_go'],
    [{ PATH: '/bin' }, 'allocrun_go'],
    [{ allocrun_go: '1' }, 'allocrun_go_'],
    [{ allocrun_go: '1', allocrun_go_: '2' }, 'allocrun_go__'],
  ])('with env %j it is %s', (env, name) => {
    expect(goVariable(env)).toBe(name);
  });
});

describe('the private dir is the agent user\'s alone', () => {
  it('is made with mode 0700 and its path returned', () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-supfiles-'));
    dirs.push(dir);
    expect(ensurePrivateDir(dir)).toBe(join(dir, 'private'));
    expect(mode(join(dir, 'private'))).toBe(0o700);
  });

  it.each([0o755, 0o701, 0o770, 0o710])('an existing one of mode %o is tightened to 0700', (loose) => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-supfiles-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'private'));
    chmodSync(join(dir, 'private'), loose);
    ensurePrivateDir(dir);
    expect(mode(join(dir, 'private'))).toBe(0o700);
  });

  it('refuses a symbolic link in its place, by name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-supfiles-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'elsewhere'));
    symlinkSync(join(dir, 'elsewhere'), join(dir, 'private'));
    expect(() => ensurePrivateDir(dir)).toThrow(`the supervisor's dir ${join(dir, 'private')} is a symbolic link; it must be a directory of the agent's user (uid ${process.geteuid!()}): remove it and start the task again`);
  });

  it('refuses a file in its place', () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-supfiles-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'private'), '');
    // mkdir of an existing file fails first, or the check names it: either way it is refused.
    expect(() => ensurePrivateDir(dir)).toThrow();
  });

  it('refuses a directory another user owns', () => {
    if (process.geteuid?.() !== 0) return; // only root can give a directory away
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-supfiles-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'private'), { mode: 0o700 });
    chownSync(join(dir, 'private'), 65534, 65534);
    expect(() => ensurePrivateDir(dir)).toThrow(`is owned by uid 65534; it must be a directory of the agent's user (uid 0)`);
  });
});

describe('the intent names the token an attempt was spawned with', () => {
  it('is read back as written, and leaves no temp file behind', () => {
    const dir = taskDir();
    writeIntent(dir, 4, 'abc123');
    expect(readFileSync(join(privateDir(dir), 'exec-4.intent'), 'utf8')).toBe('abc123\n');
    expect(mode(join(privateDir(dir), 'exec-4.intent'))).toBe(0o600);
    expect(readIntent(dir, 4)).toBe('abc123');
    expect(readdirSync(privateDir(dir))).toEqual(['exec-4.intent']);
  });

  it('is undefined for an attempt never recorded, or recorded blank', () => {
    const dir = taskDir();
    expect(readIntent(dir, 0)).toBeUndefined();
    writeFileSync(join(privateDir(dir), 'exec-1.intent'), '\n');
    expect(readIntent(dir, 1)).toBeUndefined();
  });

  it('a later intent of the same attempt replaces the earlier one', () => {
    const dir = taskDir();
    writeIntent(dir, 2, 'first');
    writeIntent(dir, 2, 'second');
    expect(readIntent(dir, 2)).toBe('second');
  });
});

describe('the claim is a supervisor pid, an agent\'s void, or nothing yet', () => {
  it.each([
    ['1234\n', { kind: 'supervisor', pid: 1234 }],
    ['2', { kind: 'supervisor', pid: 2 }],
    ['void\n', { kind: 'void' }],
    [' void ', { kind: 'void' }],
    // An empty file is a supervisor between its O_EXCL open and its write: it has claimed already.
    ['', { kind: 'supervisor', pid: -1 }],
    ['1\n', { kind: 'supervisor', pid: -1 }],
    ['0\n', { kind: 'supervisor', pid: -1 }],
    ['12.5\n', { kind: 'supervisor', pid: -1 }],
    ['voided\n', { kind: 'supervisor', pid: -1 }],
  ])('a claim file holding %j reads as %j', (text, claim) => {
    expect(readClaim(prefixWith({ '.claim': text }))).toEqual(claim);
  });

  it('no claim file reads as none', () => {
    expect(readClaim(prefixWith())).toEqual({ kind: 'none' });
  });

  it('an agent voids an unclaimed token: it writes "void" (0600) and wins', () => {
    const prefix = prefixWith();
    expect(voidClaim(prefix)).toBe(true);
    expect(readFileSync(`${prefix}.claim`, 'utf8')).toBe('void\n');
    expect(mode(`${prefix}.claim`)).toBe(0o600);
    expect(readClaim(prefix)).toEqual({ kind: 'void' });
  });

  it('an agent cannot void a token a supervisor claimed first, and leaves its claim as it was', () => {
    const prefix = prefixWith({ '.claim': '777\n' });
    expect(voidClaim(prefix)).toBe(false);
    expect(readFileSync(`${prefix}.claim`, 'utf8')).toBe('777\n');
  });

  it('a second void loses to the first', () => {
    const prefix = prefixWith();
    expect(voidClaim(prefix)).toBe(true);
    expect(voidClaim(prefix)).toBe(false);
  });

  it('a claim that cannot be made for another reason than a claim already there is an error', () => {
    expect(() => voidClaim('/nonexistent-dir-for-allocrun/exec-0-t')).toThrow(/ENOENT/);
  });
});

describe("the claim grows the workload's pid and exit status, each line taken only whole", () => {
  const sup = { kind: 'supervisor', pid: 4242 };
  it.each([
    ['4242\n', sup, undefined, undefined],
    ['4242\npid 4343\n', sup, 4343, undefined],
    // A line is one write: without its newline it is not there yet (or a crash cut it).
    ['4242\npid 4343', sup, undefined, undefined],
    ['4242\npid 4343\nstatus 143\n', sup, 4343, { exitCode: 143, signal: 15 }],
    ['4242\npid 4343\nstatus 0\n', sup, 4343, { exitCode: 0, signal: 0 }],
    ['4242\npid 4343\nstatus 14', sup, 4343, undefined],
    // The workload's subshell failed before its exec (exit 126): a status and no pid, nothing ran.
    ['4242\nstatus 126\n', sup, undefined, { exitCode: 126, signal: 0 }],
    ['4242\npid 1\n', sup, undefined, undefined],
    ['4242\npid x\n', sup, undefined, undefined],
    ['4242\npid 4343\nstatus x3\n', sup, 4343, undefined],
    ['4242\npid 4343\nstatus -1\n', sup, 4343, undefined],
    ['4242\npid 4343\nstatus 3 \n', sup, 4343, undefined],
    ['', { kind: 'supervisor', pid: -1 }, undefined, undefined],
    ['void\n', { kind: 'void' }, undefined, undefined],
  ])('a claim holding %j reads as %j, pid %s, exit %j', (text, claim, workloadPid, exit) => {
    const prefix = prefixWith({ '.claim': text });
    expect(readSupervisorRecord(prefix)).toEqual({ claim, workloadPid, exit });
    expect([readClaim(prefix), readWorkloadPid(prefix), readExitStatus(prefix)]).toEqual([claim, workloadPid, exit]);
  });

  it("a claim without a pid line is read with a previous script's .pid and .status files", () => {
    const prefix = prefixWith({ '.claim': '4242\n', '.pid': '4343\n', '.status': '143\n' });
    expect(readSupervisorRecord(prefix)).toEqual({ claim: { kind: 'supervisor', pid: 4242 }, workloadPid: 4343, exit: { exitCode: 143, signal: 15 } });
  });

  it('a claim with a pid line is read alone: files beside it are not this supervisor\'s', () => {
    const prefix = prefixWith({ '.claim': '4242\npid 4343\n', '.pid': '999\n', '.status': '0\n' });
    expect(readSupervisorRecord(prefix)).toEqual({ claim: { kind: 'supervisor', pid: 4242 }, workloadPid: 4343, exit: undefined });
  });

  it("the claim's own status line wins over a .status file", () => {
    const prefix = prefixWith({ '.claim': '4242\nstatus 126\n', '.status': '0\n' });
    expect(readExitStatus(prefix)).toEqual({ exitCode: 126, signal: 0 });
  });

  it('no claim reads as none, with whatever files a previous script left', () => {
    expect(readSupervisorRecord(prefixWith({ '.status': '3\n' }))).toEqual({ claim: { kind: 'none' }, workloadPid: undefined, exit: { exitCode: 3, signal: 0 } });
    expect(readSupervisorRecord(prefixWith())).toEqual({ claim: { kind: 'none' }, workloadPid: undefined, exit: undefined });
  });
});

describe("a previous script's pid file is read once its supervisor wrote it", () => {
  it.each([
    ['4321\n', 4321],
    ['2', 2],
    ['  99  \n', 99],
    ['1\n', undefined],
    ['0\n', undefined],
    ['-5\n', undefined],
    ['', undefined],
    ['\n', undefined],
    ['abc\n', undefined],
    ['3.5\n', undefined],
  ])('a pid file holding %j reads as %s', (text, pid) => {
    expect(readWorkloadPid(prefixWith({ '.pid': text }))).toBe(pid);
  });

  it('no pid file reads as undefined', () => {
    expect(readWorkloadPid(prefixWith())).toBeUndefined();
  });
});

describe("a previous script's status file is read only once written whole ($? and a newline)", () => {
  it.each([
    ['0\n', { exitCode: 0, signal: 0 }],
    ['3\n', { exitCode: 3, signal: 0 }],
    ['137\n', { exitCode: 137, signal: 9 }],
    ['143\n', { exitCode: 143, signal: 15 }],
    ['3', undefined],
    ['', undefined],
    ['\n', undefined],
    ['x3\n', undefined],
    ['3x\n', undefined],
    [' 3\n', undefined],
    ['-1\n', undefined],
    ['3\n4\n', undefined],
  ])('a status file holding %j reads as %j', (text, status) => {
    expect(readExitStatus(prefixWith({ '.status': text }))).toEqual(status);
  });

  it('no status file reads as undefined', () => {
    expect(readExitStatus(prefixWith())).toBeUndefined();
  });
});

describe("a shell's $? is 128 + n for a death by signal n (Linux has 64), else an exit code", () => {
  it.each([
    [0, 0],
    [1, 0],
    [127, 0],
    [128, 0],
    [129, 1],
    [137, 9],
    [192, 64],
    [193, 0],
    [255, 0],
  ])('$? %i is signal %i', (status, signal) => {
    expect(decodeShellStatus(status)).toEqual({ exitCode: status, signal });
  });
});

describe('the stop marker says an agent began the stop, and why', () => {
  it('a kill is an empty file of mode 0600', async () => {
    const prefix = prefixWith();
    await markStopping(prefix);
    expect(readFileSync(`${prefix}.stop`, 'utf8')).toBe('');
    expect(mode(`${prefix}.stop`)).toBe(0o600);
    expect(stoppingReason(prefix)).toBe('kill');
  });

  it('a restart says so in the file', async () => {
    const prefix = prefixWith();
    await markStopping(prefix, 'restart');
    expect(readFileSync(`${prefix}.stop`, 'utf8')).toBe('restart\n');
    expect(mode(`${prefix}.stop`)).toBe(0o600);
    expect(stoppingReason(prefix)).toBe('restart');
  });

  it('a restart is written under another name and renamed: an agent dying mid-write leaves no marker, never an empty one (a kill)', async () => {
    // What a crash between the create and the write leaves: the other name, empty.
    const prefix = prefixWith({ '.stop-new': '' });
    expect(stoppingReason(prefix)).toBeUndefined();
    await markStopping(prefix, 'restart');
    expect(stoppingReason(prefix)).toBe('restart');
    expect(existsSync(`${prefix}.stop-new`), 'nothing left under the other name').toBe(false);
  });

  it('a kill after a restart marker makes it a kill', async () => {
    const prefix = prefixWith({ '.stop': 'restart\n' });
    await markStopping(prefix, 'kill');
    expect(stoppingReason(prefix)).toBe('kill');
  });

  it('a kill with the supervisor\'s claim in place is a second name of the claim: no file made, the claim unchanged', async () => {
    const prefix = prefixWith({ '.claim': '4242\n' });
    await markStopping(prefix);
    // A second kill finds the marker made and leaves it (it must never write through the claim's name).
    await markStopping(prefix);
    expect(statSync(`${prefix}.stop`).ino).toBe(statSync(`${prefix}.claim`).ino);
    expect(stoppingReason(prefix)).toBe('kill');
    expect(readClaim(prefix)).toEqual({ kind: 'supervisor', pid: 4242 });
  });

  it('such a kill marker stays a kill as the claim grows its pid and status lines, and the claim reads the same by its own name', async () => {
    const prefix = prefixWith({ '.claim': '4242\n' });
    await markStopping(prefix);
    appendFileSync(`${prefix}.claim`, 'pid 4343\n');
    appendFileSync(`${prefix}.claim`, 'status 143\n');
    expect(stoppingReason(prefix)).toBe('kill');
    expect(readSupervisorRecord(prefix)).toEqual({ claim: { kind: 'supervisor', pid: 4242 }, workloadPid: 4343, exit: { exitCode: 143, signal: 15 } });
    // A second kill after the claim grew still finds its marker made, and writes nothing through it.
    await markStopping(prefix);
    expect(readFileSync(`${prefix}.claim`, 'utf8')).toBe('4242\npid 4343\nstatus 143\n');
  });

  it('a restart after such a kill marker writes a file of its own, leaving the claim as it was', async () => {
    const prefix = prefixWith({ '.claim': '4242\n' });
    await markStopping(prefix);
    await markStopping(prefix, 'restart');
    expect(stoppingReason(prefix)).toBe('restart');
    expect(readClaim(prefix)).toEqual({ kind: 'supervisor', pid: 4242 });
    expect(mode(`${prefix}.stop`)).toBe(0o600);
  });

  it('a kill after a restart marker, with the claim in place, makes it a kill', async () => {
    const prefix = prefixWith({ '.claim': '4242\n', '.stop': 'restart\n' });
    await markStopping(prefix);
    expect(stoppingReason(prefix)).toBe('kill');
    expect(readClaim(prefix)).toEqual({ kind: 'supervisor', pid: 4242 });
  });

  it('is best effort: a marker that cannot be written is no error, and nothing is written', async () => {
    await markStopping('/nonexistent-dir-for-allocrun/exec-0-t');
    await markStopping('/nonexistent-dir-for-allocrun/exec-0-t', 'restart');
    expect(existsSync('/nonexistent-dir-for-allocrun')).toBe(false);
  });

  it.each([
    ['restart\n', 'restart'],
    [' restart ', 'restart'],
    ['', 'kill'],
    ['kill\n', 'kill'],
    ['restarted\n', 'kill'],
  ])('a marker holding %j reads as %s', (text, reason) => {
    expect(stoppingReason(prefixWith({ '.stop': text }))).toBe(reason);
  });

  it('no marker reads as undefined', () => {
    expect(stoppingReason(prefixWith())).toBeUndefined();
  });
});

describe('a supervisor is live while its pid runs with the start time recorded', () => {
  const self = readProcStat(process.pid)!;

  it('is live with its own start time, or with none recorded', () => {
    expect(supervisorLive({ pid: process.pid, startTime: self.startTime })).toBe(true);
    expect(supervisorLive({ pid: process.pid, startTime: undefined })).toBe(true);
  });

  it('is not live when the pid now runs another process (another start time)', () => {
    expect(supervisorLive({ pid: process.pid, startTime: self.startTime + 1 })).toBe(false);
  });

  it('is not live when no process has the pid', () => {
    expect(supervisorLive({ pid: 2 ** 22 + 1, startTime: undefined })).toBe(false);
  });
});

describe("a task's supervisor files are cleared for a new runner and pruned for new attempts", () => {
  const names = (dir: string) => readdirSync(privateDir(dir)).sort();

  it('clearing removes every exec- file and nothing else', () => {
    const dir = taskDir();
    for (const n of ['exec-0-a.claim', 'exec-0.intent', 'exec-12-b.status', 'other', 'xexec-1']) writeFileSync(join(privateDir(dir), n), '');
    clearSupervisorFiles(dir);
    expect(names(dir)).toEqual(['other', 'xexec-1']);
  });

  it('clearing a task dir without a private dir does nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-supfiles-'));
    dirs.push(dir);
    expect(() => clearSupervisorFiles(dir)).not.toThrow();
    expect(existsSync(privateDir(dir))).toBe(false);
  });

  it('clearing a private dir that cannot be listed does nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-supfiles-'));
    dirs.push(dir);
    writeFileSync(privateDir(dir), '');
    expect(() => clearSupervisorFiles(dir)).not.toThrow();
  });

  it('pruning keeps the 8 attempts behind the new one and removes older ones, whatever the file', () => {
    const dir = taskDir();
    const files = ['exec-11-a.claim', 'exec-11.intent', 'exec-12-b.status', 'exec-12.intent', 'exec-19-c.pid', 'exec-3-d.out', 'exec-x-e.claim', 'notes'];
    for (const n of files) writeFileSync(join(privateDir(dir), n), '');
    pruneAttempts(dir, 20);
    expect(names(dir)).toEqual(['exec-12-b.status', 'exec-12.intent', 'exec-19-c.pid', 'exec-x-e.claim', 'notes']);
  });

  it.each([0, 1, 8])('an attempt of %i prunes nothing: none is 8 behind it', (attempt) => {
    const dir = taskDir();
    writeFileSync(join(privateDir(dir), 'exec-0-a.claim'), '');
    pruneAttempts(dir, attempt);
    expect(names(dir)).toEqual(['exec-0-a.claim']);
  });

  it('attempt 9 prunes attempt 0 only', () => {
    const dir = taskDir();
    for (const n of ['exec-0-a.claim', 'exec-1-b.claim']) writeFileSync(join(privateDir(dir), n), '');
    pruneAttempts(dir, 9);
    expect(names(dir)).toEqual(['exec-1-b.claim']);
  });

  it('pruning a task without a private dir does nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-supfiles-'));
    dirs.push(dir);
    expect(() => pruneAttempts(dir, 30)).not.toThrow();
  });
});
