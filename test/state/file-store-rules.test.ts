/**
 * The file store's rules beyond the StateStore contract (src/state/file-store.ts): its directories and
 * files are private (allocs/ and each alloc dir 0700, state files 0600), even when allocs/ was made
 * before; a write that fails leaves no temp file and names the file; what a scan and a load make of a
 * missing, unreadable, empty or damaged record, each named; a record moved aside says where it went; the
 * list is ordered by createdAt, else updatedAt, and problems by allocation id.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureDataDir, FileStateStore, StateStoreError, type AllocRecord } from '../../src/state/file-store.ts';

const dirs: string[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'allocrun-file-rules-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const record = (id: string, times: { createdAt?: number; updatedAt: number }): AllocRecord => ({
  spec: { id, job: 'j', group: 'g', type: 'batch', tasks: [{ name: 't', driver: 'mock', config: {} }] },
  state: { clientStatus: 'running', taskStates: {} },
  ...times,
});
const mode = (path: string) => statSync(path).mode & 0o777;

describe('privacy', () => {
  it('ensureDataDir makes the data dir and allocs/, 0700', () => {
    const dataDir = join(freshDir(), 'data');
    ensureDataDir(dataDir);
    expect(mode(join(dataDir, 'allocs'))).toBe(0o700);
  });

  it('a save makes allocs/ 0700 even when it was made open before, the alloc dir 0700 and the state file 0600', async () => {
    const dataDir = freshDir();
    mkdirSync(join(dataDir, 'allocs'), { mode: 0o755 });
    chmodSync(join(dataDir, 'allocs'), 0o755);
    const store = new FileStateStore(dataDir);
    await store.save('a1', record('a1', { updatedAt: 1 }));
    expect([mode(join(dataDir, 'allocs')), mode(store.allocDir('a1')), mode(store.statePath('a1'))]).toEqual([0o700, 0o700, 0o600]);
  });

  it('a save after allocs/ was removed under the store makes it again', async () => {
    const dataDir = freshDir();
    const store = new FileStateStore(dataDir);
    await store.save('a1', record('a1', { updatedAt: 1 }));
    rmSync(join(dataDir, 'allocs'), { recursive: true });
    await store.save('a2', record('a2', { updatedAt: 2 }));
    expect((await store.load('a2'))?.spec.id).toBe('a2');
  });
});

describe('failed writes', () => {
  it('a save that cannot write names the file, keeps the cause and leaves no temp file', async () => {
    const dataDir = freshDir();
    const store = new FileStateStore(dataDir);
    mkdirSync(join(dataDir, 'allocs'), { recursive: true });
    writeFileSync(join(dataDir, 'allocs', 'a1'), 'not a directory');
    const err = await store.save('a1', record('a1', { updatedAt: 1 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StateStoreError);
    expect(err).toMatchObject({ path: store.statePath('a1'), cause: expect.objectContaining({ code: 'ENOTDIR' }) });
    expect((err as Error).message).toMatch(new RegExp(`^cannot write ${store.statePath('a1')}: ENOTDIR`));
    expect(readdirSync(join(dataDir, 'allocs'))).toEqual(['a1']);
  });

  it('a save of an id that is not a directory name is refused by name, and writes nothing', async () => {
    const dataDir = freshDir();
    const store = new FileStateStore(dataDir);
    await expect(store.save('..', record('..', { updatedAt: 1 }))).rejects.toMatchObject({ name: 'StateStoreError', message: 'allocation id ".." cannot be used as a directory name' });
    expect(readdirSync(dataDir)).toEqual([]);
  });
});

describe('reading', () => {
  it('a load where the alloc path is a file (ENOTDIR) is no record', async () => {
    const dataDir = freshDir();
    mkdirSync(join(dataDir, 'allocs'), { recursive: true });
    writeFileSync(join(dataDir, 'allocs', 'a1'), 'x');
    expect(await new FileStateStore(dataDir).load('a1')).toBeUndefined();
  });

  it('a state file that cannot be read (a directory) is named with the reason', async () => {
    const dataDir = freshDir();
    const store = new FileStateStore(dataDir);
    mkdirSync(store.statePath('a1'), { recursive: true });
    const err = await store.load('a1').catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'StateStoreError', path: store.statePath('a1'), cause: expect.objectContaining({ code: 'EISDIR' }) });
    expect((err as Error).message).toMatch(new RegExp(`^cannot read ${store.statePath('a1')}: EISDIR`));
  });

  it.each<[string, string, string]>([
    ['empty', '', 'the file is empty'],
    ['only blank', '  \n\t\n', 'the file is empty'],
    ['not JSON', '{"spec":', 'Unexpected end of JSON input'],
    ['JSON that is not a record', '[]', 'expected a JSON object, got a list'],
  ])('a state file that is %s is named with what is wrong', async (_what, text, why) => {
    const dataDir = freshDir();
    const store = new FileStateStore(dataDir);
    mkdirSync(store.allocDir('a1'), { recursive: true });
    writeFileSync(store.statePath('a1'), text);
    const err = await store.load('a1').catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'StateStoreError', path: store.statePath('a1'), message: `${store.statePath('a1')} is not a valid allocation record: ${why}`, cause: expect.any(Error) });
  });

  it('a scan of a data dir without allocs/ finds nothing; one whose allocs/ is a file is named', async () => {
    const dataDir = freshDir();
    expect(await new FileStateStore(dataDir).scan()).toEqual({ records: [], problems: [] });
    writeFileSync(join(dataDir, 'allocs'), 'x');
    const err = await new FileStateStore(dataDir).scan().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'StateStoreError', path: dataDir, cause: expect.objectContaining({ code: 'ENOTDIR' }) });
    expect((err as Error).message).toMatch(new RegExp(`^cannot list allocations in ${dataDir}: ENOTDIR`));
  });

  it('lists by createdAt, and by updatedAt for records without one', async () => {
    const store = new FileStateStore(freshDir());
    await store.save('a', record('a', { updatedAt: 30 }));
    await store.save('b', record('b', { createdAt: 10, updatedAt: 99 }));
    await store.save('c', record('c', { updatedAt: 20 }));
    await store.save('d', record('d', { createdAt: 25, updatedAt: 26 }));
    expect((await store.list()).map((r) => r.spec.id)).toEqual(['b', 'c', 'd', 'a']);
  });
});

describe('quarantine', () => {
  it('moves a damaged record aside under a time-stamped name without colons, and says where', async () => {
    const store = new FileStateStore(freshDir());
    mkdirSync(store.allocDir('a1'), { recursive: true });
    writeFileSync(store.statePath('a1'), '{');
    const [problem] = (await store.scan({ quarantine: true })).problems;
    const aside = readdirSync(store.allocDir('a1'));
    expect(aside).toHaveLength(1);
    expect(aside[0]).toMatch(/^state\.json\.corrupt-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z$/);
    const movedTo = join(store.allocDir('a1'), aside[0]!);
    expect(problem).toMatchObject({ movedTo, path: store.statePath('a1'), cause: expect.any(StateStoreError) });
    expect(problem!.message.endsWith(`; moved aside to ${movedTo}`)).toBe(true);
  });

  it('a record that cannot be moved aside says so', async () => {
    const store = new FileStateStore(freshDir());
    const problem = new StateStoreError('damaged', 'p');
    const out = await store.quarantine('a1', problem);
    expect(out).toMatchObject({ path: store.statePath('a1'), cause: problem, movedTo: undefined });
    expect(out.message).toMatch(/^damaged; moving it aside failed: ENOENT/);
  });
});
